// The Cursus event store: APPEND_STREAM, READ_STREAM, STREAM_VERSION, SAVE_SNAPSHOT and
// READ_SNAPSHOT (spec "Event Sourcing Commands") over the core's event streams
// (src/core/event-streams.ts), which keep the versions, the concurrency rule and the snapshots.
// This file says what a Cursus event is in the log and routes by aggregate key.
//
//  - An event is a CBV2 record with key, event_type, schema_version, aggregate_version (the
//    version), metadata and event_id (docs/protocols/cursus-wire-v2.md §9), appended as a batch
//    of one record; records of CBV2 batches with an aggregate_version and a key are the events
//    the core indexes (cursusEventRecords).
//  - Event-sourcing commands go to the partition of their aggregate key: FNV-1a 64 of the key
//    modulo the partition count (spec §8 hash_key), whatever the topic's partitioner.
//  - The index of every event-sourcing topic together is bounded in memory (the core's
//    indexBytesMax, `eventIndexBytesMax` here): past it an append, or a read of a partition whose
//    index no longer fits, is `event_index_exhausted topic= partition=`; nothing is written.
//  - Only topics whose Cursus definition has event_sourcing=true accept them
//    (event_sourcing_not_enabled otherwise); the definition comes from the topic table.

import type { Broker, PartitionLog, Topic } from '../../core/broker.js';
import type { Clock } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';
import { EventStreams, type EventRecordsFn, type EventSnapshot, type StreamEvent } from '../../core/event-streams.js';
import { BatchFlags, BatchFormat, type AppendRequest, type StoredBatch } from '../../base/batch.js';
import { isQuartetError } from '../../base/errors.js';
import { decodeBatch, encodeBatch, type CursusRecord } from './codec/batch.js';
import { CursusFailure, type CursusTopicView } from './handler.js';
import { defaultTopicView, fnv1a64Mod, requireCoreTopic } from './routing.js';
import { AggregateProofs } from './event-store-proofs.js';

// Named limits.
/** READ_STREAM: the events of one reply at most (their payloads), under the 64 MiB frame limit. */
export const readStreamBytesMax = 48 * 1024 * 1024;
/** Aggregate keys: at most this many bytes. */
export const aggregateKeyBytesMax = 1024;
/** Estimated heap bytes the aggregate-stream index of every event-sourcing topic may hold together. */
export const eventIndexBytesMax = 256 * 1024 * 1024;

/** The event records of a stored CBV2 batch (for the core's index). */
export const cursusEventRecords: EventRecordsFn = (batch: StoredBatch) => {
  if (batch.format !== BatchFormat.cursus) return [];
  const decoded = decodeBatch(batch.payload);
  if (!decoded.ok) return [];
  const out = [];
  for (const r of decoded.value.records) {
    if (r.aggregateVersion === undefined || r.key === undefined || r.controlBatchType !== undefined) continue;
    out.push({ offset: r.offset, key: r.key, version: r.aggregateVersion, eventId: r.eventId ?? null, payload: r.payload });
  }
  return out;
};

export interface CursusEventStoreOptions {
  broker: Broker;
  logger: Logger;
  clock: Clock;
  /** The Cursus topic table (topics.ts); default: defaultTopicView (event sourcing off). */
  topicView?: (name: string) => CursusTopicView | undefined;
  /** Default eventIndexBytesMax. */
  indexBytesMax?: number;
}

export interface AppendEvent {
  topic: string;
  key: Buffer;
  version: number;
  eventType: string | undefined;
  schemaVersion: number;
  metadata: string | undefined;
  eventId: string | undefined;
  producerId: string | undefined;
  seqNum: number | undefined;
  epoch: number | undefined;
  message: Buffer;
}

/** An event stream's place: its topic and the partition its key routes to. */
export interface StreamPlace {
  topic: Topic;
  view: CursusTopicView;
  partition: number;
}

export interface StreamRead extends StreamPlace {
  /** The snapshot READ_STREAM starts after (one at or after from_version), or null. */
  snapshot: EventSnapshot | null;
  /** The events after it, as the log holds them. */
  records: CursusRecord[];
}

export class CursusEventStore {
  readonly streams: EventStreams;
  /** AGGREGATE_REPLAY_PROOF and AGGREGATE_EVENT_RANGE_READ. */
  readonly proofs: AggregateProofs;
  private readonly broker: Broker;
  private readonly clock: Clock;
  private readonly topicView: (name: string) => CursusTopicView | undefined;

  constructor(options: CursusEventStoreOptions) {
    this.broker = options.broker;
    this.clock = options.clock;
    this.topicView = options.topicView ?? ((name) => {
      const t = this.broker.catalog.getTopic({ topic: name });
      return t === null ? undefined : defaultTopicView(t);
    });
    this.streams = new EventStreams({ broker: options.broker, readers: { [BatchFormat.cursus]: cursusEventRecords }, logger: options.logger, indexBytesMax: options.indexBytesMax ?? eventIndexBytesMax });
    this.proofs = new AggregateProofs(this);
  }

  /** Nothing to load: each partition's index is built from its log on first use. */
  async start(): Promise<void> {}

  close(): void {
    this.streams.close();
  }

  /** The topic (which must have event_sourcing=true) and the partition of the key. */
  place(topicName: string, key: Buffer): StreamPlace {
    const topic = requireCoreTopic(this.broker, topicName);
    const view = this.topicView(topicName);
    if (view === undefined || !view.eventSourcing) throw CursusFailure.of('event_sourcing_not_enabled', [['topic', topicName]]);
    if (key.length === 0 || key.length > aggregateKeyBytesMax) throw CursusFailure.of('invalid_key', [['reason', `an aggregate key is 1-${aggregateKeyBytesMax} bytes`]]);
    return { topic, view, partition: fnv1a64Mod(key, topic.partitions) };
  }

