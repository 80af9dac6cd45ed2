// QUIC for Felix (docs/protocols/felix-wire-v1.md §1): a server and a client over @matrixai/quic
// (quiche and BoringSSL, TLS 1.3), with QUIC streams as node streams so the shared connection
// pipeline can run over them: a bidirectional stream is a Duplex, a unidirectional one a Readable
// (incoming) or a Writable (outgoing).
//
//   server: startFelixQuicServer({ host, port, tls?, onConnection }) -> FelixQuicServer
//     connection 'bidi' (Duplex: client-opened request stream), 'uni' (Readable: publish-only)
//     connection.openUni() -> Writable (a broker-opened event stream)
//   client: connectFelixQuic({ host, port, ca }) -> FelixQuicClient
//     client.openBidi() -> Duplex; client 'uni' (Readable: an event stream the broker opened)
//
// ALPN is `felix/1`. Without a configured certificate the server makes a self-signed one for
// localhost and says so in a warning. A client that offers no ALPN fails the handshake with
// CRYPTO_ERROR 0x178 whatever the server's protocols (BoringSSL requires ALPN under QUIC; notes §7
// describe the reference accepting one; docs/felix.md "ALPN" says why this stack cannot).

import { EventEmitter } from 'node:events';
import { createHmac, randomFillSync, timingSafeEqual } from 'node:crypto';
import { Socket as UdpSocket } from 'node:dgram';
import { Duplex, Readable, Writable } from 'node:stream';
import { QUICClient, QUICServer, errors, events, type QUICConnection, type QUICStream } from '@matrixai/quic';
import MatrixLogger, { Handler, LogLevel } from '@matrixai/logger';
import type { Logger } from '../../base/logger.js';
import { selfSignedLocalhost, type CertificatePair } from './self-signed.js';

export const felixAlpn = 'felix/1';

/** Transport limits (notes §7 for the reference's values). */
export interface QuicLimits {
  /** Receive window of a connection, bytes. */
  connectionWindowBytes: number;
  /** Receive window of one stream, bytes. */
  streamWindowBytes: number;
  /** Streams a peer may open, each direction. */
  streamsMax: number;
  /** Idle time before a connection is closed, ms (0: never). */
  idleTimeoutMs: number;
  /** Largest chunk read from a stream at a time, bytes. */
  readChunkBytes: number;
  /**
   * Largest UDP payload sent, bytes (at most the path MTU less headers; 1350 is safe on the
   * Internet). Unset: 1350, or `loopbackUdpPayloadBytes` when the host is a loopback address.
   */
  udpPayloadBytesMax?: number;
  /**
   * SO_RCVBUF and SO_SNDBUF of the UDP socket, bytes (0: the OS default; Linux caps them at
   * net.core.rmem_max / wmem_max). With the default 208 KiB, 65,000-byte packets lost 137-196 of
   * 386-669 sent per 2 s to receive-buffer drops in the benchmark; with 4 MiB, none.
   */
  socketBufferBytes: number;
}

export const defaultQuicLimits: QuicLimits = {
  connectionWindowBytes: 64 << 20,
  streamWindowBytes: 16 << 20,
  streamsMax: 1024,
  idleTimeoutMs: 30_000,
  readChunkBytes: 64 << 10,
  socketBufferBytes: 4 << 20,
};

/** The Internet-safe UDP payload. */
export const internetUdpPayloadBytes = 1350;

/**
 * The UDP payload on a loopback path (MTU 65,536, no fragmentation). The library's cost is per
 * packet, not per byte: on one stream of 64 KiB writes (docs/benchmarks.md "QUIC transport",
 * 2026-12-02, load average ~13 on 2 cores) 1350-byte packets moved 0.09-0.21 MB/s at 0.22-0.39 MB
 * per CPU-second, 65,000-byte packets with 4 MiB socket buffers 1.8-3.7 MB/s at 4.1-7.0.
 */
export const loopbackUdpPayloadBytes = 65_000;

