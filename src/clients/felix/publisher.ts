// The publisher: batches to one stream over the publish pool (docs/protocols/felix-wire-v1.md §5.2).
//
// What goes on the wire is chosen per stream from what the broker advertised at its auth:
//   acked (per_message, per_batch):  binary 0x0009 (keyed 0x0049) when the broker advertised 0x0008
//                                    (and 0x0040 for a key); otherwise JSON publish / publish_batch
//                                    with request_id and ack (notes §2: the fallback)
//   ack none:                        binary 0x0001 (keyed 0x0041 when advertised), else JSON with
//                                    ack "none"; nothing is answered, the call resolves once written
// Acks are matched by request_id, so any number of sends may be in flight on one stream
// (pipelining); a stream carries them in order. A refusal is a FelixError of the broker's text.

import { Flag, peerSupports, type AckMode, type PublishOwner } from '../../protocols/felix/codec/index.js';
import { encodeMessage, encodePublishBatch } from '../../protocols/felix/codec/index.js';
import type { CallOptions, FelixClient } from './client.js';
import { felixError } from './errors.js';
import type { RequestStream } from './request-stream.js';

export type PayloadInput = Buffer | string;

export interface PublisherOptions {
  namespace?: string;
  /** Routing key for every send without its own (absent: unkeyed, shard 0). */
  key?: PayloadInput;
  /** Default per_message. */
  ack?: AckMode;
  timeoutMs?: number;
}

export interface SendOptions extends CallOptions {
  key?: PayloadInput | null;
  ack?: AckMode;
}

export interface PublishResult {
  /** The request_id the batch went with (0n for an unacknowledged one). */
  requestId: bigint;
  /** binary (0x0001 frames) or json (the fallback). */
  encoding: 'binary' | 'json';
  /** Whether the broker acknowledged it (false for ack none). */
  acked: boolean;
  /** The shard's owner when the broker forwarded the batch (flag 0x0080; never on one node). */
  owner: PublishOwner | null;
}

export function toBuffer(p: PayloadInput): Buffer {
  return typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
}

/** Whether batches on `stream` can go binary, with or without a key, acked or not. */
export function binaryPublish(stream: RequestStream, keyed: boolean, acked: boolean): boolean {
  const need = Flag.binaryPublishBatch | (acked ? Flag.binaryPublishAcked : 0) | (keyed ? Flag.binaryPublishKeyed : 0);
  return peerSupports(stream.capabilities.flags, need);
}

export class FelixPublisher {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;
  readonly namespace: string;
  private readonly key: Buffer | null;

  constructor(
    private readonly client: FelixClient,
    readonly stream: string,
    private readonly options: PublisherOptions,
  ) {
    this.namespace = options.namespace ?? client.options.namespace;
    this.key = options.key !== undefined ? toBuffer(options.key) : null;
  }

  /** Publishes one payload. */
  send(payload: PayloadInput, options: SendOptions = {}): Promise<PublishResult> {
    return this.sendBatch([payload], options);
  }

  /** Publishes payloads as one batch: one request, one ack, one shard. */
  sendBatch(payloads: readonly PayloadInput[], options: SendOptions = {}): Promise<PublishResult> {
    if (this.closed) return Promise.reject(new Error('the publisher is closed'));
    if (payloads.length === 0) return Promise.reject(new RangeError('a batch needs at least one payload'));
    const p = this.publish(payloads.map(toBuffer), options);
    this.inFlight.add(p);
    const forget = (): void => void this.inFlight.delete(p);
    p.then(forget, forget);
    return p;
  }

  /** Sends in flight. */
  get pending(): number {
    return this.inFlight.size;
  }

  /** Waits for the sends in flight (their outcomes go to their callers), then refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    this.client.untrack(this);
  }

  private async publish(payloads: Buffer[], options: SendOptions): Promise<PublishResult> {
    const key = options.key === null ? null : options.key !== undefined ? toBuffer(options.key) : this.key;
    const ack = options.ack ?? this.options.ack ?? 'per_message';
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? this.client.options.requestTimeoutMs;
    const stream = await this.client.stream('publish');
    const scope = { tenantId: this.client.options.tenantId, namespace: this.namespace, stream: this.stream };
    const binary = binaryPublish(stream, key !== null, ack !== 'none');
    if (ack === 'none') {
      const chunks = binary
        ? encodePublishBatch({ acked: null, key, ...scope, payloads })
        : encodeMessage(payloads.length === 1 ? { type: 'publish', ...scope, payload: payloads[0]!, ...(key !== null ? { key } : {}), ack } : { type: 'publish_batch', ...scope, payloads, ...(key !== null ? { key } : {}), ack });
      await stream.fireAndForget(chunks);
      return { requestId: 0n, encoding: binary ? 'binary' : 'json', acked: false, owner: null };
    }
    const requestId = this.client.requestId();
    if (binary) {
      const answer = await stream.publishBinary({ acked: { requestId, ackMode: ack }, key, ...scope, payloads }, timeoutMs);
      if (answer.kind !== 'ack') throw new Error('unreachable: a binary publish is answered by an ack');
      if (answer.ack.error !== null) throw felixError(answer.ack.error, 'publish');
      return { requestId, encoding: 'binary', acked: true, owner: answer.ack.owner };
    }
    const withKey = key !== null ? { key } : {};
    const message = payloads.length === 1 ? { type: 'publish' as const, ...scope, payload: payloads[0]!, ...withKey, requestId, ack } : { type: 'publish_batch' as const, ...scope, payloads, ...withKey, requestId, ack };
    const answer = await stream.request(message, requestId, ['publish_ok', 'publish_error'], timeoutMs);
    if (answer.kind === 'message' && answer.message.type === 'publish_error') throw felixError(answer.message.message, message.type);
    return { requestId, encoding: 'json', acked: true, owner: null };
  }
}
