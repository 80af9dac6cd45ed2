// The subscriptions of a listener: one loop per subscription pushing a shard's records down the
// event stream the broker opened for it, as shared event batches (0x0004, with base_offset when
// the subscriber negotiated 0x0020; per-subscriber 0x0002 to one that offered flags without
// 0x0004). Reads go through the core read service (read_committed: up to the last stable offset)
// and wait for appends with its append waiters.
//
// Encoded once: subscribers of one shard at the same offset share one read and its encoded
// batches (EventBatchFrames: one chunk list with offsets, one without, over the same record
// bytes); a stored Felix batch is sent as its record list, uncopied. The reads a shard's
// subscribers share hold their bytes against the broker's memory budget (core/memory-budget.ts)
// until the shard's cache lets them go (at most sharedReadsPerShard reads, dropped when the
// shard's last subscription ends). A slow subscriber holds at most subscriberBufferedBytesMax in
// its stream's write buffer: past that its loop reads nothing more until the stream drains.

import { setMaxListeners } from 'node:events';
import type { Writable } from 'node:stream';
import type { Logger } from '../../base/logger.js';
import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import type { Reservation } from '../../core/memory-budget.js';
import type { PartitionReader } from '../../core/reads.js';
import { BatchFormat } from '../../base/batch.js';
import { EventBatchFrames, parseStoredFelix, recordPayloads, storedOffsetAt } from './codec/index.js';
import type { FelixSettings } from './settings.js';
import { writeChunks } from './write-chunks.js';

/** Reads kept per shard for subscribers that come to the same offset. */
export const sharedReadsPerShard = 4;

export interface Subscription {
  readonly topic: Topic;
  readonly shard: number;
  /** The first offset to send. */
  readonly start: number;
  /** The broker-opened event stream (its hello already written). */
  readonly out: Writable;
  /** The subscriber negotiated EVENT_BATCH_OFFSETS (0x0020). */
  readonly offsets: boolean;
  /**
   * The subscription id for per-subscriber batches (0x0002), for a subscriber that offered
   * flags without the shared form (0x0004); null: shared batches.
   */
  readonly perSubscriber: bigint | null;
  /** Aborted when the connection goes. */
  readonly closed: AbortSignal;
  /** Called once when the subscription ends. */
  ended(): void;
}

/** One read of a shard, encoded as event batches. */
interface SharedRead {
  readonly batches: EventBatchFrames[];
  /** Where the next read starts. */
  readonly next: number;
}

interface ShardCache {
  subscribers: number;
  reads: Map<number, { read: Promise<SharedRead>; reservation: Reservation }>;
}

export class FelixEventStreams {
  private readonly running = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly shards = new Map<string, ShardCache>();
  private nextId = 1n;

  constructor(
    private readonly broker: Broker,
    private readonly settings: FelixSettings,
    private readonly logger: Logger,
  ) {
    // Every subscription listens for the listener's stop.
    setMaxListeners(0, this.stopping.signal);
  }

  /** A subscription id for a subscribe that named none. */
  subscriptionId(): bigint {
    return this.nextId++;
  }

  /** Subscriptions running now. */
  get size(): number {
    return this.running.size;
  }

  /** Starts pushing a subscription's records; it runs until its stream or connection goes. */
  start(sub: Subscription): void {
    const key = `${sub.topic.internalId}:${sub.shard}`;
    const cache = this.shards.get(key) ?? { subscribers: 0, reads: new Map() };
    this.shards.set(key, cache);
    cache.subscribers++;
    const run = this.loop(sub, cache)
      .catch((error: unknown) => this.logger.debug('a felix subscription ended on an error', { topic: sub.topic.name, shard: sub.shard, error }))
      .finally(() => {
        this.running.delete(run);
        if (--cache.subscribers === 0) {
          this.shards.delete(key);
          for (const r of cache.reads.values()) r.reservation.release();
        }
        if (!sub.out.destroyed && !sub.out.writableEnded) sub.out.end();
        sub.ended();
      });
    this.running.add(run);
  }

