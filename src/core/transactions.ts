// The transaction coordinator: one for every protocol with transactions (Kafka, Cursus Wire v2).
// It maps transactional ids to producer ids and epochs, runs each transaction through Kafka's
// states, writes the commit/abort markers into every partition of a transaction, commits the
// transaction's consumer offsets only when it commits, aborts transactions that outlive their
// timeout, and (through txn-index.ts) answers last-stable-offset and aborted-transaction queries.
//
// States and transitions follow Kafka's TransactionState (TransactionMetadata.scala):
//
//   Empty ──addPartitions/addOffsets──▶ Ongoing ──endTxn(commit)──▶ PrepareCommit ──markers──▶ CompleteCommit
//     ▲                                    │    ──endTxn(abort) / timeout / re-init──▶ PrepareAbort ──▶ CompleteAbort
//     └──────────── initProducerId ◀───────┴──────────────── (Complete* also go straight to Ongoing)
//   Empty / Complete* ──expiry──▶ Dead (removed)
//
// Choices, and where they differ from Kafka:
//  - Every transition is persisted (metadata store, one row per transactional id) before memory
//    changes. Prepare* is persisted before any marker is written, so a crash mid-commit is finished
//    by open(): markers rewritten (a duplicate marker changes nothing), offsets committed.
//  - Operations on one transactional id run one at a time (a promise chain per id), so the
//    states Kafka answers with CONCURRENT_TRANSACTIONS while markers are in flight are never seen
//    by a caller: it waits instead. concurrent_transactions is returned only while a marker write
//    has failed and waits for its retry (markerRetryBackoffMs).
//  - InitProducerId on a transactional id with an Ongoing transaction aborts it before answering
//    (epoch bumped, abort markers written with the new epoch, which is then returned): the old
//    producer is fenced and the new one needs no retry. Kafka instead bumps, answers
//    CONCURRENT_TRANSACTIONS and bumps again on the retry.
//  - Complete* is persisted only once every marker is durable (the MarkerWriter flushes its
//    partition): under fsyncPolicy 'interval' a power loss must not keep Complete* and lose a
//    marker. start() rewrites markers that were lost anyway (repairHangingTransactions).
//  - endTxn answers once the decision is durable and the markers are written. If a marker write
//    fails it still answers (state Prepare*, as Kafka answers after the Prepare* log append) and
//    the markers are retried in the background.
//  - A transaction timeout aborts the transaction and bumps the epoch (Kafka's
//    prepareFenceProducerEpoch): the zombie's next produce or EndTxn is producer_fenced.
//
// Markers are written through an injected MarkerWriter (the Broker supplies one that encodes the
// marker in the transaction's protocol format and appends it). The coordinator epoch written into
// markers is a counter bumped at every open.

import { mapLimit } from './serial.js';
import assert from 'node:assert/strict';
import type { TopicRef } from './catalog.js';
import type { Clock } from '../base/clock.js';
import { QuartetError, isQuartetError } from '../base/errors.js';
import { silentLogger, type Logger } from '../base/logger.js';
import type { MetadataStore } from './metadata-store.js';
import { groupIdBytesMax, offsetMetadataBytesMax, scopeBytesMax, type OffsetCommit, type OffsetStore } from './offsets.js';
import { producerEpochMax, type ProducerStateManager } from './producer-state.js';
import { systemScheduler, type Scheduler, type TimerHandle } from './scheduler.js';
import { TxnIndex, markerKindByFormat, visibleCommitted, type AbortedTxn, type MarkerKindFn, type OpenTxn } from './txn-index.js';
import type { PartitionLog, ReadOptions, StoredBatch } from '../log/index.js';

// Named limits.
/** Kafka's transaction.max.timeout.ms default: 15 minutes. */
export const transactionTimeoutMsMaxDefault = 15 * 60 * 1000;
/** Kafka's transactional.id.expiration.ms default: 7 days. */
export const transactionalIdExpirationMsDefault = 7 * 24 * 3600 * 1000;
export const transactionalIdsMaxDefault = 100_000;
export const transactionalIdBytesMax = 1024;
export const partitionsPerTransactionMax = 10_000;
export const groupsPerTransactionMax = 100;
export const pendingOffsetsPerTransactionMax = 100_000;
/** Marker appends of one transaction in flight at once. */
export const markerWritesInFlightMax = 32;
export const markerRetryBackoffMsDefault = 1_000;

const coordinatorEpochCounter = 'txn_coordinator_epoch';

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

export interface TransactionCoordinatorOptions {
  store: MetadataStore;
  producers: ProducerStateManager;
  offsets: OffsetStore;
  partitions: TxnPartitions;
  writeMarker: MarkerWriter;
  /** Default: the neutral format's marker only (markerKindByFormat()). */
  markerKind?: MarkerKindFn;
  clock: Clock;
  scheduler?: Scheduler;
  logger?: Logger;
  transactionTimeoutMsMax?: number;
  transactionalIdExpirationMs?: number;
  transactionalIdsMax?: number;
  markerRetryBackoffMs?: number;
}

/** Who is asking: the transactional id and the producer id/epoch InitProducerId gave it. */
export interface TxnIdentity {
  /** The protocol scope ('kafka', 'cursus'); also the OffsetStore scope of its offsets. */
  scope: string;
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
}

export interface InitProducerIdRequest {
  scope: string;
  /** null: an idempotent producer with no transactions (an id from the producer state only). */
  transactionalId: string | null;
  /** 1 .. transactionTimeoutMsMax; ignored when transactionalId is null. */
  transactionTimeoutMs: number;
  /** KIP-360: the id/epoch the producer has, to bump instead of starting over. */
  expected?: { producerId: number; epoch: number };
}

export interface ProducerIdAndEpoch {
  producerId: number;
  epoch: number;
}

export interface EndTxnResult {
  /** CompleteCommit / CompleteAbort, or Prepare* when markers failed and are being retried. */
  state: TxnState;
}

