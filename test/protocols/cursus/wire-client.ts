// A raw Cursus Wire v2 client for tests, built from the codec: connect, negotiate, send CRQ2
// requests (or any bytes) and collect the frames the broker answers with, by request ID. Every
// wait has a deadline; nothing sleeps. Other areas' wire tests reuse it:
//
//   const c = await CursusWireClient.connect(port);
//   await c.negotiate();                               // compression none, version 2
//   const [reply] = await c.request('CREATE', { topic: 'orders', partitions: '3' });
//   okFields(reply)                                    // Map of the OK line's fields
//   errorOf(reply)                                     // the decoded error payload (status ERROR)

import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import {
  CommandId,
  Compression,
  CursusFramer,
  FrameKind,
  Status,
  decodeErrorPayload,
  decodeJsonEnvelope,
  decodeNegotiationResponse,
  decodeOkLine,
  encodeCommandPayload,
  encodeFrame,
  encodeNegotiationRequest,
  negotiateCommand,
  openFrame,
  type CursusError,
  type FrameHeader,
  type NegotiationResponse,
} from '../../../src/protocols/cursus/codec/index.js';

export const waitMsMax = 5_000;

/** A frame the broker sent, its payload decoded (decompressed). */
export interface WireFrame {
  header: FrameHeader;
  payload: Buffer;
}

export interface ConnectOptions {
  host?: string;
  /** Connect with TLS, trusting this CA (PEM). */
  tlsCa?: Buffer;
}

