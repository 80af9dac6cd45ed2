// IggyProducer: batches messages per partition and sends them with SendMessages.
//
// - Partition choice is made here (./partitioning.ts), per send() call: an explicit partitionId,
//   a key (XXH32 % partitions, as the server hashes a messages key), or balanced round robin.
//   Batches then go out as `partitioning = partition id`. The partition count comes from
//   GetTopic and is refreshed after metadataMaxAgeMs or when a send fails with PartitionNotFound.
// - A batch is sent when it holds batchMessagesMax messages or batchBytesMax bytes, or lingerMs
//   after its first message (0: at the end of the current event-loop turn).
// - One batch per partition is in flight at a time, so a retried batch never overtakes a later one;
//   partitions proceed in parallel over the client's pipelined connection.
// - send() resolves when every batch holding its messages is acknowledged, with the partition and
//   the offset of its first message (null when the server sent no confirmation).
// - Buffered bytes are bounded (bufferedBytesMax): send() waits for room instead of growing.

import { IggyErrorCode } from '../../protocols/iggy/codec/index.js';
import type { IggyClient } from './client.js';
import type { Id } from './inputs.js';
import { IggyClosedError, IggyError, isIggyClientError } from './errors.js';
import { prepareMessage, type PreparedMessage, type SendMessage } from './messages.js';
import { RoundRobin, partitionForKey } from './partitioning.js';

export interface IggyProducerOptions {
  streamId: Id;
  topicId: Id;
  /** Default partition choice when send() names none: 'balanced' (default) or a fixed partition. */
  partitioning?: 'balanced' | { partitionId: number };
  /** Default 1000. */
  batchMessagesMax?: number;
  /** Frame bytes (48 + payload + headers per message) per batch; default 1 MiB. */
  batchBytesMax?: number;
  /** Default 0: send at the end of the current event-loop turn. */
  lingerMs?: number;
  /** Default 32 MiB. */
  bufferedBytesMax?: number;
  /** Resends of a batch after a retriable error (connection lost, timeout); default 3. */
  retries?: number;
  retryBackoffMs?: number;
  /** Default 30 s. */
  metadataMaxAgeMs?: number;
  /** Per SendMessages request (default: the client's). */
  requestTimeoutMs?: number;
}

export interface ProducerSendOptions {
  /** Hash this key to choose the partition. */
  key?: Buffer | string;
  partitionId?: number;
}

export interface SendReceipt {
  partitionId: number;
  /** Offset of the first message of this send() (null without a server confirmation). */
  firstOffset: bigint | null;
  count: number;
}

interface PendingSend {
  partitionId: number;
  count: number;
  piecesLeft: number;
  firstOffset: bigint | null;
  failed: boolean;
  resolve(r: SendReceipt): void;
  reject(err: Error): void;
}

interface Piece {
  send: PendingSend;
  /** Index of the piece's first message within its batch. */
  start: number;
  first: boolean;
}

interface Accumulator {
  partitionId: number;
  messages: PreparedMessage[];
  bytes: number;
  pieces: Piece[];
  timer: NodeJS.Timeout | NodeJS.Immediate | null;
}

export class IggyProducer {
  private readonly batchMessagesMax: number;
  private readonly batchBytesMax: number;
  private readonly lingerMs: number;
  private readonly bufferedBytesMax: number;
  private readonly retries: number;
  private readonly retryBackoffMs: number;
  private readonly metadataMaxAgeMs: number;
  private readonly roundRobin = new RoundRobin();
  private readonly accumulators = new Map<number, Accumulator>();
  /** Per partition: the batch in flight (the next one chains on it). */
  private readonly chains = new Map<number, Promise<void>>();
  private partitions: { count: number; atMs: number } | null = null;
  private partitionsLoading: Promise<number> | null = null;
  private bufferedBytes = 0;
  private roomWaiters: Array<() => void> = [];
  private readonly queueing = new Set<Promise<void>>();
  private closed = false;

  constructor(
    readonly client: IggyClient,
    readonly options: IggyProducerOptions,
  ) {
    this.batchMessagesMax = options.batchMessagesMax ?? 1000;
    this.batchBytesMax = options.batchBytesMax ?? 1024 * 1024;
    this.lingerMs = options.lingerMs ?? 0;
    this.bufferedBytesMax = options.bufferedBytesMax ?? 32 * 1024 * 1024;
    this.retries = options.retries ?? 3;
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
    this.metadataMaxAgeMs = options.metadataMaxAgeMs ?? 30_000;
    if (!(this.batchMessagesMax >= 1)) throw new RangeError('batchMessagesMax must be at least 1');
  }

  /** Queues messages for one partition; resolves when they are all acknowledged. */
  async send(messages: SendMessage | Buffer | string | ReadonlyArray<SendMessage | Buffer | string>, options: ProducerSendOptions = {}): Promise<SendReceipt> {
    if (this.closed) throw new IggyClosedError('the producer is closed');
    const list = Array.isArray(messages) ? (messages as ReadonlyArray<SendMessage | Buffer | string>) : [messages as SendMessage | Buffer | string];
    if (list.length === 0) throw new RangeError('send needs at least one message');
    const nowMs = Date.now();
    const now = BigInt(nowMs) * 1000n;
    const prepared = list.map((m) => prepareMessage(m, now, nowMs));
    const bytes = prepared.reduce((n, m) => n + m.bytes, 0);
    let receipt!: Promise<SendReceipt>;
    // flush() waits for sends still choosing a partition or waiting for room.
    const queued = (async () => {
      const partitionId = await this.choosePartition(options);
      while (this.bufferedBytes > 0 && this.bufferedBytes + bytes > this.bufferedBytesMax) {
        await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
        if (this.closed) throw new IggyClosedError('the producer is closed');
      }
      receipt = new Promise<SendReceipt>((resolve, reject) => {
        const pending: PendingSend = { partitionId, count: prepared.length, piecesLeft: 0, firstOffset: null, failed: false, resolve, reject };
        this.append(pending, prepared);
      });
    })();
    this.queueing.add(queued);
    try {
      await queued;
    } finally {
      this.queueing.delete(queued);
    }
    return receipt;
  }