export interface TxnDescription {
  scope: string;
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  state: TxnState;
  timeoutMs: number;
  /** -1 when no transaction is open. */
  startedAt: number;
  updatedAt: number;
  partitions: TxnPartition[];
  groups: string[];
}

/** The persisted form of a transactional id (TransactionRecord.state). */
interface PersistedTxn {
  producerId: number;
  producerEpoch: number;
  lastProducerId: number;
  lastProducerEpoch: number;
  timeoutMs: number;
  state: TxnState;
  startedAt: number;
  partitions: Array<[number, number]>;
  groups: Array<[string, OffsetCommit[]]>;
}

interface TxnFields {
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
}

interface TxnEntry extends TxnFields {
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

interface StoredTxn {
  state: PersistedTxn;
  updatedAt: number;
}

export class TransactionCoordinator {
  readonly index: TxnIndex;
  readonly transactionTimeoutMsMax: number;
  readonly transactionalIdExpirationMs: number;
  readonly transactionalIdsMax: number;
  private readonly entries = new Map<string, TxnEntry>();
  /** Per transactional id: the tail of its operation chain and how many are pending. */
  private readonly queues = new Map<string, { tail: Promise<void>; pending: number }>();
  /** Work queued or running, so close() and tests can wait for it. */
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly store: MetadataStore;
  private readonly producers: ProducerStateManager;
  private readonly offsets: OffsetStore;
  private readonly partitions: TxnPartitions;
  private readonly writeMarker: MarkerWriter;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly logger: Logger;
  private readonly markerRetryBackoffMs: number;
  private coordinatorEpochValue = 0;
  private closed = false;

  private constructor(options: TransactionCoordinatorOptions) {
    this.store = options.store;
    this.producers = options.producers;
    this.offsets = options.offsets;
    this.partitions = options.partitions;
    this.writeMarker = options.writeMarker;
    this.clock = options.clock;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.logger = options.logger ?? silentLogger;
    this.transactionTimeoutMsMax = options.transactionTimeoutMsMax ?? transactionTimeoutMsMaxDefault;
    this.transactionalIdExpirationMs = options.transactionalIdExpirationMs ?? transactionalIdExpirationMsDefault;
    this.transactionalIdsMax = options.transactionalIdsMax ?? transactionalIdsMaxDefault;
    this.markerRetryBackoffMs = options.markerRetryBackoffMs ?? markerRetryBackoffMsDefault;
    this.index = new TxnIndex(options.markerKind ?? markerKindByFormat(), this.logger);
    assert.ok(this.transactionTimeoutMsMax >= 1, 'transactionTimeoutMsMax must be >= 1');
  }

  /**
   * Loads the transactional ids and rebuilds every partition's index (checkpoint + log tail). Call
   * start() next, once appends through the broker are possible: it finishes prepared transactions.
   */
  static async open(options: TransactionCoordinatorOptions): Promise<TransactionCoordinator> {
    const coordinator = new TransactionCoordinator(options);
    coordinator.coordinatorEpochValue = await options.store.nextId(coordinatorEpochCounter, 0);
    for (const record of await options.store.listTransactions()) {
      const entry = coordinator.entryFromRecord(record.scope, record.transactionalId, record.state, record.updatedAt);
      if (!entry) {
        coordinator.logger.warn('ignoring an unreadable transaction record', { scope: record.scope, transactionalId: record.transactionalId });
        continue;
      }
      coordinator.entries.set(txnKey(entry.scope, entry.transactionalId), entry);
      await coordinator.restoreEpoch(entry);
    }
    coordinator.index.loadCheckpoints(await options.store.listTxnCheckpoints());
    let observed = 0;
    for (const p of options.partitions.list()) observed += await coordinator.index.recover(p.key, p.log);
    if (observed > 0) coordinator.logger.info('rebuilt the transaction index from the logs', { batches: observed });
    return coordinator;
  }

  /**
   * Finishes transactions a crash left in PrepareCommit/PrepareAbort (markers, then offsets) and
   * re-arms the timeouts of Ongoing ones. Marker failures are retried in the background.
   */
  async start(): Promise<void> {
    const work: Array<Promise<unknown>> = [];
    for (const entry of this.entries.values()) {
      if (isPrepare(entry.state)) {
        this.logger.info('completing a prepared transaction', { scope: entry.scope, transactionalId: entry.transactionalId, state: entry.state });
        work.push(this.exclusive(entry, () => this.complete(entry)));
      } else if (entry.state === TxnState.Ongoing) {
        this.armTimeout(entry);
      }
    }
    await Promise.all(work);
    await this.repairHangingTransactions();
  }

  /**
   * A transaction open in a partition log whose producer has no live transaction here holds the
   * LSO back forever (Kafka's "hanging transaction"). When the producer's transactional id is
   * Complete* at the epoch of the open transaction's first batch, the coordinator finished it and
   * its marker here was lost, so the recorded outcome is written again.
   *
   * Since markers are flushed before Complete* is recorded (MarkerWriter), a power loss can no
   * longer cause this: Complete* durable implies every marker durable, and a transaction whose
   * Complete* was lost is still Prepare* and finished by start(). What remains is a log written
   * before that (when Complete* could reach SQLite while the markers sat in the page cache) and a
   * transactional batch that raced in after its marker. The outcome written is the coordinator's
   * last one for that epoch: the open transaction's own when it is the last one at that epoch (the
   * usual case: a lost marker loses the partition's whole tail after it, including later
   * transactions' batches there), a best guess if a later transaction of the same epoch completed
   * without touching this partition. Anything else is reported, not repaired: an operator must
   * abort it.
   */
  private async repairHangingTransactions(): Promise<void> {
    const live = new Set<number>();
    const completed = new Map<number, TxnEntry>();
    for (const e of this.entries.values()) {
      if (e.state === TxnState.Ongoing || isPrepare(e.state)) live.add(e.producerId);
      else if (e.state === TxnState.CompleteCommit || e.state === TxnState.CompleteAbort) completed.set(e.producerId, e);
    }
    for (const p of this.partitions.list()) {
      for (const open of this.index.openTransactions(p.key)) {
        if (live.has(open.producerId)) continue;
        const entry = completed.get(open.producerId);
        if (entry && (await this.rewriteLostMarker(entry, p, open))) continue;
        this.logger.warn('hanging transaction: open in the log, unknown to the coordinator', { partition: p.key, ...open });
      }
    }
  }

