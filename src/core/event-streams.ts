// Event-sourced aggregates over the partition logs (Cursus APPEND_STREAM and friends): each
// aggregate key of a partition has a stream of events numbered 1, 2, 3 ... (its versions), and an
// event is appended only as the next version (optimistic concurrency). The events are ordinary
// records of the log; this file keeps, per partition, the index from key to its events (version →
// offset, event id and SHA-256 of the payload) and the aggregate snapshots.
//
//  - The index is a function of the log: it is rebuilt by scanning the partition (from its start,
//    lazily, on the first use of the partition) and caught up with the log's tail before each
//    operation, so records that reached the log another way (a restart, another writer) count.
//    Which records are events, and their key, version and event id, is the protocol's to say
//    (EventRecordsFn per batch format): the core never parses protocol bytes.
//  - Operations on one partition run one at a time (a promise chain per partition), so two
//    appends racing for the same version are decided in order: one wins, the other conflicts.
//  - An exact retry (same version, event id and payload digest as the event stored there) is
//    answered with the stored event instead of a conflict, without appending again.
//  - Retention may remove the oldest events: a stream rebuilt after a restart then starts at the
//    first version still in the log (`firstVersion`).
//  - Memory is bounded: every partition index of this instance together may hold `indexBytesMax`
//    bytes (an estimate per key and per event). An append past it is refused (resource_exhausted)
//    before anything is written; a scan that would pass it drops that partition's index and
//    refuses the operation the same way, rather than answer from a partial index.
//  - Snapshots live in the metadata store (EventSnapshotStore), one per (topic, partition, key);
//    a deleted or purged topic loses them with its records (Broker.topicDeleted/partitionsReset).

import { createHash } from 'node:crypto';
import type { Broker, Topic } from './broker.js';
import type { Clock } from '../base/clock.js';
import { QuartetError, isQuartetError } from '../base/errors.js';
import { silentLogger, type Logger } from '../base/logger.js';
import type { MetadataStore } from './metadata-store.js';
import { SerialQueue } from './serial.js';
import { BatchFlags, type AppendRequest, type BatchFormat, type PartitionLog, type StoredBatch } from '../log/index.js';

// Named limits.
/** Bytes asked of the log per read while scanning a partition for events. */
export const eventScanReadBytes = 4 * 1024 * 1024;
/** Aggregate keys indexed per partition; an append of a new key past it is refused. */
export const eventStreamKeysPerPartitionMax = 1_000_000;
/** Bytes every partition index of one EventStreams may hold together (estimated: eventIndexCost). */
export const eventIndexBytesMaxDefault = 256 * 1024 * 1024;
/** The estimated heap bytes of one indexed key beside its own bytes (map entry, string, stream object, array). */
export const eventIndexKeyOverheadBytes = 192;
/** The estimated heap bytes of one indexed event (its object, the SHA-256 digest buffer, the array slot). */
export const eventIndexEventBytes = 176;

/** What indexing an event costs: the event, plus the key when the stream is new. */
export function eventIndexCost(key: Buffer, newStream: boolean): number {
  return eventIndexEventBytes + (newStream ? eventIndexKeyOverheadBytes + key.length : 0);
}

/** What a protocol reads out of one of its stored batches: its event records. */
export interface EventRecordInfo {
  offset: number;
  key: Buffer;
  /** The aggregate version the record was written as. */
  version: number;
  eventId: string | null;
  payload: Buffer;
}

/** The event records of a stored batch ([] for a batch that holds none). */
export type EventRecordsFn = (batch: StoredBatch) => EventRecordInfo[];

/** One event of a stream, as the index holds it. */
export interface StreamEvent {
  version: number;
  offset: number;
  eventId: string | null;
  /** SHA-256 of the payload. */
  digest: Buffer;
}

export type AppendOutcome =
  | { kind: 'appended'; version: number; offset: number }
  /** An exact retry of the event stored at that version: nothing was appended. */
  | { kind: 'duplicate'; version: number; offset: number }
  | { kind: 'conflict'; current: number };

