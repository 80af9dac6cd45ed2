// One client-opened bidirectional Felix stream: its own auth and negotiation, then requests
// pipelined on it and their answers matched (docs/protocols/felix-wire-v1.md §1, §6).
//
// - Auth (notes §4): the first frame is `auth` with client_flags and client_features when the
//   client offers them; `auth_ok` gives the broker's flags and features, `ok` means a legacy
//   broker (ORIGINAL_V1_FLAGS, no features); `error` is a FelixAuthError and the stream is gone.
// - Answers that carry a request_id (publish_ok, binary publish acks, cache_ok, cache_value,
//   counter_value, group_*, stream_shards_view, producer_init_ok, publish_refused) go to the
//   request with that id, in any order. Answers without one (subscribed, cache_watch_started,
//   subscribe_cursor_error, not_leader) go to the oldest request waiting for such an answer.
//   The broker works through one stream in order, so an `error` answers the oldest request still
//   waiting (one that timed out keeps its place until its answer comes, so order is not lost).
// - A request that times out fails with FelixTimeoutError; the stream stays. When the stream
//   ends every request still on it fails with FelixConnectionError.
// - Frames are written in call order. Once the stream's buffer is full, later frames wait in a
//   backlog until it drains, so a fast publisher is held to what QUIC's flow control lets through.

import type { Duplex } from 'node:stream';
import {
  brokerCapabilities,
  encodeMessage,
  encodePublishBatch,
  type FelixFrame,
  type FelixMessage,
  type MessageType,
  type PeerCapabilities,
  type PublishAck,
  type PublishBatchInput,
} from '../../protocols/felix/codec/index.js';
import {
  FelixAuthError,
  FelixConnectionError,
  FelixCursorError,
  FelixNotLeaderError,
  FelixProtocolError,
  FelixTimeoutError,
  felixError,
  type FelixClientError,
} from './errors.js';
import { readFrames, writeFrame } from './frames.js';

/** An answer: a JSON message or a binary publish ack. */
export type Answer = { kind: 'message'; message: FelixMessage } | { kind: 'ack'; ack: PublishAck };

interface Waiting {
  /** The request_id the answer carries, or null for an answer without one. */
  requestId: bigint | null;
  request: string;
  /** Message types that answer it ('ack' for a binary publish ack). */
  accepts: ReadonlySet<string>;
  resolve(a: Answer): void;
  reject(err: FelixClientError): void;
  timer: NodeJS.Timeout | null;
  /** Timed out: kept for its place in the order, its answer dropped. */
  abandoned: boolean;
}

export interface AuthOffer {
  tenantId: string;
  token: string;
  /** null: a legacy auth without client_flags. */
  clientFlags: number | null;
  clientFeatures: number;
}

/** A frame waiting in the backlog; `written` once handed to the stream, `failed` if it never is. */
interface Pending {
  chunks: readonly Buffer[];
  written?: () => void;
  failed?: (err: FelixClientError) => void;
}

/** Answers without a request_id, and what each may answer. */
const untaggedTypes: ReadonlySet<MessageType> = new Set<MessageType>(['subscribed', 'subscribe_cursor_error', 'cache_watch_started', 'not_leader']);

export class RequestStream {
  /** What the broker advertised on this stream's auth. */
  capabilities: PeerCapabilities = { flags: 0, features: 0 };
  private readonly waiting: Waiting[] = [];
  private readonly byId = new Map<bigint, Waiting>();
  private closedBy: FelixClientError | null = null;
  private closeListeners: Array<(err: FelixClientError) => void> = [];
  private authWaiter: { resolve(): void; reject(err: FelixClientError): void } | null = null;
  /** Frames waiting for the stream to drain (null: it takes writes). */
  private backlog: Pending[] | null = null;

  private constructor(
    private readonly duplex: Duplex,
    readonly where: string,
  ) {}