  /** Writes the Complete* entry's marker into `p` if `open` began at the entry's epoch. */
  private async rewriteLostMarker(entry: TxnEntry, p: TxnPartitionHandle, open: OpenTxn): Promise<boolean> {
    let first: StoredBatch | undefined;
    try {
      first = (await p.log.read(open.firstOffset, { maxBytes: 1 }))[0];
    } catch {
      return false; // gone with retention: nothing to tell the epoch by
    }
    if (!first || first.baseOffset !== open.firstOffset || first.producerId !== entry.producerId || first.producerEpoch !== entry.producerEpoch) return false;
    return this.exclusive(entry, async () => {
      const commit = entry.state === TxnState.CompleteCommit;
      if ((!commit && entry.state !== TxnState.CompleteAbort) || first.producerEpoch !== entry.producerEpoch) return false;
      this.logger.warn('rewriting the lost marker of a completed transaction', { scope: entry.scope, transactionalId: entry.transactionalId, partition: p.key, ...open, commit });
      try {
        const offset = await this.writeMarker({
          topicInternalId: p.topicInternalId,
          partition: p.partition,
          scope: entry.scope,
          transactionalId: entry.transactionalId,
          producerId: entry.producerId,
          producerEpoch: entry.producerEpoch,
          commit,
          coordinatorEpoch: this.coordinatorEpochValue,
        });
        this.index.observeMarker(p.key, entry.producerId, offset, commit ? 'commit' : 'abort');
        return true;
      } catch (err) {
        this.logger.warn('could not rewrite a lost marker', { transactionalId: entry.transactionalId, partition: p.key, error: err });
        return false;
      }
    });
  }

  /** The epoch written into markers; grows at every open. */
  get coordinatorEpoch(): number {
    return this.coordinatorEpochValue;
  }

  // --- the client-facing operations ------------------------------------------------------------

