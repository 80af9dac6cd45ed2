// The request path of CursusClient: a small pool of channels per broker address, dedicated
// channels for long lifecycles (streams, long polls, heartbeats), AUTH on each connection, replies
// turned into payloads or CursusErrors, and redirects.
//
// Redirects (spec §7 "Leader Redirect", §4 FIND_COORDINATOR): a request refused with
// `NOT_LEADER leader=host:port` or `NOT_COORDINATOR host= port=` is sent once more to that
// address. The client remembers the address for the request's route (the group of a group
// command, the transactional id of a transaction command, the topic-partition of a data command,
// the aggregate of an event-store command, the cluster leader for the rest), so later requests of
// that route go there directly; a route whose address stops answering falls back to the bootstrap
// address. A request on a dedicated channel moves the channel itself.

import { EventEmitter } from 'node:events';
import {
  CommandId,
  Status,
  compressionName,
  decodeErrorPayload,
  decodeJsonEnvelope,
  decodeOkLine,
  encodeCommandPayload,
  payloadBytesMax,
  type Compression,
} from '../../protocols/cursus/codec/index.js';
import { Channel, type ChannelHooks, type ChannelOptions } from './channel.js';
import type { CursusConnection, Expect, ReplyFrame } from './connection.js';
import { CursusClosedError, CursusConnectionError, CursusError, CursusProtocolError, redirectOf, type CursusClientError } from './errors.js';
import { compressionId, defaultCompressions, type CursusClientOptions, type CursusClientState, type CursusCredentials } from './options.js';
import { OkFields } from './replies.js';

export interface RequestOptions {
  /** Overrides the client's requestTimeoutMs for this request. */
  timeoutMs?: number;
  /** Send on this dedicated connection (client.dedicated()) instead of the pool. */
  via?: DedicatedConnection;
}

/** What the request path takes besides RequestOptions. */
interface SendOptions extends RequestOptions {
  /** Added to the timeout (a CONSUME's long-poll). */
  extraTimeoutMs?: number;
  /** No overall timeout (a STREAM): only the idle one. */
  endless?: boolean;
  /** Longest wait for the next frame of a stream. */
  idleTimeoutMs?: number | null;
  /** The connection a stream runs on, and how to stop it. */
  started?: (conn: CursusConnection, stop: () => void) => void;
}

/** A connection of its own, outside the pool (client.dedicated()). */
export type DedicatedConnection = Channel;

/** A field value as the client takes it: text, bytes, a number or a boolean (undefined: left out). */
export type FieldValue = string | Buffer | number | boolean | undefined;

/** CRQ2 fields from a record of values: numbers in decimal, booleans as true/false. */
export function crq2Fields(values: Readonly<Record<string, FieldValue>>): Record<string, string | Buffer> {
  const out: Record<string, string | Buffer> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v)) throw new RangeError(`${k} must be an integer (got ${v})`);
      out[k] = String(v);
    } else if (typeof v === 'boolean') {
      out[k] = v ? 'true' : 'false';
    } else {
      out[k] = v;
    }
  }
  return out;
}

/** Commands routed by group, by transactional id, by topic-partition and by aggregate. */
const groupCommands = new Set(['JOIN_GROUP', 'SYNC_GROUP', 'LEAVE_GROUP', 'HEARTBEAT', 'COMMIT_OFFSET', 'BATCH_COMMIT', 'FETCH_OFFSET', 'GROUP_STATUS', 'REGISTER_GROUP']);
const txnCommands = new Set(['INIT_PRODUCER_ID', 'BEGIN_TXN', 'TXN_PUBLISH', 'SEND_OFFSETS_TO_TXN', 'END_TXN', 'TXN_STATUS']);
const partitionCommands = new Set(['PUBLISH', 'CONSUME', 'STREAM']);
const aggregateCommands = new Set(['APPEND_STREAM', 'READ_STREAM', 'STREAM_VERSION', 'SAVE_SNAPSHOT', 'READ_SNAPSHOT']);
/** Remembered redirects, at most. */
const routesMax = 1024;

/** The route a request belongs to, for redirects. */
export function routeOf(command: string, fields: Readonly<Record<string, string | Buffer>>): string {
  const f = (k: string): string => String(fields[k] ?? '');
  if (groupCommands.has(command)) return `group:${f('group')}`;
  if (txnCommands.has(command)) return `txn:${f('transactional_id')}`;
  if (partitionCommands.has(command)) return `partition:${f('topic')}/${f('partition')}`;
  if (aggregateCommands.has(command)) return `aggregate:${f('topic')}/${f('key')}`;
  return 'leader';
}

