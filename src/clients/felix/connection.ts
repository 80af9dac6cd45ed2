// One QUIC connection to a Felix broker (src/protocols/felix/quic.ts): request streams opened on
// it (each authenticating itself), and the event streams the broker opens back routed to their
// subscriptions.
//
// An event stream (notes §6) begins with `event_stream_hello{subscription_id}`; the broker may
// open it and write the hello before it answers `subscribed` on the request stream, so a stream
// whose subscription is not yet attached is parked with the frames read so far, and handed over
// when the subscription attaches (parked streams are bounded: the oldest is dropped past the limit).

import type { Readable } from 'node:stream';
import type { Logger } from '../../base/logger.js';
import type { FelixFrame } from '../../protocols/felix/codec/index.js';
import { connectFelixQuic, type FelixQuicClient } from '../../protocols/felix/quic.js';
import { FelixConnectionError, type FelixClientError } from './errors.js';
import { readFrames } from './frames.js';
import type { ResolvedOptions } from './options.js';
import { RequestStream, type AuthOffer } from './request-stream.js';

/** Where an event stream's frames go once its subscription is attached. */
export interface EventSink {
  onFrame(frame: FelixFrame): void;
  onEnd(err: FelixClientError | null): void;
}

interface EventStream {
  subscriptionId: bigint;
  /** null until the broker's stream arrives (a subscription attached before its hello). */
  readable: Readable | null;
  stop(): void;
  sink: EventSink | null;
  /** Frames read before the sink attached (and how the stream ended, if it did). */
  early: FelixFrame[];
  ended: { err: FelixClientError | null } | null;
}

/** Event streams waiting for their subscription. */
const parkedStreamsMax = 64;

export class FelixConnection {
  private readonly events = new Map<bigint, EventStream>();
  private readonly parked: EventStream[] = [];
  private closedBy: FelixClientError | null = null;
  private closeListeners: Array<(err: FelixClientError) => void> = [];
  private streamCount = 0;

  private constructor(
    private readonly quic: FelixQuicClient,
    private readonly options: ResolvedOptions,
    readonly where: string,
  ) {
    quic.on('uni', (r: Readable) => this.onEventStream(r));
    quic.on('close', () => this.fail(new FelixConnectionError(`connection to ${where} closed`)));
  }

  static async open(options: ResolvedOptions, logger: Logger): Promise<FelixConnection> {
    const where = `${options.host}:${options.port}`;
    try {
      const quic = await connectFelixQuic({
        host: options.host,
        port: options.port,
        serverName: options.serverName,
        ca: options.ca,
        limits: options.quic,
        connectTimeoutMs: options.connectTimeoutMs,
        logger,
      });
      return new FelixConnection(quic, options, where);
    } catch (err) {
      throw new FelixConnectionError(`connect to ${where} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  get isOpen(): boolean {
    return this.closedBy === null;
  }

  onClose(listener: (err: FelixClientError) => void): void {
    if (this.closedBy !== null) listener(this.closedBy);
    else this.closeListeners.push(listener);
  }

  /** Opens a request stream and authenticates it. */
  async openStream(offer: AuthOffer): Promise<RequestStream> {
    if (this.closedBy !== null) throw this.closedBy;
    let duplex;
    try {
      duplex = this.quic.openBidi();
    } catch (err) {
      // The library refuses new streams on a connection that is going away: so is this one.
      const e = new FelixConnectionError(`opening a stream to ${this.where} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      this.fail(e);
      void this.quic.close().catch(() => {});
      throw e;
    }
    return RequestStream.open(duplex, `${this.where}#${++this.streamCount}`, offer, this.options.frameBytesMax, this.options.requestTimeoutMs);
  }

  /**
   * Routes the event stream of `subscriptionId` to `sink` (frames it already carried first).
   * Returns a function that detaches and closes that stream.
   */
  attach(subscriptionId: bigint, sink: EventSink): () => void {
    const i = this.parked.findIndex((e) => e.subscriptionId === subscriptionId);
    let stream: EventStream | undefined;
    if (i >= 0) stream = this.parked.splice(i, 1)[0]!;
    else stream = { subscriptionId, readable: null, stop: () => {}, sink: null, early: [], ended: null };
    stream.sink = sink;
    this.events.set(subscriptionId, stream);
    for (const f of stream.early.splice(0)) sink.onFrame(f);
    if (stream.ended !== null) sink.onEnd(stream.ended.err);
    return () => {
      if (this.events.get(subscriptionId) === stream) this.events.delete(subscriptionId);
      stream.sink = null;
      stream.stop();
      stream.readable?.destroy();
    };
  }

  /** Closes the connection and everything on it. */
  async close(): Promise<void> {
    this.fail(new FelixConnectionError(`connection to ${this.where} closed by the client`));
    await this.quic.close().catch(() => {});
  }

  private onEventStream(readable: Readable): void {
    let stream: EventStream | null = null;
    const stop = readFrames(readable, this.options.frameBytesMax, `${this.where} event stream`, {
      onFrame: (f) => {
        if (stream === null) return this.onHello(f, readable, stop, (s) => (stream = s));
        if (stream.sink !== null) stream.sink.onFrame(f);
        else stream.early.push(f);
      },
      onEnd: (err) => {
        if (stream === null) return;
        if (stream.sink !== null) stream.sink.onEnd(err);
        else stream.ended = { err };
      },
    });
  }

  /** The first frame of an event stream: its hello binds it to a subscription; anything else drops it. */
  private onHello(f: FelixFrame, readable: Readable, stop: () => void, bind: (s: EventStream) => void): void {
    if (f.kind !== 'message' || f.message.type !== 'event_stream_hello') {
      stop();
      readable.destroy();
      return;
    }
    const subscriptionId = f.message.subscriptionId;
    const attached = this.events.get(subscriptionId);
    if (attached !== undefined && attached.sink !== null && attached.readable === null) {
      attached.readable = readable;
      attached.stop = stop;
      return bind(attached);
    }
    const s: EventStream = { subscriptionId, readable, stop, sink: null, early: [], ended: null };
    this.parked.push(s);
    if (this.parked.length > parkedStreamsMax) {
      const old = this.parked.shift()!;
      old.stop();
      old.readable?.destroy();
    }
    bind(s);
  }

  private fail(err: FelixClientError): void {
    if (this.closedBy !== null) return;
    this.closedBy = err;
    for (const e of this.events.values()) e.sink?.onEnd(err);
    this.events.clear();
    for (const p of this.parked) p.readable?.destroy();
    this.parked.length = 0;
    for (const l of this.closeListeners) l(err);
    this.closeListeners = [];
  }
}