/** Whether `host` names the loopback interface (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || /^::ffff:127\./i.test(host);
}

function udpPayloadFor(limits: QuicLimits, host: string): number {
  return limits.udpPayloadBytesMax ?? (isLoopbackHost(host) ? loopbackUdpPayloadBytes : internetUdpPayloadBytes);
}

function quicConfig(limits: QuicLimits, host: string): Record<string, unknown> {
  return {
    applicationProtos: [felixAlpn],
    initialMaxData: limits.connectionWindowBytes,
    maxConnectionWindow: limits.connectionWindowBytes,
    initialMaxStreamDataBidiLocal: limits.streamWindowBytes,
    initialMaxStreamDataBidiRemote: limits.streamWindowBytes,
    initialMaxStreamDataUni: limits.streamWindowBytes,
    maxStreamWindow: limits.streamWindowBytes,
    initialMaxStreamsBidi: limits.streamsMax,
    initialMaxStreamsUni: limits.streamsMax,
    // (maxConnectionWindow and maxStreamWindow above reach no quiche setting in @matrixai/quic
    // 2.0.9: its buildQuicheConfig passes only the initial windows; quiche's own caps apply.)
    maxIdleTimeout: limits.idleTimeoutMs,
    readableChunkSize: limits.readChunkBytes,
    maxSendUdpPayloadSize: udpPayloadFor(limits, host),
    maxRecvUdpPayloadSize: 65_527,
  };
}

/**
 * Sizes the kernel buffers of the UDP socket the library opened. The default receive buffer (208 KiB
 * on Linux) holds three 65,000-byte datagrams, and each one the kernel drops is a packet quiche
 * takes for lost (its congestion window shrinks). The library keeps the socket in protected
 * fields (QUICServer and QUICClient `socket`: a QUICSocket, whose `socket` is the dgram socket, in
 * @matrixai/quic 2.0.9); if that shape changes, the OS default stays and a warning says so.
 */
function sizeSocketBuffers(owner: QUICServer | QUICClient, bytes: number, logger: Logger): UdpBuffers | undefined {
  const udp = (owner as unknown as { socket?: { socket?: unknown } }).socket?.socket;
  if (!(udp instanceof UdpSocket)) {
    if (bytes > 0) logger.warn('quic: the UDP socket is out of reach; its buffers keep the OS default', {});
    return undefined;
  }
  try {
    if (bytes > 0) {
      udp.setRecvBufferSize(bytes);
      udp.setSendBufferSize(bytes);
    }
    return { receiveBytes: udp.getRecvBufferSize(), sendBytes: udp.getSendBufferSize() };
  } catch (err) {
    logger.warn('quic: could not size the UDP socket buffers', { bytes, error: String(err) });
    return undefined;
  }
}

/** A UDP socket's kernel buffers as the kernel reports them (Linux doubles what was asked, up to its caps). */
export interface UdpBuffers {
  receiveBytes: number;
  sendBytes: number;
}

/** The library's log lines, at warn and above, into ours. */
function libraryLogger(logger: Logger, key: string): MatrixLogger {
  class Bridge extends Handler {
    emit(output: string): void {
      logger.warn('quic', { detail: output });
    }
  }
  return new MatrixLogger(key, LogLevel.WARN, [new Bridge()]);
}

function asBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** Writes coalesce runs of small chunks into one buffer; larger chunks go as they are. */
const coalesceBytesMax = 16 << 10;

function coalesce(chunks: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let run: Buffer[] = [];
  let runBytes = 0;
  const flush = (): void => {
    if (run.length === 1) out.push(run[0]!);
    else if (run.length > 1) out.push(Buffer.concat(run, runBytes));
    run = [];
    runBytes = 0;
  };
  for (const c of chunks) {
    if (c.length === 0) continue;
    if (c.length >= coalesceBytesMax) {
      flush();
      out.push(c);
      continue;
    }
    run.push(c);
    runBytes += c.length;
    if (runBytes >= coalesceBytesMax) flush();
  }
  flush();
  return out;
}

