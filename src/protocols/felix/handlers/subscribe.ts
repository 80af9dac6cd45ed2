// subscribe (notes §6, §8 "Subscribing"): checks the stream, shard and start position, opens the
// event stream, and starts the subscription (event-streams.ts). The order is the reference's:
// open the unidirectional stream and write event_stream_hello, then answer `subscribed` on the
// request stream, then send history; the request stream then ends (subscribe streams are
// one-shot). Start positions: "latest" (the next record written), "earliest" (the log start),
// {"offset":n} (subscribe_cursor_error too_old below the log start, in_future past the end, with
// the nearest available offset; the stream goes on). A connection holds at most
// subscriptionsPerConnectionMax subscriptions ("max subscriptions per connection exceeded").

import type { Writable } from 'node:stream';
import { ErrorText, Flag, encodeMessage, peerSupports, type MessageOf } from '../codec/index.js';
import { FelixFailure, felixHandler, type FelixHandler, type FelixStreamContext } from '../handler.js';
import { writeChunks } from '../write-chunks.js';

async function subscribe(ctx: FelixStreamContext, m: MessageOf<'subscribe'>): Promise<void> {
  const { broker, streams, events } = ctx.services;
  const shard = m.shard ?? 0;
  const topic = streams.resolveShard(ctx, m, shard, 'poll');
  const position = (await broker.reads.openSettled(topic, shard)).position();
  const live = position.lastStableOffset;
  let start: number;
  if (m.start === undefined || m.start === 'latest') start = live;
  else if (m.start === 'earliest') start = position.logStartOffset;
  else {
    const requested = m.start.offset;
    if (requested < BigInt(position.logStartOffset)) return ctx.send({ type: 'subscribe_cursor_error', reason: 'too_old', requested, available: BigInt(position.logStartOffset) });
    if (requested > BigInt(live)) return ctx.send({ type: 'subscribe_cursor_error', reason: 'in_future', requested, available: BigInt(live) });
    start = Number(requested);
  }
  if (!ctx.connection.addSubscription()) throw new FelixFailure(ErrorText.maxSubscriptions);
  const subscriptionId = m.subscriptionId ?? events.subscriptionId();
  let out: Writable;
  try {
    out = ctx.connection.openUni();
  } catch (error) {
    ctx.connection.removeSubscription();
    ctx.services.logger.debug('felix could not open an event stream', { error: String(error) });
    throw new FelixFailure(ErrorText.subscriberLaneFull);
  }
  out.on('error', (error: Error) => ctx.services.logger.debug('felix event stream failed', { error: String(error) }));
  writeChunks(out, encodeMessage({ type: 'event_stream_hello', subscriptionId }));
  ctx.send({ type: 'subscribed', subscriptionId, startOffset: BigInt(start), liveOffset: BigInt(live) });
  ctx.finish();
  events.start({
    topic,
    shard,
    start,
    out,
    offsets: peerSupports(ctx.peer.flags, Flag.eventBatchOffsets),
    perSubscriber: peerSupports(ctx.peer.flags, Flag.binaryEventBatchShared) ? null : subscriptionId,
    closed: ctx.connection.closed,
    ended: () => ctx.connection.removeSubscription(),
  });
}

export const subscribeHandlers: readonly FelixHandler[] = [felixHandler(['subscribe'], subscribe)];
