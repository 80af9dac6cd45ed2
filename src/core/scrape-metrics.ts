// Metrics computed at scrape time, not on the hot path: committed offsets and consumer lag per
// group and partition (every protocol's offsets in the core offset store, against the log end
// offset), and disk bytes per partition. Topics are labelled neutrally (namespace, topic); the
// protocol that committed an offset is the `protocol` label (Cursus groups commit in Kafka's).

import type { Catalog } from './catalog.js';
import type { MetricsRegistry } from './metrics.js';
import type { OffsetStore } from './offsets.js';
import type { PartitionLog } from '../log/index.js';
import type { RequestByteBudget } from '../base/request-bytes.js';

/** The offset scopes whose groups are reported: Kafka (and Cursus) groups, Iggy consumers and groups. */
export const offsetScopesReported = ['kafka', 'iggy'] as const;

export interface ScrapeSources {
  catalog: Catalog;
  offsets: OffsetStore;
  /** The open partition logs, by topic internal id. */
  partitions(): Iterable<readonly [number, ReadonlyArray<{ log: PartitionLog }>]>;
}

/** Registers the scrape-time collector; returns the function that removes it. */
export function registerScrapeMetrics(metrics: MetricsRegistry, sources: ScrapeSources): () => void {
  const committed = metrics.gauge('quartet_group_committed_offset', 'Committed offset of a consumer group (Kafka, Cursus) or consumer (Iggy) on a partition');
  const lag = metrics.gauge('quartet_group_lag', 'Records between a group\'s committed offset and the partition\'s log end offset (0 when at the end)');
  const diskBytes = metrics.gauge('quartet_partition_disk_bytes', 'Bytes the partition\'s segments take on disk');
  return metrics.onCollect(async () => {
    const topics = new Map(sources.catalog.listTopics().map((t) => [t.internalId, t]));
    const endOffsets = new Map<string, number>();
    diskBytes.clear();
    for (const [internalId, handles] of sources.partitions()) {
      const topic = topics.get(internalId);
      if (topic === undefined) continue;
      handles.forEach((h, partition) => {
        const stats = h.log.stats();
        endOffsets.set(`${internalId}/${partition}`, stats.nextOffset);
        diskBytes.set({ namespace: topic.namespace, topic: topic.name, partition: String(partition) }, stats.sizeBytes);
      });
    }
    committed.clear();
    lag.clear();
    for (const scope of offsetScopesReported) {
      for (const group of await sources.offsets.listGroups(scope)) {
        for (const o of await sources.offsets.fetchGroup(scope, group)) {
          const end = endOffsets.get(`${o.topicInternalId}/${o.partition}`);
          const topic = topics.get(o.topicInternalId);
          if (end === undefined || topic === undefined) continue;
          const labels = { protocol: scope, group, namespace: topic.namespace, topic: topic.name, partition: String(o.partition) };
          committed.set(labels, o.offset);
          lag.set(labels, Math.max(0, end - o.offset));
        }
      }
    }
  });
}

/** Registers the request byte budget's figures (base/request-bytes.ts); returns the remover. */
export function registerRequestBytesMetrics(metrics: MetricsRegistry, budget: RequestByteBudget): () => void {
  const held = metrics.gauge('quartet_request_bytes_held', 'Bytes large Kafka and Iggy request frames hold in memory now, broker-wide (requestBytesMax)');
  const peak = metrics.gauge('quartet_request_bytes_peak', 'The most bytes large request frames held at once since the broker started');
  const waiting = metrics.gauge('quartet_request_bytes_waiting', 'Connections whose next large request frame waits for request bytes, their sockets not read');
  const waits = metrics.counter('quartet_request_bytes_waits_total', 'Large request frames that had to wait for request bytes');
  let waitsSeen = 0;
  return metrics.onCollect(() => {
    held.set({}, budget.heldBytes);
    peak.set({}, budget.peakHeldBytes);
    waiting.set({}, budget.waiting);
    waits.inc({}, budget.waitsTotal - waitsSeen);
    waitsSeen = budget.waitsTotal;
  });
}
