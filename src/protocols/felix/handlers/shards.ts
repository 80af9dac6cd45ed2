// stream_shards (feature STREAM_SHARDS): how many shards a stream has, its topic's partition
// count; 0 for a stream that does not exist (notes §8), or that the stream's tenant does not own.

import { Feature, type MessageOf } from '../codec/index.js';
import { felixHandler, type FelixHandler, type FelixStreamContext } from '../handler.js';

function streamShards(ctx: FelixStreamContext, m: MessageOf<'stream_shards'>): void {
  const topic = m.tenantId === ctx.tenantId ? ctx.services.streams.find(m) : null;
  ctx.send({ type: 'stream_shards_view', shards: topic?.partitions ?? 0, requestId: m.requestId });
}

export const shardHandlers: readonly FelixHandler[] = [felixHandler(['stream_shards'], streamShards, Feature.streamShards)];
