// The partition logs of every topic, as the broker holds them: opened (and recovered) at start,
// created, grown, shrunk, replaced by a purge and destroyed as the catalog changes, closed at the
// end; their directories, and their per-partition metric series. What else a catalog change
// touches (committed offsets, producer and transaction state, the front-ends) is the broker's.
//
// Layout: <dataDir>/logs/<internalId>/<partition>/ per partition log; a partition directory a
// purge is discarding is renamed to <partition>.purged first.

import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import { MemoryLog, openFileLog, type AppendRequest, type AppendResult, type DirectWriteGate, type FormatRegistry, type LogConfig, type LogOffload, type PartitionLog } from '../log/index.js';
import { nodeFileSystem, type LogFileSystem } from '../log/fs.js';
import type { Topic } from './catalog.js';
import type { Counter, Gauge, MetricsRegistry } from './metrics.js';
import { partitionKey } from './producer-state.js';
import { ReadMetrics, type TopicReadSeries } from './read-metrics.js';
import { mapLimit } from './serial.js';
import { toLogConfig, type TopicConfig } from './topic-config.js';

/** Suffix of a partition directory a purge renamed away, removed right after (or at the next start). */
const purgedDirSuffix = '.purged';

/** Partition logs opened (recovered) or closed at the same time: bounds file descriptors and memory at start-up. */
export const logOpenConcurrencyMax = 8;

/** One open partition. */
export interface PartitionHandle {
  readonly log: PartitionLog;
  /** The partition's key in producer and transaction state (producer-state.ts partitionKey). */
  readonly key: string;
  /** Replaced, never edited (metrics.ts keys series by the object). */
  labels: Readonly<{ namespace: string; topic: string; partition: string }>;
}

export interface PartitionLogsOptions {
  dataDir: string;
  /** MemoryLog partitions, no directories. */
  memory: boolean;
  topicDefaults: Readonly<TopicConfig>;
  formats: FormatRegistry;
  clock: Clock;
  logger: Logger;
  metrics: MetricsRegistry;
  logFs?: LogFileSystem | undefined;
  directWrites?: DirectWriteGate | null | undefined;
  /** Told once about each batch a partition's log finds corrupt on disk (the log has logged it). */
  onCorruptBatch?: ((partition: Readonly<{ namespace: string; topic: string; partition: string }>) => void) | undefined;
  /** The worker pool compaction decodes and encodes large batches on (the broker's, Transcoder.logOffload). */
  offload?: LogOffload | undefined;
}

/**
 * A purge under way (PartitionLogs.beginReset): its partitions are replaced one by one, and
 * appends and reads of the topic wait (purgeInProgress) until `end()`.
 */
export interface TopicReset {
  /** The topic's partition count when the purge began. */
  readonly partitions: number;
  /** Keys of the partitions whose records are gone so far (whether or not their new log opened). */
  readonly replaced: readonly string[];
  /**
   * Closes partition `p`'s log, discards its directory and opens a new, empty log in its place.
   * When the directory cannot be discarded the partition is opened again with its records, and
   * this throws.
   */
  replace(partition: number): Promise<void>;
  /** Lets the waiting appends and reads go on. */
  end(): void;
}

export class PartitionLogs {
  /** Topic internal id → its partitions, index = partition number. */
  private readonly logs = new Map<number, PartitionHandle[]>();
  /** Topics whose partition logs a purge is replacing (by internal id): appends and reads wait for it. */
  private readonly resets = new Map<number, Promise<void>>();
  /** The partitions each purge under way has emptied so far (by topic internal id). */
  private readonly purged = new Map<number, Set<number>>();
  /** Logs a purge closed (a failed purge may leave one in place until a restart): not closed again. */
  private readonly closedByPurge = new WeakSet<PartitionLog>();
  private readonly metrics: { appendedBytes: Counter; appendedRecords: Counter; logEndOffset: Gauge };
  private readonly readMetrics: ReadMetrics;