  /** Kafka InitProducerId, Cursus INIT_PRODUCER_ID. */
  initProducerId(request: InitProducerIdRequest): Promise<ProducerIdAndEpoch> {
    try {
      this.assertOpen();
      assertScope(request.scope);
      if (request.transactionalId === null) return this.producers.initProducer(request.expected);
      assertTransactionalId(request.transactionalId);
      const timeout = request.transactionTimeoutMs;
      if (!Number.isInteger(timeout) || timeout < 1 || timeout > this.transactionTimeoutMsMax) {
        throw new QuartetError('invalid_request', `transaction timeout ${timeout} ms is outside 1..${this.transactionTimeoutMsMax}`);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    const key = txnKey(request.scope, request.transactionalId);
    return this.exclusiveKey(key, () => this.init(key, request.scope, request.transactionalId!, request));
  }

  /** Kafka AddPartitionsToTxn: the partitions this transaction will write (markers go to each). */
  addPartitions(id: TxnIdentity, partitions: ReadonlyArray<{ topic: TopicRef; partition: number }>): Promise<void> {
    let resolved: TxnPartition[];
    try {
      this.assertOpen();
      resolved = partitions.map((p) => {
        const h = this.partitions.resolve(p.topic, p.partition);
        return { topicInternalId: h.topicInternalId, partition: h.partition };
      });
    } catch (err) {
      return Promise.reject(err);
    }
    return this.withEntry(id, async (entry) => {
      // A partition being purged joins once its new log is in place (a purge drops the partitions
      // it empties from every transaction, dropPartitions); waiting in the entry's turn keeps the
      // transaction's later requests behind this one. The purge never waits for a turn.
      const purges = new Set(resolved.map((p) => this.partitions.purgeInProgress?.(p.topicInternalId)).filter((w) => w !== undefined));
      if (purges.size > 0) await Promise.all(purges);
      await this.settlePrepared(entry);
      const fresh = resolved.filter((p) => !entry.partitions.has(partKey(p)));
      if (entry.state === TxnState.Ongoing && fresh.length === 0) return;
      if (entry.partitions.size + fresh.length > partitionsPerTransactionMax) {
        throw new QuartetError('resource_exhausted', `a transaction may hold at most ${partitionsPerTransactionMax} partitions`);
      }
      const next = new Map(entry.partitions);
      for (const p of fresh) next.set(partKey(p), p);
      await this.beginOrContinue(entry, { partitions: next });
    });
  }

  /** Kafka AddOffsetsToTxn: the group whose offsets (TxnOffsetCommit) this transaction commits. */
  addOffsets(id: TxnIdentity, groupId: string): Promise<void> {
    try {
      this.assertOpen();
      assertGroupId(groupId);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.withEntry(id, async (entry) => {
      await this.settlePrepared(entry);
      if (entry.state === TxnState.Ongoing && entry.groups.has(groupId)) return;
      if (!entry.groups.has(groupId) && entry.groups.size >= groupsPerTransactionMax) {
        throw new QuartetError('resource_exhausted', `a transaction may commit offsets of at most ${groupsPerTransactionMax} groups`);
      }
      const groups = cloneGroups(entry.groups);
      if (!groups.has(groupId)) groups.set(groupId, new Map());
      await this.beginOrContinue(entry, { groups });
    });
  }

  /**
   * Kafka TxnOffsetCommit: offsets staged in the transaction, committed to the OffsetStore (scope =
   * the transaction's scope) only when it commits. The group must have been added (addOffsets).
   * Member and generation checks are the group coordinator's (the front-end's) job.
   */
  txnOffsetCommit(id: TxnIdentity, groupId: string, commits: readonly OffsetCommit[]): Promise<void> {
    try {
      this.assertOpen();
      assertGroupId(groupId);
      for (const c of commits) assertOffsetCommit(c);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.withEntry(id, async (entry) => {
      const pending = entry.groups.get(groupId);
      if (entry.state !== TxnState.Ongoing || !pending) {
        throw new QuartetError('invalid_txn_state', `group '${groupId}' was not added to the ongoing transaction of '${entry.transactionalId}'`);
      }
      const groups = cloneGroups(entry.groups);
      const staged = groups.get(groupId)!;
      for (const c of commits) staged.set(partKey(c), { ...c });
      let total = 0;
      for (const g of groups.values()) total += g.size;
      if (total > pendingOffsetsPerTransactionMax) throw new QuartetError('resource_exhausted', `a transaction may stage at most ${pendingOffsetsPerTransactionMax} offsets`);
      await this.transition(entry, { state: TxnState.Ongoing, groups });
    });
  }

  /** Kafka EndTxn, Cursus END_TXN. Retrying a finished commit (or abort) with the same epoch succeeds. */
  endTxn(id: TxnIdentity, commit: boolean): Promise<EndTxnResult> {
    try {
      this.assertOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.withEntry(id, async (entry) => {
      const prepare = commit ? TxnState.PrepareCommit : TxnState.PrepareAbort;
      const done = commit ? TxnState.CompleteCommit : TxnState.CompleteAbort;
      switch (entry.state) {
        case TxnState.Ongoing:
          this.cancelTimeout(entry);
          await this.transition(entry, { state: prepare });
          await this.complete(entry);
          return { state: entry.state };
        case done:
          return { state: done };
        case prepare:
          if (!(await this.complete(entry))) throw concurrent(entry);
          return { state: entry.state };
        default:
          throw new QuartetError('invalid_txn_state', `cannot ${commit ? 'commit' : 'abort'} transaction '${entry.transactionalId}' in state ${entry.state}`);
      }
    });
  }

  /**
   * For the produce path (Kafka Produce carries the transactional id): throws unless the producer
   * is the current one of an Ongoing transaction that holds the partition (KIP-890's verification).
   * Without it, a batch written outside its transaction opens one the coordinator never ends.
   */
  checkProduce(id: TxnIdentity, topic: TopicRef, partition: number): void {
    const entry = this.entries.get(txnKey(id.scope, id.transactionalId));
    if (!entry || entry.producerId !== id.producerId) throw new QuartetError('transactional_id_not_found', `transactional id '${id.transactionalId}' is not bound to producer ${id.producerId}`);
    if (id.producerEpoch < entry.producerEpoch) throw new QuartetError('producer_fenced', `producer ${id.producerId} epoch ${id.producerEpoch} is older than ${entry.producerEpoch}`);
    if (id.producerEpoch > entry.producerEpoch) throw new QuartetError('invalid_producer_epoch', `producer ${id.producerId} epoch ${id.producerEpoch} is newer than ${entry.producerEpoch}`);
    const h = this.partitions.resolve(topic, partition);
    if (entry.state !== TxnState.Ongoing || !entry.partitions.has(h.key)) {
      throw new QuartetError('invalid_txn_state', `partition ${h.key} is not part of an ongoing transaction of '${id.transactionalId}'`);
    }
  }

  /**
   * Whether an unfinished transaction of `scope` (Ongoing, PrepareCommit, PrepareAbort) has staged
   * an offset for the group's partition that is not committed yet. Kafka OffsetFetch with
   * require_stable answers UNSTABLE_OFFSET_COMMIT for such a partition. Linear in the number of
   * transactional ids held (bounded by transactionalIdsMax).
   */
  hasPendingOffset(scope: string, groupId: string, topicInternalId: number, partition: number): boolean {
    const key = partKey({ topicInternalId, partition });
    for (const entry of this.entries.values()) {
      if (entry.scope !== scope) continue;
      if (entry.state !== TxnState.Ongoing && entry.state !== TxnState.PrepareCommit && entry.state !== TxnState.PrepareAbort) continue;
      if (entry.groups.get(groupId)?.has(key) === true) return true;
    }
    return false;
  }

  /** The transactional id's state, or null when unknown. */
  describe(scope: string, transactionalId: string): TxnDescription | null {
    const entry = this.entries.get(txnKey(scope, transactionalId));
    if (!entry) return null;
    return {
      scope: entry.scope,
      transactionalId: entry.transactionalId,
      producerId: entry.producerId,
      producerEpoch: entry.producerEpoch,
      state: entry.state,
      timeoutMs: entry.timeoutMs,
      startedAt: entry.startedAt,
      updatedAt: entry.updatedAt,
      partitions: [...entry.partitions.values()].map((p) => ({ ...p })),
      groups: [...entry.groups.keys()],
    };
  }

  /** Every transactional id of the scope (Kafka ListTransactions). */
  list(scope: string): TxnDescription[] {
    return [...this.entries.values()].filter((e) => e.scope === scope).map((e) => this.describe(e.scope, e.transactionalId)!);
  }

  // --- the data path: LSO, aborted transactions, read_committed --------------------------------

  /**
   * Called by the broker for every appended transactional or control batch, at offset assignment.
   * Returns what undoes it if the batch's write then fails (null: nothing to undo).
   */
  observeAppend(partitionKey: string, batch: StoredBatch): (() => void) | null {
    return this.index.observe(partitionKey, batch);
  }

  /** min(first offset of the open transactions, high watermark): the end of a read_committed read. */
  lastStableOffset(topic: TopicRef, partition: number): number {
    const h = this.partitions.resolve(topic, partition);
    return this.index.lastStableOffset(h.key, h.log.stats().highWatermark);
  }

  /** Aborted transactions overlapping [fromOffset, toOffset) (Kafka Fetch aborted_transactions). */
  abortedTransactions(topic: TopicRef, partition: number, fromOffset: number, toOffset: number): AbortedTxn[] {
    return this.index.abortedTransactions(this.partitions.resolve(topic, partition).key, fromOffset, toOffset);
  }

  openTransactions(topic: TopicRef, partition: number): OpenTxn[] {
    return this.index.openTransactions(this.partitions.resolve(topic, partition).key);
  }

  /**
   * A read_committed read for protocols whose clients do not filter themselves: batches below the
   * LSO, with control batches and aborted transactional batches removed. `nextOffset` is where the
   * next read starts (past filtered batches too).
   */
  async readCommitted(topic: TopicRef, partition: number, offset: number, options: ReadOptions): Promise<{ batches: StoredBatch[]; lastStableOffset: number; nextOffset: number }> {
    const h = this.partitions.resolve(topic, partition);
    const lso = this.index.lastStableOffset(h.key, h.log.stats().highWatermark);
    const maxOffset = options.maxOffset === undefined ? lso : Math.min(options.maxOffset, lso);
    if (offset >= maxOffset) return { batches: [], lastStableOffset: lso, nextOffset: offset };
    const read = await h.log.read(offset, { ...options, maxOffset });
    const last = read[read.length - 1];
    const nextOffset = last ? last.lastOffset + 1 : offset;
    const aborted = this.index.abortedTransactions(h.key, offset, nextOffset);
    return { batches: visibleCommitted(read, aborted), lastStableOffset: lso, nextOffset };
  }

  // --- maintenance and lifecycle ---------------------------------------------------------------

  /**
   * One maintenance pass: forget aborted transactions below each log start, checkpoint the index,
   * and expire transactional ids idle (Empty/Complete*) for transactionalIdExpirationMs.
   */
  async maintain(now: number = this.clock.now()): Promise<number> {
    for (const p of this.partitions.list()) this.index.truncateBefore(p.key, p.log.stats().logStartOffset);
    await this.checkpoint();
    let expired = 0;
    for (const entry of [...this.entries.values()]) {
      if (!isIdle(entry.state) || now - entry.updatedAt < this.transactionalIdExpirationMs) continue;
      await this.exclusive(entry, async () => {
        if (!isIdle(entry.state) || now - entry.updatedAt < this.transactionalIdExpirationMs) return;
        assertTransition(entry.state, TxnState.Dead);
        await this.chainWrite(entry, async () => {
          await this.store.deleteTransaction(entry.scope, entry.transactionalId);
          entry.stored = null;
        });
        entry.state = TxnState.Dead;
        this.entries.delete(txnKey(entry.scope, entry.transactionalId));
        expired++;
      });
    }
    return expired;
  }

  /**
   * Writes the index checkpoint of every partition (the broker calls it with its snapshots), as
   * of each high watermark: offsets above it are assigned but not written (TxnIndex.checkpoints).
   */
  checkpoint(): Promise<void> {
    const handles = this.partitions.list();
    return this.store.putTxnCheckpoints(this.index.checkpoints(handles.map((h) => ({ key: h.key, nextOffset: h.log.stats().highWatermark })), this.clock.now()));
  }

  /**
   * Forgets partitions whose log was deleted or emptied (a topic deleted, partitions removed, an
   * Iggy purge): their index and checkpoints, and their place in every unfinished transaction. No
   * marker is written to them (a deleted partition needs none, as in Kafka, and one re-created or
   * emptied under the same key starts clean), and the offsets staged for them are not committed
   * (every protocol's committed offsets of those partitions went with the records). A produce the
   * transaction sends there afterwards is refused as one to a partition it never added.
   */
  async dropPartitions(keys: readonly string[]): Promise<void> {
    const gone = new Set(keys);
    const rewrites: Array<Promise<void>> = [];
    for (const entry of this.entries.values()) {
      if (entry.state === TxnState.Dead) continue;
      // The ones the entry holds, in memory or in the last record issued (a change under way that
      // will replace the maps): forgotten at once, for a completion under way (it commits the
      // staged offsets after its markers), and kept out of what the change under way puts in
      // memory when it completes (transition). Only those: a partition a later request adds to
      // the new log stays.
      const held = heldPartitions(entry, gone);
      if (held.size > 0) {
        forgetPartitions(entry, held);
        entry.drops.push({ afterWrite: entry.writesIssued, keys: held });
      }
      // And the stored record, next in the entry's write order, without waiting for its turn
      // (which may wait behind a completion): a crash must not bring the partitions back (a
      // restart would write their markers into the new logs and commit their staged offsets past
      // the new ends).
      rewrites.push(
        this.chainWrite(entry, async () => {
          const without = entry.stored === null ? null : storedWithout(entry.stored, gone);
          if (without === null) return;
          await this.store.putTransaction({ scope: entry.scope, transactionalId: entry.transactionalId, ...without });
          if (entry.issued === entry.stored) entry.issued = without;
          entry.stored = without;
        }),
      );
    }
    try {
      for (const r of await Promise.allSettled(rewrites)) {
        if (r.status === 'rejected') this.logger.warn('could not store a transaction without its dropped partitions', { error: r.reason });
      }
    } finally {
      this.index.drop(keys);
      await this.store.deleteTxnCheckpoints(keys);
    }
  }

  /** Resolves when no operation is queued or running (tests; close). */
  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** Stops the timers, waits for running work and writes the index checkpoint. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.entries.values()) {
      this.cancelTimeout(entry);
      entry.retryTimer?.cancel();
      entry.retryTimer = null;
    }
    await this.settled();
    await this.checkpoint();
  }

  // --- internals: InitProducerId ---------------------------------------------------------------

  private async init(key: string, scope: string, transactionalId: string, request: InitProducerIdRequest): Promise<ProducerIdAndEpoch> {
    let entry = this.entries.get(key);
    if (!entry) {
      if (this.entries.size >= this.transactionalIdsMax) throw new QuartetError('resource_exhausted', `at most ${this.transactionalIdsMax} transactional ids`);
      const { producerId, epoch } = await this.producers.initProducer();
      entry = newEntry(scope, transactionalId, producerId, epoch, request.transactionTimeoutMs, this.clock.now());
      await this.persist(entry);
      this.entries.set(key, entry);
      return { producerId, epoch };
    }
    const expected = request.expected;
    if (expected && !isValidExpected(entry, expected)) {
      throw new QuartetError('producer_fenced', `producer ${expected.producerId} epoch ${expected.epoch} is not the current producer of '${transactionalId}'`);
    }
    await this.settlePrepared(entry);
    if (entry.state === TxnState.Ongoing) {
      // Fence the current producer: abort its transaction with a bumped epoch and hand that epoch out.
      const before = entry.producerEpoch;
      await this.abortWithFence(entry, 'reinitialized');
      if (isPrepare(entry.state)) throw concurrent(entry);
      if (entry.producerEpoch > before) {
        await this.transition(entry, { state: TxnState.Empty, timeoutMs: request.transactionTimeoutMs, lastProducerId: -1, lastProducerEpoch: -1 });
        return { producerId: entry.producerId, epoch: entry.producerEpoch };
      }
      // The epoch was exhausted and could not be bumped: fall through to a new producer id.
    } else if (expected && expected.producerId === entry.lastProducerId && expected.epoch === entry.lastProducerEpoch) {
      // A retry of the bump we already made (its answer was lost): answer the same again.
      return { producerId: entry.producerId, epoch: entry.producerEpoch };
    } else if (expected && expected.producerId === entry.producerId && expected.epoch !== entry.producerEpoch) {
      throw new QuartetError('producer_fenced', `producer ${expected.producerId} epoch ${expected.epoch} is not the current epoch ${entry.producerEpoch}`);
    }
    // The bump is persisted before the producer state fences the old epoch: if the write fails,
    // nothing changed and the client's retry of InitProducerId goes through.
    const next = await this.producers.proposeInit({ producerId: entry.producerId, epoch: entry.producerEpoch });
    await this.transition(entry, {
      state: TxnState.Empty,
      producerId: next.producerId,
      producerEpoch: next.epoch,
      lastProducerId: entry.producerId,
      lastProducerEpoch: entry.producerEpoch,
      timeoutMs: request.transactionTimeoutMs,
    });
    this.producers.raiseEpoch(next.producerId, next.epoch);
    return next;
  }

  // --- internals: state changes ----------------------------------------------------------------

  /** Runs `work` on the entry after checking the caller's producer id and epoch. */
  private withEntry<T>(id: TxnIdentity, work: (entry: TxnEntry) => Promise<T>): Promise<T> {
    const key = txnKey(id.scope, id.transactionalId);
    return this.exclusiveKey(key, async () => {
      const entry = this.entries.get(key);
      if (!entry || entry.state === TxnState.Dead) throw new QuartetError('transactional_id_not_found', `transactional id '${id.transactionalId}' is not known`);
      if (entry.producerId !== id.producerId) {
        throw new QuartetError('transactional_id_not_found', `transactional id '${id.transactionalId}' is bound to producer ${entry.producerId}, not ${id.producerId}`);
      }
      if (id.producerEpoch < entry.producerEpoch) {
        throw new QuartetError('producer_fenced', `producer ${id.producerId} epoch ${id.producerEpoch} is older than ${entry.producerEpoch}`);
      }
      if (id.producerEpoch > entry.producerEpoch) throw new QuartetError('invalid_producer_epoch', `producer ${id.producerId} epoch ${id.producerEpoch} is newer than ${entry.producerEpoch}`);
      return work(entry);
    });
  }

  /** Moves Empty, Complete* or Ongoing to Ongoing with the given changes; starts the timeout clock. */
  private async beginOrContinue(entry: TxnEntry, changes: Partial<TxnFields>): Promise<void> {
    assert.ok(!isPrepare(entry.state) && entry.state !== TxnState.Dead, `beginOrContinue() in state ${entry.state}`);
    if (entry.state === TxnState.Ongoing) {
      await this.transition(entry, { ...changes, state: TxnState.Ongoing });
      return;
    }
    // A new transaction: what the previous one held is gone with its completion.
    const fresh: Partial<TxnFields> = { partitions: new Map(), groups: new Map(), ...changes, state: TxnState.Ongoing, startedAt: this.clock.now() };
    await this.transition(entry, fresh);
    this.armTimeout(entry);
  }

  /** A Prepare* left by a failed marker write is finished first; concurrent_transactions if it still fails. */
  private async settlePrepared(entry: TxnEntry): Promise<void> {
    if (isPrepare(entry.state) && !(await this.complete(entry))) throw concurrent(entry);
  }

  /**
   * Writes the markers of a Prepare* transaction, commits its offsets (commit only) and moves it
   * to Complete*. Returns false (and schedules a retry) when a marker or the offsets fail.
   */
  private async complete(entry: TxnEntry): Promise<boolean> {
    assert.ok(isPrepare(entry.state), `complete() in state ${entry.state}`);
    const commit = entry.state === TxnState.PrepareCommit;
    try {
      await this.writeMarkers(entry, commit);
      if (commit) {
        for (const [groupId, pending] of entry.groups) {
          if (pending.size > 0) await this.offsets.commit(entry.scope, groupId, [...pending.values()]);
        }
      }
      await this.transition(entry, {
        state: commit ? TxnState.CompleteCommit : TxnState.CompleteAbort,
        partitions: new Map(),
        groups: new Map(),
        startedAt: -1,
      });
    } catch (err) {
      this.logger.warn('could not complete a transaction; retrying', { scope: entry.scope, transactionalId: entry.transactionalId, state: entry.state, error: err });
      this.scheduleRetry(entry);
      return false;
    }
    entry.markersWritten.clear();
    entry.retryTimer?.cancel();
    entry.retryTimer = null;
    return true;
  }

  private async writeMarkers(entry: TxnEntry, commit: boolean): Promise<void> {
    const todo = [...entry.partitions].filter(([k]) => !entry.markersWritten.has(k));
    await mapLimit(todo, markerWritesInFlightMax, async ([k, p]) => {
      // Dropped since the list was made (deleted or purged: dropPartitions): no marker.
      if (!entry.partitions.has(k)) return;
      let offset: number;
      try {
        offset = await this.writeMarker({
          ...p,
          scope: entry.scope,
          transactionalId: entry.transactionalId,
          producerId: entry.producerId,
          producerEpoch: entry.producerEpoch,
          commit,
          coordinatorEpoch: this.coordinatorEpochValue,
        });
      } catch (err) {
        // A partition deleted since it joined the transaction needs no marker.
        if (isQuartetError(err) && (err.code === 'unknown_topic' || err.code === 'unknown_partition')) {
          entry.markersWritten.add(k);
          return;
        }
        throw err;
      }
      entry.markersWritten.add(k);
      this.index.observeMarker(k, entry.producerId, offset, commit ? 'commit' : 'abort');
    });
  }

  /** Aborts the Ongoing transaction after bumping the epoch, so its producer is fenced. */
  private async abortWithFence(entry: TxnEntry, reason: string): Promise<void> {
    assert.equal(entry.state, TxnState.Ongoing);
    this.cancelTimeout(entry);
    let epoch = entry.producerEpoch;
    if (epoch < producerEpochMax) {
      // Applied to the producer state only once PrepareAbort (with the new epoch) is durable: a
      // failed write must not leave the producer fenced by an epoch the record does not have, or
      // the markers (written with the record's epoch) would be refused forever.
      const bumped = await this.producers.proposeInit({ producerId: entry.producerId, epoch });
      assert.equal(bumped.producerId, entry.producerId, 'an epoch bump below the maximum keeps the producer id');
      epoch = bumped.epoch;
    }
    this.logger.info('aborting a transaction', { scope: entry.scope, transactionalId: entry.transactionalId, reason, producerId: entry.producerId, epoch });
    await this.transition(entry, { state: TxnState.PrepareAbort, producerEpoch: epoch, lastProducerId: -1, lastProducerEpoch: -1 });
    this.producers.raiseEpoch(entry.producerId, epoch);
    await this.complete(entry);
  }

  /** Validates, persists, then applies the changes: memory never runs ahead of the store. */
  private async transition(entry: TxnEntry, changes: Partial<TxnFields>): Promise<void> {
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

  private persist(entry: TxnEntry): Promise<void> {
    return this.putRecord(entry, { state: toPersisted(entry), updatedAt: entry.updatedAt });
  }

  /** Every write of a transaction record goes through here (chainWrite). */
  private putRecord(entry: TxnEntry, record: StoredTxn): Promise<void> {
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
  private chainWrite(entry: TxnEntry, write: () => Promise<void>): Promise<void> {
    const run = entry.writes.then(write);
    entry.writes = run.catch(() => undefined);
    return run;
  }

  // --- internals: timers -----------------------------------------------------------------------

  private armTimeout(entry: TxnEntry): void {
    this.cancelTimeout(entry);
    if (this.closed) return;
    const { producerId, producerEpoch, startedAt } = entry;
    const delay = startedAt + entry.timeoutMs - this.clock.now();
    entry.timeoutTimer = this.scheduler.schedule(delay, () => {
      entry.timeoutTimer = null;
      this.exclusive(entry, async () => {
        if (entry.state !== TxnState.Ongoing || entry.producerId !== producerId || entry.producerEpoch !== producerEpoch || entry.startedAt !== startedAt) return;
        await this.abortWithFence(entry, 'timed out');
      }).catch((err: unknown) => this.logger.warn('could not abort a timed-out transaction', { transactionalId: entry.transactionalId, error: err }));
    });
  }

  private cancelTimeout(entry: TxnEntry): void {
    entry.timeoutTimer?.cancel();
    entry.timeoutTimer = null;
  }

  private scheduleRetry(entry: TxnEntry): void {
    if (entry.retryTimer || this.closed) return;
    entry.retryTimer = this.scheduler.schedule(this.markerRetryBackoffMs, () => {
      entry.retryTimer = null;
      this.exclusive(entry, async () => {
        if (isPrepare(entry.state)) await this.complete(entry);
      }).catch((err: unknown) => this.logger.warn('transaction retry failed', { transactionalId: entry.transactionalId, error: err }));
    });
  }

  // --- internals: serialization and recovery ---------------------------------------------------

  private exclusive<T>(entry: TxnEntry, work: () => Promise<T>): Promise<T> {
    return this.exclusiveKey(txnKey(entry.scope, entry.transactionalId), work);
  }

  /**
   * Runs `work` after every earlier operation on the same transactional id has settled. Queues
   * exist only while work is pending, so unknown ids leave nothing behind.
   */
  private exclusiveKey<T>(key: string, work: () => Promise<T>): Promise<T> {
    let queue = this.queues.get(key);
    if (!queue) {
      queue = { tail: Promise.resolve(), pending: 0 };
      this.queues.set(key, queue);
    }
    const q = queue;
    q.pending++;
    const run = q.tail.then(work);
    const settled = run.then(noop, noop).then(() => {
      if (--q.pending === 0 && this.queues.get(key) === q) this.queues.delete(key);
    });
    q.tail = settled;
    this.inflight.add(settled);
    void settled.then(() => this.inflight.delete(settled));
    return run;
  }

  private assertOpen(): void {
    if (this.closed) throw new QuartetError('shutting_down', 'the transaction coordinator is closed');
  }

  /**
   * Makes the producer state fence epochs below the record's (its snapshot may predate the last
   * bump). initProducer({ epoch: e - 1 }) raises the known epoch to e when it is below it.
   */
  private async restoreEpoch(entry: TxnEntry): Promise<void> {
    const known = this.producers.currentEpoch(entry.producerId) ?? -1;
    if (known >= entry.producerEpoch || entry.producerEpoch === 0) return;
    try {
      await this.producers.initProducer({ producerId: entry.producerId, epoch: entry.producerEpoch - 1 });
    } catch (err) {
      this.logger.warn('could not restore a producer epoch', { producerId: entry.producerId, epoch: entry.producerEpoch, error: err });
    }
  }

  private entryFromRecord(scope: string, transactionalId: string, raw: unknown, updatedAt: number): TxnEntry | null {
    const p = raw as Partial<PersistedTxn> | null;
    if (!p || typeof p.producerId !== 'number' || typeof p.producerEpoch !== 'number' || typeof p.state !== 'string' || !allStates.has(p.state)) return null;
    const entry = newEntry(scope, transactionalId, p.producerId, p.producerEpoch, p.timeoutMs ?? this.transactionTimeoutMsMax, updatedAt);
    entry.lastProducerId = p.lastProducerId ?? -1;
    entry.lastProducerEpoch = p.lastProducerEpoch ?? -1;
    entry.state = p.state;
    entry.startedAt = p.startedAt ?? -1;
    for (const [topicInternalId, partition] of p.partitions ?? []) entry.partitions.set(partKey({ topicInternalId, partition }), { topicInternalId, partition });
    for (const [groupId, commits] of p.groups ?? []) entry.groups.set(groupId, new Map(commits.map((c) => [partKey(c), c])));
    entry.stored = { state: toPersisted(entry), updatedAt };
    entry.issued = entry.stored;
    return entry;
  }
}

// --- helpers -----------------------------------------------------------------------------------

function txnKey(scope: string, transactionalId: string): string {
  return `${scope}\u0000${transactionalId}`;
}

function partKey(p: { topicInternalId: number; partition: number }): string {
  return `${p.topicInternalId}:${p.partition}`;
}

/** Removes the partitions from the transaction and from its staged offsets; whether any was there. */
function forgetPartitions(entry: TxnEntry, gone: ReadonlySet<string>): boolean {
  for (const k of gone) entry.markersWritten.delete(k);
  return forgetFrom(entry, gone);
}

function forgetFrom(fields: Pick<TxnFields, 'partitions' | 'groups'>, gone: ReadonlySet<string>): boolean {
  let changed = false;
  for (const k of gone) {
    changed = fields.partitions.delete(k) || changed;
    for (const pending of fields.groups.values()) changed = pending.delete(k) || changed;
  }
  return changed;
}

function isPrepare(state: TxnState): boolean {
  return state === TxnState.PrepareCommit || state === TxnState.PrepareAbort;
}

function isIdle(state: TxnState): boolean {
  return state === TxnState.Empty || state === TxnState.CompleteCommit || state === TxnState.CompleteAbort;
}

/** Programmer error: callers check the state and answer invalid_txn_state before transitioning. */
function assertTransition(from: TxnState, to: TxnState): void {
  assert.ok(validPrevious[to].includes(from), `invalid transaction state transition ${from} -> ${to}`);
}

function concurrent(entry: TxnEntry): QuartetError {
  return new QuartetError('concurrent_transactions', `transaction '${entry.transactionalId}' is ${entry.state}; its markers are being retried`);
}

/** Kafka's isValidProducerId for InitProducerId with an expected id/epoch (KIP-360). */
function isValidExpected(entry: TxnEntry, expected: { producerId: number; epoch: number }): boolean {
  return expected.producerId === entry.producerId || (expected.producerId === entry.lastProducerId && expected.epoch >= producerEpochMax);
}

function newEntry(scope: string, transactionalId: string, producerId: number, epoch: number, timeoutMs: number, now: number): TxnEntry {
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

function fieldsOf(entry: TxnEntry): TxnFields {
  const { producerId, producerEpoch, lastProducerId, lastProducerEpoch, timeoutMs, state, startedAt, updatedAt, partitions, groups } = entry;
  return { producerId, producerEpoch, lastProducerId, lastProducerEpoch, timeoutMs, state, startedAt, updatedAt, partitions, groups };
}

function toPersisted(f: TxnFields): PersistedTxn {
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
  };
}

/** Which of the partitions the entry holds (or stages offsets for) in memory or in the last record issued. */
function heldPartitions(entry: TxnEntry, gone: ReadonlySet<string>): Set<string> {
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
function storedWithout(stored: StoredTxn, gone: ReadonlySet<string>): StoredTxn | null {
  const partitions = stored.state.partitions.filter(([topicInternalId, partition]) => !gone.has(partKey({ topicInternalId, partition })));
  let dropped = partitions.length !== stored.state.partitions.length;
  const groups = stored.state.groups.map(([groupId, commits]): [string, OffsetCommit[]] => {
    const kept = commits.filter((c) => !gone.has(partKey(c)));
    dropped ||= kept.length !== commits.length;
    return [groupId, kept];
  });
  return dropped ? { state: { ...stored.state, partitions, groups }, updatedAt: stored.updatedAt } : null;
}

function cloneGroups(groups: ReadonlyMap<string, ReadonlyMap<string, OffsetCommit>>): Map<string, Map<string, OffsetCommit>> {
  return new Map([...groups].map(([g, pending]) => [g, new Map(pending)]));
}

function assertScope(scope: string): void {
  if (typeof scope !== 'string' || scope.length === 0 || Buffer.byteLength(scope) > scopeBytesMax) throw new QuartetError('invalid_request', `invalid scope '${scope}'`);
}

function assertTransactionalId(id: string): void {
  if (typeof id !== 'string' || id.length === 0 || Buffer.byteLength(id) > transactionalIdBytesMax) {
    throw new QuartetError('invalid_request', `a transactional id must be 1..${transactionalIdBytesMax} bytes`);
  }
}

function assertGroupId(groupId: string): void {
  if (typeof groupId !== 'string' || groupId.length === 0 || Buffer.byteLength(groupId) > groupIdBytesMax) throw new QuartetError('invalid_request', `invalid group id '${groupId}'`);
}

function assertOffsetCommit(c: OffsetCommit): void {
  if (!Number.isSafeInteger(c.topicInternalId) || c.topicInternalId < 0) throw new QuartetError('invalid_request', `invalid topic id ${c.topicInternalId}`);
  if (!Number.isInteger(c.partition) || c.partition < 0) throw new QuartetError('invalid_request', `invalid partition ${c.partition}`);
  if (!Number.isSafeInteger(c.offset) || c.offset < 0) throw new QuartetError('invalid_request', `invalid committed offset ${c.offset}`);
  if (Buffer.byteLength(c.metadata ?? '', 'utf8') > offsetMetadataBytesMax) throw new QuartetError('invalid_request', `offset metadata is longer than ${offsetMetadataBytesMax} bytes`);
}

function noop(): void {}