/**
 * Whether a QUIC stream ended with `err` because its whole connection went away (the peer closed
 * it, it was closed here, it timed out) rather than by the peer resetting that one stream. The
 * library ends every open stream with the connection's error (ErrorQUICConnectionPeer, say) when
 * the connection stops, and with no reason at all in some paths. Such a node stream is destroyed
 * without an 'error' event ('close' alone: finished() reports a premature close), so a stream with
 * no error listener cannot take the process down when a client disconnects. A peer's RESET_STREAM
 * or STOP_SENDING still errors its stream.
 */
export function isConnectionGone(err: unknown): boolean {
  return !(err instanceof Error) || err instanceof errors.ErrorQUICConnection;
}

/** Ends `node` for an error from its QUIC stream: quietly when the connection went away. */
function failStream(node: Readable, err: unknown): void {
  if (isConnectionGone(err)) node.destroy();
  else node.destroy(err as Error);
}

/** Reads a QUIC stream's readable side into a node stream, pausing when it is full. */
function readInto(node: Readable, stream: QUICStream): () => void {
  const reader = stream.readable.getReader();
  let reading = false;
  const step = (): void => {
    reader.read().then(
      ({ done, value }) => {
        if (done) return void node.push(null);
        if (node.push(asBuffer(value))) step();
        else reading = false;
      },
      (err: unknown) => failStream(node, err),
    );
  };
  node.once('close', () => void reader.cancel().catch(() => {}));
  return () => {
    if (reading) return;
    reading = true;
    step();
  };
}

type WriteCallback = (err?: Error | null) => void;

/** The write half of a QUIC stream for a node stream: writev, final (FIN), destroy. */
function writeTo(stream: QUICStream, node: () => Writable): { writev(chunks: Buffer[], cb: WriteCallback): void; final(cb: WriteCallback): void; abort(err: Error | null): void } {
  const writer = stream.writable.getWriter();
  // Destroyed first, the node stream hands the error to the pending write's callback and its
  // `errored`, but emits no 'error' event.
  const fail = (cb: WriteCallback) => (err: unknown) => {
    if (isConnectionGone(err)) node().destroy();
    cb(err instanceof Error ? err : new Error('the QUIC connection closed'));
  };
  return {
    writev(chunks, cb) {
      const pieces = coalesce(chunks);
      if (pieces.length === 0) return cb();
      const writes = pieces.map((p) => writer.write(p));
      Promise.all(writes).then(() => cb(), fail(cb));
    },
    final(cb) {
      writer.close().then(() => cb(), fail(cb));
    },
    abort(err) {
      writer.abort(err ?? undefined).catch(() => {});
    },
  };
}

/** A bidirectional QUIC stream as a Duplex (half-closable: ending one side leaves the other). */
export function quicDuplex(stream: QUICStream, highWaterMark = 1 << 20): Duplex {
  let pull: () => void = () => {};
  const w = writeTo(stream, () => d);
  const d: Duplex = new Duplex({
    allowHalfOpen: true,
    readableHighWaterMark: highWaterMark,
    writableHighWaterMark: highWaterMark,
    read: () => pull(),
    writev: (chunks, cb) => w.writev(chunks.map((c) => c.chunk as Buffer), cb),
    final: (cb) => w.final(cb),
    destroy: (err, cb) => {
      w.abort(err);
      cb(err);
    },
  });
  pull = readInto(d, stream);
  return d;
}

/** An incoming unidirectional QUIC stream as a Readable. */
export function quicReadable(stream: QUICStream, highWaterMark = 1 << 20): Readable {
  let pull: () => void = () => {};
  const r = new Readable({ highWaterMark, read: () => pull() });
  pull = readInto(r, stream);
  return r;
}

/** An outgoing unidirectional QUIC stream as a Writable; end() sends FIN. */
export function quicWritable(stream: QUICStream, highWaterMark = 1 << 20): Writable {
  const w = writeTo(stream, () => out);
  const out: Writable = new Writable({
    highWaterMark,
    writev: (chunks, cb) => w.writev(chunks.map((c) => c.chunk as Buffer), cb),
    final: (cb) => w.final(cb),
    destroy: (err, cb) => {
      w.abort(err);
      cb(err);
    },
  });
  return out;
}