  /** Sends every buffered batch now and waits for all acknowledgements (failures stay on their send()). */
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

  /** The partition count, from GetTopic (cached for metadataMaxAgeMs). */
  async partitionsCount(refresh = false): Promise<number> {
    const cached = this.partitions;
    if (!refresh && cached !== null && performance.now() - cached.atMs < this.metadataMaxAgeMs) return cached.count;
    this.partitionsLoading ??= this.client
      .getTopic(this.options.streamId, this.options.topicId)
      .then((topic) => {
        if (topic === null) throw new IggyError(IggyErrorCode.topicIdNotFound, 'producer');
        this.partitions = { count: topic.partitionsCount, atMs: performance.now() };
        return topic.partitionsCount;
      })
      .finally(() => (this.partitionsLoading = null));
    return this.partitionsLoading;
  }

  private async choosePartition(o: ProducerSendOptions): Promise<number> {
    if (o.partitionId !== undefined) return o.partitionId;
    const fixed = this.options.partitioning;
    if (o.key === undefined && typeof fixed === 'object') return fixed.partitionId;
    const count = await this.partitionsCount();
    if (count === 0) throw new IggyError(IggyErrorCode.partitionNotFound, 'producer', 'producer: the topic has no partitions');
    return o.key !== undefined ? partitionForKey(o.key, count) : this.roundRobin.pick(count);
  }

  private append(send: PendingSend, messages: PreparedMessage[]): void {
    let first = true;
    let i = 0;
    while (i < messages.length) {
      let acc = this.accumulators.get(send.partitionId);
      if (acc === undefined) {
        acc = { partitionId: send.partitionId, messages: [], bytes: 0, pieces: [], timer: null };
        this.accumulators.set(send.partitionId, acc);
      }
      const head = messages[i]!;
      if (acc.messages.length > 0 && (acc.messages.length >= this.batchMessagesMax || acc.bytes + head.bytes > this.batchBytesMax)) {
        this.dispatch(acc);
        continue;
      }
      const piece: Piece = { send, start: acc.messages.length, first };
      send.piecesLeft++;
      acc.pieces.push(piece);
      first = false;
      while (i < messages.length) {
        const m = messages[i]!;
        const full = acc.messages.length >= this.batchMessagesMax || (acc.messages.length > 0 && acc.bytes + m.bytes > this.batchBytesMax);
        if (full) break;
        acc.messages.push(m);
        acc.bytes += m.bytes;
        this.bufferedBytes += m.bytes;
        i++;
      }
      if (acc.messages.length >= this.batchMessagesMax || acc.bytes >= this.batchBytesMax || i < messages.length) {
        this.dispatch(acc);
      } else if (acc.timer === null) {
        const target = acc;
        acc.timer = this.lingerMs > 0 ? setTimeout(() => this.dispatch(target), this.lingerMs) : setImmediate(() => this.dispatch(target));
      }
    }
  }

  /** Takes the accumulator's batch and chains it behind the partition's batch in flight. */
  private dispatch(acc: Accumulator): void {
    if (acc.timer !== null) {
      clearTimeout(acc.timer as NodeJS.Timeout);
      clearImmediate(acc.timer as NodeJS.Immediate);
      acc.timer = null;
    }
    if (this.accumulators.get(acc.partitionId) === acc) this.accumulators.delete(acc.partitionId);
    if (acc.messages.length === 0) return;
    const previous = this.chains.get(acc.partitionId) ?? Promise.resolve();
    const next = previous.then(() => this.sendBatch(acc));
    this.chains.set(acc.partitionId, next);
    void next.finally(() => {
      if (this.chains.get(acc.partitionId) === next) this.chains.delete(acc.partitionId);
    });
  }

  private async sendBatch(acc: Accumulator): Promise<void> {
    let baseOffset: bigint | null = null;
    let error: Error | null = null;
    for (let attempt = 0; ; attempt++) {
      try {
        const timeout = this.options.requestTimeoutMs;
        const result = await this.client.sendPrepared(
          this.options.streamId,
          this.options.topicId,
          { kind: 'partitionId', partitionId: acc.partitionId },
          acc.messages,
          timeout === undefined ? undefined : { timeoutMs: timeout },
        );
        baseOffset = result.baseOffset;
        break;
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        // A topic that lost partitions: the server answers a send it cannot route with 20
        // (3007 from older builds); the partitions are looked up again before the next send.
        if (e instanceof IggyError && (e.code === IggyErrorCode.resourceNotFound || e.code === IggyErrorCode.partitionNotFound)) this.partitions = null;
        if (attempt >= this.retries || !isIggyClientError(e) || !e.retriable || this.client.state === 'closed') {
          error = e;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, this.retryBackoffMs * 2 ** attempt));
      }
    }
    this.bufferedBytes -= acc.bytes;
    for (const w of this.roomWaiters.splice(0)) w();
    for (const piece of acc.pieces) {
      const s = piece.send;
      if (s.failed) continue;
      if (error !== null) {
        s.failed = true;
        s.reject(error);
        continue;
      }
      if (piece.first) s.firstOffset = baseOffset === null ? null : baseOffset + BigInt(piece.start);
      if (--s.piecesLeft === 0) s.resolve({ partitionId: s.partitionId, firstOffset: s.firstOffset, count: s.count });
    }
  }
}