/** Collects a request's reply frames and turns them into its result (or its CursusError). */
interface Collector<T> {
  onFrame(frame: ReplyFrame): void;
  result(): T;
}

/** One response frame: its payload, or the CursusError it carries. */
function responseCollector(command: string): Collector<Buffer> {
  let reply: ReplyFrame | null = null;
  return {
    onFrame: (frame) => (reply = frame),
    result: () => {
      if (reply === null) throw new CursusProtocolError(`${command}: no reply frame`);
      if (reply.status === Status.error) throw errorOf(command, reply.payload);
      return reply.payload;
    },
  };
}

export function errorOf(command: string, payload: Buffer): CursusClientError {
  const e = decodeErrorPayload(payload);
  return e.ok ? new CursusError(e.value, command) : new CursusProtocolError(`${command}: bad error payload: ${e.reason}`);
}

/**
 * Events: 'connect' (addr, compression name), 'disconnect' (addr, error), 'reconnect' (attempt,
 * delay ms, addr, error), 'redirect' (command, addr), 'publishError' (CursusError for an acks=0
 * publish). No 'error' event: failures surface on the requests.
 */
export class ClientCore extends EventEmitter {
  readonly host: string;
  readonly port: number;
  protected readonly requestTimeoutMs: number;
  protected readonly streamIdleTimeoutMs: number;
  private readonly channelOptions: ChannelOptions;
  private readonly poolSize: number;
  private readonly followRedirects: boolean;
  private readonly pools = new Map<string, Channel[]>();
  private readonly dedicatedChannels = new Set<Channel>();
  private readonly routes = new Map<string, { host: string; port: number }>();
  private credentials: CursusCredentials | null;
  private closed = false;
  private readonly hooks: ChannelHooks;

  constructor(options: CursusClientOptions = {}) {
    super();
    const [addrHost, addrPort] = splitAddr(options.addr ?? '127.0.0.1:9000');
    this.host = options.host ?? addrHost;
    this.port = options.port ?? addrPort;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.streamIdleTimeoutMs = options.streamIdleTimeoutMs ?? 30_000;
    this.poolSize = options.poolSize ?? 4;
    if (!(this.poolSize >= 1)) throw new RangeError('poolSize must be at least 1');
    this.followRedirects = options.followRedirects ?? true;
    this.credentials = options.credentials ?? null;
    const compressions = (options.compression ?? defaultCompressions).map(compressionId);
    if (compressions.length === 0 || new Set(compressions).size !== compressions.length) throw new RangeError('compression: name each algorithm once, at least one');
    this.channelOptions = {
      tls: options.tls,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      compressions,
      payloadBytesMax: Math.min(options.payloadBytesMax ?? payloadBytesMax, payloadBytesMax),
      socketBufferBytes: options.socketBufferBytes ?? 2 * 1024 * 1024,
      reconnect: options.reconnect === false ? { attemptsMax: 1, backoffMinMs: 0, backoffMaxMs: 0 } : { attemptsMax: 5, backoffMinMs: 100, backoffMaxMs: 5_000, ...(options.reconnect ?? {}) },
      random: options.random ?? Math.random,
    };
    this.hooks = {
      prepare: (conn) => this.authenticate(conn),
      connected: (addr, compression: Compression) => this.emit('connect', addr, compressionName(compression)),
      disconnected: (addr, err) => this.emit('disconnect', addr, err),
      reconnecting: (addr, attempt, delayMs, err) => this.emit('reconnect', attempt, delayMs, addr, err),
      asyncError: (err) => this.emit('publishError', err),
    };
  }

  get state(): CursusClientState {
    if (this.closed) return 'closed';
    for (const list of this.pools.values()) if (list.some((c) => c.connection !== null)) return 'ready';
    return 'idle';
  }

  /** The principal connections authenticate as (AUTH), or null. */
  get principal(): string | null {
    return this.credentials?.principal ?? null;
  }

  /**
   * Opens a pooled connection now (connect, negotiate) and, with credentials, authenticates it.
   * Requests connect on their own; this surfaces a wrong address, version or token early.
   */
  async connect(options?: RequestOptions): Promise<{ address: string; compression: string }> {
    if (this.closed) throw new CursusClosedError();
    const channel = this.pooled('leader');
    const conn = await channel.open();
    if (this.credentials !== null) await this.auth(this.credentials.principal, this.credentials.token, { ...options, via: channel });
    return { address: conn.address, compression: compressionName(conn.compression) };
  }