export interface EventAppend {
  key: Buffer;
  /** Must be the stream's current version + 1. */
  version: number;
  eventId: string | null;
  payload: Buffer;
  /** The record to append, built for the version it is appended as. */
  build(version: number): AppendRequest;
}

export interface EventSnapshot {
  version: number;
  payload: Buffer;
}

export type SnapshotOutcome = { kind: 'saved' } | { kind: 'exceeds'; current: number };

/** The SHA-256 of an event's payload (what an exact retry is recognised by). */
export function payloadDigest(payload: Buffer): Buffer {
  return createHash('sha256').update(payload).digest();
}

/** One key's events: versions firstVersion .. firstVersion + events.length - 1. */
interface Stream {
  firstVersion: number;
  events: StreamEvent[];
}

interface PartitionIndex {
  /** `<topic internal id>:<partition>`, its key in EventStreams.indexes. */
  id: string;
  /** The log this index describes (a purge or a partition removal replaces it). */
  log: PartitionLog;
  /** Offsets below it were scanned. */
  scannedTo: number;
  streams: Map<string, Stream>;
  /** Estimated heap bytes of `streams` (eventIndexCost). */
  bytes: number;
  /** A scan could not index a record within the bound: the index is partial and is dropped. */
  overflowed: boolean;
}

/** The snapshots of event-sourced aggregates in the metadata store. */
export class EventSnapshotStore {
  constructor(
    private readonly store: MetadataStore,
    private readonly clock: Clock,
  ) {}

  save(topic: Topic, partition: number, key: Buffer, snapshot: EventSnapshot): Promise<void> {
    return this.store.putEventSnapshot({ topicInternalId: topic.internalId, partition, key, version: snapshot.version, payload: snapshot.payload, updatedAt: this.clock.now() });
  }

  async load(topic: Topic, partition: number, key: Buffer): Promise<EventSnapshot | null> {
    const r = await this.store.getEventSnapshot(topic.internalId, partition, key);
    return r === null ? null : { version: r.version, payload: r.payload };
  }

  /** Every snapshot of the topic (deleted or purged). */
  dropTopic(topicInternalId: number): Promise<number> {
    return this.store.deleteTopicEventSnapshots(topicInternalId);
  }
}

export interface EventStreamsOptions {
  broker: Broker;
  /** Event records by batch format; batches of other formats hold no events. */
  readers: Readonly<Partial<Record<BatchFormat, EventRecordsFn>>>;
  logger?: Logger;
  keysPerPartitionMax?: number;
  /** Bytes every partition index together may hold (default eventIndexBytesMaxDefault). */
  indexBytesMax?: number;
}

export class EventStreams {
  private readonly broker: Broker;
  private readonly readers: Readonly<Partial<Record<BatchFormat, EventRecordsFn>>>;
  private readonly logger: Logger;
  private readonly keysMax: number;
  private readonly bytesMax: number;
  /** Estimated bytes of every index held (the sum of their `bytes`). */
  private heldBytes = 0;
  private readonly indexes = new Map<string, PartitionIndex>();
  private readonly queues = new Map<string, SerialQueue>();
  private readonly unsubscribe: () => void;

  constructor(options: EventStreamsOptions) {
    this.broker = options.broker;
    this.readers = options.readers;
    this.logger = options.logger ?? silentLogger;
    this.keysMax = options.keysPerPartitionMax ?? eventStreamKeysPerPartitionMax;
    this.bytesMax = options.indexBytesMax ?? eventIndexBytesMaxDefault;
    this.unsubscribe = this.broker.onTopicChanges({
      topicDeleted: (topic) => this.forgetTopic(topic.internalId),
      partitionsChanged: (topic) => this.forgetTopic(topic.internalId),
    });
  }

  /** The stream's current version (0: no event). */
  version(topic: Topic, partition: number, key: Buffer): Promise<number> {
    return this.inTurn(topic, partition, (index) => currentVersion(index.streams.get(streamKey(key))));
  }

