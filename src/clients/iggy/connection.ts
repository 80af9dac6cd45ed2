// One TCP (or TLS) connection to an Iggy 0.11 server: writes request frames, reads reply and
// eviction frames with the codec's IggyFramer, and matches replies to requests in order.
//
// The server answers the requests of one connection in the order it received them; a reply is
// matched to its request by the echoed `request` number, `operation` byte and header `timestamp`.
// At most `inflightRequestsMax` requests are on the wire; later ones wait here, unsent, in order.
// A request that times out while waiting is removed and never sent; one that times out on the
// wire is abandoned but keeps its slot, and its late reply is read and dropped.
//
// The reference server may never answer a request (a replicated one it could not submit: "Stay
// silent; the SDK read-timeout replays"). Replies come in request order, so a reply that answers a
// later entry means the ones before it will not be answered: the abandoned (timed-out) ones are
// dropped and the others fail at once with a retriable IggyTimeoutError. Requests that share a
// request number and operation (non-metadata requests between two metadata requests) are told
// apart by the header timestamp the server echoes, which the client keeps strictly increasing per
// connection. A reply that matches no entry means the stream is out of step: the connection is
// dropped.
//
// An Eviction frame (command 13) kills the session: every request fails with IggyEvictedError and
// the socket is closed. Any other end of the socket fails what is left with IggyConnectionError
// (retriable). The owner learns of the end once, through `onClose`.

import net from 'node:net';
import tls from 'node:tls';
import {
  EvictionReason,
  FrameCommand,
  IggyFramer,
  decodeEvictionLenient,
  decodeReplyHeader,
  headerBytes,
  type FramerResult,
  type ReplyHeader,
} from '../../protocols/iggy/codec/index.js';
import { recycledBuffer } from '../../base/native.js';
import { SocketReads, directReadBytesMin } from '../../base/socket-reads.js';
import { IggyConnectionError, IggyEvictedError, IggyProtocolError, IggyTimeoutError, type IggyClientError } from './errors.js';

export interface ConnectionOptions {
  host: string;
  port: number;
  /** TLS: true for the defaults (servername = host), or node:tls options. */
  tls?: boolean | tls.ConnectionOptions;
  connectTimeoutMs: number;
  frameBytesMax: number;
  inflightRequestsMax: number;
}

/** One request as the connection sees it. */
export interface Exchange {
  /** What was asked, for error messages ('stream.create'). */
  name: string;
  frame: Buffer[];
  /** Echo checks on the reply: request number, operation byte and header timestamp. */
  request: bigint;
  operation: number;
  timestamp: bigint;
  onReply(header: ReplyHeader, body: Buffer): void;
  onError(err: IggyClientError): void;
  /** Set by the owner when the caller gave up (timeout): the reply is read and dropped. */
  abandoned: boolean;
}

export class IggyConnection {
  private readonly framer: IggyFramer;
  private readonly inflight: Exchange[] = [];
  private readonly waiting: Exchange[] = [];
  private closed = false;
  private closeListener: ((err: IggyClientError) => void) | null = null;

  private constructor(
    private readonly socket: net.Socket,
    private readonly options: ConnectionOptions,
    reader: SocketReads | null,
  ) {
    // A plain TCP socket reads into the shared buffer (reader), or in place into a large reply frame.
    // Large replies (polls) are assembled in recycled memory: no fresh pages to fault in per reply.
    this.framer = new IggyFramer({ frameBytesMax: options.frameBytesMax, reusedChunks: reader !== null, frameAllocator: recycledBuffer });
    socket.setNoDelay(true);
    if (reader !== null) {
      reader.attach((chunk) => this.onData(chunk), {
        target: () => (this.closed ? null : this.framer.directTarget(directReadBytesMin)),
        filled: (target, bytes) => this.onFrames(this.framer.pushDirect(target, bytes)),
      });
    } else {
      socket.on('data', (chunk: Buffer) => this.onData(chunk));
    }
    socket.on('error', (err) => this.fail(new IggyConnectionError(`connection to ${this.address} failed: ${err.message}`, { cause: err })));
    socket.on('close', () => this.fail(new IggyConnectionError(`connection to ${this.address} closed`)));
  }

