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
//
// This file holds the coordinator's operations and lifecycle; its parts share a TxnContext:
//   txn-records.ts   the states and transitions, the entries and their records (TxnRecordWriter)
//   txn-turns.ts     one operation at a time per transactional id
//   txn-markers.ts   completion: markers, staged offsets, retries, lost markers rewritten
//   txn-timeouts.ts  transaction timeouts (abort with a fenced epoch) and transactional-id expiry

import assert from 'node:assert/strict';
import type { TopicRef } from './catalog.js';
import type { Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import { silentLogger, type Logger } from '../base/logger.js';
import type { MetadataStore } from './metadata-store.js';
import { groupIdBytesMax, offsetMetadataBytesMax, scopeBytesMax, type OffsetCommit, type OffsetStore } from './offsets.js';
import type { ProducerStateManager } from './producer-state.js';
import { systemScheduler, type Scheduler } from './scheduler.js';
import { TxnIndex, markerKindByFormat, visibleCommitted, type AbortedTxn, type MarkerKindFn, type OpenTxn } from './txn-index.js';
import { TxnMarkers } from './txn-markers.js';
import {
  cloneGroups,
  concurrent,
  entryFromRecord,
  forgetPartitions,
  heldPartitions,
  isPrepare,
  isValidExpected,
  newEntry,
  partKey,
  stagedOffsetCount,
  storedWithout,
  TxnRecordWriter,
  TxnState,
  txnKey,
  type MarkerWriter,
  type TxnContext,
  type TxnEntry,
  type TxnFields,
  type TxnOutcome,
  type TxnPartition,
  type TxnPartitions,
} from './txn-records.js';
import { TxnTimeouts } from './txn-timeouts.js';
import { TxnTurns } from './txn-turns.js';
import type { ReadOptions, StoredBatch } from '../log/index.js';

export { TxnState, type MarkerRequest, type MarkerWriter, type TxnOutcome, type TxnPartition, type TxnPartitionHandle, type TxnPartitions } from './txn-records.js';
export { markerWritesInFlightMax } from './txn-markers.js';

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
export const markerRetryBackoffMsDefault = 1_000;

const coordinatorEpochCounter = 'txn_coordinator_epoch';

export interface TransactionCoordinatorOptions {
  store: MetadataStore;
  producers: ProducerStateManager;
  offsets: OffsetStore;
  partitions: TxnPartitions;
  writeMarker: MarkerWriter;
  /** Default: the neutral format's marker only (markerKindByFormat()). */
  markerKind?: MarkerKindFn;
  /** The OffsetStore scope of a transaction scope's offsets when not the scope itself (BrokerTransactionOptions.offsetScopes). */
  offsetScopes?: Readonly<Record<string, string>>;
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
  /** The protocol scope ('kafka', 'cursus'); its offsets commit under offsetScopeOf(scope). */
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
  /** Offsets staged in the open transaction, over all its groups. */
  stagedOffsets: number;
  /** What the last completed transaction held; null before the first completes. */
  outcome: TxnOutcome | null;
}

/** Options of the operations that put something into a transaction. */
export interface TxnJoinOptions {
  /**
   * Refuse (invalid_txn_state) unless a transaction is open: for protocols that open one
   * explicitly (Cursus BEGIN_TXN) instead of implicitly with the first partition (Kafka).
   */
  ongoingOnly?: boolean;
}

export class TransactionCoordinator {
  readonly index: TxnIndex;
  readonly transactionTimeoutMsMax: number;
  readonly transactionalIdExpirationMs: number;
  readonly transactionalIdsMax: number;
  private readonly entries = new Map<string, TxnEntry>();
  private readonly turns = new TxnTurns();
  private readonly store: MetadataStore;
  private readonly producers: ProducerStateManager;
  private readonly partitions: TxnPartitions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly records: TxnRecordWriter;
  private readonly ctx: TxnContext;
  private readonly markers: TxnMarkers;
  private readonly timeouts: TxnTimeouts;

  private constructor(options: TransactionCoordinatorOptions) {
    this.store = options.store;
    this.producers = options.producers;
    this.partitions = options.partitions;
    this.clock = options.clock;
    this.logger = options.logger ?? silentLogger;
    this.transactionTimeoutMsMax = options.transactionTimeoutMsMax ?? transactionTimeoutMsMaxDefault;
    this.transactionalIdExpirationMs = options.transactionalIdExpirationMs ?? transactionalIdExpirationMsDefault;
    this.transactionalIdsMax = options.transactionalIdsMax ?? transactionalIdsMaxDefault;
    this.index = new TxnIndex(options.markerKind ?? markerKindByFormat(), this.logger);
    assert.ok(this.transactionTimeoutMsMax >= 1, 'transactionTimeoutMsMax must be >= 1');
    this.records = new TxnRecordWriter(this.store, this.clock);
    this.ctx = {
      entries: this.entries,
      store: this.store,
      producers: this.producers,
      offsets: options.offsets,
      offsetScopeOf: (scope) => options.offsetScopes?.[scope] ?? scope,
      partitions: this.partitions,
      writeMarker: options.writeMarker,
      index: this.index,
      clock: this.clock,
      scheduler: options.scheduler ?? systemScheduler,
      logger: this.logger,
      markerRetryBackoffMs: options.markerRetryBackoffMs ?? markerRetryBackoffMsDefault,
      records: this.records,
      turns: this.turns,
      coordinatorEpoch: 0,
      closed: false,
    };
    this.markers = new TxnMarkers(this.ctx);
    this.timeouts = new TxnTimeouts(this.ctx, this.markers);
  }

  /**
   * Loads the transactional ids and rebuilds every partition's index (checkpoint + log tail). Call
   * start() next, once appends through the broker are possible: it finishes prepared transactions.
   */
  static async open(options: TransactionCoordinatorOptions): Promise<TransactionCoordinator> {
    const coordinator = new TransactionCoordinator(options);
    coordinator.ctx.coordinatorEpoch = await options.store.nextId(coordinatorEpochCounter, 0);
    for (const record of await options.store.listTransactions()) {
      const entry = entryFromRecord(record.scope, record.transactionalId, record.state, record.updatedAt, coordinator.transactionTimeoutMsMax);
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
        work.push(this.turns.exclusive(entry, () => this.markers.complete(entry)));
      } else if (entry.state === TxnState.Ongoing) {
        this.timeouts.armTimeout(entry);
      }
    }
    await Promise.all(work);
    await this.markers.repairHangingTransactions();
  }

  /** The epoch written into markers; grows at every open. */
  get coordinatorEpoch(): number {
    return this.ctx.coordinatorEpoch;
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
    return this.turns.exclusiveKey(key, () => this.init(key, request.scope, request.transactionalId!, request));
  }

  /** Kafka AddPartitionsToTxn: the partitions this transaction will write (markers go to each). */
  addPartitions(id: TxnIdentity, partitions: ReadonlyArray<{ topic: TopicRef; partition: number }>, options: TxnJoinOptions = {}): Promise<void> {
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
      await this.markers.settlePrepared(entry);
      if (options.ongoingOnly === true) assertOngoing(entry);
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
  addOffsets(id: TxnIdentity, groupId: string, options: TxnJoinOptions = {}): Promise<void> {
    try {
      this.assertOpen();
      assertGroupId(groupId);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.withEntry(id, async (entry) => {
      await this.markers.settlePrepared(entry);
      if (options.ongoingOnly === true) assertOngoing(entry);
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
   * Cursus BEGIN_TXN: opens a transaction with nothing in it yet (Empty or Complete* to Ongoing,
   * its timeout armed); an open one is left as it is, so a retry succeeds. With `oncePerEpoch`,
   * an epoch whose transaction already completed may not open another (invalid_txn_state): the
   * producer initializes again for a new epoch (Cursus: "One initialized epoch may begin one
   * transaction").
   */
  beginTransaction(id: TxnIdentity, options: { oncePerEpoch?: boolean } = {}): Promise<void> {
    try {
      this.assertOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.withEntry(id, async (entry) => {
      await this.markers.settlePrepared(entry);
      if (entry.state === TxnState.Ongoing) return;
      if (options.oncePerEpoch === true && (entry.state === TxnState.CompleteCommit || entry.state === TxnState.CompleteAbort)) {
        throw new QuartetError('invalid_txn_state', `epoch ${entry.producerEpoch} of '${entry.transactionalId}' already completed a transaction (${entry.state})`);
      }
      await this.beginOrContinue(entry, {});
    });
  }

  /**
   * Kafka TxnOffsetCommit: offsets staged in the transaction, committed to the OffsetStore (under
   * offsetScopeOf the transaction's scope) only when it commits. The group must have been added (addOffsets).
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
      await this.records.transition(entry, { state: TxnState.Ongoing, groups });
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
          this.timeouts.cancelTimeout(entry);
          await this.records.transition(entry, { state: prepare });
          await this.markers.complete(entry);
          return { state: entry.state };
        case done:
          return { state: done };
        case prepare:
          if (!(await this.markers.complete(entry))) throw concurrent(entry);
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
   * Whether an unfinished transaction whose offsets commit under `offsetScope` (Ongoing,
   * PrepareCommit, PrepareAbort) has staged an offset for the group's partition that is not committed yet. Kafka OffsetFetch with
   * require_stable answers UNSTABLE_OFFSET_COMMIT for such a partition. Linear in the number of
   * transactional ids held (bounded by transactionalIdsMax).
   */
  hasPendingOffset(offsetScope: string, groupId: string, topicInternalId: number, partition: number): boolean {
    const key = partKey({ topicInternalId, partition });
    for (const entry of this.entries.values()) {
      if (this.ctx.offsetScopeOf(entry.scope) !== offsetScope) continue;
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
      stagedOffsets: stagedOffsetCount(entry.groups),
      outcome: entry.outcome === null ? null : { partitions: entry.outcome.partitions.map((p) => ({ ...p })), offsets: entry.outcome.offsets },
    };
  }

  /** The offsets the transactional id's open transaction has staged for the group ([] when none). */
  stagedOffsetsOf(scope: string, transactionalId: string, groupId: string): OffsetCommit[] {
    const pending = this.entries.get(txnKey(scope, transactionalId))?.groups.get(groupId);
    return pending === undefined ? [] : [...pending.values()].map((c) => ({ ...c }));
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
    return this.timeouts.expireIdle(now, this.transactionalIdExpirationMs);
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
        this.records.chainWrite(entry, async () => {
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
  settled(): Promise<void> {
    return this.turns.settled();
  }

  /** Stops the timers, waits for running work and writes the index checkpoint. */
  async close(): Promise<void> {
    if (this.ctx.closed) return;
    this.ctx.closed = true;
    for (const entry of this.entries.values()) {
      this.timeouts.cancelTimeout(entry);
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
      await this.records.persist(entry);
      this.entries.set(key, entry);
      return { producerId, epoch };
    }
    const expected = request.expected;
    if (expected && !isValidExpected(entry, expected)) {
      throw new QuartetError('producer_fenced', `producer ${expected.producerId} epoch ${expected.epoch} is not the current producer of '${transactionalId}'`);
    }
    await this.markers.settlePrepared(entry);
    if (entry.state === TxnState.Ongoing) {
      // Fence the current producer: abort its transaction with a bumped epoch and hand that epoch out.
      const before = entry.producerEpoch;
      await this.timeouts.abortWithFence(entry, 'reinitialized');
      if (isPrepare(entry.state)) throw concurrent(entry);
      if (entry.producerEpoch > before) {
        await this.records.transition(entry, { state: TxnState.Empty, timeoutMs: request.transactionTimeoutMs, lastProducerId: -1, lastProducerEpoch: -1 });
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
    await this.records.transition(entry, {
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
    return this.turns.exclusiveKey(key, async () => {
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
      await this.records.transition(entry, { ...changes, state: TxnState.Ongoing });
      return;
    }
    // A new transaction: what the previous one held is gone with its completion.
    const fresh: Partial<TxnFields> = { partitions: new Map(), groups: new Map(), ...changes, state: TxnState.Ongoing, startedAt: this.clock.now() };
    await this.records.transition(entry, fresh);
    this.timeouts.armTimeout(entry);
  }

  private assertOpen(): void {
    if (this.ctx.closed) throw new QuartetError('shutting_down', 'the transaction coordinator is closed');
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
}

// --- request checks -----------------------------------------------------------------------------

function assertOngoing(entry: TxnEntry): void {
  if (entry.state !== TxnState.Ongoing) throw new QuartetError('invalid_txn_state', `no transaction of '${entry.transactionalId}' is open (state ${entry.state})`);
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
