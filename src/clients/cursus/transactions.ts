// CursusTransactionalProducer: the transaction lifecycle of spec §4 "Transaction Coordinator"
// (INIT_PRODUCER_ID, BEGIN_TXN, TXN_PUBLISH, SEND_OFFSETS_TO_TXN, END_TXN, TXN_STATUS) with the
// checklist's rules (spec §10): one transaction per epoch, retryable finalization, automatic
// reinitialization.
//
// - init() gets the broker's (producerId, epoch); a later init() fences the earlier epoch.
// - begin() starts a transaction; after a transaction of the current epoch completed (or when the
//   broker answers producer_reinitialization_required) it first calls init() for the next epoch.
// - send() is TXN_PUBLISH with a sequence number per topic-partition, from 1 in each epoch; the
//   partition is the caller's or the topic's partitioner's (FNV-1a 64 of the key under hash_key,
//   else round robin, from METADATA), so a retry reuses its number. A retryable failure is
//   retried with the same number (the broker drops the duplicate).
// - commit() / abort() is END_TXN; an outcome that stayed unknown (a lost connection, a timeout, a
//   retryable broker error) is retried with the same producerId and epoch, which the broker
//   answers idempotently, up to endRetries times.

import type { CursusClient, OffsetsInput } from './client.js';
import type { CursusConsumer } from './consumer.js';
import { CursusError, isCursusClientError } from './errors.js';
import { choosePartition, RoundRobin } from './partitioning.js';
import type { EndTxnResult, ProducerSession, TxnStatus } from './replies.js';

export interface TransactionalProducerOptions {
  transactionalId: string;
  /** Retries of a send or an END_TXN whose outcome is unknown (default 3). */
  retries?: number;
  retryBackoffMs?: number;
  /** Per request (default: the client's). */
  requestTimeoutMs?: number;
}

export type TransactionState = 'uninitialized' | 'ready' | 'open' | 'completed';

export class CursusTransactionalProducer {
  readonly transactionalId: string;
  private session: ProducerSession | null = null;
  private txnState: TransactionState = 'uninitialized';
  /** Next sequence number per "topic/partition", this epoch. */
  private readonly sequences = new Map<string, number>();
  private readonly layouts = new Map<string, { partitions: number; partitioner: string }>();
  private readonly roundRobin = new RoundRobin();
  private readonly retries: number;
  private readonly retryBackoffMs: number;

  constructor(
    readonly client: CursusClient,
    readonly options: TransactionalProducerOptions,
  ) {
    this.transactionalId = options.transactionalId;
    this.retries = options.retries ?? 3;
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
  }

  /** The broker's producer session, or null before init(). */
  get producer(): Readonly<ProducerSession> | null {
    return this.session;
  }

  get state(): TransactionState {
    return this.txnState;
  }

  /** INIT_PRODUCER_ID: a new epoch (fencing any older session of this transactional id). */
  async init(): Promise<ProducerSession> {
    this.session = await this.client.initProducerId(this.transactionalId, this.requestOptions());
    this.sequences.clear();
    this.txnState = 'ready';
    return this.session;
  }

  /** BEGIN_TXN, after init() when there is no session or its epoch already had its transaction. */
  async begin(): Promise<void> {
    if (this.txnState === 'open') throw new Error(`transaction ${this.transactionalId} is already open`);
    if (this.session === null || this.txnState === 'completed') await this.init();
    try {
      await this.client.beginTxn(this.session!, this.requestOptions());
    } catch (err) {
      if (!(err instanceof CursusError && err.code === 'producer_reinitialization_required')) throw err;
      await this.init();
      await this.client.beginTxn(this.session!, this.requestOptions());
    }
    this.txnState = 'open';
  }

  /** TXN_PUBLISH of one record into the open transaction. Resolves with where it went. */
  async send(topic: string, value: string | Buffer, opts: { key?: string | Buffer; partition?: number } = {}): Promise<{ topic: string; partition: number; seqNum: number }> {
    const session = this.openSession();
    const partition = opts.partition ?? (await this.partitionFor(topic, opts.key));
    const slot = `${topic}/${partition}`;
    const seqNum = this.sequences.get(slot) ?? 1;
    this.sequences.set(slot, seqNum + 1);
    const where = await this.retrying(() => this.client.txnPublish(session, { topic, message: value, seqNum, partition, key: opts.key }, this.requestOptions()));
    return { ...where, seqNum };
  }

  /**
   * SEND_OFFSETS_TO_TXN: the group's next offsets commit with the transaction. Pass the
   * consumer whose records were processed (its membership fences the offsets), or the fields.
   */
  async sendOffsets(source: CursusConsumer | { topic: string; group: string; member: string; generation: number }, offsets: OffsetsInput): Promise<number> {
    const session = this.openSession();
    let fence: { topic: string; group: string; member: string; generation: number };
    if ('assignment' in source) {
      const m = source.assignment;
      if (m === null) throw new Error('the consumer has no membership');
      fence = { topic: source.topic, group: source.group, member: m.memberId, generation: m.generation };
    } else {
      fence = source;
    }
    return this.client.sendOffsetsToTxn(session, { ...fence, offsets }, this.requestOptions());
  }

  /** END_TXN result=commit, retried with the same epoch while its outcome is unknown. */
  commit(): Promise<EndTxnResult> {
    return this.end('commit');
  }

  /** END_TXN result=abort, retried with the same epoch while its outcome is unknown. */
  abort(): Promise<EndTxnResult> {
    return this.end('abort');
  }

  async status(): Promise<TxnStatus> {
    return this.client.txnStatus(this.transactionalId, this.requestOptions());
  }

  /** begin(), then `work`, then commit(); abort() when `work` throws (the error is rethrown). */
  async run<T>(work: (txn: this) => Promise<T>): Promise<T> {
    await this.begin();
    let result: T;
    try {
      result = await work(this);
    } catch (err) {
      if (this.txnState === 'open') await this.abort().catch(() => {});
      throw err;
    }
    await this.commit();
    return result;
  }

  private async end(result: 'commit' | 'abort'): Promise<EndTxnResult> {
    const session = this.openSession();
    const outcome = await this.retrying(() => this.client.endTxn(session, result, this.requestOptions()));
    this.txnState = 'completed';
    return outcome;
  }

  private openSession(): ProducerSession {
    if (this.txnState !== 'open' || this.session === null) throw new Error(`transaction ${this.transactionalId} is not open (call begin())`);
    return this.session;
  }

  private async partitionFor(topic: string, key: string | Buffer | undefined): Promise<number> {
    let layout = this.layouts.get(topic);
    if (layout === undefined) {
      const m = await this.client.metadata(topic, this.requestOptions());
      layout = { partitions: m.partitions, partitioner: m.partitioner };
      this.layouts.set(topic, layout);
    }
    return choosePartition(layout.partitioner, key, layout.partitions, this.roundRobin);
  }

  /** Runs `op`, again (as it is) after a retryable failure, up to `retries` times. */
  private async retrying<T>(op: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await op();
      } catch (err) {
        if (attempt >= this.retries || !isCursusClientError(err) || !err.retryable) throw err;
        await new Promise((resolve) => setTimeout(resolve, this.retryBackoffMs * 2 ** attempt));
      }
    }
  }

  private requestOptions(): { timeoutMs: number } | undefined {
    return this.options.requestTimeoutMs === undefined ? undefined : { timeoutMs: this.options.requestTimeoutMs };
  }
}