  /** The stream's events from `fromVersion` on (those the index still holds), in version order. */
  events(topic: Topic, partition: number, key: Buffer, fromVersion = 1): Promise<{ current: number; firstVersion: number; events: StreamEvent[] }> {
    return this.inTurn(topic, partition, (index) => {
      const s = index.streams.get(streamKey(key));
      if (s === undefined) return { current: 0, firstVersion: 1, events: [] };
      const from = Math.max(fromVersion, s.firstVersion) - s.firstVersion;
      return { current: currentVersion(s), firstVersion: s.firstVersion, events: s.events.slice(from) };
    });
  }

  /**
   * Appends the event as version `version` if that is the stream's next one; an exact retry of a
   * stored event is answered as a duplicate; anything else is a conflict with the current version.
   */
  append(topic: Topic, partition: number, event: EventAppend): Promise<AppendOutcome> {
    return this.inTurn(topic, partition, async (index) => {
      const k = streamKey(event.key);
      const s = index.streams.get(k);
      const current = currentVersion(s);
      const digest = payloadDigest(event.payload);
      if (event.version !== current + 1) {
        const stored = s?.events[event.version - s.firstVersion];
        if (stored !== undefined && event.eventId !== null && stored.eventId === event.eventId && stored.digest.equals(digest)) {
          return { kind: 'duplicate', version: stored.version, offset: stored.offset };
        }
        return { kind: 'conflict', current };
      }
      if (s === undefined && index.streams.size >= this.keysMax) {
        throw new QuartetError('resource_exhausted', `partition ${partition} of '${topic.name}' holds ${this.keysMax} aggregate keys, the most it may`);
      }
      const cost = eventIndexCost(event.key, s === undefined);
      if (this.heldBytes + cost > this.bytesMax) throw this.exhausted();
      // Held before the append, so that appends to other partitions meanwhile count it.
      this.charge(index, cost);
      let result;
      try {
        result = await this.broker.append(topic, partition, event.build(event.version));
      } catch (err) {
        this.charge(index, -cost);
        throw err;
      }
      const entry: StreamEvent = { version: event.version, offset: result.baseOffset, eventId: event.eventId, digest };
      if (s === undefined) index.streams.set(k, { firstVersion: event.version, events: [entry] });
      else s.events.push(entry);
      // Nothing else landed in between: the scan need not read the event back.
      if (index.scannedTo === result.baseOffset) index.scannedTo = result.lastOffset + 1;
      return { kind: 'appended', version: event.version, offset: result.baseOffset };
    });
  }

  /** Saves a snapshot of the stream at `version`, which may not exceed its current version. */
  saveSnapshot(topic: Topic, partition: number, key: Buffer, snapshot: EventSnapshot): Promise<SnapshotOutcome> {
    return this.inTurn(topic, partition, async (index) => {
      const current = currentVersion(index.streams.get(streamKey(key)));
      if (snapshot.version > current) return { kind: 'exceeds', current };
      await this.broker.eventSnapshots.save(topic, partition, key, snapshot);
      return { kind: 'saved' };
    });
  }

  snapshot(topic: Topic, partition: number, key: Buffer): Promise<EventSnapshot | null> {
    return this.broker.eventSnapshots.load(topic, partition, key);
  }

  /** Estimated bytes every partition index holds now. */
  get indexBytes(): number {
    return this.heldBytes;
  }

  close(): void {
    this.unsubscribe();
  }

  // --- internals -----------------------------------------------------------------------------

  /** Runs `work` in the partition's turn, with its index caught up with the log. */
  private inTurn<T>(topic: Topic, partition: number, work: (index: PartitionIndex) => T | Promise<T>): Promise<T> {
    const key = `${topic.internalId}:${partition}`;
    let queue = this.queues.get(key);
    if (queue === undefined) {
      queue = new SerialQueue();
      this.queues.set(key, queue);
    }
    return queue.run(async () => work(await this.caughtUp(key, topic, partition)));
  }