/** Routes a connection's peer-opened streams to 'bidi' and 'uni' listeners. */
function routeStreams(connection: QUICConnection, emitter: EventEmitter, logger: Logger): void {
  connection.addEventListener(events.EventQUICConnectionStream.name, (evt: Event) => {
    try {
      const stream = (evt as events.EventQUICConnectionStream).detail;
      stream.addEventListener(events.EventQUICStreamError.name, (e: Event) => logger.debug('quic stream error', { error: String((e as events.EventQUICStreamError).detail) }));
      if (stream.type === 'bidi') emitter.emit('bidi', quicDuplex(stream));
      else emitter.emit('uni', quicReadable(stream));
    } catch (err) {
      logger.error('quic stream setup failed', { error: String(err) });
    }
  });
}

/** One accepted QUIC connection: events 'bidi' (Duplex), 'uni' (Readable), 'close'. */
export class FelixQuicConnection extends EventEmitter {
  constructor(
    readonly connection: QUICConnection,
    logger: Logger,
  ) {
    super();
    routeStreams(connection, this, logger);
    connection.addEventListener(events.EventQUICConnectionStopped.name, () => this.emit('close'), { once: true });
    connection.addEventListener(events.EventQUICConnectionError.name, (e: Event) => logger.debug('quic connection error', { error: String((e as events.EventQUICConnectionError).detail) }));
  }

  get remoteAddress(): string {
    return `${this.connection.remoteHost}:${this.connection.remotePort}`;
  }

  /** Opens a broker-to-client unidirectional stream (an event stream). */
  openUni(): Writable {
    return quicWritable(this.connection.newStream('uni'));
  }

  /** Closes the connection with an application error code (errors.ts CloseCode). */
  async close(code = 0, reason = ''): Promise<void> {
    await this.connection.stop({ isApp: true, errorCode: code, reason: Buffer.from(reason), force: true });
  }
}

export interface FelixQuicServerOptions {
  host: string;
  /** UDP port; 0 picks one. */
  port: number;
  /** PEM certificate and key; absent: a self-signed certificate for localhost (with a warning). */
  tls?: CertificatePair;
  limits?: Partial<QuicLimits>;
  logger: Logger;
  onConnection(connection: FelixQuicConnection): void;
}

export interface FelixQuicServer {
  readonly host: string;
  readonly port: number;
  /** The certificate in use (PEM): the configured one or the generated one. */
  readonly certificate: string;
  /** The UDP socket's kernel buffers (undefined: out of reach). */
  readonly udpBuffers: UdpBuffers | undefined;
  close(): Promise<void>;
}

/** A peer's RESET_STREAM (read) or STOP_SENDING (write) as the error its stream ends with. */
function codeToReason(type: 'read' | 'write', code: number): Error {
  return new Error(type === 'read' ? `peer reset the stream (code ${code})` : `peer stopped reading the stream (code ${code})`);
}

/** HMAC-SHA256 for the library's stateless tokens and connection ids. */
const serverCryptoOps = {
  async sign(key: ArrayBuffer, data: ArrayBuffer): Promise<ArrayBuffer> {
    const mac = createHmac('sha256', Buffer.from(key)).update(Buffer.from(data)).digest();
    return mac.buffer.slice(mac.byteOffset, mac.byteOffset + mac.byteLength);
  },
  async verify(key: ArrayBuffer, data: ArrayBuffer, sig: ArrayBuffer): Promise<boolean> {
    const mac = createHmac('sha256', Buffer.from(key)).update(Buffer.from(data)).digest();
    const given = Buffer.from(sig);
    return given.length === mac.length && timingSafeEqual(mac, given);
  },
};

