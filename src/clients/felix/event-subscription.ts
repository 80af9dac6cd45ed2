// What stream subscriptions and cache watches share (notes §6): the request goes out on a
// one-shot request stream of an event-pool connection and is answered there (`subscribed`,
// `cache_watch_started`), while the broker opens an event stream back on the same connection,
// `event_stream_hello{subscription_id}` first. The client picks the subscription id it asks for
// and attaches to it before sending, since the hello may come before the answer; a broker that
// assigns another id is followed. Resuming after a loss is a bounded loop with backoff
// (ResumingSubscription): the event 'end' carries what ended it, or null after close().

import { EventEmitter } from 'node:events';
import type { CacheWatchStarted, FelixFrame, FelixMessage, Subscribed } from '../../protocols/felix/codec/index.js';
import type { FelixClient } from './client.js';
import type { EventSink, FelixConnection } from './connection.js';
import { FelixConnectionError, isFelixClientError, type FelixClientError } from './errors.js';
import { backoffDelayMs } from '../common/backoff.js';

export type Established<T extends 'subscribed' | 'cache_watch_started'> = { answer: Extract<FelixMessage, { type: T }>; detach: () => void };

/**
 * Sends the request `build(subscriptionId)` on a fresh stream of an event connection and waits for
 * `accepts`; the event stream of the subscription goes to `sink(conn)`. The request stream is
 * closed once answered. On failure nothing stays attached.
 */
export async function establish<T extends 'subscribed' | 'cache_watch_started'>(
  client: FelixClient,
  build: (subscriptionId: bigint) => FelixMessage,
  accepts: T,
  timeoutMs: number,
  sink: (conn: FelixConnection) => EventSink,
  check: (stream: { capabilities: { flags: number; features: number } }, message: FelixMessage) => void = () => {},
): Promise<Established<T>> {
  const { connection: conn, stream } = await client.ownStream('event');
  const chosenId = client.requestId();
  let detach = (): void => {};
  try {
    const message = build(chosenId);
    check(stream, message);
    detach = conn.attach(chosenId, sink(conn));
    const reply = await stream.request(message, null, [accepts], timeoutMs);
    if (reply.kind !== 'message' || reply.message.type !== accepts) throw new Error(`unreachable: ${accepts} expected`);
    const answer = reply.message as Extract<FelixMessage, { type: T }>;
    const givenId = (answer as Subscribed | CacheWatchStarted).subscriptionId;
    if (givenId !== chosenId) {
      detach();
      detach = conn.attach(givenId, sink(conn));
    }
    return { answer, detach };
  } catch (err) {
    detach();
    throw err;
  } finally {
    stream.close();
  }
}

/**
 * Runs `attempt` until it succeeds, up to `attemptsMax` times, with backoff between attempts that
 * failed for a retryable reason (a lost connection, a timeout, an overload). Returns null on
 * success, else the error that stopped it.
 */
export async function retrying(client: FelixClient, attemptsMax: number, stopped: () => boolean, attempt: () => Promise<void>): Promise<FelixClientError | Error | null> {
  let last: unknown = null;
  for (let n = 1; n <= attemptsMax && !stopped(); n++) {
    try {
      await attempt();
      return null;
    } catch (err) {
      last = err;
      if (!isFelixClientError(err) || !err.retryable) break;
      await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(n, client.options, client.options.random)));
    }
  }
  return last instanceof Error ? last : null;
}

export interface ResumeOptions {
  /** Establish again after the event stream or the connection is lost (default true). */
  resume?: boolean;
  /** Attempts per resume before it ends (default 10). */
  resumeAttemptsMax?: number;
}

/** A subscription or watch that establishes itself again, from where it stood, when its event stream is lost. */
export abstract class ResumingSubscription extends EventEmitter {
  protected detach: (() => void) | null = null;
  protected closed = false;
  private ended = false;

  constructor(
    protected readonly client: FelixClient,
    private readonly resumeOptions: ResumeOptions,
    /** The event emitted after a resume, with what again() returned. */
    private readonly resumedEvent: string,
  ) {
    super();
  }

  /** Ends it and its event stream. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.detach?.();
    this.detach = null;
    this.client.untrack(this);
    this.finish(null);
  }

  /** Establishes it again from where it stands; returns what the resumed event reports. */
  protected abstract again(): Promise<object>;

  /** One frame of the event stream; an error ends that stream (and resumes). */
  protected abstract onFrame(f: FelixFrame): FelixClientError | null;

  /** The sink of an event stream established on `conn`. */
  protected sink(conn: FelixConnection, what: string): EventSink {
    let done = false;
    const lost = (err: FelixClientError | null): void => {
      done = true;
      this.lost(err ?? new FelixConnectionError(`the event stream of ${what} on ${conn.where} ended`));
    };
    return {
      onFrame: (f) => {
        if (done || this.closed) return;
        const err = this.onFrame(f);
        if (err !== null) lost(err);
      },
      onEnd: (err) => {
        if (!done && !this.closed) lost(err);
      },
    };
  }

  private lost(cause: FelixClientError): void {
    this.detach?.();
    this.detach = null;
    if (this.resumeOptions.resume === false) return this.finish(cause);
    void this.resume(cause);
  }

  private async resume(cause: FelixClientError): Promise<void> {
    let info: object = {};
    const failed = await retrying(this.client, this.resumeOptions.resumeAttemptsMax ?? 10, () => this.closed, async () => {
      info = await this.again();
    });
    if (this.closed) return;
    if (failed === null) return void this.emit(this.resumedEvent, info);
    this.finish(isFelixClientError(failed) ? failed : cause);
  }

  private finish(err: FelixClientError | null): void {
    if (this.ended) return;
    this.ended = true;
    this.emit('end', err);
  }
}