  constructor(private readonly options: PartitionLogsOptions) {
    const m = options.metrics;
    this.readMetrics = new ReadMetrics(m);
    this.metrics = {
      appendedBytes: m.counter('quartet_partition_appended_bytes_total', 'Batch payload bytes appended to the partition'),
      appendedRecords: m.counter('quartet_partition_appended_records_total', 'Records appended to the partition'),
      logEndOffset: m.gauge('quartet_partition_log_end_offset', 'Next offset to be assigned in the partition'),
    };
  }

  logConfigFor(topic: Topic): LogConfig {
    return toLogConfig(topic.config, this.options.topicDefaults);
  }

  /** The open partition; throws unknown_topic / unknown_partition. */
  handle(topic: Topic, partition: number): PartitionHandle {
    const handles = this.logs.get(topic.internalId);
    if (!handles) throw new QuartetError('unknown_topic', `topic '${topic.name}' has no open logs`);
    const handle = Number.isInteger(partition) ? handles[partition] : undefined;
    if (!handle) throw new QuartetError('unknown_partition', `topic '${topic.name}' has no partition ${partition}`);
    return handle;
  }

  /** Every open partition, by topic internal id. */
  entries(): Array<[number, readonly PartitionHandle[]]> {
    return [...this.logs];
  }

  has(internalId: number): boolean {
    return this.logs.has(internalId);
  }

  // --- purges ---------------------------------------------------------------------------------

  /** Whether any purge is under way (nearly never): the cheap test before a topic is resolved. */
  purging(): boolean {
    return this.resets.size > 0;
  }

  /** Settles once the purge of the topic under way has replaced its logs; undefined when none is. */
  purgeInProgress(internalId: number): Promise<void> | undefined {
    return this.resets.get(internalId);
  }

  /** The partitions of the topic the purge under way has emptied so far; undefined when none is. */
  purgedPartitions(internalId: number): ReadonlySet<number> | undefined {
    return this.purged.get(internalId);
  }

  /** Every purge under way (a close waits for them). */
  purgesInProgress(): Array<Promise<void>> {
    return [...this.resets.values()];
  }

  /** Whether a purge closed `log` (it must not be closed or flushed again). */
  isClosedByPurge(log: PartitionLog): boolean {
    return this.closedByPurge.has(log);
  }

  /** Starts replacing the topic's logs (Broker.partitionsReset); null when it has none open. */
  beginReset(topic: Topic): TopicReset | null {
    const handles = this.logs.get(topic.internalId);
    if (!handles) return null;
    let done!: () => void;
    this.resets.set(topic.internalId, new Promise<void>((resolve) => (done = resolve)));
    const replaced: string[] = [];
    const purged = new Set<number>();
    this.purged.set(topic.internalId, purged);
    return {
      partitions: handles.length,
      replaced,
      replace: async (p) => {
        const old = handles[p]!;
        this.closedByPurge.add(old.log);
        await old.log.close().catch((error: unknown) => this.options.logger.warn('purge: closing a partition log failed', { partition: old.key, error }));
        try {
          if (!this.options.memory) await this.discardPartitionDir(topic.internalId, p);
        } catch (err) {
          // Not renamed: the partition keeps its records, open again.
          handles[p] = (await this.openPartitions(topic, p, p + 1))[0]!;
          throw err;
        }
        // Its records are gone from here on, whether or not its new log opens.
        replaced.push(old.key);
        purged.add(p);
        handles[p] = (await this.openPartitions(topic, p, p + 1))[0]!;
      },
      end: () => {
        this.resets.delete(topic.internalId);
        this.purged.delete(topic.internalId);
        done();
      },
    };
  }

  /**
   * Removes a partition's directory so that a crash never leaves part of it: renamed to
   * `<partition>.purged` (the rename made durable), then removed; a leftover `.purged` directory
   * is removed at the next start (removeOrphanDirs). Throws only when the rename fails (the
   * directory is then still there); once renamed, a failed fsync or removal is logged.
   */
  private async discardPartitionDir(internalId: number, partition: number): Promise<void> {
    const fsys = this.options.logFs ?? nodeFileSystem;
    const dir = this.partitionDir(internalId, partition);
    const trash = `${dir}${purgedDirSuffix}`;
    await fsys.rm(trash);
    try {
      await fsys.rename(dir, trash);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return;
    }
    try {
      await fsys.fsyncDir(this.topicDir(internalId));
      await fsys.rm(trash);
    } catch (error) {
      this.options.logger.warn('purge: removing a renamed partition directory failed; it goes at the next start', { dir: trash, error });
    }
  }

