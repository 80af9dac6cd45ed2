// Shared fixtures for the Iggy front-end tests: a broker on a temp data dir, an IggyFrontend on a
// real TcpListener bound to 127.0.0.1:0, and a small client that speaks raw frames with the
// codec's client-side encoders (encodeRequestFrame / decodeReply / decodeEviction). Every wait has
// a deadline; nothing sleeps.

import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker, type BrokerOptions } from '../../../src/core/broker.js';
import type { Clock } from '../../../src/base/clock.js';
import { defaultNamespaceName } from '../../../src/core/catalog.js';
import { silentLogger, type Logger } from '../../../src/base/logger.js';
import { MetricsRegistry } from '../../../src/core/metrics.js';
import type { Scheduler } from '../../../src/core/scheduler.js';
import {
  CommandCode,
  FrameCommand,
  IggyFramer,
  decodeEviction,
  decodeReply,
  decodeReplyHeader,
  encodeBatch,
  encodeRequestFrame,
  iggyProtocolVersion,
  numericId,
  stringId,
  type EvictionHeader,
  type Identifier,
  type MessageInput,
  type ReplyHeader,
  type ReplyOf,
  type RequestOf,
} from '../../../src/protocols/iggy/codec/index.js';
import { IggyConnection } from '../../../src/protocols/iggy/connection.js';
import { IggyFrontend, type IggySettings } from '../../../src/protocols/iggy/frontend.js';
import { TcpListener } from '../../../src/protocols/tcp-listener.js';
import { iggySocketOptions } from '../../../src/protocols/iggy/listener.js';
import { builtinFormats } from '../../../src/server/listeners.js';

export const testScryptCost = { N: 1024, r: 8, p: 1 };
export const rootPassword = 'secret-root';
export const waitMsMax = 5_000;

type After = { after(fn: () => Promise<void> | void): void };

export interface IggyHarness {
  dataDir: string;
  broker: Broker;
  frontend: IggyFrontend;
  port: number;
  client(): Promise<IggyTestClient>;
  /** A client logged in as root. */
  root(): Promise<IggyTestClient>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  dataDir?: string;
  keepDataDir?: boolean;
  settings?: Partial<IggySettings>;
  clock?: Clock;
  scheduler?: Scheduler;
  broker?: Partial<BrokerOptions>;
  /**
   * Most tests work in stream `default` (where Kafka topics live), which a broker creates with its
   * first Kafka topic: the harness creates it up front unless this is false (a fresh broker).
   */
  defaultStream?: boolean;
  /** false: the connections get 'data' events instead of reading into the listener's buffers. */
  readInto?: boolean;
  /** The front-end's logger (default: silent). */
  logger?: Logger;
  /** The listener's deadline for a login (default: the listener's). */
  authTimeoutMs?: number;
  /** The listener's connection limit (default 100). */
  maxConnections?: number;
}

export async function startIggy(t: After, options: HarnessOptions = {}): Promise<IggyHarness> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'quartet-iggy-'));
  const broker = await Broker.open({
    formats: builtinFormats(),
    dataDir,
    maintenanceIntervalMs: 0,
    scryptCost: testScryptCost,
    rootUser: { username: 'iggy', password: rootPassword },
    ...(options.clock ? { clock: options.clock } : {}),
    ...options.broker,
  });
  if (options.defaultStream !== false && broker.catalog.getNamespace(defaultNamespaceName) === null) await broker.createNamespace(defaultNamespaceName);
  const frontend = new IggyFrontend({
    broker,
    logger: options.logger ?? silentLogger,
    ...(options.settings ? { settings: options.settings } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
  });
  await frontend.start();
  const listener = new TcpListener({
    name: 'iggy',
    addr: { host: '127.0.0.1', port: 0 },
    maxConnections: options.maxConnections ?? 100,
    logger: silentLogger,
    metrics: new MetricsRegistry(),
    connectionFactory: (socket, ctx) => new IggyConnection(frontend, socket, ctx),
    // The Iggy listener's own socket options (read buffers, half-open sockets) unless a test picks.
    ...iggySocketOptions,
    ...(options.readInto !== undefined ? { readInto: options.readInto } : {}),
    ...(options.authTimeoutMs !== undefined ? { authTimeoutMs: options.authTimeoutMs } : {}),
  });
  const { port } = await listener.start();
  frontend.setBoundAddress({ host: '127.0.0.1', port });
  const clients: IggyTestClient[] = [];
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const c of clients) c.destroy();
    await listener.stop(1_000);
    frontend.close();
    await broker.close();
  };
  t.after(async () => {
    await stop();
    if (!options.keepDataDir && options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  });
  const client = async (): Promise<IggyTestClient> => {
    const c = await IggyTestClient.connect(port);
    clients.push(c);
    return c;
  };
  return {
    dataDir,
    broker,
    frontend,
    port,
    client,
    async root() {
      const c = await client();
      await c.login('iggy', rootPassword);
      return c;
    },
    stop,
  };
}

export type Received = { kind: 'reply'; header: ReplyHeader; body: Buffer } | { kind: 'eviction'; eviction: EvictionHeader | string; raw: Buffer };

let nextClientId = 1000n;

