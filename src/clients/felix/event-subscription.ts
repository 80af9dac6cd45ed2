// What stream subscriptions and cache watches share (notes §6): the request goes out on a
// one-shot request stream of an event-pool connection and is answered there (`subscribed`,
// `cache_watch_started`), while the broker opens an event stream back on the same connection,
// `event_stream_hello{subscription_id}` first. The client picks the subscription id it asks for
// and attaches to it before sending, since the hello may come before the answer; a broker that
// assigns another id is followed. Resuming after a loss is a bounded loop with backoff.

import type { CacheWatchStarted, FelixMessage, Subscribed } from '../../protocols/felix/codec/index.js';
import type { FelixClient } from './client.js';
import type { EventSink, FelixConnection } from './connection.js';
import { isFelixClientError, type FelixClientError } from './errors.js';
import { backoffDelayMs } from './pool.js';

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
      await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(n, client.options)));
    }
  }
  return last instanceof Error ? last : null;
}

/** One event sink per established stream: frames until the first failure or end, then `lost` once. */
export function onceSink(where: () => string, stopped: () => boolean, onFrame: (f: Parameters<EventSink['onFrame']>[0]) => FelixClientError | null, lost: (err: FelixClientError | null, where: string) => void): EventSink {
  let done = false;
  return {
    onFrame: (f) => {
      if (done || stopped()) return;
      const err = onFrame(f);
      if (err !== null) {
        done = true;
        lost(err, where());
      }
    },
    onEnd: (err) => {
      if (done || stopped()) return;
      done = true;
      lost(err, where());
    },
  };
}
