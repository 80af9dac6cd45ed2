// A subscription to one shard of a stream (notes §6, spec "Subscribe"): `subscribe` on a
// one-shot request stream of an event-pool connection, answered `subscribed` (or
// subscribe_cursor_error, a FelixCursorError); the broker opens an event stream back on the same
// connection, `event_stream_hello` then shared (0x0004) or per-subscriber (0x0002) event batches.
//
// Offsets (flag 0x0020, offered by default): payload i of a batch is at base_offset + i. The
// subscription keeps the next offset it expects and from it
//   - reports loss: a batch starting past the expected offset is a gap, emitted as 'gap' with
//     the missing range before the batch itself (the broker drops events for a slow subscriber;
//     spec "Backpressure": a gap between consecutive offsets is exactly a drop);
//   - resumes: when the event stream or the connection ends, it subscribes again from the next
//     offset ({"offset": n}) on the next event-pool connection, with backoff, and drops anything
//     before n that arrives again. A cursor error on resume (retention passed it) ends the subscription
//     with that error.
// Without offsets (a broker that did not advertise 0x0020) batches carry none: no loss
// detection, and a resume starts at "latest".
//
// Events: 'batch' (EventBatch), 'gap' (Gap), 'resubscribed' ({ subscriptionId, from }),
// 'end' (the error that ended it, or null after close()).

import { recordPayloads, type FelixFrame, type StartPosition } from '../../protocols/felix/codec/index.js';
import type { FelixClient } from './client.js';
import { FelixProtocolError, type FelixClientError } from './errors.js';
import { ResumingSubscription, establish, type ResumeOptions } from './event-subscription.js';

export type StartInput = 'latest' | 'earliest' | { offset: bigint | number };

export interface SubscribeOptions extends ResumeOptions {
  namespace?: string;
  /** The shard to read (default 0); stream_shards says how many there are. */
  shard?: number;
  /** Where to begin (default latest). */
  start?: StartInput;
  timeoutMs?: number;
}

export interface EventBatch {
  /** Offset of the first payload, or null when the broker sends none. */
  baseOffset: bigint | null;
  payloads: Buffer[];
}

/** Offsets [from, to] (inclusive) that never arrived. */
export interface Gap {
  from: bigint;
  to: bigint;
  count: bigint;
}

function startPosition(s: StartInput): StartPosition {
  return typeof s === 'string' ? s : { offset: BigInt(s.offset) };
}

export class FelixSubscription extends ResumingSubscription {
  readonly namespace: string;
  readonly shard: number;
  /** The broker's id for the current subscription (it changes on resume). */
  subscriptionId: bigint | null = null;
  /** The offset the next event should carry (null: not known yet). */
  nextOffset: bigint | null = null;
  /** subscribed.start_offset and live_offset of the last (re)subscribe, when the broker sent them. */
  startOffset: bigint | null = null;
  liveOffset: bigint | null = null;
  /** Events lost so far (by offsets). */
  lostCount = 0n;

  constructor(
    client: FelixClient,
    readonly stream: string,
    private readonly options: SubscribeOptions,
  ) {
    super(client, options, 'resubscribed');
    this.namespace = options.namespace ?? client.options.namespace;
    this.shard = options.shard ?? 0;
    if (options.start !== undefined && typeof options.start === 'object') this.nextOffset = BigInt(options.start.offset);
  }

  /** Subscribes (the first time); rejects with FelixCursorError, FelixError or a connection error. */
  async start(): Promise<void> {
    await this.subscribeOnce(startPosition(this.options.start ?? 'latest'));
  }

  /** Subscribes again from the next offset (or latest, without offsets). */
  protected async again(): Promise<{ subscriptionId: bigint | null; from: bigint | null }> {
    const from = this.nextOffset;
    await this.subscribeOnce(from !== null ? { offset: from } : 'latest');
    return { subscriptionId: this.subscriptionId, from };
  }

  private async subscribeOnce(start: StartPosition): Promise<void> {
    const { answer, detach } = await establish(
      this.client,
      (subscriptionId) => ({ type: 'subscribe', tenantId: this.client.options.tenantId, namespace: this.namespace, stream: this.stream, subscriptionId, start, shard: this.shard }),
      'subscribed',
      this.options.timeoutMs ?? this.client.options.requestTimeoutMs,
      (conn) => this.sink(conn, `a subscription to ${this.stream}`),
    );
    if (this.closed) return detach();
    this.subscriptionId = answer.subscriptionId;
    this.startOffset = answer.startOffset ?? null;
    this.liveOffset = answer.liveOffset ?? null;
    if (this.nextOffset === null && answer.startOffset !== undefined) this.nextOffset = answer.startOffset;
    this.detach = detach;
  }

  protected onFrame(f: FelixFrame): FelixClientError | null {
    const batch = this.batchOf(f);
    if (batch instanceof Error) return batch;
    this.deliver(batch);
    return null;
  }

  private batchOf(f: FelixFrame): EventBatch | FelixClientError {
    if (f.kind === 'event_batch') return { baseOffset: f.batch.baseOffset, payloads: recordPayloads(f.batch.records) };
    if (f.kind === 'message' && f.message.type === 'event') return { baseOffset: f.message.offset ?? null, payloads: [f.message.payload] };
    if (f.kind === 'message' && f.message.type === 'event_batch') return { baseOffset: f.message.baseOffset ?? null, payloads: f.message.payloads };
    return new FelixProtocolError(`unexpected ${f.kind === 'message' ? f.message.type : f.kind} on an event stream`);
  }

  /** Reports a gap, drops what was already delivered, emits the rest. */
  private deliver(batch: EventBatch): void {
    const base = batch.baseOffset;
    if (base === null) return void this.emit('batch', batch);
    let payloads = batch.payloads;
    let first = base;
    const expected = this.nextOffset;
    if (expected !== null && base > expected) {
      const gap: Gap = { from: expected, to: base - 1n, count: base - expected };
      this.lostCount += gap.count;
      this.emit('gap', gap);
    } else if (expected !== null && base < expected) {
      const seen = Number(expected - base);
      if (seen >= payloads.length) return;
      payloads = payloads.slice(seen);
      first = expected;
    }
    this.nextOffset = first + BigInt(payloads.length);
    this.emit('batch', { baseOffset: first, payloads });
  }
}
