// A scripted Cursus Wire v2 peer for the SDK's tests: a server on 127.0.0.1:0 (TCP, or TLS when
// given a key and certificate) that speaks frames with the codec (src/protocols/cursus/codec). It
// negotiates (with the compressions it is told to support, or refuses), decodes every request
// (CRC, decompression, CRQ2 or CBV2), records it with its raw bytes, and answers with a test's
// `handler` or else with the small in-memory broker of ./fake-model.ts. A handler can answer an OK
// line, JSON, a batch, an error, stream frames (scripted, with waits between them), nothing, raw
// frames, or close the connection.

import net from 'node:net';
import tls from 'node:tls';
import {
  Compression,
  CommandId,
  CursusFramer,
  FrameKind,
  Status,
  commandName,
  cursusError,
  decodeBatch,
  decodeCommandPayload,
  decodeNegotiationRequest,
  encodeBatch,
  encodeErrorPayload,
  encodeFrame,
  encodeJsonEnvelope,
  encodeNegotiationResponse,
  encodeOkLine,
  isBatchPayload,
  negotiate,
  negotiateCommand,
  openFrame,
  type CursusBatch,
  type Fields,
  type FrameHeader,
  type NegotiationRequest,
} from '../../../src/protocols/cursus/codec/index.js';
import { FakeModel } from './fake-model.js';

export interface FakeRequest {
  conn: FakeConn;
  requestId: bigint;
  command: string;
  /** The compression id in the request's flags. */
  compression: number;
  /** CRQ2 fields as text (empty for a CBV2 publish). */
  fields: Map<string, string>;
  /** CRQ2 fields as bytes. */
  values: Map<string, Buffer>;
  batch: CursusBatch | null;
  /** The decoded payload. */
  payload: Buffer;
  /** The frame as received: header and encoded payload. */
  frame: Buffer;
}

export type StreamStep = { payload: Buffer; status?: Status; end?: boolean } | { wait: Promise<unknown> };

export type FakeReply =
  | { ok: Fields }
  | { json: object }
  | { batch: Omit<CursusBatch, 'recordCount'> }
  | { error: string; fields?: Fields; message?: string }
  /** Stream frames in order; an async iterable may wait between them (the model's STREAM). */
  | { stream: StreamStep[] | AsyncIterable<StreamStep> }
  | { none: true }
  /** Whole frames, written as given. */
  | { raw: Buffer[] }
  | { close: true }
  /** Left unanswered; the test answers with conn.reply(req, ...) or never. */
  | { hold: true };

export interface FakeConn {
  socket: net.Socket;
  compression: Compression;
  /** The principal AUTH accepted on this connection. */
  principal: string | null;
  reply(req: FakeRequest, reply: FakeReply): Promise<void>;
}

export interface FakeOptions {
  /** Compressions the fake accepts, in no order (default all four). */
  supported?: Compression[];
  /** Refuse every negotiation with this error. */
  refuseNegotiation?: { code: string; fields?: Fields };
  /** Serve TLS (1.2 at least) with this key and certificate. */
  tls?: { key: Buffer; cert: Buffer };
}

export class FakeCursusBroker {
  readonly requests: FakeRequest[] = [];
  readonly negotiations: NegotiationRequest[] = [];
  readonly conns: FakeConn[] = [];
  /** Return a reply to take over a request; undefined falls through to the model. */
  handler: (req: FakeRequest) => FakeReply | Promise<FakeReply> | undefined = () => undefined;
  model = new FakeModel();
  /** Connections accepted (including refused negotiations). */
  accepted = 0;
  private readonly server: net.Server;

  private constructor(readonly options: FakeOptions) {
    this.server =
      options.tls !== undefined
        ? tls.createServer({ ...options.tls, minVersion: 'TLSv1.2' }, (socket) => this.accept(socket))
        : net.createServer((socket) => this.accept(socket));
  }

  static async start(options: FakeOptions = {}): Promise<FakeCursusBroker> {
    const b = new FakeCursusBroker(options);
    await new Promise<void>((resolve) => b.server.listen(0, '127.0.0.1', resolve));
    return b;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  get addr(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Command names of the requests so far (AUTH and EXIT included). */
  commands(): string[] {
    return this.requests.map((r) => r.command);
  }

  /** The requests of one command. */
  of(command: string): FakeRequest[] {
    return this.requests.filter((r) => r.command === command);
  }

  /** Forgets earlier requests and goes back to the model's answers (a fresh model). */
  reset(): void {
    this.requests.length = 0;
    this.negotiations.length = 0;
    this.handler = () => undefined;
    this.model = new FakeModel();
  }

  dropAll(): void {
    for (const c of this.conns) c.socket.destroy();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    this.accepted++;
    const framer = new CursusFramer();
    let conn: FakeConn | null = null;
    let chain = Promise.resolve();
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      for (const r of framer.push(chunk)) {
        if (!r.ok) {
          socket.destroy();
          return;
        }
        const frameBytes = Buffer.concat([r.frame.headerBytes, r.frame.payload]);
        const h = r.frame.header;
        if (conn === null) {
          conn = this.negotiate(socket, h.kind, r.frame.payload);
          continue;
        }
        const c = conn;
        chain = chain
          .then(() => this.onRequest(c, h, frameBytes))
          .catch((e: unknown) => {
            if (process.env['CURSUS_FAKE_DEBUG'] !== undefined) console.error('fake broker:', e);
            socket.destroy();
          });
      }
    });
  }

