// The transaction coordinator's records (transactions.ts): the states of a transactional id and
// the transitions between them (Kafka's TransactionState), the in-memory entry of each id, its
// persisted form (one metadata-store row per transactional id) and TxnRecordWriter, through which
// every write of a record goes, in the order issued, before memory changes. Also the types of
// what the coordinator reaches partitions and writes markers through, what it shares with its
// parts (TxnContext), and the pure helpers on entries and records.

import assert from 'node:assert/strict';
import type { TopicRef } from './catalog.js';
import type { Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import type { MetadataStore } from './metadata-store.js';
import type { OffsetCommit, OffsetStore } from './offsets.js';
import { producerEpochMax, type ProducerStateManager } from './producer-state.js';
import type { Scheduler, TimerHandle } from './scheduler.js';
import type { TxnIndex } from './txn-index.js';
import type { TxnTurns } from './txn-turns.js';
import type { PartitionLog } from '../log/index.js';

export const TxnState = {
  Empty: 'Empty',
  Ongoing: 'Ongoing',
  PrepareCommit: 'PrepareCommit',
  PrepareAbort: 'PrepareAbort',
  CompleteCommit: 'CompleteCommit',
  CompleteAbort: 'CompleteAbort',
  Dead: 'Dead',
} as const;
export type TxnState = (typeof TxnState)[keyof typeof TxnState];

/** The states each state may be entered from (Kafka's TransactionState.validPreviousStates). */
const validPrevious: Readonly<Record<TxnState, readonly TxnState[]>> = {
  Empty: ['Empty', 'CompleteCommit', 'CompleteAbort'],
  Ongoing: ['Ongoing', 'Empty', 'CompleteCommit', 'CompleteAbort'],
  PrepareCommit: ['Ongoing'],
  PrepareAbort: ['Ongoing'],
  CompleteCommit: ['PrepareCommit'],
  CompleteAbort: ['PrepareAbort'],
  Dead: ['Empty', 'CompleteCommit', 'CompleteAbort'],
};

const allStates = new Set<string>(Object.values(TxnState));

/** A partition of a transaction, by the topic's internal id. */
export interface TxnPartition {
  topicInternalId: number;
  partition: number;
}

/** What a MarkerWriter is asked to append. */
export interface MarkerRequest extends TxnPartition {
  scope: string;
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  commit: boolean;
  coordinatorEpoch: number;
}

/**
 * Appends one marker (a control batch) and resolves with its offset once it is durable (flushed
 * to disk): the coordinator persists Complete* as soon as every marker resolved.
 */
export type MarkerWriter = (marker: MarkerRequest) => Promise<number>;

/** A partition as the coordinator needs it. */
export interface TxnPartitionHandle extends TxnPartition {
  /** `<topic internal id>:<partition>` (producer-state.ts partitionKey). */
  key: string;
  log: PartitionLog;
}

/** How the coordinator reaches partitions (the Broker implements it). */
export interface TxnPartitions {
  /** Throws unknown_namespace / unknown_topic / unknown_partition. */
  resolve(topic: TopicRef, partition: number): TxnPartitionHandle;
  /** Every open partition (recovery, checkpoints, retention). */
  list(): TxnPartitionHandle[];
  /** Settles once a purge of the topic under way has replaced its logs; undefined: none is. */
  purgeInProgress?(topicInternalId: number): Promise<void> | undefined;
}

/** The persisted form of a transactional id (TransactionRecord.state). */
export interface PersistedTxn {
  producerId: number;
  producerEpoch: number;
  lastProducerId: number;
  lastProducerEpoch: number;
  timeoutMs: number;
  state: TxnState;
  startedAt: number;
  partitions: Array<[number, number]>;
  groups: Array<[string, OffsetCommit[]]>;
  /** Absent in records written before it existed. */
  outcome?: PersistedOutcome | null;
}

/** What the last completed transaction held: [topicInternalId, partition] pairs and its staged offset count. */
export interface PersistedOutcome {
  partitions: Array<[number, number]>;
  offsets: number;
}

/** What the last completed transaction of a transactional id held (kept until the next completes). */
export interface TxnOutcome {
  partitions: TxnPartition[];
  offsets: number;
}

export interface TxnFields {
  producerId: number;
  producerEpoch: number;
  /** The id/epoch before the last client-initiated bump (-1: none): lets a retried InitProducerId through. */
  lastProducerId: number;
  lastProducerEpoch: number;
  timeoutMs: number;
  state: TxnState;
  startedAt: number;
  updatedAt: number;
  /** partitionKey → partition. */
  partitions: Map<string, TxnPartition>;
  /** groupId → partitionKey → pending offset. */
  groups: Map<string, Map<string, OffsetCommit>>;
  /** The last completed transaction's partitions and offsets (null: none completed yet). */
  outcome: TxnOutcome | null;
}

export interface TxnEntry extends TxnFields {
  readonly scope: string;
  readonly transactionalId: string;
  timeoutTimer: TimerHandle | null;
  retryTimer: TimerHandle | null;
  /** Partitions whose marker for the current Prepare* is written (memory only). */
  markersWritten: Set<string>;
  /** The record the store holds (null: none, or deleted), as of the last write that succeeded. */
  stored: StoredTxn | null;
  /** The record of the last write issued, which may not have run yet or may have failed. */
  issued: StoredTxn | null;
  /** The entry's record writes, in the order issued (chainWrite). */
  writes: Promise<void>;
  /** Record writes issued so far (memory only): numbers them for `drops`. */
  writesIssued: number;
  /**
   * Partitions dropped (dropPartitions) after write number `afterWrite` was issued: a transition
   * whose write was issued by then must not bring them back into memory when it completes.
   */
  drops: Array<{ afterWrite: number; keys: ReadonlySet<string> }>;
}

export interface StoredTxn {
  state: PersistedTxn;
  updatedAt: number;
}

/**
 * What the coordinator's parts (txn-markers.ts, txn-timeouts.ts) share with it: the entries, the
 * services it was built with, its records and turns, and whether it is closed.
 */
export interface TxnContext {
  readonly entries: Map<string, TxnEntry>;
  readonly store: MetadataStore;
  readonly producers: ProducerStateManager;
  readonly offsets: OffsetStore;
  /** The OffsetStore scope a transaction scope's offsets commit under. */
  offsetScopeOf(scope: string): string;
  readonly partitions: TxnPartitions;
  readonly writeMarker: MarkerWriter;
  readonly index: TxnIndex;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly markerRetryBackoffMs: number;
  readonly records: TxnRecordWriter;
  readonly turns: TxnTurns;
  /** The epoch written into markers; grows at every open. */
  coordinatorEpoch: number;
  closed: boolean;
}

/** Writes the records of transactional ids to the metadata store: memory never runs ahead of it. */
export class TxnRecordWriter {
  constructor(
    private readonly store: MetadataStore,
    private readonly clock: Clock,
  ) {}

  /** Validates, persists, then applies the changes: memory never runs ahead of the store. */
  async transition(entry: TxnEntry, changes: Partial<TxnFields>): Promise<void> {
    const to = changes.state ?? entry.state;
    assertTransition(entry.state, to);
    const next: TxnFields = { ...fieldsOf(entry), ...changes, updatedAt: this.clock.now() };
    const written = this.putRecord(entry, { state: toPersisted(next), updatedAt: next.updatedAt });
    const write = entry.writesIssued;
    try {
      await written;
    } finally {
      // Partitions a purge or deletion dropped while this write was on its way: not brought back
      // (the purge rewrote the stored record without them, after this write).
      for (const d of entry.drops) if (d.afterWrite >= write) forgetFrom(next, d.keys);
      entry.drops = entry.drops.filter((d) => d.afterWrite > write);
    }
    Object.assign(entry, next);
  }

  persist(entry: TxnEntry): Promise<void> {
    return this.putRecord(entry, { state: toPersisted(entry), updatedAt: entry.updatedAt });
  }

  /** Every write of a transaction record goes through here (chainWrite). */
  putRecord(entry: TxnEntry, record: StoredTxn): Promise<void> {
    entry.issued = record;
    entry.writesIssued++;
    return this.chainWrite(entry, async () => {
      await this.store.putTransaction({ scope: entry.scope, transactionalId: entry.transactionalId, ...record });
      entry.stored = record;
    });
  }

  /**
   * Runs a write of the entry's record once the ones issued before it have settled, so the store
   * receives them in the order issued and `entry.stored` follows what it holds.
   */
  chainWrite(entry: TxnEntry, write: () => Promise<void>): Promise<void> {
    const run = entry.writes.then(write);
    entry.writes = run.catch(() => undefined);
    return run;
  }
}

export function txnKey(scope: string, transactionalId: string): string {
  return `${scope}\u0000${transactionalId}`;
}

export function partKey(p: { topicInternalId: number; partition: number }): string {
  return `${p.topicInternalId}:${p.partition}`;
}

/** Removes the partitions from the transaction and from its staged offsets; whether any was there. */
export function forgetPartitions(entry: TxnEntry, gone: ReadonlySet<string>): boolean {
  for (const k of gone) entry.markersWritten.delete(k);
  return forgetFrom(entry, gone);
}

export function forgetFrom(fields: Pick<TxnFields, 'partitions' | 'groups'>, gone: ReadonlySet<string>): boolean {
  let changed = false;
  for (const k of gone) {
    changed = fields.partitions.delete(k) || changed;
    for (const pending of fields.groups.values()) changed = pending.delete(k) || changed;
  }
  return changed;
}

export function isPrepare(state: TxnState): boolean {
  return state === TxnState.PrepareCommit || state === TxnState.PrepareAbort;
}

export function isIdle(state: TxnState): boolean {
  return state === TxnState.Empty || state === TxnState.CompleteCommit || state === TxnState.CompleteAbort;
}

/** Programmer error: callers check the state and answer invalid_txn_state before transitioning. */
export function assertTransition(from: TxnState, to: TxnState): void {
  assert.ok(validPrevious[to].includes(from), `invalid transaction state transition ${from} -> ${to}`);
}

export function concurrent(entry: TxnEntry): QuartetError {
  return new QuartetError('concurrent_transactions', `transaction '${entry.transactionalId}' is ${entry.state}; its markers are being retried`);
}

/** Kafka's isValidProducerId for InitProducerId with an expected id/epoch (KIP-360). */
export function isValidExpected(entry: TxnEntry, expected: { producerId: number; epoch: number }): boolean {
  return expected.producerId === entry.producerId || (expected.producerId === entry.lastProducerId && expected.epoch >= producerEpochMax);
}

export function newEntry(scope: string, transactionalId: string, producerId: number, epoch: number, timeoutMs: number, now: number): TxnEntry {
  return {
    scope,
    transactionalId,
    producerId,
    producerEpoch: epoch,
    lastProducerId: -1,
    lastProducerEpoch: -1,
    timeoutMs,
    state: TxnState.Empty,
    startedAt: -1,
    updatedAt: now,
    partitions: new Map(),
    groups: new Map(),
    outcome: null,
    timeoutTimer: null,
    retryTimer: null,
    markersWritten: new Set(),
    stored: null,
    issued: null,
    writes: Promise.resolve(),
    writesIssued: 0,
    drops: [],
  };
}

export function fieldsOf(entry: TxnEntry): TxnFields {
  const { producerId, producerEpoch, lastProducerId, lastProducerEpoch, timeoutMs, state, startedAt, updatedAt, partitions, groups, outcome } = entry;
  return { producerId, producerEpoch, lastProducerId, lastProducerEpoch, timeoutMs, state, startedAt, updatedAt, partitions, groups, outcome };
}

export function toPersisted(f: TxnFields): PersistedTxn {
  return {
    producerId: f.producerId,
    producerEpoch: f.producerEpoch,
    lastProducerId: f.lastProducerId,
    lastProducerEpoch: f.lastProducerEpoch,
    timeoutMs: f.timeoutMs,
    state: f.state,
    startedAt: f.startedAt,
    partitions: [...f.partitions.values()].map((p) => [p.topicInternalId, p.partition]),
    groups: [...f.groups].map(([groupId, pending]) => [groupId, [...pending.values()]]),
    outcome: f.outcome === null ? null : { partitions: f.outcome.partitions.map((p) => [p.topicInternalId, p.partition]), offsets: f.outcome.offsets },
  };
}

/** The number of offsets staged over all the groups. */
export function stagedOffsetCount(groups: ReadonlyMap<string, ReadonlyMap<string, OffsetCommit>>): number {
  let n = 0;
  for (const pending of groups.values()) n += pending.size;
  return n;
}

/** Which of the partitions the entry holds (or stages offsets for) in memory or in the last record issued. */
export function heldPartitions(entry: TxnEntry, gone: ReadonlySet<string>): Set<string> {
  const held = new Set<string>();
  for (const k of gone) {
    if (entry.partitions.has(k) || [...entry.groups.values()].some((pending) => pending.has(k))) held.add(k);
  }
  const issued = entry.issued?.state;
  for (const [topicInternalId, partition] of issued?.partitions ?? []) {
    const k = partKey({ topicInternalId, partition });
    if (gone.has(k)) held.add(k);
  }
  for (const [, commits] of issued?.groups ?? []) {
    for (const c of commits) if (gone.has(partKey(c))) held.add(partKey(c));
  }
  return held;
}

/** The record without the partitions and the offsets staged for them, or null: none of them is in it. */
export function storedWithout(stored: StoredTxn, gone: ReadonlySet<string>): StoredTxn | null {
  const partitions = stored.state.partitions.filter(([topicInternalId, partition]) => !gone.has(partKey({ topicInternalId, partition })));
  let dropped = partitions.length !== stored.state.partitions.length;
  const groups = stored.state.groups.map(([groupId, commits]): [string, OffsetCommit[]] => {
    const kept = commits.filter((c) => !gone.has(partKey(c)));
    dropped ||= kept.length !== commits.length;
    return [groupId, kept];
  });
  return dropped ? { state: { ...stored.state, partitions, groups }, updatedAt: stored.updatedAt } : null;
}

export function cloneGroups(groups: ReadonlyMap<string, ReadonlyMap<string, OffsetCommit>>): Map<string, Map<string, OffsetCommit>> {
  return new Map([...groups].map(([g, pending]) => [g, new Map(pending)]));
}

/** The entry a stored record describes, or null when the record is unreadable. */
export function entryFromRecord(scope: string, transactionalId: string, raw: unknown, updatedAt: number, timeoutMsDefault: number): TxnEntry | null {
  const p = raw as Partial<PersistedTxn> | null;
  if (!p || typeof p.producerId !== 'number' || typeof p.producerEpoch !== 'number' || typeof p.state !== 'string' || !allStates.has(p.state)) return null;
  const entry = newEntry(scope, transactionalId, p.producerId, p.producerEpoch, p.timeoutMs ?? timeoutMsDefault, updatedAt);
  entry.lastProducerId = p.lastProducerId ?? -1;
  entry.lastProducerEpoch = p.lastProducerEpoch ?? -1;
  entry.state = p.state;
  entry.startedAt = p.startedAt ?? -1;
  for (const [topicInternalId, partition] of p.partitions ?? []) entry.partitions.set(partKey({ topicInternalId, partition }), { topicInternalId, partition });
  for (const [groupId, commits] of p.groups ?? []) entry.groups.set(groupId, new Map(commits.map((c) => [partKey(c), c])));
  const o = p.outcome;
  if (o) entry.outcome = { partitions: o.partitions.map(([topicInternalId, partition]) => ({ topicInternalId, partition })), offsets: o.offsets };
  entry.stored = { state: toPersisted(entry), updatedAt };
  entry.issued = entry.stored;
  return entry;
}