  /** Opens the stream's reading and authenticates; rejects with the reason it could not. */
  static async open(duplex: Duplex, where: string, offer: AuthOffer, payloadBytesMax: number, timeoutMs: number): Promise<RequestStream> {
    const s = new RequestStream(duplex, where);
    readFrames(duplex, payloadBytesMax, where, { onFrame: (f) => s.onFrame(f), onEnd: (err) => s.fail(err ?? new FelixConnectionError(`the broker ended stream ${where}`)) });
    const authed = new Promise<void>((resolve, reject) => (s.authWaiter = { resolve, reject }));
    const timer = setTimeout(() => s.fail(new FelixTimeoutError('auth', timeoutMs)), timeoutMs);
    const auth: FelixMessage = { type: 'auth', tenantId: offer.tenantId, token: offer.token };
    if (offer.clientFlags !== null) Object.assign(auth, { clientFlags: offer.clientFlags, clientFeatures: offer.clientFeatures });
    writeFrame(duplex, encodeMessage(auth));
    try {
      await authed;
    } finally {
      clearTimeout(timer);
    }
    return s;
  }

  get isOpen(): boolean {
    return this.closedBy === null;
  }

  /** Requests sent and not yet answered (timed-out ones included). */
  get inFlight(): number {
    return this.waiting.length;
  }

  onClose(listener: (err: FelixClientError) => void): void {
    if (this.closedBy !== null) listener(this.closedBy);
    else this.closeListeners.push(listener);
  }

  /** Sends a request and waits for one of `accepts` (matched by `requestId`, or in order when null). */
  request(message: FelixMessage, requestId: bigint | null, accepts: readonly string[], timeoutMs: number): Promise<Answer> {
    return this.send(encodeMessage(message), message.type, requestId, accepts, timeoutMs);
  }

  /** Sends an acked binary publish batch and waits for its ack. */
  publishBinary(batch: PublishBatchInput, timeoutMs: number): Promise<Answer> {
    return this.send(encodePublishBatch(batch), 'publish', batch.acked!.requestId, ['ack'], timeoutMs);
  }

  /** Writes a frame nobody answers (an unacked publish); resolves once the stream took it. */
  fireAndForget(chunks: readonly Buffer[]): Promise<void> {
    if (this.closedBy !== null) return Promise.reject(this.closedBy);
    return new Promise((resolve, reject) => {
      const written = (): void => {
        // An empty write's callback runs once everything before it was handed to the QUIC stream.
        this.duplex.write(Buffer.alloc(0), (err) => (err ? reject(new FelixConnectionError(`write to ${this.where} failed: ${err.message}`)) : resolve()));
      };
      this.write({ chunks, written, failed: reject });
    });
  }

  /**
   * Ends the stream: FIN on the client's side, then the stream is released; requests still waiting
   * fail. A one-shot stream (subscribe, cache_watch, a long poll) is closed this way once answered.
   */
  close(): void {
    if (this.closedBy !== null) return;
    // Once the FIN is out the stream is released whole: a broker that keeps its side open (it
    // stops reading a subscribe stream once answered) would otherwise hold one of the
    // connection's streams for as long as the connection lives.
    this.duplex.end(() => this.duplex.destroy());
    this.fail(new FelixConnectionError(`stream ${this.where} closed by the client`), false);
  }

  private send(chunks: readonly Buffer[], request: string, requestId: bigint | null, accepts: readonly string[], timeoutMs: number): Promise<Answer> {
    if (this.closedBy !== null) return Promise.reject(this.closedBy);
    return new Promise<Answer>((resolve, reject) => {
      const w: Waiting = { requestId, request, accepts: new Set(accepts), resolve, reject, timer: null, abandoned: false };
      w.timer = setTimeout(() => {
        w.abandoned = true;
        w.timer = null;
        reject(new FelixTimeoutError(request, timeoutMs));
      }, timeoutMs);
      this.waiting.push(w);
      if (requestId !== null) this.byId.set(requestId, w);
      this.write({ chunks });
    });
  }

  /** Writes a frame now, or after the frames already waiting once the stream drains. */
  private write(p: Pending): void {
    if (this.backlog !== null) return void this.backlog.push(p);
    const more = writeFrame(this.duplex, p.chunks);
    p.written?.();
    if (more) return;
    this.backlog = [];
    this.duplex.once('drain', () => this.drain());
  }

  private drain(): void {
    const queued = this.backlog ?? [];
    this.backlog = null;
    for (let i = 0; i < queued.length; i++) {
      this.write(queued[i]!);
      if (this.backlog !== null) {
        // Full again: what is left waits, in order, ahead of anything written since.
        (this.backlog as Pending[]).unshift(...queued.slice(i + 1));
        return;
      }
    }
  }

