// CursusProducer: batches records into CBV2 batches (docs/protocols/cursus-wire-v2.md §9) and
// publishes them with PUBLISH.
//
// - Batches are per partition. A record goes to the partition send() names; otherwise, with
//   partitioning 'client', to the one the topic's partitioner picks (FNV-1a 64 of the key for
//   hash_key, else round robin; the partition count and partitioner come from METADATA, cached
//   for metadataMaxAgeMs); with partitioning 'broker', to partition -1: the broker chooses.
// - A batch is sent when it holds batchRecordsMax records or batchBytesMax bytes, or lingerMs
//   after its first record (0: at the end of the current event-loop turn).
// - One batch per partition is in flight at a time, so a retried batch never overtakes a later one.
//   Retryable failures (a lost connection, a timeout, a retryable broker error) resend the same
//   bytes up to `retries` times with exponential backoff.
// - Idempotent mode (spec §9): the batch flag is set, acks is `all`, and every record carries the
//   producerId, epoch and a sequence number; sequences are per partition (per partition -1 with
//   'broker' partitioning), start at 1 and run on across batches (batch_start..batch_end). They are
//   given when a batch's turn comes, so a batch the broker refused outright gives its numbers back;
//   one whose outcome stayed unknown keeps them (a resend of the same numbers would be dropped by
//   the broker as a duplicate, while a gap is refused loudly).
// - send() resolves with the record's partition (null when the broker chose) and offset (from
//   the AckResponse's last_offset; null with acks 0). Buffered bytes are bounded
//   (bufferedBytesMax): send() waits for room instead of growing.

import { encodeBatch, type Acks, type CursusRecord } from '../../protocols/cursus/codec/index.js';
import { acksOf, type AcksInput, type CursusClient } from './client.js';
import { CursusClosedError, CursusError, isCursusClientError } from './errors.js';
import { choosePartition, RoundRobin } from './partitioning.js';
import type { AckResponse } from './replies.js';

export interface CursusProducerOptions {
  topic: string;
  /** Default 1; idempotent producers use all (and refuse anything else). */
  acks?: AcksInput;
  /** Default: the client's producerId. */
  producerId?: string;
  /** Sequence numbers per partition, acks=all (spec §9). */
  idempotent?: boolean;
  /** The producer epoch sent with idempotent records (default 0). */
  epoch?: number;
  /** Who picks a partition when send() names none (default 'client' when idempotent, else 'broker'). */
  partitioning?: 'client' | 'broker';
  /** Default 1000. */
  batchRecordsMax?: number;
  /** Default 1 MiB (record payload, key and a fixed overhead per record). */
  batchBytesMax?: number;
  /** Default 0: send at the end of the current event-loop turn. */
  lingerMs?: number;
  /** Default 32 MiB. */
  bufferedBytesMax?: number;
  /** Resends of a batch after a retryable failure (default 3). */
  retries?: number;
  retryBackoffMs?: number;
  /** Default 30 s. */
  metadataMaxAgeMs?: number;
  /** Per PUBLISH (default: the client's). */
  requestTimeoutMs?: number;
  /** Record timestamps, ms since the epoch (default Date.now). */
  clock?: () => number;
}

export interface ProducerRecord {
  value: string | Buffer;
  key?: string | Buffer;
  /** Explicit partition. */
  partition?: number;
}

export interface ProducerReceipt {
  /** The partition, or null when the broker chose it (partition -1). */
  partition: number | null;
  /** The record's offset, or null with acks 0. */
  offset: number | null;
  /** The AckResponse of the batch that carried it (null with acks 0). */
  ack: AckResponse | null;
}

interface Entry {
  record: CursusRecord;
  bytes: number;
  resolve(r: ProducerReceipt): void;
  reject(err: Error): void;
}

interface Accumulator {
  partition: number;
  entries: Entry[];
  bytes: number;
  timer: NodeJS.Timeout | NodeJS.Immediate | null;
}

/** Bytes a record adds to a batch besides its payload and key (length prefixes, fixed fields). */
const recordOverheadBytes = 64;

