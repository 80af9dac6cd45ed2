// The Cursus side of the transaction coordinator (src/core/transactions.ts): the six transaction
// commands of the spec's "Transaction Coordinator" section over the core's transactions, and how
// a Cursus marker looks in the log.
//
// Mapping to the core (scope 'cursus'; the offsets a transaction commits go under the Cursus
// groups' offset scope, cursusOffsetScope, through BrokerTransactionOptions.offsetScopes):
//   INIT_PRODUCER_ID     initProducerId; the wire producerId is the core's numeric id in decimal
//   BEGIN_TXN            beginTransaction, one transaction per epoch (oncePerEpoch)
//   TXN_PUBLISH          addPartitions, then one CBV2 record appended as a transactional,
//                        idempotent batch (baseSequence = seqNum - 1: Cursus counts from 1)
//   SEND_OFFSETS_TO_TXN  addOffsets + txnOffsetCommit (ownership checked by the groups service)
//   END_TXN              endTxn; markers are written by the core into every partition
//   TXN_STATUS           describe
//
// A marker is a CBV2 batch with one control record (docs/protocols/cursus-wire-v2.md §9):
// control_batch_type=transaction, control_batch_version=2, the coordinator epoch, and the
// control key (i16 version 0, i16 type: commit 0, abort 1, as Cursus v1 writes it) and value
// (i16 version 0, i32 coordinator epoch); transaction_marker and transaction_state say the same
// in words. The core reads it back with cursusMarkerKind, so read_committed readers of every
// protocol see the outcome.