  private settle(w: Waiting, outcome: { answer: Answer } | { err: FelixClientError }): void {
    const i = this.waiting.indexOf(w);
    if (i >= 0) this.waiting.splice(i, 1);
    if (w.requestId !== null) this.byId.delete(w.requestId);
    if (w.timer !== null) clearTimeout(w.timer);
    if (w.abandoned) return;
    if ('answer' in outcome) w.resolve(outcome.answer);
    else w.reject(outcome.err);
  }

  private onFrame(frame: FelixFrame): void {
    if (this.authWaiter !== null) return this.onAuthAnswer(frame);
    if (frame.kind === 'publish_ack') return this.answerById(frame.ack.requestId, 'ack', { kind: 'ack', ack: frame.ack });
    if (frame.kind !== 'message') return this.fail(new FelixProtocolError(`${frame.kind} frame on request stream ${this.where}`));
    const m = frame.message;
    if (m.type === 'error') return this.onError(m.message);
    if ('requestId' in m && m.requestId !== undefined && !untaggedTypes.has(m.type)) return this.answerById(m.requestId, m.type, { kind: 'message', message: m });
    if (untaggedTypes.has(m.type)) return this.answerInOrder(m);
    this.fail(new FelixProtocolError(`unexpected ${m.type} on request stream ${this.where}`));
  }

  private onAuthAnswer(frame: FelixFrame): void {
    const waiter = this.authWaiter!;
    const m = frame.kind === 'message' ? frame.message : null;
    if (m !== null && (m.type === 'ok' || m.type === 'auth_ok')) {
      this.capabilities = brokerCapabilities(m);
      this.authWaiter = null;
      return waiter.resolve();
    }
    if (m !== null && m.type === 'error') return this.fail(new FelixAuthError(m.message, 'auth'));
    this.fail(new FelixProtocolError(`stream ${this.where} answered auth with ${m?.type ?? frame.kind}`));
  }

  private answerById(requestId: bigint, type: string, answer: Answer): void {
    const w = this.byId.get(requestId);
    // An answer to a request that already gave up on it is dropped; one to nothing is out of step.
    if (w === undefined) return this.fail(new FelixProtocolError(`${type} for request ${requestId}, which is not waiting on ${this.where}`));
    if (!w.accepts.has(type)) return this.fail(new FelixProtocolError(`${w.request} (request ${requestId}) answered with ${type}`));
    this.settle(w, { answer });
  }

  private answerInOrder(m: FelixMessage): void {
    const w = this.waiting.find((x) => x.requestId === null);
    if (w === undefined) return this.fail(new FelixProtocolError(`unexpected ${m.type} on request stream ${this.where}`));
    if (m.type === 'subscribe_cursor_error') return this.settle(w, { err: new FelixCursorError(m.reason, m.requested, m.available, w.request) });
    if (m.type === 'not_leader') return this.settle(w, { err: new FelixNotLeaderError(m.nodeId, m.addr ?? null, m.generation, w.request) });
    if (!w.accepts.has(m.type)) return this.fail(new FelixProtocolError(`${w.request} answered with ${m.type}`));
    this.settle(w, { answer: { kind: 'message', message: m } });
  }

  /** An `error` answers the oldest request waiting; with none waiting the stream is failing. */
  private onError(text: string): void {
    const w = this.waiting[0];
    if (w === undefined) return this.fail(felixError(text, 'stream'));
    this.settle(w, { err: felixError(text, w.request) });
  }

  private fail(err: FelixClientError, destroy = true): void {
    if (this.closedBy !== null) {
      if (destroy) this.duplex.destroy();
      return;
    }
    this.closedBy = err;
    if (this.authWaiter !== null) {
      this.authWaiter.reject(err);
      this.authWaiter = null;
    }
    for (const w of [...this.waiting]) this.settle(w, { err });
    for (const p of this.backlog ?? []) p.failed?.(err);
    this.backlog = null;
    if (destroy) this.duplex.destroy();
    for (const l of this.closeListeners) l(err);
    this.closeListeners = [];
  }
}
