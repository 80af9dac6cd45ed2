// The idempotent publisher (spec "Idempotent producers"; FEATURE_IDEMPOTENT_PRODUCER): a producer
// id from producer_init, then each batch as JSON publish_idempotent (no binary layout carries a
// producer id at v0.5.0) with a sequence counting this producer's batches on the shard from zero.
//
// The refusal rules, as the spec gives them to a producer:
//   publish_ok                     the batch is in (or was already): the sequence advances
//   no answer (timeout, stream     the same batch is sent again under the same sequence (up to
//   or connection lost)            resendsMax times): the broker appends it once however often
//   sequence_gap, sequence_expired the producer stops: every later send fails with that refusal
//                                  until reset() (whether earlier batches landed cannot be told)
//   unknown_producer               the batch fails with the refusal; the next send starts again
//                                  under a new producer id (the broker forgot this one)
//   not_leader                     fails the batch (one node never sends it; no redirect here)
// Sends are taken one at a time, in call order: a sequence is only used once the one before it
// was answered. Sequences are per shard, so one publisher serves one route: unkeyed, or one key.

import type { FelixClient, CallOptions } from './client.js';
import { FelixPublishRefusedError, felixError, isFelixClientError, type FelixClientError } from './errors.js';
import { toBuffer, type PayloadInput } from './publisher.js';

export interface IdempotentPublisherOptions {
  namespace?: string;
  /** The routing key of every batch (absent: unkeyed, shard 0). */
  key?: PayloadInput;
  timeoutMs?: number;
  /** Times a batch without an answer is sent again before its send fails (default 3). */
  resendsMax?: number;
}

export interface IdempotentReceipt {
  producerId: bigint;
  sequence: bigint;
  /** Sends of this batch, 1 when the first was answered. */
  attempts: number;
}

export class FelixIdempotentPublisher {
  readonly namespace: string;
  private readonly key: Buffer | undefined;
  private producerId: bigint | null = null;
  private sequence = 0n;
  private stopped: FelixClientError | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly client: FelixClient,
    readonly stream: string,
    private readonly options: IdempotentPublisherOptions,
  ) {
    this.namespace = options.namespace ?? client.options.namespace;
    this.key = options.key !== undefined ? toBuffer(options.key) : undefined;
  }

  /** The producer id in use (null before the first send or after unknown_producer). */
  get currentProducerId(): bigint | null {
    return this.producerId;
  }

  /** The sequence the next batch takes. */
  get nextSequence(): bigint {
    return this.sequence;
  }

  send(payload: PayloadInput, options?: CallOptions): Promise<IdempotentReceipt> {
    return this.sendBatch([payload], options);
  }

  /** Publishes one batch exactly once (or fails saying why); batches go in call order. */
  sendBatch(payloads: readonly PayloadInput[], options: CallOptions = {}): Promise<IdempotentReceipt> {
    if (this.closed) return Promise.reject(new Error('the publisher is closed'));
    if (payloads.length === 0) return Promise.reject(new RangeError('a batch needs at least one payload'));
    const buffers = payloads.map(toBuffer);
    const run = this.tail.then(() => this.publish(buffers, options));
    this.tail = run.catch(() => {});
    return run;
  }

  /** Forgets the producer and a stop: the next send takes a new producer id from sequence 0. */
  reset(): void {
    this.producerId = null;
    this.sequence = 0n;
    this.stopped = null;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.tail;
    this.client.untrack(this);
  }

  private async publish(payloads: Buffer[], options: CallOptions): Promise<IdempotentReceipt> {
    if (this.stopped !== null) throw this.stopped;
    if (this.producerId === null) {
      this.producerId = await this.client.producerInit(options);
      this.sequence = 0n;
    }
    const producerId = this.producerId;
    const sequence = this.sequence;
    const resendsMax = this.options.resendsMax ?? 3;
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await this.client.call(
          'publish',
          (requestId) => ({
            type: 'publish_idempotent',
            tenantId: this.client.options.tenantId,
            namespace: this.namespace,
            stream: this.stream,
            payloads,
            ...(this.key !== undefined ? { key: this.key } : {}),
            requestId,
            producerId,
            sequence,
          }),
          ['publish_ok', 'publish_refused', 'publish_error'],
          { timeoutMs: options.timeoutMs ?? this.options.timeoutMs },
        );
        if (answer.type === 'publish_ok') {
          this.sequence = sequence + 1n;
          return { producerId, sequence, attempts: attempt };
        }
        if (answer.type === 'publish_error') throw felixError(answer.message, 'publish_idempotent');
        throw this.refused(new FelixPublishRefusedError(answer.reason, answer.message, sequence));
      } catch (err) {
        const lost = isFelixClientError(err) && (err.kind === 'timeout' || err.kind === 'connection');
        if (!lost || attempt > resendsMax) throw err;
      }
    }
  }

  /** What a refusal does to the producer (the rules above); returns it to throw. */
  private refused(err: FelixPublishRefusedError): FelixPublishRefusedError {
    switch (err.reason.kind) {
      case 'unknown_producer':
        this.producerId = null;
        this.sequence = 0n;
        break;
      case 'sequence_gap':
      case 'sequence_expired':
        this.stopped = err;
        break;
      case 'not_leader':
        break;
    }
    return err;
  }
}