  // --- catalog changes ------------------------------------------------------------------------

  /** Opens the logs of every topic (recovering them), at start. */
  async openAll(topics: readonly Topic[]): Promise<void> {
    for (const topic of topics) this.logs.set(topic.internalId, await this.openPartitions(topic, 0, topic.partitions));
  }

  async createTopic(topic: Topic): Promise<void> {
    this.logs.set(topic.internalId, await this.openPartitions(topic, 0, topic.partitions));
  }

  /**
   * Takes the topic's logs out (no new append or read finds them), destroys them and removes the
   * topic's directory. Returns the partitions it had.
   */
  async deleteTopic(topic: Topic): Promise<PartitionHandle[]> {
    const handles = this.logs.get(topic.internalId) ?? [];
    this.logs.delete(topic.internalId);
    this.readMetrics.drop(topic.internalId);
    await mapLimit(handles, logOpenConcurrencyMax, (h) => h.log.destroy());
    if (!this.options.memory) await rm(this.topicDir(topic.internalId), { recursive: true, force: true });
    return handles;
  }

  /**
   * Opens partitions previousCount..topic.partitions-1, empty: a partition number may have existed
   * before (removed by Iggy DeletePartitions), and a removal a crash interrupted may have left its
   * directory.
   */
  async addPartitions(topic: Topic, previousCount: number): Promise<void> {
    const handles = this.openHandles(topic, previousCount);
    if (!this.options.memory) {
      for (let p = previousCount; p < topic.partitions; p++) await rm(this.partitionDir(topic.internalId, p), { recursive: true, force: true });
    }
    handles.push(...(await this.openPartitions(topic, previousCount, topic.partitions)));
  }

  /** Destroys partitions topic.partitions..previousCount-1 with their directories; returns them. */
  async removePartitions(topic: Topic, previousCount: number): Promise<PartitionHandle[]> {
    const handles = this.openHandles(topic, previousCount);
    // Out of the map first, so no new append or read finds them while the logs close.
    const removed = handles.splice(topic.partitions);
    await mapLimit(removed, logOpenConcurrencyMax, (h) => h.log.destroy());
    if (!this.options.memory) {
      for (let p = topic.partitions; p < previousCount; p++) await rm(this.partitionDir(topic.internalId, p), { recursive: true, force: true });
    }
    return removed;
  }

  configChanged(topic: Topic): void {
    const config = this.logConfigFor(topic);
    for (const h of this.logs.get(topic.internalId) ?? []) h.log.updateConfig(config);
  }

  /** The old name's series go; the new name's start fresh (the counters from 0, as a new series). */
  renamed(topic: Topic): void {
    const handles = this.logs.get(topic.internalId) ?? [];
    this.dropMetrics(handles);
    this.readMetrics.drop(topic.internalId);
    for (const h of handles) {
      h.labels = metricLabels(topic, Number(h.labels.partition));
      this.metrics.logEndOffset.set(h.labels, h.log.stats().nextOffset);
    }
  }

  private openHandles(topic: Topic, count: number): PartitionHandle[] {
    const handles = this.logs.get(topic.internalId);
    if (!handles || handles.length !== count) throw new Error(`topic ${topic.internalId} has ${handles?.length} open partitions, expected ${count}`);
    return handles;
  }

  // --- metrics --------------------------------------------------------------------------------

  countAppend(handle: PartitionHandle, request: AppendRequest, result: AppendResult): void {
    this.metrics.appendedBytes.inc(handle.labels, request.payload.length);
    this.metrics.appendedRecords.inc(handle.labels, request.recordCount);
    this.metrics.logEndOffset.set(handle.labels, result.lastOffset + 1);
  }

  /** The topic's read series (ReadService counts what each read serves). */
  readSeries(topic: Topic): TopicReadSeries {
    return this.readMetrics.of(topic);
  }