  /**
   * A connection of its own for long lifecycles (a STREAM, long polls, heartbeats), to the
   * bootstrap address unless told otherwise; close it with `closeDedicated`.
   */
  dedicated(addr?: { host: string; port: number }): DedicatedConnection {
    if (this.closed) throw new CursusClosedError();
    const ch = new Channel(addr ?? { host: this.host, port: this.port }, this.channelOptions, this.hooks);
    this.dedicatedChannels.add(ch);
    return ch;
  }

  /** Ends a dedicated connection (EXIT when idle). */
  async closeDedicated(ch: DedicatedConnection): Promise<void> {
    this.dedicatedChannels.delete(ch);
    await ch.exit(CommandId['EXIT']!, 1_000);
  }

  /** Ends every connection (EXIT on the idle ones); pending and later requests fail with CursusClosedError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const all = [...this.dedicatedChannels, ...[...this.pools.values()].flat()];
    this.dedicatedChannels.clear();
    this.pools.clear();
    await Promise.allSettled(all.map((c) => c.exit(CommandId['EXIT']!, 1_000)));
  }

  // -------------------------------------------------------------------------------------------
  // Sending

  /** A CRQ2 command whose reply is an OK line. */
  async callText(command: string, values: Readonly<Record<string, FieldValue>>, options?: RequestOptions): Promise<OkFields> {
    const fields = crq2Fields(values);
    return okOf(command, await this.execute(command, fields, encodeCommandPayload(fields), 'response', () => responseCollector(command), options));
  }

  /** A CRQ2 command whose reply is a JSON envelope. */
  async callJson(command: string, values: Readonly<Record<string, FieldValue>>, options?: RequestOptions): Promise<Record<string, unknown>> {
    const fields = crq2Fields(values);
    const payload = await this.execute(command, fields, encodeCommandPayload(fields), 'response', () => responseCollector(command), options);
    return jsonOf(command, payload);
  }

  /** A command with a raw reply payload (a CBV2 batch), or none for `expect: 'none'`. */
  protected async callRaw(
    command: string,
    routeFields: Readonly<Record<string, string | Buffer>>,
    payload: readonly Buffer[],
    expect: 'response' | 'none',
    options?: SendOptions,
  ): Promise<Buffer | null> {
    if (expect === 'none') {
      await this.execute(command, routeFields, payload, 'none', () => ({ onFrame: () => {}, result: () => null }), options);
      return null;
    }
    return this.execute(command, routeFields, payload, 'response', () => responseCollector(command), options);
  }

  /**
   * A command answered with stream frames (kind 5): `onFrame` sees each frame of status OK; the
   * promise settles at the END frame (rejecting with the CursusError of an ERROR frame). `started`
   * gets the connection the stream runs on (to pause it while the caller is behind).
   */
  protected async callStream(
    command: string,
    values: Readonly<Record<string, FieldValue>>,
    onFrame: (frame: ReplyFrame) => void,
    options: SendOptions,
  ): Promise<void> {
    const fields = crq2Fields(values);
    await this.execute(
      command,
      fields,
      encodeCommandPayload(fields),
      'stream',
      () => {
        let error: CursusClientError | null = null;
        return {
          onFrame: (frame) => {
            if (frame.status === Status.error) error = errorOf(command, frame.payload);
            else onFrame(frame);
          },
          result: () => {
            if (error !== null) throw error;
          },
        };
      },
      options,
    );
  }

  /** Sends with the route's redirect followed once; `collect` makes a fresh collector per attempt. */
  private async execute<T>(
    command: string,
    routeFields: Readonly<Record<string, string | Buffer>>,
    payload: readonly Buffer[],
    expect: Expect,
    collect: () => Collector<T>,
    options: SendOptions | undefined,
  ): Promise<T> {
    const id = CommandId[command];
    if (id === undefined) throw new RangeError(`unknown Cursus command ${command}`);
    const via = options?.via;
    const route = via === undefined ? routeOf(command, routeFields) : null;
    for (let redirected = false; ; redirected = true) {
      if (this.closed) throw new CursusClosedError();
      const channel = via ?? this.pooled(route!);
      const collector = collect();
      const timeoutMs = options?.endless === true ? null : (options?.timeoutMs ?? this.requestTimeoutMs) + (options?.extraTimeoutMs ?? 0);
      const job = {
        name: command,
        command: id,
        payload,
        expect,
        onFrame: (f: ReplyFrame) => collector.onFrame(f),
        timeoutMs,
        idleTimeoutMs: options?.idleTimeoutMs ?? null,
        onStart: (conn: CursusConnection) => options?.started?.(conn, () => channel.abort(job)),
      };
      try {
        await channel.submit(job);
        return collector.result();
      } catch (err) {
        const to = this.followRedirects && !redirected ? redirectOf(err) : null;
        if (to === null) {
          if (route !== null && err instanceof CursusConnectionError) this.routes.delete(route);
          throw err;
        }
        if (via !== undefined) via.moveTo(to);
        else this.remember(route!, to);
        this.emit('redirect', command, `${to.host}:${to.port}`);
      }
    }
  }

