// A channel: a queue of requests carried one lifecycle at a time over at most one connection to
// one broker address, (re)connected on demand with exponential backoff.
//
// - A request waits in the queue until the connection is free (spec §1: "The Go client serializes
//   request lifecycles on each connection; use multiple connections for parallel operations").
// - No connection: the channel opens one (connect, negotiate), retrying up to `attemptsMax` times with a delay of backoffMinMs × 2^(attempt-1),
//   capped at backoffMaxMs, ±20 % jitter. A broker that refuses the negotiation is not retried.
//   When every attempt fails, the requests waiting then fail with the last error. Before each
//   request the owner's `prepare` hook runs (AUTH on a connection not yet authenticated).
// - A request's timeout counts from submit(). One still in the queue is dropped; one on the wire
//   ends its connection (the reply can no longer be matched to a later request), and the next
//   request connects again. A stream's idle timeout restarts with each frame.
// - A connection that drops fails the request on it with CursusConnectionError (retryable: the
//   outcome is unknown, the client does not resend it); requests still queued go on a new one.

import { encodeCommandPayload, type Compression } from '../../protocols/cursus/codec/index.js';
import type tls from 'node:tls';
import { CursusConnection, type Exchange, type Expect, type ReplyFrame } from './connection.js';
import { CursusClosedError, CursusConnectionError, CursusError, CursusTimeoutError, isCursusClientError, type CursusClientError } from './errors.js';
import type { ReconnectOptions } from './options.js';
import { backoffDelayMs } from '../common/backoff.js';

const emptyCommandPayload = Buffer.concat(encodeCommandPayload({}));

export interface ChannelOptions {
  tls?: boolean | tls.ConnectionOptions;
  connectTimeoutMs: number;
  compressions: readonly Compression[];
  payloadBytesMax: number;
  socketBufferBytes: number;
  reconnect: Required<ReconnectOptions>;
  random: () => number;
}

/** What the channel tells its owner. */
export interface ChannelHooks {
  /**
   * Runs before each request (unless the job says `prepare: false`): authenticates a connection
   * that has not yet authenticated with the current credentials. A rejection fails that request.
   */
  prepare(conn: CursusConnection): Promise<void>;
  connected(addr: string, compression: Compression): void;
  disconnected(addr: string, err: CursusClientError): void;
  reconnecting(addr: string, attempt: number, delayMs: number, err: CursusClientError): void;
  asyncError(err: CursusError): void;
}

/** One request in a channel. */
export interface Job {
  /** The command's name, for errors. */
  name: string;
  command: number;
  payload: readonly Buffer[];
  expect: Expect;
  onFrame(frame: ReplyFrame): void;
  /** Whole lifecycle, from submit (null: none). */
  timeoutMs: number | null;
  /** Longest wait for the next frame of a stream, from submit (null: none). */
  idleTimeoutMs?: number | null;
  /** false: skip the hook's preparation (the AUTH request itself). */
  prepare?: false;
  /** The connection the request goes out on, just before it is sent. */
  onStart?(conn: CursusConnection): void;
}

interface Pending {
  job: Job;
  resolve(): void;
  reject(err: Error): void;
  settled: boolean;
  running: boolean;
  timer: NodeJS.Timeout | null;
  idleTimer: NodeJS.Timeout | null;
}

export class Channel {
  private readonly queue: Pending[] = [];
  private conn: CursusConnection | null = null;
  private running: Pending | null = null;
  private pumping = false;
  private connecting: Promise<CursusConnection> | null = null;
  private closed = false;
  private cancelSleep: (() => void) | null = null;

  constructor(
    private addr: { host: string; port: number },
    private readonly options: ChannelOptions,
    private readonly hooks: ChannelHooks,
  ) {}

  get address(): string {
    return `${this.addr.host}:${this.addr.port}`;
  }

