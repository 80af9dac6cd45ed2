// CursusEventStore: per-aggregate event streams on an event_sourcing topic (spec §4 "Event
// Sourcing Commands"): APPEND_STREAM with optimistic concurrency, READ_STREAM's two frames (the
// JSON envelope with the snapshot that applies, then the CBV2 batch of the later events),
// STREAM_VERSION, SAVE_SNAPSHOT and READ_SNAPSHOT, and snapshots taken automatically every
// `snapshotEvery` events (default 500, as spec §10 recommends) from a state callback.
//
// Versions: an aggregate with no events is at version 0; its n-th event has version n.
// append(key, expectedVersion, event) writes version expectedVersion + 1 and fails with
// version_conflict (class conflict, fields current and expected) when the aggregate has moved on.

import type { CursusRecord } from '../../protocols/cursus/codec/index.js';
import type { CursusClient } from './client.js';
import type { RequestOptions } from './client-core.js';
import type { Snapshot } from './replies.js';

export interface EventStoreOptions {
  topic: string;
  /** Take a snapshot after every this many events (default 500; 0: never). */
  snapshotEvery?: number;
  /** The aggregate's state at `version`, for automatic snapshots (without it, none are taken). */
  snapshotState?: (key: string, version: number) => Promise<string | Buffer> | string | Buffer;
  /** An automatic snapshot failed (the append itself succeeded). Default: ignored. */
  onSnapshotError?: (err: unknown, key: string, version: number) => void;
}

export interface NewEvent {
  /** The event type (event_type), e.g. OrderCreated. */
  type?: string;
  /** Bytes as they are, a string as UTF-8, anything else as JSON. */
  payload: string | Buffer | object;
  /** For upcasting (broker default 1). */
  schemaVersion?: number;
  /** JSON text, or an object to serialize. */
  metadata?: string | object;
  /** A unique ID, for idempotent retries on aggregate_replay topics. */
  eventId?: string;
}

export interface StoredEvent {
  version: number;
  type: string;
  schemaVersion: number;
  payload: Buffer;
  metadata?: string;
  eventId?: string;
  offset: number;
  partition: number;
  timestamp?: number;
}

export interface AppendResult {
  version: number;
  offset: number;
  partition: number;
  /** True when this append triggered an automatic snapshot that was saved. */
  snapshotted: boolean;
}

export interface ReadResult {
  /** The snapshot READ_STREAM applied (events start after it), or null. */
  snapshot: Snapshot | null;
  events: StoredEvent[];
  /** The version after the last event (or the snapshot's): the aggregate's version as read. */
  version: number;
  partition: number;
}

function bytesOf(payload: string | Buffer | object): string | Buffer {
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) return payload;
  return JSON.stringify(payload);
}

/** A READ_STREAM record as an event (its aggregate_version is its version). */
export function storedEvent(r: CursusRecord): StoredEvent {
  return {
    version: r.aggregateVersion ?? 0,
    type: r.eventType ?? '',
    schemaVersion: r.schemaVersion ?? 1,
    payload: r.payload,
    ...(r.metadata !== undefined ? { metadata: r.metadata } : {}),
    ...(r.eventId !== undefined ? { eventId: r.eventId } : {}),
    offset: r.offset,
    partition: r.partition,
    ...(r.timestamp !== undefined ? { timestamp: r.timestamp } : {}),
  };
}

export class CursusEventStore {
  readonly topic: string;
  readonly snapshotEvery: number;

  constructor(
    readonly client: CursusClient,
    readonly options: EventStoreOptions,
  ) {
    this.topic = options.topic;
    this.snapshotEvery = options.snapshotEvery ?? 500;
    if (!Number.isSafeInteger(this.snapshotEvery) || this.snapshotEvery < 0) throw new RangeError('snapshotEvery must be a non-negative integer');
  }

  /** APPEND_STREAM: the event becomes version expectedVersion + 1, or version_conflict. */
  async append(key: string, expectedVersion: number, event: NewEvent, options?: RequestOptions): Promise<AppendResult> {
    if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) throw new RangeError('expectedVersion must be a non-negative integer (0: a new aggregate)');
    const r = await this.client.appendStream(
      {
        topic: this.topic,
        key,
        version: expectedVersion + 1,
        message: bytesOf(event.payload),
        eventType: event.type,
        schemaVersion: event.schemaVersion,
        metadata: event.metadata === undefined || typeof event.metadata === 'string' ? event.metadata : JSON.stringify(event.metadata),
        eventId: event.eventId,
      },
      options,
    );
    const snapshotted = await this.autoSnapshot(key, r.version);
    return { ...r, snapshotted };
  }

  /** READ_STREAM from `fromVersion` (default 1): the snapshot that applies and the events after it. */
  async read(key: string, fromVersion?: number, options?: RequestOptions): Promise<ReadResult> {
    const r = await this.client.readStream({ topic: this.topic, key, fromVersion }, options);
    const events = r.events.map(storedEvent);
    const last = events.length > 0 ? events[events.length - 1]!.version : (r.snapshot?.version ?? (fromVersion ?? 1) - 1);
    return { snapshot: r.snapshot, events, version: last, partition: r.partition };
  }

  /**
   * The aggregate's state: the snapshot READ_STREAM applied (read with `fromSnapshot`; needed once
   * snapshots exist, since the broker then sends only the later events) or `initial`, then every
   * later event through `apply`.
   */
  async load<S>(
    key: string,
    reducer: { initial: S; fromSnapshot?: (payload: string, version: number) => S; apply: (state: S, event: StoredEvent) => S },
    options?: RequestOptions,
  ): Promise<{ state: S; version: number }> {
    const r = await this.read(key, undefined, options);
    let state = reducer.initial;
    if (r.snapshot !== null) {
      if (reducer.fromSnapshot === undefined) throw new Error(`aggregate ${key} has a snapshot at version ${r.snapshot.version}: load() needs fromSnapshot`);
      state = reducer.fromSnapshot(r.snapshot.payload, r.snapshot.version);
    }
    for (const e of r.events) state = reducer.apply(state, e);
    return { state, version: r.version };
  }

  /** STREAM_VERSION: 0 for an aggregate with no events. */
  version(key: string, options?: RequestOptions): Promise<number> {
    return this.client.streamVersion(this.topic, key, options);
  }

  /** SAVE_SNAPSHOT: the state at `version` (at most the current version). */
  async saveSnapshot(key: string, version: number, state: string | Buffer | object, options?: RequestOptions): Promise<void> {
    await this.client.saveSnapshot({ topic: this.topic, key, version, message: bytesOf(state) }, options);
  }

  readSnapshot(key: string, options?: RequestOptions): Promise<Snapshot | null> {
    return this.client.readSnapshot(this.topic, key, options);
  }

  private async autoSnapshot(key: string, version: number): Promise<boolean> {
    const produce = this.options.snapshotState;
    if (produce === undefined || this.snapshotEvery === 0 || version % this.snapshotEvery !== 0) return false;
    try {
      await this.saveSnapshot(key, version, await produce(key, version));
      return true;
    } catch (err) {
      this.options.onSnapshotError?.(err, key, version);
      return false;
    }
  }
}