  private remember(route: string, addr: { host: string; port: number }): void {
    this.routes.delete(route);
    this.routes.set(route, addr);
    if (this.routes.size > routesMax) this.routes.delete(this.routes.keys().next().value!);
  }

  /** A pooled channel for the route's address: an idle one, a new one, or the least loaded. */
  private pooled(route: string): Channel {
    if (this.closed) throw new CursusClosedError();
    const addr = this.routes.get(route) ?? { host: this.host, port: this.port };
    const key = `${addr.host}:${addr.port}`;
    let list = this.pools.get(key);
    if (list === undefined) {
      list = [];
      this.pools.set(key, list);
    }
    const idle = list.find((c) => c.load === 0);
    if (idle !== undefined) return idle;
    if (list.length < this.poolSize) {
      const ch = new Channel(addr, this.channelOptions, this.hooks);
      list.push(ch);
      return ch;
    }
    return list.reduce((a, b) => (b.load < a.load ? b : a));
  }

  // -------------------------------------------------------------------------------------------
  // Authentication (spec §8)

  /**
   * AUTH principal= token=: authenticates this client's connections (each new one sends AUTH
   * before its first request). Resolves with the principal the broker accepted.
   */
  async auth(principal: string, token: string, options?: RequestOptions): Promise<{ principal: string; authenticated: boolean }> {
    const same = this.credentials !== null && this.credentials.principal === principal && this.credentials.token === token;
    const creds: CursusCredentials = same ? this.credentials! : { principal, token };
    const fields = crq2Fields({ principal, token });
    const channel = options?.via ?? this.pooled('leader');
    const collector = responseCollector('AUTH');
    let conn: CursusConnection | null = null;
    await channel.submit({
      name: 'AUTH',
      command: CommandId['AUTH']!,
      payload: encodeCommandPayload(fields),
      expect: 'response',
      onFrame: (f) => collector.onFrame(f),
      timeoutMs: options?.timeoutMs ?? this.requestTimeoutMs,
      prepare: false,
      onStart: (c) => (conn = c),
    });
    const reply = okOf('AUTH', collector.result());
    this.credentials = creds;
    if (conn !== null) (conn as CursusConnection).authenticatedAs = creds;
    return { principal: reply.string('principal'), authenticated: reply.bool('authenticated') };
  }

  /** AUTH on a connection that has not yet authenticated with the current credentials. */
  private async authenticate(conn: CursusConnection): Promise<void> {
    const creds = this.credentials;
    if (creds === null || conn.authenticatedAs === creds) return;
    const collector = responseCollector('AUTH');
    let timer: NodeJS.Timeout | null = null;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new CursusConnectionError(`AUTH on ${conn.address}: no reply within ${this.channelOptions.connectTimeoutMs} ms`);
        conn.destroy(err);
        reject(err);
      }, this.channelOptions.connectTimeoutMs);
    });
    try {
      const fields = crq2Fields({ principal: creds.principal, token: creds.token });
      await Promise.race([conn.run({ command: CommandId['AUTH']!, payload: encodeCommandPayload(fields), expect: 'response', onFrame: (f) => collector.onFrame(f) }), timeout]);
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
    collector.result();
    conn.authenticatedAs = creds;
  }
}

export function okOf(command: string, payload: Buffer): OkFields {
  const line = decodeOkLine(payload);
  if (!line.ok) throw new CursusProtocolError(`${command} reply: ${line.reason}`);
  return new OkFields(command, line.value);
}

export function jsonOf(command: string, payload: Buffer): Record<string, unknown> {
  const v = decodeJsonEnvelope(payload);
  if (!v.ok) throw new CursusProtocolError(`${command} reply: ${v.reason}`);
  return v.value;
}

/** "host:port" (or "[v6]:port"). */
export function splitAddr(addr: string): [string, number] {
  const i = addr.lastIndexOf(':');
  if (i <= 0) throw new RangeError(`address ${JSON.stringify(addr)} is not host:port`);
  const host = addr.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  const port = Number(addr.slice(i + 1));
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new RangeError(`address ${JSON.stringify(addr)} has no valid port`);
  return [host, port];
}