export class CursusProducer {
  readonly topic: string;
  readonly acks: Acks;
  readonly producerId: string;
  readonly idempotent: boolean;
  readonly epoch: number;
  private readonly partitioning: 'client' | 'broker';
  private readonly batchRecordsMax: number;
  private readonly batchBytesMax: number;
  private readonly lingerMs: number;
  private readonly bufferedBytesMax: number;
  private readonly retries: number;
  private readonly retryBackoffMs: number;
  private readonly metadataMaxAgeMs: number;
  private readonly clock: () => number;
  private readonly roundRobin = new RoundRobin();
  private readonly accumulators = new Map<number, Accumulator>();
  private readonly chains = new Map<number, Promise<void>>();
  /** Idempotent: the next sequence number per partition. */
  private readonly nextSeq = new Map<number, number>();
  private topicInfo: { partitions: number; partitioner: string; atMs: number } | null = null;
  private topicLoading: Promise<{ partitions: number; partitioner: string }> | null = null;
  private bufferedBytes = 0;
  private roomWaiters: Array<() => void> = [];
  private readonly queueing = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    readonly client: CursusClient,
    readonly options: CursusProducerOptions,
  ) {
    this.topic = options.topic;
    this.idempotent = options.idempotent === true;
    if (this.idempotent && options.acks !== undefined && String(options.acks) !== 'all' && String(options.acks) !== '-1') {
      throw new RangeError('an idempotent producer publishes with acks=all (spec §9)');
    }
    this.acks = this.idempotent ? 'all' : acksOf(options.acks);
    this.producerId = options.producerId ?? client.producerId;
    this.epoch = options.epoch ?? 0;
    this.partitioning = options.partitioning ?? (this.idempotent ? 'client' : 'broker');
    this.batchRecordsMax = options.batchRecordsMax ?? 1000;
    this.batchBytesMax = options.batchBytesMax ?? 1024 * 1024;
    this.lingerMs = options.lingerMs ?? 0;
    this.bufferedBytesMax = options.bufferedBytesMax ?? 32 * 1024 * 1024;
    this.retries = options.retries ?? 3;
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
    this.metadataMaxAgeMs = options.metadataMaxAgeMs ?? 30_000;
    this.clock = options.clock ?? Date.now;
    if (!(this.batchRecordsMax >= 1 && this.batchRecordsMax <= 100_000)) throw new RangeError('batchRecordsMax must be 1..100000');
  }

  /** Queues one record; resolves when the batch holding it is acknowledged. */
  async send(record: ProducerRecord | string | Buffer, options: { key?: string | Buffer; partition?: number } = {}): Promise<ProducerReceipt> {
    if (this.closed) throw new CursusClosedError('the producer is closed');
    const r: ProducerRecord = typeof record === 'string' || Buffer.isBuffer(record) ? { value: record, ...options } : { ...record, ...options };
    const payload = typeof r.value === 'string' ? Buffer.from(r.value, 'utf8') : r.value;
    const key = r.key === undefined ? undefined : typeof r.key === 'string' ? Buffer.from(r.key, 'utf8') : r.key;
    const bytes = payload.length + (key?.length ?? 0) + this.producerId.length + recordOverheadBytes;
    const queued = (async () => {
      const partition = await this.partitionFor(r.partition, key);
      while (this.bufferedBytes > 0 && this.bufferedBytes + bytes > this.bufferedBytesMax) {
        await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
        if (this.closed) throw new CursusClosedError('the producer is closed');
      }
      return partition;
    })();
    this.queueing.add(queued);
    let partition: number;
    try {
      partition = await queued;
    } finally {
      this.queueing.delete(queued);
    }
    return new Promise<ProducerReceipt>((resolve, reject) => {
      const rec: CursusRecord = { topic: this.topic, partition, offset: 0, payload, producerId: this.producerId, timestamp: this.clock() };
      if (key !== undefined) rec.key = key;
      this.append(partition, { record: rec, bytes, resolve, reject });
    });
  }

  /** Sends every buffered batch now and waits for their acknowledgements (failures stay on their send()). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.queueing]);
    for (const acc of [...this.accumulators.values()]) this.dispatch(acc);
    await Promise.allSettled([...this.chains.values()]);
  }

  /** Flushes, then refuses further sends. The client stays open (it is the caller's). */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    for (const w of this.roomWaiters.splice(0)) w();
  }

  /** The topic's partition count and partitioner, from METADATA (cached for metadataMaxAgeMs). */
  async topicLayout(refresh = false): Promise<{ partitions: number; partitioner: string }> {
    const cached = this.topicInfo;
    if (!refresh && cached !== null && performance.now() - cached.atMs < this.metadataMaxAgeMs) return cached;
    this.topicLoading ??= this.client
      .metadata(this.topic)
      .then((m) => {
        this.topicInfo = { partitions: m.partitions, partitioner: m.partitioner, atMs: performance.now() };
        return this.topicInfo;
      })
      .finally(() => (this.topicLoading = null));
    return this.topicLoading;
  }

  private async partitionFor(explicit: number | undefined, key: Buffer | undefined): Promise<number> {
    if (explicit !== undefined) {
      if (!Number.isSafeInteger(explicit) || explicit < 0) throw new RangeError(`partition must be a non-negative integer (got ${explicit})`);
      return explicit;
    }
    if (this.partitioning === 'broker') return -1;
    const { partitions, partitioner } = await this.topicLayout();
    return choosePartition(partitioner, key, partitions, this.roundRobin);
  }

  private append(partition: number, entry: Entry): void {
    let acc = this.accumulators.get(partition);
    if (acc !== undefined && acc.entries.length > 0 && (acc.entries.length >= this.batchRecordsMax || acc.bytes + entry.bytes > this.batchBytesMax)) {
      this.dispatch(acc);
      acc = undefined;
    }
    if (acc === undefined) {
      acc = { partition, entries: [], bytes: 0, timer: null };
      this.accumulators.set(partition, acc);
    }
    acc.entries.push(entry);
    acc.bytes += entry.bytes;
    this.bufferedBytes += entry.bytes;
    if (acc.entries.length >= this.batchRecordsMax || acc.bytes >= this.batchBytesMax) {
      this.dispatch(acc);
    } else if (acc.timer === null) {
      const target = acc;
      acc.timer = this.lingerMs > 0 ? setTimeout(() => this.dispatch(target), this.lingerMs) : setImmediate(() => this.dispatch(target));
    }
  }

  /** Seals the accumulator's batch and chains it behind the partition's batch in flight. */
  private dispatch(acc: Accumulator): void {
    if (acc.timer !== null) {
      clearTimeout(acc.timer as NodeJS.Timeout);
      clearImmediate(acc.timer as NodeJS.Immediate);
      acc.timer = null;
    }
    if (this.accumulators.get(acc.partition) === acc) this.accumulators.delete(acc.partition);
    if (acc.entries.length === 0) return;
    const previous = this.chains.get(acc.partition) ?? Promise.resolve();
    const next = previous.then(() => this.sendBatch(acc));
    this.chains.set(acc.partition, next);
    void next.finally(() => {
      if (this.chains.get(acc.partition) === next) this.chains.delete(acc.partition);
    });
  }

  /** The batch's sequence numbers (idempotent): the partition's next ones. */
  private assignSequences(acc: Accumulator): { start: number; end: number } {
    if (!this.idempotent) return { start: 0, end: 0 };
    const start = this.nextSeq.get(acc.partition) ?? 1;
    acc.entries.forEach((e, i) => {
      e.record.producerEpoch = this.epoch;
      e.record.seqNum = start + i;
    });
    const end = start + acc.entries.length - 1;
    this.nextSeq.set(acc.partition, end + 1);
    return { start, end };
  }

  private async sendBatch(acc: Accumulator): Promise<void> {
    const seq = this.assignSequences(acc);
    const chunks = encodeBatch({
      idempotent: this.idempotent,
      topic: this.topic,
      partition: acc.partition,
      acks: this.acks,
      batchStart: seq.start,
      batchEnd: seq.end,
      records: acc.entries.map((e) => e.record),
    });
    let ack: AckResponse | null = null;
    let error: Error | null = null;
    const timeout = this.options.requestTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        ack = await this.client.publishEncoded(this.topic, acc.partition, this.acks, chunks, timeout === undefined ? undefined : { timeoutMs: timeout });
        break;
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        if (e instanceof CursusError && (e.code === 'partition_not_found' || e.code === 'PARTITION_NOT_FOUND')) this.topicInfo = null;
        if (attempt >= this.retries || !isCursusClientError(e) || !e.retryable || this.client.state === 'closed') {
          error = e;
          // Refused outright: nothing was appended, so the numbers go back for the next batch.
          if (this.idempotent && e instanceof CursusError && !e.retryable && this.nextSeq.get(acc.partition) === seq.end + 1) this.nextSeq.set(acc.partition, seq.start);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, this.retryBackoffMs * 2 ** attempt));
      }
    }
    this.bufferedBytes -= acc.bytes;
    for (const w of this.roomWaiters.splice(0)) w();
    const count = acc.entries.length;
    acc.entries.forEach((e, i) => {
      if (error !== null) e.reject(error);
      else e.resolve({ partition: acc.partition >= 0 ? acc.partition : null, offset: ack === null ? null : ack.lastOffset - (count - 1) + i, ack });
    });
  }
}