  async append(e: AppendEvent): Promise<{ version: number; offset: number; partition: number }> {
    const place = this.place(e.topic, e.key);
    if (place.view.aggregateReplay && (e.eventId === undefined || e.eventId === '')) throw CursusFailure.of('missing_event_id', [['command', 'APPEND_STREAM']], 'aggregate_replay topics need an event_id on every event');
    const outcome = await indexed(place, this.streams.append(place.topic, place.partition, {
      key: e.key,
      version: e.version,
      eventId: e.eventId ?? null,
      payload: e.message,
      build: (version) => this.eventRecord(place, e, version),
    }));
    if (outcome.kind === 'conflict') throw CursusFailure.of('version_conflict', [['current', String(outcome.current)], ['expected', String(e.version)]]);
    return { version: outcome.version, offset: outcome.offset, partition: place.partition };
  }

  async version(topicName: string, key: Buffer): Promise<number> {
    const place = this.place(topicName, key);
    return indexed(place, this.streams.version(place.topic, place.partition, key));
  }

  /** READ_STREAM: the snapshot that applies and the events after it, from `fromVersion` (≥ 1). */
  async read(topicName: string, key: Buffer, fromVersion: number): Promise<StreamRead> {
    const place = this.place(topicName, key);
    const stored = await this.streams.snapshot(place.topic, place.partition, key);
    const snapshot = stored !== null && stored.version >= fromVersion ? stored : null;
    const start = snapshot === null ? fromVersion : snapshot.version + 1;
    const { events } = await indexed(place, this.streams.events(place.topic, place.partition, key, start));
    return { ...place, snapshot, records: await this.recordsOf(place, events) };
  }

  async saveSnapshot(topicName: string, key: Buffer, version: number, payload: Buffer): Promise<number> {
    const place = this.place(topicName, key);
    const outcome = await indexed(place, this.streams.saveSnapshot(place.topic, place.partition, key, { version, payload }));
    if (outcome.kind === 'exceeds') throw CursusFailure.of('snapshot_version_exceeds_stream', [['version', String(version)], ['current', String(outcome.current)]]);
    return place.partition;
  }

  async readSnapshot(topicName: string, key: Buffer): Promise<EventSnapshot | null> {
    const place = this.place(topicName, key);
    return this.streams.snapshot(place.topic, place.partition, key);
  }

  /** The partition log a stream lives in. */
  partitionLog(place: StreamPlace): PartitionLog {
    return this.broker.partition(place.topic, place.partition);
  }

  /**
   * The stored records of `events` (offset order), each read from the log; events retention has
   * removed are not there to read.
   */
  async recordsOf(place: StreamPlace, events: readonly StreamEvent[]): Promise<CursusRecord[]> {
    const log = this.broker.partition(place.topic, place.partition);
    const out: CursusRecord[] = [];
    let bytes = 0;
    let batches: StoredBatch[] = [];
    for (const e of events) {
      if (e.offset < log.stats().logStartOffset) continue;
      let batch = batches.find((b) => b.baseOffset <= e.offset && e.offset <= b.lastOffset);
      if (batch === undefined) {
        batches = await this.broker.read(place.topic, place.partition, e.offset, { maxBytes: 1 << 20, maxOffset: e.offset + 1 });
        batch = batches.find((b) => b.baseOffset <= e.offset && e.offset <= b.lastOffset);
      }
      const record = batch === undefined ? undefined : recordAt(batch, e.offset);
      if (record === undefined) continue;
      bytes += record.payload.length;
      if (bytes > readStreamBytesMax) throw CursusFailure.of('read_stream_too_large', [['reason', `the events are more than ${readStreamBytesMax} bytes; read from a later from_version`]]);
      out.push(record);
    }
    return out;
  }

  private eventRecord(place: StreamPlace, e: AppendEvent, version: number): AppendRequest {
    const now = this.clock.now();
    const record: CursusRecord = {
      topic: place.topic.name,
      partition: place.partition,
      offset: 0,
      payload: e.message,
      ...(e.producerId !== undefined ? { producerId: e.producerId } : {}),
      ...(e.epoch !== undefined ? { producerEpoch: e.epoch } : {}),
      ...(e.seqNum !== undefined ? { seqNum: e.seqNum } : {}),
      timestamp: now,
      key: e.key,
      eventType: e.eventType ?? '',
      schemaVersion: e.schemaVersion,
      aggregateVersion: version,
      ...(e.metadata !== undefined ? { metadata: e.metadata } : {}),
      ...(e.eventId !== undefined ? { eventId: e.eventId } : {}),
    };
    const payload = Buffer.concat(encodeBatch({ idempotent: false, topic: place.topic.name, partition: place.partition, acks: 'all', batchStart: 0, batchEnd: 0, records: [record] }));
    return { format: BatchFormat.cursus, recordCount: 1, firstTimestamp: now, maxTimestamp: now, producerId: -1, producerEpoch: -1, baseSequence: -1, flags: 0, payload };
  }
}

/** The index's memory bound as the Cursus error a client can act on; other failures as they are. */
export async function indexed<T>(place: StreamPlace, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (isQuartetError(err) && err.code === 'resource_exhausted') {
      throw CursusFailure.of('event_index_exhausted', [['topic', place.topic.name], ['partition', String(place.partition)]], err.message);
    }
    throw err;
  }
}

function recordAt(batch: StoredBatch, offset: number): CursusRecord | undefined {
  if (batch.format !== BatchFormat.cursus || (batch.flags & BatchFlags.control) !== 0) return undefined;
  const decoded = decodeBatch(batch.payload);
  return decoded.ok ? decoded.value.records.find((r) => r.offset === offset) : undefined;
}