  private async caughtUp(key: string, topic: Topic, partition: number): Promise<PartitionIndex> {
    const log = this.broker.partition(topic, partition);
    let stats = log.stats();
    let index = this.indexes.get(key);
    // A purge replaced the log (it starts again at 0): the index describes records that are gone.
    if (index !== undefined && index.log !== log) {
      this.drop(key);
      index = undefined;
    }
    if (index === undefined) {
      index = { id: key, log, scannedTo: stats.logStartOffset, streams: new Map(), bytes: 0, overflowed: false };
      this.indexes.set(key, index);
    }
    let scanned = 0;
    while (index.scannedTo < stats.highWatermark) {
      let batches: StoredBatch[];
      try {
        batches = await this.broker.read(topic, partition, index.scannedTo, { maxBytes: eventScanReadBytes, maxOffset: stats.highWatermark });
      } catch (err) {
        // Retention moved the log's start past the scan: on from the new start.
        if (isQuartetError(err) && err.code === 'offset_out_of_range' && log.stats().logStartOffset > index.scannedTo) {
          index.scannedTo = log.stats().logStartOffset;
          continue;
        }
        throw err;
      }
      if (batches.length === 0) break;
      for (const b of batches) {
        if (b.lastOffset < index.scannedTo) continue;
        this.observe(index, b);
        if (index.overflowed) {
          this.drop(key);
          this.logger.warn('event index over its memory bound; partition not indexed', { topic: topic.name, partition, bytes: this.heldBytes, max: this.bytesMax });
          throw this.exhausted();
        }
        index.scannedTo = b.lastOffset + 1;
        scanned++;
      }
      stats = log.stats();
    }
    if (scanned > 0) this.logger.debug('event index caught up', { topic: topic.name, partition, batches: scanned });
    return index;
  }

  /** Adds a batch's event records; transactional and control batches hold none. */
  private observe(index: PartitionIndex, batch: StoredBatch): void {
    if ((batch.flags & (BatchFlags.transactional | BatchFlags.control)) !== 0) return;
    const read = this.readers[batch.format as BatchFormat];
    if (read === undefined) return;
    let records: EventRecordInfo[];
    try {
      records = read(batch);
    } catch (err) {
      this.logger.warn('skipping an unreadable batch while indexing events', { offset: batch.baseOffset, error: err });
      return;
    }
    for (const r of records) {
      const k = streamKey(r.key);
      const s = index.streams.get(k);
      const indexed = s === undefined ? r.version >= 1 && index.streams.size < this.keysMax : r.version === currentVersion(s) + 1;
      if (!indexed) continue;
      const cost = eventIndexCost(r.key, s === undefined);
      if (this.heldBytes + cost > this.bytesMax) {
        index.overflowed = true;
        return;
      }
      this.charge(index, cost);
      const entry: StreamEvent = { version: r.version, offset: r.offset, eventId: r.eventId, digest: payloadDigest(r.payload) };
      // The first event of a stream the scan sees may be past version 1 (retention took the
      // older ones); after it, only the next version extends it (its own append, seen again, or
      // a record written as an older version, is not a new event).
      if (s === undefined) index.streams.set(k, { firstVersion: r.version, events: [entry] });
      else s.events.push(entry);
    }
  }

  private forgetTopic(topicInternalId: number): void {
    const prefix = `${topicInternalId}:`;
    for (const key of [...this.indexes.keys()]) if (key.startsWith(prefix)) this.drop(key);
  }

  /** Adds to what the index holds (an index already dropped no longer counts). */
  private charge(index: PartitionIndex, bytes: number): void {
    index.bytes += bytes;
    if (this.indexes.get(index.id) === index) this.heldBytes += bytes;
  }

  /** Forgets a partition's index and what it held. */
  private drop(key: string): void {
    const index = this.indexes.get(key);
    if (index === undefined) return;
    this.heldBytes -= index.bytes;
    this.indexes.delete(key);
  }

  private exhausted(): QuartetError {
    return new QuartetError('resource_exhausted', `the event index holds ${this.heldBytes} of the ${this.bytesMax} bytes it may (the aggregate streams of every event-sourcing topic); delete or truncate an event-sourcing topic to free it`);
  }
}

function streamKey(key: Buffer): string {
  return key.toString('latin1');
}

function currentVersion(s: Stream | undefined): number {
  return s === undefined ? 0 : s.firstVersion + s.events.length - 1;
}