export async function startFelixQuicServer(options: FelixQuicServerOptions): Promise<FelixQuicServer> {
  const limits = { ...defaultQuicLimits, ...options.limits };
  let tls = options.tls;
  if (tls === undefined) {
    tls = selfSignedLocalhost();
    options.logger.warn('felix: no TLS certificate configured; using a self-signed certificate for localhost', {});
  }
  const tokenKey = randomFillSync(Buffer.alloc(32));
  const server = new QUICServer({
    crypto: { key: tokenKey.buffer.slice(tokenKey.byteOffset, tokenKey.byteOffset + 32), ops: serverCryptoOps },
    config: { ...quicConfig(limits, options.host), key: tls.key, cert: tls.cert, verifyPeer: false },
    codeToReason,
    logger: libraryLogger(options.logger, 'felix-quic-server'),
  });
  server.addEventListener(events.EventQUICServerConnection.name, (evt: Event) => {
    try {
      options.onConnection(new FelixQuicConnection((evt as events.EventQUICServerConnection).detail, options.logger));
    } catch (err) {
      options.logger.error('felix connection setup failed', { error: String(err) });
    }
  });
  server.addEventListener(events.EventQUICServerError.name, (e: Event) => options.logger.error('quic server error', { error: String((e as events.EventQUICServerError).detail) }));
  await server.start({ host: options.host, port: options.port });
  const udpBuffers = sizeSocketBuffers(server, limits.socketBufferBytes, options.logger);
  const certificate = tls.cert;
  return {
    host: server.host,
    port: server.port,
    certificate,
    udpBuffers,
    close: () => server.stop({ isApp: true, errorCode: 0, force: true }),
  };
}

export interface FelixQuicClientOptions {
  host: string;
  port: number;
  /** The name the certificate must carry (default localhost). */
  serverName?: string;
  /** PEM certificates to trust (the server's self-signed one, say). */
  ca: string;
  limits?: Partial<QuicLimits>;
  /** Give up connecting after this long, ms. */
  connectTimeoutMs?: number;
  /** ALPN protocols to offer (default felix/1). */
  alpn?: string[];
  logger: Logger;
}

/** A client connection: openBidi(); events 'uni' (Readable: broker-opened streams), 'close'. */
export class FelixQuicClient extends EventEmitter {
  private constructor(private readonly client: QUICClient) {
    super();
  }

  static async connect(options: FelixQuicClientOptions): Promise<FelixQuicClient> {
    const limits = { ...defaultQuicLimits, ...options.limits };
    const client = await QUICClient.createQUICClient(
      {
        host: options.host,
        port: options.port,
        serverName: options.serverName ?? 'localhost',
        crypto: { ops: { randomBytes: async (b: ArrayBuffer) => void randomFillSync(new Uint8Array(b)) } },
        config: { ...quicConfig(limits, options.host), applicationProtos: options.alpn ?? [felixAlpn], ca: options.ca, verifyPeer: true },
        codeToReason,
        logger: libraryLogger(options.logger, 'felix-quic-client'),
      },
      { timer: options.connectTimeoutMs ?? 5_000 },
    );
    sizeSocketBuffers(client, limits.socketBufferBytes, options.logger);
    const c = new FelixQuicClient(client);
    routeStreams(client.connection, c, options.logger);
    client.connection.addEventListener(events.EventQUICConnectionStopped.name, () => c.emit('close'), { once: true });
    return c;
  }

  /** Opens a client-to-broker bidirectional stream (a request stream). */
  openBidi(highWaterMark?: number): Duplex {
    return quicDuplex(this.client.connection.newStream('bidi'), highWaterMark);
  }

  /** Opens a client-to-broker unidirectional stream (publish-only). */
  openUni(): Writable {
    return quicWritable(this.client.connection.newStream('uni'));
  }

  async close(): Promise<void> {
    await this.client.destroy({ isApp: true, errorCode: 0, force: true });
  }
}

export function connectFelixQuic(options: FelixQuicClientOptions): Promise<FelixQuicClient> {
  return FelixQuicClient.connect(options);
}