  /** The partitions' series leave /metrics with them (a new partition of the same name starts at 0). */
  dropMetrics(handles: readonly PartitionHandle[]): void {
    for (const h of handles) {
      this.metrics.appendedBytes.remove(h.labels);
      this.metrics.appendedRecords.remove(h.labels);
      this.metrics.logEndOffset.remove(h.labels);
    }
  }

  // --- start and end --------------------------------------------------------------------------

  /**
   * A crash between a topic's deletion in the store and the removal of its directory leaves an
   * orphan; the catalog is the truth, so remove it. Also a partition directory a purge had
   * renamed away when the broker stopped.
   */
  async removeOrphanDirs(): Promise<void> {
    if (this.options.memory) return;
    let names: string[];
    try {
      names = await readdir(join(this.options.dataDir, 'logs'));
    } catch {
      return; // no logs directory yet
    }
    for (const name of names) {
      if (!/^\d+$/.test(name)) continue;
      if (!this.logs.has(Number(name))) {
        this.options.logger.warn('removing the directory of a deleted topic', { internalId: Number(name) });
        await rm(this.topicDir(Number(name)), { recursive: true, force: true });
        continue;
      }
      for (const entry of await readdir(this.topicDir(Number(name))).catch(() => [] as string[])) {
        if (entry.endsWith(purgedDirSuffix)) await rm(join(this.topicDir(Number(name)), entry), { recursive: true, force: true });
      }
    }
  }

  /** Closes every log (but those a purge closed); throws the first failure once all were tried. */
  async closeAll(): Promise<void> {
    const handles = [...this.logs.values()].flat().filter((h) => !this.closedByPurge.has(h.log));
    this.logs.clear();
    const errors: unknown[] = [];
    await mapLimit(handles, logOpenConcurrencyMax, (h) =>
      h.log.close().catch((err: unknown) => {
        errors.push(err);
        this.options.logger.error('could not close a partition log', { partition: h.key, error: err });
      }),
    );
    if (errors.length > 0) throw errors[0];
  }

  // --- internals ------------------------------------------------------------------------------

  private topicDir(internalId: number): string {
    return join(this.options.dataDir, 'logs', String(internalId));
  }

  private partitionDir(internalId: number, partition: number): string {
    return join(this.topicDir(internalId), String(partition));
  }

  private async openPartitions(topic: Topic, from: number, to: number): Promise<PartitionHandle[]> {
    const config = this.logConfigFor(topic);
    const numbers = Array.from({ length: to - from }, (_, i) => from + i);
    const opened: PartitionHandle[] = [];
    try {
      await mapLimit(numbers, logOpenConcurrencyMax, async (p) => {
        const log = await this.openLog(topic, p, config);
        const handle: PartitionHandle = { log, key: partitionKey(topic.internalId, p), labels: metricLabels(topic, p) };
        opened[p - from] = handle;
        this.metrics.logEndOffset.set(handle.labels, log.stats().nextOffset);
      });
    } catch (err) {
      await Promise.all(opened.filter(Boolean).map((h) => h.log.close().catch(() => undefined)));
      throw err;
    }
    return opened;
  }

  private openLog(topic: Topic, partition: number, config: LogConfig): Promise<PartitionLog> {
    const { clock, formats } = this.options;
    if (this.options.memory) return Promise.resolve(new MemoryLog(config, { clock, formats }));
    return openFileLog(this.partitionDir(topic.internalId, partition), config, {
      clock,
      formats,
      logger: this.options.logger.child({ topic: topic.name, partition }),
      onCorruptBatch: () => this.options.onCorruptBatch?.(metricLabels(topic, partition)),
      ...(this.options.logFs ? { fs: this.options.logFs } : {}),
      ...(this.options.directWrites !== undefined ? { directWrites: this.options.directWrites } : {}),
      ...(this.options.offload !== undefined ? { offload: this.options.offload } : {}),
    });
  }
}

/** Neutral labels: the catalog namespace and topic name (a Kafka topic `orders` is namespace `default`, topic `orders`). */
function metricLabels(topic: Topic, partition: number): { namespace: string; topic: string; partition: string } {
  return { namespace: topic.namespace, topic: topic.name, partition: String(partition) };
}