  /** Ends every subscription and waits for their loops. */
  async close(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.running]);
  }

  private async loop(sub: Subscription, cache: ShardCache): Promise<void> {
    const gone = (): boolean => sub.closed.aborted || this.stopping.signal.aborted || sub.out.destroyed || sub.out.writableEnded;
    let next = sub.start;
    while (!gone()) {
      const reader = await this.broker.reads.openSettled(sub.topic, sub.shard);
      const position = reader.position();
      // Records retention removed meanwhile are passed over: the subscriber sees the gap in the offsets.
      if (next < position.logStartOffset) next = position.logStartOffset;
      if (next < position.lastStableOffset) {
        const read = await this.sharedRead(cache, reader, next, position.lastStableOffset);
        writeChunks(
          sub.out,
          read.batches.flatMap((batch) => (sub.perSubscriber === null ? batch.shared(sub.offsets) : batch.perSubscriber(sub.perSubscriber, sub.offsets))),
        );
        if (sub.out.writableLength > this.settings.subscriberBufferedBytesMax) await this.drained(sub);
        // A read that got nowhere (the log changed under it) waits for the next append, not a spin.
        if (read.next > next) {
          next = read.next;
          continue;
        }
      }
      await this.appended(reader, sub);
    }
  }

  /** The read at `from` that this shard's subscribers share (made by the first to ask). */
  private sharedRead(cache: ShardCache, reader: PartitionReader, from: number, end: number): Promise<SharedRead> {
    const held = cache.reads.get(from);
    if (held !== undefined) return held.read;
    const reservation = this.broker.memoryBudget.reserve(this.settings.eventBatchBytesMax);
    const read = this.read(reader, from, end, Math.max(1, reservation.bytes)).then(
      (r) => {
        reservation.settle(r.bytes);
        return r.shared;
      },
      (error: unknown) => {
        cache.reads.delete(from);
        reservation.release();
        throw error;
      },
    );
    cache.reads.set(from, { read, reservation });
    if (cache.reads.size > sharedReadsPerShard) {
      const [oldest, entry] = cache.reads.entries().next().value as [number, { reservation: Reservation }];
      cache.reads.delete(oldest);
      entry.reservation.release();
    }
    return read;
  }

  private async read(reader: PartitionReader, from: number, end: number, bytesMax: number): Promise<{ shared: SharedRead; bytes: number }> {
    const recordsMax = this.settings.eventBatchRecordsMax;
    const r = await reader.readRecords({ from, end, recordsMax, bytesMax, format: BatchFormat.felix, isolation: 'read_committed' });
    const batches: EventBatchFrames[] = [];
    for (const chunk of r.chunks) if (Buffer.isBuffer(chunk)) batches.push(...eventBatchesOf(chunk, from));
    // A read that stopped at recordsMax may have stopped inside a stored batch (one of more records
    // than an event batch holds, a Kafka producer's, say): the next read starts after its last record.
    return { shared: { batches, next: r.records >= recordsMax ? r.lastOffset + 1 : r.next }, bytes: r.bytes };
  }

  /** Until the subscriber's stream drains (or it goes). */
  private drained(sub: Subscription): Promise<void> {
    return this.until(sub, (done) => {
      sub.out.once('drain', done);
      return () => sub.out.off('drain', done);
    });
  }

  /** Until the shard has a new record (or the subscription goes). */
  private appended(reader: PartitionReader, sub: Subscription): Promise<void> {
    return this.until(sub, (done) => reader.onAppend(done));
  }

  private until(sub: Subscription, arm: (done: () => void) => () => void): Promise<void> {
    return new Promise<void>((resolve) => {
      let settled = false;
      const signals = [sub.closed, this.stopping.signal];
      const done = (): void => {
        if (settled) return;
        settled = true;
        disarm();
        for (const s of signals) s.removeEventListener('abort', done);
        sub.out.off('close', done);
        resolve();
      };
      const disarm = arm(done);
      for (const s of signals) s.addEventListener('abort', done, { once: true });
      sub.out.once('close', done);
      if (sub.closed.aborted || this.stopping.signal.aborted || sub.out.destroyed) done();
    });
  }
}

/**
 * The event batches of one stored Felix batch: its record list as it is when its offsets run on
 * from base_offset, else one batch per run of consecutive offsets; records before `from` left out.
 */
export function eventBatchesOf(payload: Buffer, from: number): EventBatchFrames[] {
  const parsed = parseStoredFelix(payload);
  if (!parsed.ok) return [];
  const b = parsed.value;
  if (b.offsetDeltas === null && b.baseOffset >= BigInt(from)) return [new EventBatchFrames({ records: b.records }, b.baseOffset)];
  const out: EventBatchFrames[] = [];
  const payloads = recordPayloads(b.records);
  let run: Buffer[] = [];
  let runBase = 0n;
  for (let i = 0; i < payloads.length; i++) {
    const offset = storedOffsetAt(b, i);
    if (offset < BigInt(from)) continue;
    if (run.length > 0 && offset !== runBase + BigInt(run.length)) {
      out.push(new EventBatchFrames({ payloads: run }, runBase));
      run = [];
    }
    if (run.length === 0) runBase = offset;
    run.push(payloads[i]!);
  }
  if (run.length > 0) out.push(new EventBatchFrames({ payloads: run }, runBase));
  return out;
}
