// Bytes and records served to readers, per topic and per protocol: counted once by the read
// service (reads.ts) for every front-end, from what a read returns (chunk lengths, and the
// record counts of batch headers or of a records read), never by looking at records. A read's
// protocol is the format it was served in: a Kafka fetch reads `kafka` batches, an Iggy poll
// `iggy` ones; decoded reads (BatchFormat.neutral) are Felix queue groups' today.
//
// A read adds to two numbers of its topic's series (no map look-up, no allocation); the counters
// take the sums when /metrics is scraped (a collector), under labels made once per (topic, format).

import { BatchFormat } from '../base/batch.js';
import type { Topic } from './catalog.js';
import type { Counter, MetricsRegistry } from './metrics.js';

type ReadLabels = Readonly<{ namespace: string; topic: string; protocol: string }>;

/** The `protocol` label of a read served in each format. */
const protocolOfFormat: ReadonlyMap<number, string> = new Map([
  [BatchFormat.kafka, 'kafka'],
  [BatchFormat.iggy, 'iggy'],
  [BatchFormat.cursus, 'cursus'],
  [BatchFormat.felix, 'felix'],
  [BatchFormat.neutral, 'felix'],
]);

/** One topic's read series, under the names the topic had when they were made. */
export class TopicReadSeries {
  /** Labels by format tag, made at the first read in that format. */
  private readonly labels: Array<ReadLabels | undefined> = [];
  /** Bytes and records read since the last scrape, by format tag. */
  private readonly bytes: number[] = [];
  private readonly records: number[] = [];
  /** Dropped: a read that began before (under the old name) counts nothing more. */
  private dropped = false;

  constructor(
    readonly namespace: string,
    readonly topic: string,
    private readonly counters: ReadCounters,
  ) {}

  /** A read returned `bytes` bytes holding `records` records, served in `format`. */
  count(format: BatchFormat, bytes: number, records: number): void {
    if ((bytes === 0 && records === 0) || this.dropped) return;
    if (this.labels[format] === undefined) this.start(format);
    this.bytes[format]! += bytes;
    this.records[format]! += records;
  }

  /** Moves the sums since the last scrape into the counters. */
  flush(): void {
    this.labels.forEach((labels, format) => {
      if (labels === undefined) return;
      this.counters.bytes.inc(labels, this.bytes[format]!);
      this.counters.records.inc(labels, this.records[format]!);
      this.bytes[format] = 0;
      this.records[format] = 0;
    });
  }

  /** Drops every series of the topic (deleted, or renamed: the new name starts at 0). */
  drop(): void {
    for (const labels of this.labels) {
      if (labels === undefined) continue;
      this.counters.bytes.remove(labels);
      this.counters.records.remove(labels);
    }
    this.labels.length = 0;
    this.dropped = true;
  }

  /** The first read in `format`: its labels, and its series at 0 from now on. */
  private start(format: BatchFormat): void {
    const labels = { namespace: this.namespace, topic: this.topic, protocol: protocolOfFormat.get(format) ?? `format-${format}` };
    this.labels[format] = labels;
    this.bytes[format] = 0;
    this.records[format] = 0;
  }
}

interface ReadCounters {
  readonly bytes: Counter;
  readonly records: Counter;
}

/** The read series of every topic, by topic internal id. */
export class ReadMetrics {
  private readonly counters: ReadCounters;
  private readonly topics = new Map<number, TopicReadSeries>();

  constructor(metrics: MetricsRegistry) {
    this.counters = {
      bytes: metrics.counter('quartet_topic_read_bytes_total', 'Bytes of batches served to readers of the topic (fetch, poll, consume, subscribe), by protocol'),
      records: metrics.counter('quartet_topic_read_records_total', 'Records in the batches served to readers of the topic, by protocol'),
    };
    metrics.onCollect(() => {
      for (const series of this.topics.values()) series.flush();
    });
  }

  /** The topic's series (made at its first read). */
  of(topic: Topic): TopicReadSeries {
    const series = this.topics.get(topic.internalId);
    if (series !== undefined) return series;
    const made = new TopicReadSeries(topic.namespace, topic.name, this.counters);
    this.topics.set(topic.internalId, made);
    return made;
  }

  /** The topic is gone, or has a new name: its series leave /metrics. */
  drop(internalId: number): void {
    this.topics.get(internalId)?.drop();
    this.topics.delete(internalId);
  }
}
