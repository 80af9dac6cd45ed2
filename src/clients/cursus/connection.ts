// One TCP (or TLS) connection to a Cursus Wire v2 broker (docs/protocols/cursus-wire-v2.md):
// opens the socket, negotiates, then carries one request lifecycle at a time.
//
// Negotiation (§4): the first frame is a kind 1 NEGOTIATE (request ID 0, uncompressed) offering
// version 2..2 and the compression ids in order of preference; the broker's kind 2 reply names
// version 2 and one of the offered ids, or is status ERROR with the error payload (then the broker
// closes). From then on every frame, both ways, carries the negotiated id and its non-empty
// payload is compressed with it (§2.2); a reply frame with another id is a protocol error.
//
// Lifecycles (§1, §3): the connection sends a request (kind 3, the next request ID from 1 up) and
// waits for its end before it takes another: a response (kind 4), or stream frames (kind 5) up to
// the one with END, or nothing at all for PUBLISH acks=0 (the lifecycle ends once the socket has
// taken the frame). A reply must carry the request's ID and command. An ERROR frame for an earlier
// acks=0 publish (the broker sends none, but one that did is reported, not fatal) goes to
// `onAsyncError`. Anything else out of step, a bad header, a damaged or undecompressable payload
// ends the connection: its byte stream can no longer be trusted for the request it carries.

import net from 'node:net';
import tls from 'node:tls';
import {
  Compression,
  CursusFramer,
  FrameKind,
  Status,
  commandName,
  decodeErrorPayload,
  decodeNegotiationResponse,
  encodeFrame,
  encodeNegotiationRequest,
  negotiateCommand,
  openFrame,
  wireVersion,
  type Frame,
  type FramerResult,
} from '../../protocols/cursus/codec/index.js';
import { CursusConnectionError, CursusError, CursusProtocolError, type CursusClientError } from './errors.js';

export interface ConnectionOptions {
  host: string;
  port: number;
  tls?: boolean | tls.ConnectionOptions;
  /** Connect, TLS handshake and negotiation together. */
  connectTimeoutMs: number;
  /** Offered at negotiation, in order of preference. */
  compressions: readonly Compression[];
  payloadBytesMax: number;
  socketBufferBytes: number;
}

/** A reply frame, opened: its payload decompressed. */
export interface ReplyFrame {
  kind: FrameKind;
  status: Status;
  end: boolean;
  payload: Buffer;
}

/** How a request's lifecycle ends (docs §3). */
export type Expect = 'response' | 'stream' | 'none';

/** One request as the connection sees it. */
export interface Exchange {
  command: number;
  /** The decoded payload (CRQ2 or CBV2 chunks). */
  payload: readonly Buffer[];
  expect: Expect;
  /** Each reply frame: once for a response, per frame for a stream (the last has `end`). */
  onFrame(frame: ReplyFrame): void;
}

/** Request IDs of acks=0 publishes remembered for a late ERROR frame. */
const fireAndForgetRemembered = 64;

export class CursusConnection {
  /** The compression negotiated for this connection. */
  readonly compression: Compression;
  private readonly framer: CursusFramer;
  private nextRequestId = 1n;
  private current: { exchange: Exchange; requestId: bigint; done: (err: CursusClientError | null) => void } | null = null;
  private readonly fireAndForget: bigint[] = [];
  private closed = false;
  private closeListener: ((err: CursusClientError) => void) | null = null;
  /** An ERROR frame for an earlier acks=0 publish. */
  onAsyncError: ((err: CursusError) => void) | null = null;
  /** Free for the owner's bookkeeping (the credentials this connection authenticated with). */
  authenticatedAs: object | null = null;

  private constructor(
    private readonly socket: net.Socket,
    framer: CursusFramer,
    readonly options: ConnectionOptions,
    compression: Compression,
    leftover: FramerResult[],
  ) {
    this.framer = framer;
    this.compression = compression;
    socket.on('data', (chunk: Buffer) => this.onFrames(this.framer.push(chunk)));
    socket.on('error', (err) => this.fail(new CursusConnectionError(`connection to ${this.address} failed: ${err.message}`, { cause: err })));
    socket.on('close', () => this.fail(new CursusConnectionError(`connection to ${this.address} closed`)));
    if (leftover.length > 0) this.onFrames(leftover);
  }

