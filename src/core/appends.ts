// The append path of the broker (Broker.append): the checks a batch passes, the log's offset
// assignment, and what is recorded about the batch once its offsets are known, in straight-line
// code. It touches only memory and the log: no metadata-store work per batch.
//
//   1. A purge replacing the topic's logs: wait for the new ones (checked on arrival and again).
//   2. A transactional data batch: its producer, epoch and partition against its transaction;
//      a marker: its epoch. An idempotent batch: its sequence against the producer's window; a
//      retry of a batch in the window is answered with the original's offsets, once written.
//   3. PartitionLog.assign: the offsets, synchronously; the batch's format codec stamps them in.
//   4. Right after, with nothing awaited in between: the transaction index sees a transactional or
//      control batch (so the last stable offset never lags the log), and the producer's window
//      the idempotent batch (so its next pipelined batch is checked against it).
//   5. The write settles: on success the window entry is marked written and the partition's
//      metrics count it; on failure both records are undone (the log drops the batch and reuses
//      its offsets) and retries waiting on the original fail with it.
//
// Transaction markers go through the same path (writeMarker), flushed before they count as done.

import type { Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import { BatchFlags, type AppendRequest, type AppendResult, type AssignedAppend, type PartitionLog } from '../log/index.js';
import type { Catalog, TopicRef } from './catalog.js';
import type { PartitionHandle, PartitionLogs } from './partition-logs.js';
import type { ProducerCheck, ProducerStateManager } from './producer-state.js';
import type { MarkerRequest, TransactionCoordinator } from './transactions.js';
import { encodeNeutralMarker, type MarkerEncoder } from './txn-index.js';
import type { StorageHealth } from './storage-health.js';

/** Who sends a batch, where the batch alone does not say (Broker.append). */
export interface AppendOrigin {
  /**
   * The transaction a transactional batch is sent in: its protocol's scope and transactional id
   * (Kafka: 'kafka' and the Produce request's transactional id). Required for a transactional
   * batch, ignored for any other.
   */
  transaction?: { scope: string; transactionalId: string | null };
}

export interface AppendPathParts {
  catalog: Catalog;
  logs: PartitionLogs;
  producers: ProducerStateManager;
  clock: Clock;
  /** Marker encoders by protocol scope; a scope without one gets neutral-format markers. */
  markerEncoders: Readonly<Record<string, MarkerEncoder>>;
  /** Told of every write's outcome: a disk out of space is reported on /ready. */
  storage: StorageHealth;
}

type Duplicate = Extract<ProducerCheck, { kind: 'duplicate' }>;

export class AppendPath {
  private readonly catalog: Catalog;
  private readonly logs: PartitionLogs;
  private readonly producers: ProducerStateManager;
  /** Set once the coordinator is open (attachTransactions): it writes its markers through here. */
  private transactions: TransactionCoordinator | null = null;
  private stopped = false;

  constructor(private readonly parts: AppendPathParts) {
    this.catalog = parts.catalog;
    this.logs = parts.logs;
    this.producers = parts.producers;
  }

  attachTransactions(transactions: TransactionCoordinator): void {
    this.transactions = transactions;
  }

  /** Refuses every append from now on (shutting_down): the broker is closing. */
  stop(): void {
    this.stopped = true;
  }

  /** Broker.append: the steps above. */
  append(topic: TopicRef, partition: number, request: AppendRequest, origin: AppendOrigin = {}): Promise<AppendResult> {
    const reset = this.purgeInProgress(topic);
    if (reset !== undefined) return this.appendAfterPurge(reset, topic, partition, request, origin);
    let handle: PartitionHandle;
    let verdict: ProducerCheck | null = null;
    let assigned: AssignedAppend;
    try {
      if (this.stopped) throw new QuartetError('shutting_down', 'the broker is closing');
      const resolved = this.catalog.requireTopic(topic);
      handle = this.logs.handle(resolved, partition);
      this.checkTransactional(resolved, partition, request, origin);
      if (request.producerId >= 0) {
        // Markers carry no sequence (Kafka appendEndTxnMarker): only the epoch is checked.
        if ((request.flags & BatchFlags.control) !== 0) this.checkMarkerEpoch(request);
        else verdict = this.producers.check(handle.key, request);
      }
      if (verdict?.kind === 'duplicate') return this.answerDuplicate(handle, verdict);
      // Offsets are assigned here, synchronously: what follows sees them before any other append
      // of the partition is checked (nothing is awaited in between).
      assigned = handle.log.assign(request);
    } catch (err) {
      return Promise.reject(err);
    }
    const undoObservation = this.observeTransactional(handle, request, assigned);
    const written = verdict === null ? null : this.recordIdempotent(handle, request, assigned);
    return assigned.written.then(
      (result) => {
        if (written !== null) {
          this.producers.appendWritten(handle.key, request.producerId, assigned.baseOffset);
          written.resolve();
        }
        this.logs.countAppend(handle, request, result);
        this.parts.storage.appendWritten();
        return result;
      },
      (err: unknown) => {
        this.parts.storage.appendFailed(err);
        // The log drops a failed batch (and all queued behind it) and reuses its offsets: so must
        // the producer window and the transaction index; a retry that waited for it fails with it.
        if (written !== null) {
          this.producers.forgetAppend(handle.key, request.producerId, assigned.baseOffset);
          written.reject(err);
        }
        undoObservation?.();
        throw err;
      },
    );
  }

  /** Settles once the purge of the topic under way has replaced its logs; undefined when none is. */
  purgeInProgress(topic: TopicRef): Promise<void> | undefined {
    if (!this.logs.purging()) return undefined;
    const internalId = this.internalIdOf(topic);
    return internalId === undefined ? undefined : this.logs.purgeInProgress(internalId);
  }

  /**
   * An append that arrived while a purge replaces the topic's logs goes to the new log, checked
   * again there; a transactional batch is checked on arrival too. One whose partition the purge
   * emptied is refused (invalid_txn_state), as a produce to a partition the transaction never
   * added: the purge took that partition out of its transaction
   * (TransactionCoordinator.dropPartitions), so nothing would ever close it there.
   */
  private appendAfterPurge(reset: Promise<void>, topic: TopicRef, partition: number, request: AppendRequest, origin: AppendOrigin): Promise<AppendResult> {
    const internalId = this.internalIdOf(topic);
    const purged = internalId === undefined ? undefined : this.logs.purgedPartitions(internalId);
    const transactional = (request.flags & (BatchFlags.transactional | BatchFlags.control)) === BatchFlags.transactional;
    try {
      this.checkTransactional(topic, partition, request, origin);
    } catch (err) {
      return Promise.reject(err);
    }
    return reset.then(() => {
      if (transactional && purged?.has(partition) === true) {
        throw new QuartetError('invalid_txn_state', `partition ${partition} was purged while this transactional batch waited: it is no longer part of the transaction`);
      }
      return this.append(topic, partition, request, origin);
    });
  }

  /**
   * A transactional data batch is accepted only from the producer bound to `origin.transaction`,
   * in its epoch, while its transaction is ongoing and holds the partition (Kafka: the partition
   * was added with AddPartitionsToTxn). Markers are the coordinator's own: only their epoch is
   * checked (checkMarkerEpoch).
   */
  private checkTransactional(topic: TopicRef, partition: number, request: AppendRequest, origin: AppendOrigin): void {
    if ((request.flags & (BatchFlags.transactional | BatchFlags.control)) !== BatchFlags.transactional) return;
    const transaction = origin.transaction;
    if (request.producerId < 0 || transaction === undefined || transaction.transactionalId === null || transaction.transactionalId === '') {
      throw new QuartetError('invalid_txn_state', 'a transactional batch needs a producer id and the transactional id it is sent under');
    }
    const { scope, transactionalId } = transaction;
    this.coordinator().checkProduce({ scope, transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch }, topic, partition);
  }

  private checkMarkerEpoch(request: AppendRequest): void {
    const known = this.producers.currentEpoch(request.producerId);
    if (known !== null && request.producerEpoch < known) {
      throw new QuartetError('producer_fenced', `marker of producer ${request.producerId} epoch ${request.producerEpoch} is older than ${known}`);
    }
  }

  /** A retry of a batch in the producer's window: the original's offsets, once it is written. */
  private answerDuplicate(handle: PartitionHandle, duplicate: Duplicate): Promise<AppendResult> {
    const { baseOffset, lastOffset, appendTime, written } = duplicate;
    const answer = (): AppendResult => ({ baseOffset, lastOffset, appendTime, logStartOffset: handle.log.stats().logStartOffset });
    return written ? written.then(answer) : Promise.resolve(answer());
  }

  /**
   * Shows a transactional or control batch to the transaction coordinator once its offsets are
   * assigned (before it is readable). Returns the undo for a failed write: the log drops the batch
   * and reuses its offsets, so neither may the index keep it.
   */
  private observeTransactional(handle: PartitionHandle, request: AppendRequest, assigned: AssignedAppend): (() => void) | null {
    if (request.producerId < 0 || (request.flags & (BatchFlags.transactional | BatchFlags.control)) === 0) return null;
    const { format, flags, recordCount, firstTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, payload } = request;
    const { baseOffset, lastOffset } = assigned;
    return this.coordinator().observeAppend(handle.key, { format, flags, baseOffset, lastOffset, recordCount, firstTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, payload });
  }

  /**
   * Records an idempotent batch in its producer's window as soon as its offsets are assigned. The
   * window entry holds the returned promise until the write settles (the caller settles it), so
   * that a retry arriving meanwhile is answered only once the original is written, and fails if
   * it fails.
   */
  private recordIdempotent(handle: PartitionHandle, request: AppendRequest, assigned: AssignedAppend): Settleable {
    const written = settleable();
    const { baseOffset, lastOffset, appendTime } = assigned;
    this.producers.recordAppend(handle.key, request, { baseOffset, lastOffset, appendTime }, written.promise);
    return written;
  }

  /**
   * Encodes a marker in the transaction's protocol format, appends it and flushes its partition:
   * the coordinator records Complete* once every marker resolved, and under fsyncPolicy
   * 'interval' an append alone only reaches the page cache. A power loss must not keep Complete*
   * (SQLite, durable) and lose the marker, leaving a transaction open in the log forever.
   */
  writeMarker(marker: MarkerRequest): Promise<number> {
    const topic = this.catalog.topicByInternalId(marker.topicInternalId);
    if (!topic) return Promise.reject(new QuartetError('unknown_topic', `topic ${marker.topicInternalId} no longer exists`));
    // A purge that empties the partition takes it out of every unfinished transaction
    // (TransactionCoordinator.dropPartitions): a marker that waited for its new log belongs to
    // none of its records. A partition the purge left as it was (it failed first) gets its marker.
    const reset = this.logs.purgeInProgress(topic.internalId);
    if (reset !== undefined) {
      const purged = this.logs.purgedPartitions(topic.internalId);
      return reset.then(() =>
        purged?.has(marker.partition) === true ? Promise.reject(new QuartetError('unknown_partition', `partition ${marker.partition} of topic '${topic.name}' was purged: no marker`)) : this.writeMarker(marker),
      );
    }
    let request: AppendRequest;
    let log: PartitionLog;
    try {
      const encoders = this.parts.markerEncoders;
      const encode = Object.hasOwn(encoders, marker.scope) ? encoders[marker.scope]! : encodeNeutralMarker;
      const { producerId, producerEpoch, commit, coordinatorEpoch } = marker;
      request = encode({ producerId, producerEpoch, commit, coordinatorEpoch, timestamp: this.parts.clock.now(), topic: topic.name, partition: marker.partition });
      // The log the append below goes to (no purge is under way: it takes it at once).
      log = this.logs.handle(topic, marker.partition).log;
    } catch (err) {
      return Promise.reject(err);
    }
    return this.append(topic, marker.partition, request).then(async (r) => {
      // Under 'always' the append was acknowledged after its fsync: nothing left to flush. A log
      // a purge closed since was synced by its close, whether the purge then emptied the
      // partition or failed and kept it.
      if (log.config.fsyncPolicy !== 'always' && !this.logs.isClosedByPurge(log)) await log.flush();
      return r.baseOffset;
    });
  }

  private coordinator(): TransactionCoordinator {
    if (this.transactions === null) throw new Error('the append path has no transaction coordinator yet');
    return this.transactions;
  }

  private internalIdOf(topic: TopicRef): number | undefined {
    return 'internalId' in topic ? topic.internalId : this.catalog.getTopic(topic)?.internalId;
  }
}

/** A promise with its settle functions (Promise.withResolvers, not in Node 20). */
interface Settleable {
  promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function settleable(): Settleable {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined); // only retries wait on it; they get the rejection themselves
  return { promise, resolve, reject };
}