  /** Requests queued or under way. */
  get load(): number {
    return this.queue.length + (this.running !== null ? 1 : 0);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The open connection, if any. */
  get connection(): CursusConnection | null {
    return this.conn;
  }

  /** Queues a request; resolves when its lifecycle ended, rejects with why it did not. */
  submit(job: Job): Promise<void> {
    if (this.closed) return Promise.reject(new CursusClosedError());
    return new Promise<void>((resolve, reject) => {
      const p: Pending = { job, resolve, reject, settled: false, running: false, timer: null, idleTimer: null };
      if (job.timeoutMs !== null) p.timer = setTimeout(() => this.expire(p, job.timeoutMs!), job.timeoutMs);
      this.armIdle(p);
      this.queue.push(p);
      void this.pump();
    });
  }

  /**
   * Points the channel at another address (a redirect): the current connection is closed once
   * idle, and the next request connects there.
   */
  moveTo(addr: { host: string; port: number }): void {
    if (addr.host === this.addr.host && addr.port === this.addr.port) return;
    this.addr = addr;
    if (this.running === null) this.dropConnection();
  }

  /** Ends the lifecycle under way (a stream the caller stops): its connection is closed. */
  abort(job: Job, err: CursusClientError = new CursusClosedError('request cancelled')): void {
    const i = this.queue.findIndex((p) => p.job === job);
    if (i >= 0) {
      const [p] = this.queue.splice(i, 1);
      this.settle(p!, err);
      return;
    }
    if (this.running?.job === job) this.conn?.destroy(err);
  }

  /** Fails what is queued or under way and closes the connection. */
  close(err: CursusClientError = new CursusClosedError()): void {
    if (this.closed) return;
    this.closed = true;
    this.cancelSleep?.();
    for (const p of this.queue.splice(0)) this.settle(p, err);
    const conn = this.conn;
    this.conn = null;
    conn?.destroy(err);
  }

  /**
   * Ends the channel politely: what is queued fails with CursusClosedError, an idle connection
   * sends EXIT (spec §1) and waits up to `timeoutMs` for its OK, then everything is closed.
   */
  async exit(exitCommand: number, timeoutMs: number): Promise<void> {
    if (this.closed) return;
    for (const p of this.queue.splice(0)) this.settle(p, new CursusClosedError());
    const conn = this.conn;
    if (conn !== null && conn.isOpen && this.running === null && !conn.busy) {
      let timer: NodeJS.Timeout | null = null;
      const exited = conn.run({ command: exitCommand, payload: [emptyCommandPayload], expect: 'response', onFrame: () => {} });
      const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([exited.catch(() => {}), timedOut]);
      if (timer !== null) clearTimeout(timer);
    }
    this.close();
  }

  /** Closes the connection if no lifecycle is under way (it is opened again on demand). */
  dropConnection(): void {
    const conn = this.conn;
    this.conn = null;
    conn?.destroy();
  }

  private armIdle(p: Pending): void {
    const ms = p.job.idleTimeoutMs;
    if (ms === null || ms === undefined) return;
    if (p.idleTimer !== null) clearTimeout(p.idleTimer);
    p.idleTimer = setTimeout(() => this.expire(p, ms), ms);
  }

  private expire(p: Pending, ms: number): void {
    if (p.settled) return;
    const err = new CursusTimeoutError(p.job.name, ms);
    if (p.running) {
      // The reply can no longer be told from a later request's: the connection goes.
      this.conn?.destroy(err);
      return;
    }
    const i = this.queue.indexOf(p);
    if (i >= 0) this.queue.splice(i, 1);
    this.settle(p, err);
  }

  private settle(p: Pending, err: Error | null): void {
    if (p.settled) return;
    p.settled = true;
    if (p.timer !== null) clearTimeout(p.timer);
    if (p.idleTimer !== null) clearTimeout(p.idleTimer);
    if (err === null) p.resolve();
    else p.reject(err);
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        let conn: CursusConnection;
        try {
          conn = await this.connected();
        } catch (err) {
          const e = isCursusClientError(err) ? err : new CursusConnectionError(String(err));
          for (const p of this.queue.splice(0)) this.settle(p, e);
          continue;
        }
        const p = this.queue.shift();
        if (p === undefined) break;
        if (p.settled) continue;
        if (p.job.prepare !== false) {
          try {
            await this.hooks.prepare(conn);
          } catch (err) {
            this.settle(p, err instanceof Error ? err : new Error(String(err)));
            continue;
          }
          if (p.settled) continue;
        }
        await this.runOn(conn, p);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async runOn(conn: CursusConnection, p: Pending): Promise<void> {
    p.running = true;
    this.running = p;
    const exchange: Exchange = {
      command: p.job.command,
      payload: p.job.payload,
      expect: p.job.expect,
      onFrame: (frame) => {
        if (p.settled) return;
        this.armIdle(p);
        try {
          p.job.onFrame(frame);
        } catch (err) {
          // A handler that throws ends its request; a stream would go on, so its connection goes.
          this.settle(p, err instanceof Error ? err : new Error(String(err)));
          if (!frame.end) conn.destroy();
        }
      },
    };
    try {
      p.job.onStart?.(conn);
      await conn.run(exchange);
      this.settle(p, null);
    } catch (err) {
      this.settle(p, err instanceof Error ? err : new Error(String(err)));
    } finally {
      p.running = false;
      this.running = null;
      // Moved while the request ran (a redirect): the next request connects to the new address.
      if (this.conn === conn && conn.address !== this.address) this.dropConnection();
    }
  }

  /** Opens the connection now (connect and negotiate, with backoff) instead of at the first request. */
  open(): Promise<CursusConnection> {
    if (this.closed) return Promise.reject(new CursusClosedError());
    return this.connected(true);
  }

  /** The open connection, or a new one (with backoff between attempts); one attempt at a time. */
  private connected(explicit = false): Promise<CursusConnection> {
    if (this.conn !== null && this.conn.isOpen) return Promise.resolve(this.conn);
    if (this.connecting === null) {
      const p = this.establish(explicit);
      this.connecting = p;
      void p.then(
        () => (this.connecting = null),
        () => (this.connecting = null),
      );
    }
    return this.connecting;
  }

  private async establish(explicit: boolean): Promise<CursusConnection> {
    const { attemptsMax } = this.options.reconnect;
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new CursusClosedError();
      const addr = this.addr;
      try {
        const conn = await CursusConnection.open({
          host: addr.host,
          port: addr.port,
          tls: this.options.tls,
          connectTimeoutMs: this.options.connectTimeoutMs,
          compressions: this.options.compressions,
          payloadBytesMax: this.options.payloadBytesMax,
          socketBufferBytes: this.options.socketBufferBytes,
        });
        if (this.closed) {
          conn.destroy(new CursusClosedError());
          throw new CursusClosedError();
        }
        conn.onAsyncError = (e) => this.hooks.asyncError(e);
        conn.onClose((e) => {
          if (this.conn === conn) this.conn = null;
          this.hooks.disconnected(conn.address, e);
        });
        this.conn = conn;
        this.hooks.connected(conn.address, conn.compression);
        return conn;
      } catch (err) {
        const e: CursusClientError = isCursusClientError(err) ? err : new CursusConnectionError(String(err));
        // The broker refused (negotiation, AUTH), or the channel closed: it would refuse again.
        if (this.closed || e instanceof CursusError || e instanceof CursusClosedError || attempt >= attemptsMax) throw e;
        if (!explicit && this.queue.every((p) => p.settled)) throw e;
        const delayMs = this.backoffMs(attempt);
        this.hooks.reconnecting(`${addr.host}:${addr.port}`, attempt, delayMs, e);
        await this.sleep(delayMs);
      }
    }
  }

  private backoffMs(attempt: number): number {
    return backoffDelayMs(attempt, this.options.reconnect, this.options.random);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.cancelSleep === done) this.cancelSleep = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.cancelSleep = done;
    });
  }
}