  /**
   * Connects and negotiates. Rejects with CursusConnectionError (the socket), CursusError (the
   * broker refused the negotiation) or CursusProtocolError (a reply the codec cannot read, or a
   * version or compression that was not offered).
   */
  static open(options: ConnectionOptions): Promise<CursusConnection> {
    return new Promise((resolve, reject) => {
      const { host, port } = options;
      const useTls = options.tls !== undefined && options.tls !== false;
      const tlsOptions: tls.ConnectionOptions = typeof options.tls === 'object' ? options.tls : {};
      const buffers = { readableHighWaterMark: options.socketBufferBytes, writableHighWaterMark: options.socketBufferBytes };
      const socket = useTls
        ? tls.connect({ servername: net.isIP(host) === 0 ? host : undefined, minVersion: 'TLSv1.2', ...tlsOptions, host, port, ...buffers })
        : net.connect({ host, port, ...buffers });
      const framer = new CursusFramer({ encodedBytesMax: options.payloadBytesMax, decodedBytesMax: options.payloadBytesMax });
      const readyEvent = useTls ? 'secureConnect' : 'connect';
      let settled = false;
      const timer = setTimeout(() => done(new CursusConnectionError(`connect to ${host}:${port} timed out after ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);
      const onError = (err: Error): void => done(new CursusConnectionError(`connect to ${host}:${port} failed: ${err.message}`, { cause: err }));
      const onClose = (): void => done(new CursusConnectionError(`connection to ${host}:${port} closed during negotiation`));
      const onReady = (): void => {
        socket.setNoDelay(true);
        const request = encodeNegotiationRequest({ minimumVersion: wireVersion, maximumVersion: wireVersion, compressions: [...options.compressions] });
        writeChunks(socket, encodeFrame({ kind: FrameKind.negotiationRequest, command: negotiateCommand, requestId: 0n }, [request]));
      };
      const onData = (chunk: Buffer): void => {
        const results = framer.push(chunk);
        if (results.length === 0) return;
        const first = results[0]!;
        if (!first.ok) return done(new CursusProtocolError(`bad frame from ${host}:${port}: ${first.reason}`));
        const outcome = negotiated(first.frame, options);
        if (outcome instanceof Error) return done(outcome);
        done(null, outcome, results.slice(1));
      };
      function done(err: CursusClientError | null, compression?: Compression, leftover: FramerResult[] = []): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.off('error', onError);
        socket.off('close', onClose);
        socket.off(readyEvent, onReady);
        socket.off('data', onData);
        if (err !== null) {
          socket.on('error', () => {});
          socket.destroy();
          reject(err);
        } else {
          resolve(new CursusConnection(socket, framer, options, compression!, leftover));
        }
      }
      socket.once('error', onError);
      socket.once('close', onClose);
      socket.once(readyEvent, onReady);
      socket.on('data', onData);
    });
  }

  get address(): string {
    return `${this.options.host}:${this.options.port}`;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** True while a lifecycle is under way. */
  get busy(): boolean {
    return this.current !== null;
  }

  /** Called once when the connection ends, with the error that ended it. */
  onClose(listener: (err: CursusClientError) => void): void {
    this.closeListener = listener;
  }

  /**
   * Runs one request lifecycle: resolves when it ended (the response, the stream's END frame, or,
   * for `none`, once the socket took the frame); rejects when the connection ended first. Throws
   * when a lifecycle is already under way (the owner serializes them).
   */
  run(exchange: Exchange): Promise<void> {
    if (this.closed) return Promise.reject(new CursusConnectionError(`connection to ${this.address} is closed`));
    if (this.current !== null) throw new Error('a request lifecycle is already under way on this connection');
    const requestId = this.nextRequestId++;
    return new Promise<void>((resolve, reject) => {
      const frame = encodeFrame({ kind: FrameKind.request, command: exchange.command, requestId, compression: this.compression }, exchange.payload);
      if (exchange.expect === 'none') {
        this.remember(requestId);
        this.current = { exchange, requestId, done: (err) => (err === null ? resolve() : reject(err)) };
        writeChunks(this.socket, frame, () => this.finish(null));
        return;
      }
      this.current = { exchange, requestId, done: (err) => (err === null ? resolve() : reject(err)) };
      writeChunks(this.socket, frame);
    });
  }

  /** Stops reading from the socket (a stream's consumer is behind); TCP pushes back on the broker. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Closes the socket; the lifecycle under way fails with `err` (default: a connection error). */
  destroy(err?: CursusClientError): void {
    this.fail(err ?? new CursusConnectionError(`connection to ${this.address} closed by the client`));
  }

  private remember(requestId: bigint): void {
    this.fireAndForget.push(requestId);
    if (this.fireAndForget.length > fireAndForgetRemembered) this.fireAndForget.shift();
  }

  private finish(err: CursusClientError | null): void {
    const c = this.current;
    if (c === null) return;
    this.current = null;
    c.done(err);
  }

  private onFrames(results: FramerResult[]): void {
    for (const result of results) {
      if (this.closed) return;
      if (!result.ok) {
        this.fail(new CursusProtocolError(`bad frame from ${this.address}: ${result.reason}`));
        return;
      }
      this.onFrame(result.frame);
    }
  }

  private onFrame(frame: Frame): void {
    const h = frame.header;
    if (h.kind !== FrameKind.response && h.kind !== FrameKind.stream) return this.fail(new CursusProtocolError(`frame of kind ${h.kind} from ${this.address} after negotiation`));
    if (h.compression !== this.compression) return this.fail(new CursusProtocolError(`frame compressed with id ${h.compression} from ${this.address}; negotiated ${this.compression}`));
    const opened = openFrame(h, frame.payload);
    if (!opened.ok) return this.fail(new CursusConnectionError(`damaged frame from ${this.address}: ${opened.code}: ${opened.reason}`));
    const reply: ReplyFrame = { kind: h.kind, status: h.status, end: h.end, payload: opened.value };
    const c = this.current;
    if (c === null || c.requestId !== h.requestId || c.exchange.expect === 'none') return this.onStray(h.requestId, h.command, reply);
    if (h.command !== c.exchange.command) return this.fail(new CursusProtocolError(`reply to request ${h.requestId} names command ${commandName(h.command)}, sent ${commandName(c.exchange.command)}`));
    if (h.kind === FrameKind.stream && c.exchange.expect !== 'stream') return this.fail(new CursusProtocolError(`stream frame for ${commandName(h.command)}, which answers with one response`));
    // A stream request refused before it started may be answered with one response frame.
    const last = h.kind === FrameKind.response || h.end;
    c.exchange.onFrame({ ...reply, end: last });
    if (last) this.finish(null);
  }

  /** A frame for no lifecycle under way: an acks=0 publish's ERROR is reported, anything else is fatal. */
  private onStray(requestId: bigint, command: number, reply: ReplyFrame): void {
    if (this.fireAndForget.includes(requestId) && reply.kind === FrameKind.response && reply.status === Status.error) {
      const e = decodeErrorPayload(reply.payload);
      if (e.ok) {
        this.onAsyncError?.(new CursusError(e.value, commandName(command)));
        return;
      }
    }
    this.fail(new CursusProtocolError(`unsolicited frame for request ${requestId} (${commandName(command)}) from ${this.address}`));
  }

  private fail(err: CursusClientError): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.framer.dispose();
    this.finish(err);
    this.closeListener?.(err);
  }
}

/** The negotiated compression from the broker's first frame, or the error it stands for. */
function negotiated(frame: Frame, options: ConnectionOptions): Compression | CursusClientError {
  const h = frame.header;
  const where = `${options.host}:${options.port}`;
  if (h.kind !== FrameKind.negotiationResponse) return new CursusProtocolError(`${where} answered the negotiation with a frame of kind ${h.kind}`);
  const opened = openFrame(h, frame.payload);
  if (!opened.ok) return new CursusProtocolError(`negotiation response from ${where}: ${opened.reason}`);
  if (h.status === Status.error) {
    const e = decodeErrorPayload(opened.value);
    return e.ok ? new CursusError(e.value, 'NEGOTIATE') : new CursusProtocolError(`negotiation error from ${where}: ${e.reason}`);
  }
  const r = decodeNegotiationResponse(opened.value);
  if (!r.ok) return new CursusProtocolError(`negotiation response from ${where}: ${r.reason}`);
  if (!options.compressions.includes(r.value.compression)) return new CursusProtocolError(`${where} chose compression ${r.value.compression}, which was not offered`);
  return r.value.compression;
}

function writeChunks(socket: net.Socket, chunks: readonly Buffer[], written?: () => void): void {
  socket.cork();
  for (let i = 0; i < chunks.length; i++) socket.write(chunks[i]!, i === chunks.length - 1 ? written : undefined);
  socket.uncork();
}