import type { Broker, BrokerTransactionOptions, Topic } from '../../core/broker.js';
import type { Clock } from '../../base/clock.js';
import { coreCodeOf, isQuartetError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import type { MarkerEncoder, MarkerKindFn } from '../../core/txn-index.js';
import { partitionKey } from '../../core/producer-state.js';
import { TxnState, type TxnDescription, type TxnIdentity } from '../../core/transactions.js';
import { BatchFlags, BatchFormat, type AppendRequest } from '../../base/batch.js';
import { decodeBatch, encodeBatch, type CursusRecord } from './codec/batch.js';
import { CursusFailure, type CursusTopicView } from './handler.js';
import { cursusOffsetScope } from './groups.js';
import { defaultTopicView, fnv1a64Mod, requireCoreTopic } from './routing.js';

/** The core scope of Cursus transactional ids, and the offset scope their offsets commit under. */
export const cursusTransactionScope = 'cursus';
/** The spec's transaction_timeout_ms default. */
export const cursusTransactionTimeoutMsDefault = 60_000;
/** SEND_OFFSETS_TO_TXN: at most this many partition pairs (as BATCH_COMMIT). */
export const txnOffsetEntriesMax = 1024;

const markerTypeCommit = 0;
const markerTypeAbort = 1;
const controlBatchVersion = 2;

// --- markers -----------------------------------------------------------------------------------

/** A CBV2 batch holding one transaction marker, as the log's AppendRequest. */
export const encodeCursusMarker: MarkerEncoder = (marker) => {
  if (marker.topic === undefined || marker.partition === undefined) throw new Error('a Cursus marker needs its topic and partition');
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(marker.commit ? markerTypeCommit : markerTypeAbort, 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(marker.coordinatorEpoch, 2);
  const record: CursusRecord = {
    topic: marker.topic,
    partition: marker.partition,
    offset: 0,
    payload: Buffer.alloc(0),
    producerId: String(marker.producerId),
    producerEpoch: marker.producerEpoch,
    timestamp: marker.timestamp,
    transactionState: marker.commit ? 'committed' : 'aborted',
    transactionMarker: marker.commit ? 'commit' : 'abort',
    controlBatchType: 'transaction',
    controlBatchVersion,
    controlBatchCoordinatorEpoch: marker.coordinatorEpoch,
    controlKey: key,
    controlValue: value,
  };
  const payload = Buffer.concat(encodeBatch({ idempotent: false, topic: marker.topic, partition: marker.partition, acks: 'all', batchStart: 0, batchEnd: 0, records: [record] }));
  return {
    format: BatchFormat.cursus,
    recordCount: 1,
    firstTimestamp: marker.timestamp,
    maxTimestamp: marker.timestamp,
    producerId: marker.producerId,
    producerEpoch: marker.producerEpoch,
    baseSequence: -1,
    flags: BatchFlags.control | BatchFlags.transactional,
    payload,
  };
};

/** The marker type of a stored CBV2 control batch; null for anything else or a malformed one. */
export const cursusMarkerKind: MarkerKindFn = (batch) => {
  if (batch.format !== BatchFormat.cursus || (batch.flags & BatchFlags.control) === 0) return null;
  const decoded = decodeBatch(batch.payload);
  const r = decoded.ok ? decoded.value.records[0] : undefined;
  const key = r?.controlKey;
  if (r?.controlBatchType !== 'transaction' || key === undefined || key.length !== 4 || key.readInt16BE(0) !== 0) return null;
  const type = key.readInt16BE(2);
  return type === markerTypeCommit ? 'commit' : type === markerTypeAbort ? 'abort' : null;
};

/**
 * What Broker.open needs to write and read Cursus markers. The server merges it with the other
 * protocols' (src/server/server.ts passes Kafka's); without it Cursus transactions get
 * neutral-format markers, which every reader understands as well.
 */
export const cursusBrokerTransactionOptions: BrokerTransactionOptions = Object.freeze({
  markerEncoders: Object.freeze({ [cursusTransactionScope]: encodeCursusMarker }),
  markerKinds: Object.freeze({ [BatchFormat.cursus]: cursusMarkerKind }),
  markerFormats: Object.freeze({ [BatchFormat.cursus]: encodeCursusMarker }),
  offsetScopes: Object.freeze({ [cursusTransactionScope]: cursusOffsetScope }),
});

// --- routing (shared with the event store) ------------------------------------------------------

// --- the service -------------------------------------------------------------------------------

/** Checks that `member` of `group` in `generation` owns the partitions of `topic`; null when it does. */
export type OwnershipValidator = (group: string, member: string, generation: number, topic: string, partitions: readonly number[]) => CursusFailure | null | Promise<CursusFailure | null>;

export interface CursusTransactionsOptions {
  broker: Broker;
  logger: Logger;
  clock: Clock;
  /** The Cursus topic table (topics.ts); default: defaultTopicView of the core topic. */
  topicView?: (name: string) => CursusTopicView | undefined;
  /** The groups service's ownership check; default: every member owns everything. */
  validateOwnership?: OwnershipValidator;
  transactionTimeoutMs?: number;
}

/** The caller of a transaction command: transactional id, producerId as on the wire, epoch. */
export interface TxnCaller {
  transactionalId: string;
  producerId: string;
  epoch: number;
}

export interface TxnPublish extends TxnCaller {
  topic: string;
  partition: number | undefined;
  key: Buffer | undefined;
  seqNum: number;
  message: Buffer;
}

export interface TxnSendOffsets extends TxnCaller {
  topic: string;
  group: string;
  member: string;
  generation: number;
  offsets: ReadonlyArray<{ partition: number; offset: number }>;
}

/** TXN_STATUS and END_TXN figures. */
export interface TxnSummary {
  state: 'empty' | 'open' | 'prepare_commit' | 'prepare_abort' | 'committed' | 'aborted';
  messages: number;
  participants: number;
  offsets: number;
}

const stateNames: Readonly<Record<string, TxnSummary['state']>> = {
  [TxnState.Empty]: 'empty',
  [TxnState.Ongoing]: 'open',
  [TxnState.PrepareCommit]: 'prepare_commit',
  [TxnState.PrepareAbort]: 'prepare_abort',
  [TxnState.CompleteCommit]: 'committed',
  [TxnState.CompleteAbort]: 'aborted',
};

const decimalId = /^(0|[1-9][0-9]{0,15})$/;

export class CursusTransactions {
  private readonly broker: Broker;
  private readonly clock: Clock;
  private readonly topicView: (name: string) => CursusTopicView | undefined;
  private readonly validateOwnership: OwnershipValidator;
  private readonly timeoutMs: number;
  /** Round-robin position per topic for records with neither partition nor key. */
  private readonly roundRobin = new Map<string, number>();
  /** The group session each open transaction staged offsets under, revalidated before commit (memory only). */
  private readonly sessions = new Map<string, { group: string; member: string; generation: number; topics: Map<string, Set<number>> }>();

  constructor(options: CursusTransactionsOptions) {
    this.broker = options.broker;
    this.clock = options.clock;
    this.topicView = options.topicView ?? ((name) => {
      const t = this.broker.catalog.getTopic({ topic: name });
      return t === null ? undefined : defaultTopicView(t);
    });
    this.validateOwnership = options.validateOwnership ?? (() => null);
    this.timeoutMs = options.transactionTimeoutMs ?? cursusTransactionTimeoutMsDefault;
  }

  async initProducerId(transactionalId: string): Promise<{ producerId: string; epoch: number }> {
    try {
      const r = await this.broker.transactions.initProducerId({ scope: cursusTransactionScope, transactionalId, transactionTimeoutMs: this.timeoutMs });
      this.sessions.delete(transactionalId);
      return { producerId: String(r.producerId), epoch: r.epoch };
    } catch (err) {
      throw txnFailure(err, transactionalId);
    }
  }

  async begin(caller: TxnCaller): Promise<void> {
    const id = this.identity(caller, 'fenced');
    try {
      await this.broker.transactions.beginTransaction(id, { oncePerEpoch: true });
    } catch (err) {
      const d = this.describe(caller.transactionalId);
      if (coreCodeOf(err) === 'invalid_txn_state' && d !== null && (d.state === TxnState.CompleteCommit || d.state === TxnState.CompleteAbort)) {
        throw CursusFailure.of('producer_reinitialization_required', [['transactional_id', caller.transactionalId], ['epoch', String(caller.epoch)]], 'this epoch already completed a transaction: call INIT_PRODUCER_ID');
      }
      throw txnFailure(err, caller.transactionalId);
    }
  }

  /** Appends one transactional record; returns the partition it went to. */
  async publish(p: TxnPublish): Promise<number> {
    const id = this.identity(p, 'stale');
    const topic = requireCoreTopic(this.broker, p.topic);
    const partition = this.partitionFor(topic, p.partition, p.key);
    // The core takes any first sequence of a producer in a partition (Kafka does); Cursus starts
    // every (producerId, epoch) at seqNum 1 ("starting above 1 is rejected as a gap").
    const last = this.broker.producers.lastSequence(partitionKey(topic.internalId, partition), id.producerId);
    if (p.seqNum !== 1 && (last === null || last.epoch !== id.producerEpoch)) {
      throw CursusFailure.of('invalid_sequence', [['transactional_id', p.transactionalId]], `the first seqNum of epoch ${id.producerEpoch} in partition ${partition} is 1, got ${p.seqNum}`);
    }
    try {
      await this.broker.transactions.addPartitions(id, [{ topic, partition }], { ongoingOnly: true });
      const origin = { transaction: { scope: cursusTransactionScope, transactionalId: p.transactionalId } };
      await this.broker.append(topic, partition, this.transactionalRecord(topic, partition, p, id), origin);
    } catch (err) {
      throw txnFailure(err, p.transactionalId, 'stale');
    }
    return partition;
  }

  /** Stages the offsets in the open transaction; returns how many the transaction holds for the group now. */
  async sendOffsets(s: TxnSendOffsets): Promise<number> {
    const id = this.identity(s, 'fenced');
    const topic = requireCoreTopic(this.broker, s.topic);
    for (const o of s.offsets) if (o.partition >= topic.partitions) throw CursusFailure.of('partition_not_found', [['partition', String(o.partition)]]);
    const denied = await this.validateOwnership(s.group, s.member, s.generation, s.topic, s.offsets.map((o) => o.partition));
    if (denied !== null) throw denied;
    const session = this.sessions.get(s.transactionalId);
    if (session !== undefined && (session.group !== s.group || session.member !== s.member || session.generation !== s.generation) && this.describe(s.transactionalId)?.state === TxnState.Ongoing) {
      throw CursusFailure.of('GEN_MISMATCH', [['current', String(session.generation)], ['requested', String(s.generation)], ['group', s.group], ['member', s.member]], 'a transaction stages offsets of one group session');
    }
    await this.checkMonotonic(s, topic);
    try {
      await this.broker.transactions.addOffsets(id, s.group, { ongoingOnly: true });
      await this.broker.transactions.txnOffsetCommit(id, s.group, s.offsets.map((o) => ({ topicInternalId: topic.internalId, partition: o.partition, offset: o.offset })));
    } catch (err) {
      throw txnFailure(err, s.transactionalId);
    }
    const current = session ?? { group: s.group, member: s.member, generation: s.generation, topics: new Map<string, Set<number>>() };
    const parts = current.topics.get(s.topic) ?? new Set<number>();
    for (const o of s.offsets) parts.add(o.partition);
    current.topics.set(s.topic, parts);
    this.sessions.set(s.transactionalId, current);
    return this.broker.transactions.stagedOffsetsOf(cursusTransactionScope, s.transactionalId, s.group).length;
  }

  async end(caller: TxnCaller, commit: boolean): Promise<TxnSummary> {
    const id = this.identity(caller, 'fenced');
    const before = this.describe(caller.transactionalId);
    if (before !== null) this.refuseOtherOutcome(caller.transactionalId, before, commit);
    if (commit && before?.state === TxnState.Ongoing) await this.revalidate(caller.transactionalId);
    try {
      await this.broker.transactions.endTxn(id, commit);
    } catch (err) {
      throw txnFailure(err, caller.transactionalId);
    }
    this.sessions.delete(caller.transactionalId);
    return this.status(caller.transactionalId);
  }

  status(transactionalId: string): TxnSummary {
    const d = this.describe(transactionalId);
    if (d === null) throw CursusFailure.of('transaction_not_found', [['transactional_id', transactionalId]]);
    const state = stateNames[d.state] ?? 'empty';
    if (state === 'empty') return { state, messages: 0, participants: 0, offsets: 0 };
    const done = d.state === TxnState.CompleteCommit || d.state === TxnState.CompleteAbort;
    const partitions = done ? (d.outcome?.partitions ?? []) : d.partitions;
    const offsets = done ? (d.outcome?.offsets ?? 0) : d.stagedOffsets;
    // One transaction per epoch, each record one sequence from 1: the producer's last sequence
    // in a partition, in this epoch, counts the transaction's records there.
    let messages = 0;
    for (const p of partitions) {
      const last = this.broker.producers.lastSequence(partitionKey(p.topicInternalId, p.partition), d.producerId);
      if (last !== null && last.epoch === d.producerEpoch) messages += last.sequence + 1;
    }
    return { state, messages, participants: partitions.length, offsets };
  }

  // --- internals -----------------------------------------------------------------------------

  private describe(transactionalId: string): TxnDescription | null {
    return this.broker.transactions.describe(cursusTransactionScope, transactionalId);
  }

  /**
   * The core identity of the caller, checked first so that the reply names the Cursus error:
   * an unknown id, a producerId that is not the id's, and an epoch older than the current one.
   * (The core checks the same again in the operation's turn.)
   */
  private identity(caller: TxnCaller, older: 'fenced' | 'stale'): TxnIdentity {
    const d = this.describe(caller.transactionalId);
    if (d === null || d.state === TxnState.Dead) throw CursusFailure.of('transaction_not_found', [['transactional_id', caller.transactionalId]]);
    if (!decimalId.test(caller.producerId) || Number(caller.producerId) !== d.producerId) {
      throw CursusFailure.of('producer_fenced', [['transactional_id', caller.transactionalId], ['producer', caller.producerId]], `the transactional id belongs to producer ${d.producerId}`);
    }
    if (caller.epoch < d.producerEpoch) throw olderEpoch(older, caller.transactionalId, caller.producerId, d.producerEpoch, caller.epoch);
    if (caller.epoch > d.producerEpoch) throw CursusFailure.of('invalid_epoch', [['producer', caller.producerId], ['current', String(d.producerEpoch)], ['got', String(caller.epoch)]], 'the epoch was never issued');
    return { scope: cursusTransactionScope, transactionalId: caller.transactionalId, producerId: d.producerId, producerEpoch: d.producerEpoch };
  }

  /** Abort after commit (or commit preparation) and commit after abort are refused. */
  private refuseOtherOutcome(transactionalId: string, d: TxnDescription, commit: boolean): void {
    const fields: Array<[string, string]> = [['transactional_id', transactionalId], ['state', stateNames[d.state] ?? d.state]];
    if (!commit && (d.state === TxnState.CompleteCommit || d.state === TxnState.PrepareCommit)) throw CursusFailure.of('transaction_already_committed', fields, 'retry END_TXN with result=commit');
    if (commit && (d.state === TxnState.CompleteAbort || d.state === TxnState.PrepareAbort)) throw CursusFailure.of('transaction_aborted', fields);
    if (d.state === TxnState.Empty) throw CursusFailure.of('invalid_transaction_state', fields, 'no transaction was begun in this epoch');
  }

  /** Before a commit: the staged offsets' owner still owns them (spec: "then revalidates them before commit"). */
  private async revalidate(transactionalId: string): Promise<void> {
    const s = this.sessions.get(transactionalId);
    if (s === undefined) return;
    for (const [topic, parts] of s.topics) {
      const denied = await this.validateOwnership(s.group, s.member, s.generation, topic, [...parts]);
      if (denied !== null) throw denied;
    }
  }

  /** Offsets may only move forward: against the group's committed offset and the staged one. */
  private async checkMonotonic(s: TxnSendOffsets, topic: Topic): Promise<void> {
    const staged = new Map(this.broker.transactions.stagedOffsetsOf(cursusTransactionScope, s.transactionalId, s.group).filter((c) => c.topicInternalId === topic.internalId).map((c) => [c.partition, c.offset]));
    for (const o of s.offsets) {
      const committed = (await this.broker.offsets.fetch(cursusOffsetScope, s.group, topic.internalId, o.partition))?.offset ?? 0;
      const floor = Math.max(committed, staged.get(o.partition) ?? 0);
      if (o.offset < floor) throw CursusFailure.of('offset_regression', [['reason', `partition ${o.partition}: offset ${o.offset} is below ${floor}`]]);
    }
  }

  private partitionFor(topic: Topic, requested: number | undefined, key: Buffer | undefined): number {
    if (requested !== undefined) {
      if (requested >= topic.partitions) throw CursusFailure.of('partition_not_found', [['partition', String(requested)]]);
      return requested;
    }
    const view = this.topicView(topic.name);
    if (key !== undefined && key.length > 0 && view?.partitioner !== 'round_robin') return fnv1a64Mod(key, topic.partitions);
    const next = this.roundRobin.get(topic.name) ?? 0;
    this.roundRobin.set(topic.name, next + 1);
    return next % topic.partitions;
  }

  private transactionalRecord(topic: Topic, partition: number, p: TxnPublish, id: TxnIdentity): AppendRequest {
    const now = this.clock.now();
    const record: CursusRecord = {
      topic: topic.name,
      partition,
      offset: 0,
      payload: p.message,
      producerId: p.producerId,
      producerEpoch: p.epoch,
      seqNum: p.seqNum,
      timestamp: now,
      ...(p.key !== undefined ? { key: p.key } : {}),
      transactionalId: p.transactionalId,
      transactionState: 'open',
    };
    const payload = Buffer.concat(encodeBatch({ idempotent: true, topic: topic.name, partition, acks: 'all', batchStart: p.seqNum, batchEnd: p.seqNum, records: [record] }));
    return {
      format: BatchFormat.cursus,
      recordCount: 1,
      firstTimestamp: now,
      maxTimestamp: now,
      producerId: id.producerId,
      producerEpoch: id.producerEpoch,
      baseSequence: p.seqNum - 1,
      flags: BatchFlags.transactional,
      payload,
    };
  }
}

function olderEpoch(older: 'fenced' | 'stale', transactionalId: string, producer: string, current: number, got: number): CursusFailure {
  const counts: Array<[string, string]> = [['current', String(current)], ['got', String(got)]];
  return older === 'stale'
    ? CursusFailure.of('stale_producer_epoch', [['producer', producer], ...counts], 'a newer epoch of this producer exists')
    : CursusFailure.of('producer_fenced', [['transactional_id', transactionalId], ['producer', producer], ...counts], 'a newer epoch of this producer exists');
}

/** The Cursus error of a core error thrown by a transaction operation. */
export function txnFailure(err: unknown, transactionalId: string, older: 'fenced' | 'stale' = 'fenced'): unknown {
  if (err instanceof CursusFailure || !isQuartetError(err)) return err;
  const id: [string, string] = ['transactional_id', transactionalId];
  switch (err.code) {
    case 'producer_fenced':
    case 'invalid_producer_epoch':
      return older === 'stale' ? CursusFailure.of('stale_producer_epoch', [id], err.message) : CursusFailure.of('producer_fenced', [id], err.message);
    case 'transactional_id_not_found':
      return CursusFailure.of('transaction_not_found', [id], err.message);
    case 'invalid_txn_state':
      return CursusFailure.of('invalid_transaction_state', [id], err.message);
    case 'out_of_order_sequence':
      return CursusFailure.of('invalid_sequence', [id], err.message);
    case 'concurrent_transactions':
    case 'storage_error':
    case 'shutting_down':
    case 'not_ready':
      return CursusFailure.of('coordinator_not_available', [id], err.message);
    case 'unknown_topic':
      return CursusFailure.of('topic_not_found', [], err.message);
    case 'unknown_partition':
      return CursusFailure.of('partition_not_found', [], err.message);
    case 'invalid_request':
      return CursusFailure.of('invalid_command_payload', [['reason', err.message]]);
    case 'resource_exhausted':
      return CursusFailure.of('transaction_limit_exceeded', [id], err.message);
    default:
      return err;
  }
}