  /** Opens the socket (and the TLS session); rejects with IggyConnectionError. */
  static open(options: ConnectionOptions): Promise<IggyConnection> {
    return new Promise((resolve, reject) => {
      const { host, port } = options;
      const useTls = options.tls !== undefined && options.tls !== false;
      const tlsOptions: tls.ConnectionOptions = typeof options.tls === 'object' ? options.tls : {};
      const reader = useTls ? null : new SocketReads();
      const socket = useTls
        ? tls.connect({ servername: net.isIP(host) === 0 ? host : undefined, ...tlsOptions, host, port })
        : net.connect({ host, port, onread: reader!.onread });
      const readyEvent = useTls ? 'secureConnect' : 'connect';
      const timer = setTimeout(() => done(new IggyConnectionError(`connect to ${host}:${port} timed out after ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);
      const onError = (err: Error): void => done(new IggyConnectionError(`connect to ${host}:${port} failed: ${err.message}`, { cause: err }));
      const onReady = (): void => done(null);
      function done(err: IggyConnectionError | null): void {
        clearTimeout(timer);
        socket.off('error', onError);
        socket.off(readyEvent, onReady);
        if (err !== null) {
          socket.destroy();
          reject(err);
        } else {
          resolve(new IggyConnection(socket, options, reader));
        }
      }
      socket.once('error', onError);
      socket.once(readyEvent, onReady);
    });
  }

  get address(): string {
    return `${this.options.host}:${this.options.port}`;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Requests sent and not answered (including abandoned ones), plus those waiting to be sent. */
  get pendingCount(): number {
    return this.inflight.length + this.waiting.length;
  }

  /** Called once when the connection ends, with the error that ended it. */
  onClose(listener: (err: IggyClientError) => void): void {
    this.closeListener = listener;
  }

  /** Queues a request; its callbacks fire exactly once (unless abandoned and then answered). */
  send(exchange: Exchange): void {
    if (this.closed) {
      exchange.onError(new IggyConnectionError(`connection to ${this.address} is closed`));
      return;
    }
    if (this.inflight.length >= this.options.inflightRequestsMax) {
      this.waiting.push(exchange);
      return;
    }
    this.write(exchange);
  }

  /** Drops a request that is still waiting to be sent (a timeout); false when already on the wire. */
  withdraw(exchange: Exchange): boolean {
    const i = this.waiting.indexOf(exchange);
    if (i === -1) return false;
    this.waiting.splice(i, 1);
    return true;
  }

  /** Closes the socket; what is pending fails with `err` (default: a connection error). */
  destroy(err?: IggyClientError): void {
    this.fail(err ?? new IggyConnectionError(`connection to ${this.address} closed by the client`));
  }

  private write(exchange: Exchange): void {
    this.inflight.push(exchange);
    this.socket.cork();
    for (const chunk of exchange.frame) this.socket.write(chunk);
    this.socket.uncork();
  }

  private onData(chunk: Buffer): void {
    this.onFrames(this.framer.push(chunk));
  }

  private onFrames(results: FramerResult[]): void {
    for (const result of results) {
      if (this.closed) return;
      if (!result.ok) {
        this.fail(new IggyProtocolError(`bad frame from ${this.address}: ${result.reason}`));
        return;
      }
      const { header, body } = result.frame;
      const command = header[60];
      if (command === FrameCommand.eviction) {
        this.onEviction(header);
        return;
      }
      if (command !== FrameCommand.reply) {
        this.fail(new IggyProtocolError(`unexpected frame command ${command} from ${this.address}`));
        return;
      }
      this.onReply(decodeReplyHeader(header), body);
    }
  }

  private onReply(header: ReplyHeader, body: Buffer): void {
    const at = this.matchReply(header);
    if (at < 0) {
      const live = this.inflight.find((e) => !e.abandoned);
      this.fail(
        new IggyProtocolError(
          live === undefined
            ? `unsolicited reply (request ${header.request} operation ${header.operation}) from ${this.address}`
            : `reply out of step: expected request ${live.request} operation ${live.operation} timestamp ${live.timestamp}, got request ${header.request} operation ${header.operation} timestamp ${header.timestamp}`,
        ),
      );
      return;
    }
    // Entries before the match will never be answered: the abandoned ones are dropped, the others
    // fail as unanswered (IggyTimeoutError, retriable).
    const exchange = this.inflight[at]!;
    const skipped = this.inflight.splice(0, at + 1);
    for (let i = 0; i < at; i++) if (!skipped[i]!.abandoned) skipped[i]!.onError(new IggyTimeoutError(skipped[i]!.name, 0));
    for (let sent = 0; sent <= at; sent++) {
      const next = this.waiting.shift();
      if (next === undefined) break;
      this.write(next);
    }
    if (!exchange.abandoned) exchange.onReply(header, body.length === 0 ? body : body.subarray(0, header.size - headerBytes));
  }

  /**
   * The index in `inflight` of the entry a reply answers: the one that echoes its request number,
   * operation and timestamp (the timestamp is unique per connection). -1 when none does.
   */
  private matchReply(header: ReplyHeader): number {
    return this.inflight.findIndex((e) => header.request === e.request && header.operation === e.operation && header.timestamp === e.timestamp);
  }

  private onEviction(header: Buffer): void {
    const name = this.inflight[0]?.name ?? 'session';
    // Lenient on the reason and the version window: IggyEvictedError maps an unknown reason to 3
    // and an IncompatibleProtocol with an invalid window to 40 (server notes §3).
    const e = decodeEvictionLenient(header);
    if (typeof e === 'string') {
      this.fail(new IggyProtocolError(`bad eviction frame from ${this.address}: ${e}`));
      return;
    }
    const window = e.reason === EvictionReason.incompatibleProtocol;
    this.fail(new IggyEvictedError(e.reason, name, window ? e.serverProtocolVersion : 0, window ? e.serverProtocolVersionMin : 0));
  }

  private fail(err: IggyClientError): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    const pending = [...this.inflight, ...this.waiting];
    this.inflight.length = 0;
    this.waiting.length = 0;
    for (const exchange of pending) if (!exchange.abandoned) exchange.onError(err);
    this.closeListener?.(err);
  }
}