/** A raw Iggy client over one socket. */
export class IggyTestClient {
  clientId = nextClientId++;
  session = 0n;
  requestNo = 0n;
  userId = -1;
  readonly received: Received[] = [];
  private readonly framer = new IggyFramer();
  private waiters: Array<() => void> = [];
  closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const r of this.framer.push(chunk)) {
        if (!r.ok) continue;
        const whole = Buffer.concat([r.frame.header, r.frame.body]);
        if (whole[60] === FrameCommand.eviction) this.received.push({ kind: 'eviction', eviction: decodeEviction(whole), raw: whole });
        else this.received.push({ kind: 'reply', header: decodeReplyHeader(whole), body: Buffer.from(r.frame.body) });
      }
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static connect(port: number): Promise<IggyTestClient> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port }, () => resolve(new IggyTestClient(s)));
      s.once('error', reject);
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits until `pred` holds (checked on every frame or close), or fails after the deadline. */
  async until(pred: () => boolean, what: string, ms = waitMsMax): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next frame received (in order), waiting at most `ms`. */
  async next(ms = waitMsMax): Promise<Received> {
    await this.until(() => this.received.length > 0 || this.closed, 'a frame', ms);
    const r = this.received.shift();
    if (!r) throw new Error('connection closed without a frame');
    return r;
  }

  /** Resolves when the server closed the socket. */
  async whenClosed(): Promise<void> {
    await this.until(() => this.closed, 'the connection to close');
  }

  write(chunks: readonly Buffer[]): void {
    this.socket.write(Buffer.concat(chunks));
  }

  frame<C extends CommandCode>(code: C, request: RequestOf<C>, o: { request?: bigint; session?: bigint; client?: bigint; stampChecksum?: boolean; waitMs?: number } = {}): Buffer[] {
    const isRegister = code === CommandCode.loginRegister || code === CommandCode.loginRegisterWithPat;
    const requestNo = o.request ?? (isRegister ? 0n : ++this.requestNo);
    return encodeRequestFrame(code, request, {
      client: o.client ?? this.clientId,
      request: requestNo,
      session: o.session ?? (isRegister ? 0n : this.session),
      ...(o.stampChecksum !== undefined ? { stampChecksum: o.stampChecksum } : {}),
    });
  }

  /** Sends one request and returns the next frame. */
  async raw<C extends CommandCode>(code: C, request: RequestOf<C>, o: Parameters<IggyTestClient['frame']>[2] = {}): Promise<Received> {
    this.write(this.frame(code, request, o));
    return this.next(o.waitMs);
  }

  /** Sends and decodes: the reply value, or { status } / { rejected } / { evicted }. */
  async call<C extends CommandCode>(code: C, request: RequestOf<C>, o: Parameters<IggyTestClient['frame']>[2] = {}): Promise<CallResult<ReplyOf<C>>> {
    const r = await this.raw(code, request, o);
    if (r.kind === 'eviction') return { evicted: typeof r.eviction === 'string' ? -1 : r.eviction.reason };
    if (r.header.status !== 0) {
      if (r.body.length !== 0) throw new Error('status reply with a body');
      return { status: r.header.status };
    }
    const decoded = decodeReply(code, r.body);
    if (!decoded.ok) throw new Error(`undecodable reply to ${code}: ${decoded.reason}`);
    if (decoded.value.rejected) return { rejected: decoded.value.code };
    return { value: decoded.value.value };
  }

  /** Like call, but the value or a thrown error. */
  async ok<C extends CommandCode>(code: C, request: RequestOf<C>): Promise<ReplyOf<C>> {
    const r = await this.call(code, request);
    if (!('value' in r)) throw new Error(`command ${code} failed: ${JSON.stringify(r)}`);
    return r.value;
  }

  async login(username: string, password: string): Promise<CallResult<ReplyOf<typeof CommandCode.loginRegister>>> {
    const r = await this.call(CommandCode.loginRegister, {
      versionInfo: { protocolVersion: iggyProtocolVersion, sdkName: 'quartet-test', sdkVersion: '0.0.1' },
      username,
      password,
      context: null,
    });
    if ('value' in r) {
      this.session = r.value.session;
      this.userId = r.value.userId;
    }
    return r;
  }

  async loginWithToken(token: string): Promise<CallResult<ReplyOf<typeof CommandCode.loginRegisterWithPat>>> {
    const r = await this.call(CommandCode.loginRegisterWithPat, {
      versionInfo: { protocolVersion: iggyProtocolVersion, sdkName: 'quartet-test', sdkVersion: '0.0.1' },
      token,
      context: null,
    });
    if ('value' in r) {
      this.session = r.value.session;
      this.userId = r.value.userId;
    }
    return r;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

export type CallResult<T> = { value: T } | { status: number } | { rejected: number } | { evicted: number };

export const sid = (v: number | string): Identifier => (typeof v === 'number' ? numericId(v) : stringId(v));

/** A producer batch (ids 1..n, origin timestamps `originUs` + i). */
export function batchOf(payloads: readonly (string | Buffer)[], originUs = 1_700_000_000_000_000n, headers?: Buffer): Buffer {
  const inputs: MessageInput[] = payloads.map((p, i) => ({
    id: BigInt(i + 1),
    originTimestamp: originUs + BigInt(i),
    payload: typeof p === 'string' ? Buffer.from(p) : p,
    userHeaders: headers ?? Buffer.alloc(0),
    offsetDelta: i,
  }));
  return Buffer.concat(encodeBatch(inputs));
}

export function sendRequest(stream: Identifier, topic: Identifier, payloads: readonly (string | Buffer)[], partitioning: RequestOf<typeof CommandCode.sendMessages>['partitioning'] = { kind: 'partitionId', partitionId: 0 }): RequestOf<typeof CommandCode.sendMessages> {
  return { streamId: stream, topicId: topic, partitioning, messagesCount: payloads.length, batch: batchOf(payloads) };
}

/** Polls `pred` every few ms until it holds, or fails after the deadline. */
export async function eventually(pred: () => boolean, what: string, ms = waitMsMax): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