  private negotiate(socket: net.Socket, kind: number, payload: Buffer): FakeConn | null {
    const send = (status: Status, body: Buffer): void => {
      socket.write(Buffer.concat(encodeFrame({ kind: FrameKind.negotiationResponse, command: negotiateCommand, requestId: 0n, status }, [body])));
    };
    const req = kind === FrameKind.negotiationRequest ? decodeNegotiationRequest(payload) : null;
    if (req === null || !req.ok) {
      socket.destroy();
      return null;
    }
    this.negotiations.push(req.value);
    const refuse = this.options.refuseNegotiation;
    const outcome = refuse !== undefined ? { ok: false as const, code: refuse.code, fields: refuse.fields ?? [] } : negotiate(req.value, this.options.supported ?? [0, 1, 2, 3]);
    if (!outcome.ok) {
      send(Status.error, encodeErrorPayload(cursusError(outcome.code, outcome.fields, 'negotiation refused')));
      socket.end();
      return null;
    }
    send(Status.ok, encodeNegotiationResponse(outcome.value));
    const conn: FakeConn = { socket, compression: outcome.value.compression, principal: null, reply: (req2, reply) => this.write(conn, req2, reply) };
    this.conns.push(conn);
    return conn;
  }

  private async onRequest(conn: FakeConn, h: FrameHeader, frame: Buffer): Promise<void> {
    const opened = openFrame(h, frame.subarray(32));
    if (!opened.ok) throw new Error(opened.reason);
    const payload = Buffer.from(opened.value);
    const command = commandName(h.command);
    let fields = new Map<string, Buffer>();
    let batch: CursusBatch | null = null;
    if (isBatchPayload(payload)) {
      const b = decodeBatch(payload);
      if (!b.ok) throw new Error(b.reason);
      batch = b.value;
    } else {
      const p = decodeCommandPayload(payload);
      if (!p.ok) throw new Error(p.reason);
      fields = p.value.fields;
    }
    const text = new Map([...fields].map(([k, v]) => [k, v.toString('utf8')]));
    const req: FakeRequest = { conn, requestId: h.requestId, command, compression: h.compression, fields: text, values: fields, batch, payload, frame };
    this.requests.push(req);
    const reply = (await this.handler(req)) ?? (await this.model.handle(req));
    await this.write(conn, req, reply);
  }

  private async write(conn: FakeConn, req: FakeRequest, reply: FakeReply): Promise<void> {
    const socket = conn.socket;
    if (socket.destroyed) return;
    const compression = conn.compression;
    const frame = (kind: FrameKind, status: Status, body: Buffer[], end = false): Buffer =>
      Buffer.concat(encodeFrame({ kind, command: CommandId[req.command]!, requestId: req.requestId, status, compression, end }, body));
    if ('hold' in reply || 'none' in reply) return;
    if ('close' in reply) {
      socket.destroy();
      return;
    }
    if ('raw' in reply) {
      for (const b of reply.raw) socket.write(b);
      return;
    }
    if ('stream' in reply) {
      for await (const step of reply.stream) {
        if ('wait' in step) {
          await step.wait;
          if (socket.destroyed) return;
          continue;
        }
        socket.write(frame(FrameKind.stream, step.status ?? Status.ok, [step.payload], step.end === true));
      }
      return;
    }
    const kind = streamCommands.has(req.command) ? FrameKind.stream : FrameKind.response;
    const end = kind === FrameKind.stream;
    if ('error' in reply) {
      socket.write(frame(kind, Status.error, [encodeErrorPayload(cursusError(reply.error, reply.fields ?? [], reply.message ?? ''))], end));
      return;
    }
    const body = 'ok' in reply ? [encodeOkLine(reply.ok)] : 'json' in reply ? [encodeJsonEnvelope(reply.json)] : encodeBatch(reply.batch);
    socket.write(frame(kind, Status.ok, body, end));
    if (req.command === 'EXIT') socket.end();
  }
}

const streamCommands = new Set(['STREAM', 'READ_STREAM']);

/** An error reply (registry class and retryable). */
export function errorReply(code: string, fields: Fields = []): FakeReply {
  return { error: code, fields };
}

/** A stream step of a frame payload (status OK unless given). */
export function step(payload: Buffer, end = false, status: Status = Status.ok): StreamStep {
  return { payload, end, status };
}

/** A promise and its resolver (for scripted waits). */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}
