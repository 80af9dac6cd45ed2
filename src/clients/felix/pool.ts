// A pool of QUIC connections and authenticated request streams on them (notes §4: the reference
// client keeps publish, cache and event pools, each `connections × streams per connection`).
//
// Slots fill on first use: a call takes the next stream slot in turn (round robin), opening its
// connection and stream when empty. A stream or connection that ends empties its slots, and the
// next call that lands there opens them again, so a broker restart costs the calls that were on
// the wire, not the pool. Opening a connection is retried with backoff (connectAttemptsMax).

import type { Logger } from '../../base/logger.js';
import { backoffDelayMs } from '../common/backoff.js';
import { FelixConnection } from './connection.js';
import { FelixClosedError, FelixConnectionError, isFelixClientError } from './errors.js';
import type { PoolSize, ResolvedOptions } from './options.js';
import type { AuthOffer, RequestStream } from './request-stream.js';

export class Pool {
  private readonly connections: Array<Promise<FelixConnection> | null>;
  private readonly streams: Array<Promise<RequestStream> | null>;
  private nextStream = 0;
  private nextConnection = 0;
  private closed = false;
  private readonly open = new Set<FelixConnection>();

  constructor(
    readonly name: string,
    private readonly size: PoolSize,
    private readonly options: ResolvedOptions,
    private readonly offer: AuthOffer,
    private readonly logger: Logger,
  ) {
    this.connections = new Array<Promise<FelixConnection> | null>(size.connections).fill(null);
    this.streams = new Array<Promise<RequestStream> | null>(size.connections * size.streamsPerConnection).fill(null);
  }

  /** The next request stream in turn, opened (and authenticated) if need be. */
  stream(): Promise<RequestStream> {
    if (this.closed) return Promise.reject(new FelixClosedError());
    const i = this.nextStream;
    this.nextStream = (i + 1) % this.streams.length;
    return this.streamAt(i);
  }

  /** Every stream slot's stream, opened (used to learn what the broker advertises). */
  streamAt(i: number): Promise<RequestStream> {
    const existing = this.streams[i];
    if (existing !== null && existing !== undefined) return existing;
    const opened = this.openOn(Math.floor(i / this.size.streamsPerConnection)).then((o) => o.stream);
    this.streams[i] = opened;
    opened.then(
      (s) => s.onClose(() => this.streams[i] === opened && (this.streams[i] = null)),
      () => this.streams[i] === opened && (this.streams[i] = null),
    );
    return opened;
  }

  /** A new stream of its own on the next connection: the caller closes it (a long poll, a subscribe). */
  async ownStream(): Promise<{ connection: FelixConnection; stream: RequestStream }> {
    if (this.closed) throw new FelixClosedError();
    const i = this.nextConnection;
    this.nextConnection = (i + 1) % this.connections.length;
    return this.openOn(i);
  }

  /**
   * A stream on connection slot `i`. A connection found gone when the stream is opened (the
   * broker closed it and the news had not arrived) is replaced once: nothing was sent on it.
   */
  private async openOn(i: number): Promise<{ connection: FelixConnection; stream: RequestStream }> {
    const connection = await this.connectionAt(i);
    try {
      return { connection, stream: await connection.openStream(this.offer) };
    } catch (err) {
      if (connection.isOpen || this.closed) throw err;
      const fresh = await this.connectionAt(i);
      return { connection: fresh, stream: await fresh.openStream(this.offer) };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const conns = [...this.open];
    this.open.clear();
    this.connections.fill(null);
    this.streams.fill(null);
    await Promise.all(conns.map((c) => c.close()));
  }

  private connectionAt(i: number): Promise<FelixConnection> {
    const existing = this.connections[i];
    if (existing !== null && existing !== undefined) return existing;
    const opened = this.connectWithBackoff();
    this.connections[i] = opened;
    opened.then(
      (c) => {
        if (this.closed) return void c.close();
        this.open.add(c);
        c.onClose(() => {
          this.open.delete(c);
          if (this.connections[i] === opened) this.connections[i] = null;
        });
      },
      () => this.connections[i] === opened && (this.connections[i] = null),
    );
    return opened;
  }

  private async connectWithBackoff(): Promise<FelixConnection> {
    let last: unknown = null;
    for (let attempt = 1; attempt <= this.options.connectAttemptsMax; attempt++) {
      if (this.closed) throw new FelixClosedError();
      try {
        return await FelixConnection.open(this.options, this.logger);
      } catch (err) {
        last = err;
        if (attempt === this.options.connectAttemptsMax) break;
        const delayMs = backoffDelayMs(attempt, this.options, this.options.random);
        this.logger.debug('felix: connect failed; retrying', { pool: this.name, attempt, delayMs, error: String(err) });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
    throw isFelixClientError(last) ? last : new FelixConnectionError(`connect failed: ${String(last)}`, { cause: last });
  }
}