export class CursusWireClient {
  /** What the broker negotiated (null before negotiate()). */
  compression: Compression | null = null;
  private readonly framer = new CursusFramer();
  private readonly frames: WireFrame[] = [];
  private waiters: Array<() => void> = [];
  private nextRequestId = 1n;
  private ended = false;
  private readonly gone: Promise<void>;
  /** Why the client's own framer stopped (the broker sent bytes that are not frames). */
  framingError: string | null = null;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => undefined);
    this.gone = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('close', () => {
      this.ended = true;
      this.wake();
    });
  }

  static connect(port: number, options: ConnectOptions = {}): Promise<CursusWireClient> {
    const host = options.host ?? '127.0.0.1';
    return new Promise((resolve, reject) => {
      const socket =
        options.tlsCa !== undefined
          ? tlsConnect({ host, port, ca: options.tlsCa, servername: 'localhost' }, () => resolve(new CursusWireClient(socket)))
          : connect({ host, port }, () => resolve(new CursusWireClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Negotiates (default: version 2 only, compression none) and checks the broker accepted. */
  async negotiate(compressions: number[] = [Compression.none], minimumVersion = 2, maximumVersion = 2): Promise<NegotiationResponse> {
    const reply = await this.negotiateRaw(compressions, minimumVersion, maximumVersion);
    assert.equal(reply.header.status, Status.ok, `negotiation refused: ${reply.header.status === Status.error ? JSON.stringify(errorOf(reply)) : ''}`);
    const decoded = decodeNegotiationResponse(reply.payload);
    assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
    this.compression = decoded.value.compression;
    return decoded.value;
  }

  /** Sends a negotiation request and returns the broker's negotiation frame, whatever it says. */
  async negotiateRaw(compressions: number[], minimumVersion = 2, maximumVersion = 2): Promise<WireFrame> {
    this.send(encodeFrame({ kind: FrameKind.negotiationRequest, command: negotiateCommand, requestId: 0n }, [encodeNegotiationRequest({ minimumVersion, maximumVersion, compressions })]));
    return this.nextFrame((f) => f.header.kind === FrameKind.negotiationResponse);
  }

  /** A fresh request ID. */
  requestId(): bigint {
    return this.nextRequestId++;
  }

  /** Sends a CRQ2 request; returns its request ID. */
  sendRequest(command: string | number, fields: Readonly<Record<string, string | Buffer>> = {}, options: { requestId?: bigint; compression?: Compression } = {}): bigint {
    const requestId = options.requestId ?? this.requestId();
    this.sendPayload(command, encodeCommandPayload(fields), { requestId, ...(options.compression !== undefined ? { compression: options.compression } : {}) });
    return requestId;
  }

  /** Sends any payload as a request frame with the negotiated compression (or the one given). */
  sendPayload(command: string | number, payload: readonly Buffer[], options: { requestId?: bigint; compression?: Compression } = {}): bigint {
    const requestId = options.requestId ?? this.requestId();
    const id = typeof command === 'number' ? command : CommandId[command];
    assert.ok(id !== undefined, `unknown command ${String(command)}`);
    this.send(encodeFrame({ kind: FrameKind.request, command: id, requestId, compression: options.compression ?? this.compression ?? Compression.none }, payload));
    return requestId;
  }

  /** Sends a request and collects its frames: the response, or stream frames up to END. */
  async request(command: string | number, fields: Readonly<Record<string, string | Buffer>> = {}, options: { compression?: Compression } = {}): Promise<WireFrame[]> {
    return this.replies(this.sendRequest(command, fields, options));
  }

  /** The frames answering `requestId`: one response, or stream frames up to the one with END. */
  async replies(requestId: bigint, deadlineMs = waitMsMax): Promise<WireFrame[]> {
    const out: WireFrame[] = [];
    for (;;) {
      const frame = await this.nextFrame((f) => f.header.requestId === requestId, deadlineMs);
      out.push(frame);
      if (frame.header.kind !== FrameKind.stream || frame.header.end) return out;
    }
  }

  /** Writes raw bytes. */
  send(chunks: Buffer | readonly Buffer[]): void {
    for (const c of Buffer.isBuffer(chunks) ? [chunks] : chunks) this.socket.write(c);
  }

  /** The next frame matching `match` (taken out of the received ones), within the deadline. */
  async nextFrame(match: (f: WireFrame) => boolean = () => true, deadlineMs = waitMsMax): Promise<WireFrame> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const i = this.frames.findIndex(match);
      if (i >= 0) return this.frames.splice(i, 1)[0]!;
      if (this.ended) throw new Error(`connection closed before the frame came (${this.frames.length} other frames received)`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no frame within ${deadlineMs} ms`);
      await this.waitForInput(left);
    }
  }

  /** Frames received and not taken. */
  get pending(): readonly WireFrame[] {
    return this.frames;
  }

  /** Resolves when the broker has closed the connection; rejects after the deadline. */
  async closed(deadlineMs = waitMsMax): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the broker did not close the connection within ${deadlineMs} ms`)), deadlineMs)));
    try {
      await Promise.race([this.gone, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  get isClosed(): boolean {
    return this.ended;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    for (const r of this.framer.push(chunk)) {
      if (!r.ok) {
        this.framingError = r.reason;
        this.socket.destroy();
        return;
      }
      const opened = openFrame(r.frame.header, Buffer.from(r.frame.payload));
      if (!opened.ok) {
        this.framingError = `${opened.code}: ${opened.reason}`;
        this.socket.destroy();
        return;
      }
      this.frames.push({ header: r.frame.header, payload: opened.value });
    }
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private waitForInput(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** The fields of an OK reply (asserts status OK and an OK line). */
export function okFields(frame: WireFrame): Map<string, string> {
  assert.equal(frame.header.status, Status.ok, frame.header.status === Status.error ? `ERROR ${JSON.stringify(errorOf(frame))}` : '');
  const parsed = decodeOkLine(frame.payload);
  assert.ok(parsed.ok, parsed.ok ? '' : `${parsed.reason}: ${frame.payload.toString()}`);
  return new Map(parsed.value);
}

/** The JSON envelope of an OK reply. */
export function jsonOf(frame: WireFrame): Record<string, unknown> {
  assert.equal(frame.header.status, Status.ok, frame.header.status === Status.error ? `ERROR ${JSON.stringify(errorOf(frame))}` : '');
  const parsed = decodeJsonEnvelope(frame.payload);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.reason);
  return parsed.value;
}

/** The error payload of a status ERROR frame. */
export function errorOf(frame: WireFrame): CursusError {
  assert.equal(frame.header.status, Status.error, `expected ERROR, got OK ${frame.payload.toString('utf8').slice(0, 200)}`);
  const decoded = decodeErrorPayload(frame.payload);
  assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
  return decoded.value;
}

/** Asserts one ERROR frame with `code` and, when given, these fields. */
export function assertError(frames: readonly WireFrame[], code: string, fields: Record<string, string> = {}): CursusError {
  assert.equal(frames.length, 1, `one frame expected, got ${frames.length}`);
  const error = errorOf(frames[0]!);
  assert.equal(error.code, code, `code ${error.code} (${error.message}) ${JSON.stringify(error.fields)}`);
  const got = new Map(error.fields);
  for (const [k, v] of Object.entries(fields)) assert.equal(got.get(k), v, `error field ${k}`);
  return error;
}
