// Consumer groups (notes §8 "Consumer groups"; features CONSUMER_GROUP, GROUP_DEAD_LETTERS) over
// the core queue groups (core/groups/queue.ts, scope `felix`): a poll claims up to max_records of
// one shard for the group's visibility timeout, waiting up to wait_ms when none is ready; ack
// settles a record for good, nack gives it back at once; a record delivered deliveryAttemptsMax
// times goes to the dead letters, which are listed, discarded or redriven. Claims name no member
// (Felix v1 polls name none): a claim lives by its deadline. The group's state is durable.
//
// The core group id is `<tenant>/<namespace>/<group>`: one group of a namespace may consume several
// of its streams, each shard tracked apart. A settle of a record the group does not hold claimed
// (its claim lapsed, or it was never delivered) is answered `error` "no claim on offset N", a
// discard or redrive of an offset that is not a dead letter "no dead letter at offset N"; the
// stream goes on.

import type { Topic } from '../../../core/catalog.js';
import type { GroupError } from '../../../core/groups/model.js';
import { claimRecordsMax, claimWaitMsMax, type QueueRecordRef } from '../../../core/groups/queue.js';
import { Feature, ErrorText, type MessageOf } from '../codec/index.js';
import { FelixFailure, felixHandler, type FelixHandler, type FelixStreamContext } from '../handler.js';

type GroupRequest = MessageOf<'group_poll' | 'group_ack' | 'group_nack' | 'group_dead_letters' | 'group_discard' | 'group_redrive'>;

function groupIdOf(m: GroupRequest): string {
  return `${m.tenantId}/${m.namespace}/${m.group}`;
}

function groupFailure(error: GroupError): FelixFailure {
  return new FelixFailure(error === 'closed' || error === 'unavailable' ? ErrorText.serverOverloaded : `group request refused: ${error}`);
}

function target(ctx: FelixStreamContext, m: GroupRequest): { groupId: string; ref: (offset: bigint) => QueueRecordRef; topic: Topic } {
  const topic = ctx.services.streams.resolveShard(ctx, m, m.shard, 'poll');
  return { groupId: groupIdOf(m), topic, ref: (offset) => ({ topicInternalId: topic.internalId, partition: m.shard, offset: Number(offset) }) };
}

async function poll(ctx: FelixStreamContext, m: MessageOf<'group_poll'>): Promise<void> {
  const { groupId, topic } = target(ctx, m);
  const result = await ctx.services.queues.claim({
    groupId,
    memberId: null,
    topic,
    partitions: [m.shard],
    recordsMax: Math.max(1, Math.min(m.maxRecords, claimRecordsMax)),
    waitMs: Number(m.waitMs > BigInt(claimWaitMsMax) ? BigInt(claimWaitMsMax) : m.waitMs),
    signal: ctx.connection.closed,
  });
  if (result.error !== 'none') throw groupFailure(result.error);
  const records = result.claims.map((c) => ({ offset: BigInt(c.offset), payload: c.record.value ?? Buffer.alloc(0), attempts: c.deliveryAttempt }));
  ctx.send({ type: 'group_records', records, requestId: m.requestId });
}

async function settle(ctx: FelixStreamContext, m: MessageOf<'group_ack' | 'group_nack'>): Promise<void> {
  const { groupId, ref } = target(ctx, m);
  const how = m.type === 'group_ack' ? ({ kind: 'ack' } as const) : ({ kind: 'nack', delayMs: 0 } as const);
  const result = await ctx.services.queues.settle(groupId, null, [ref(m.offset)], how);
  if (result.error !== 'none') throw groupFailure(result.error);
  if (result.results[0] !== 'none') throw new FelixFailure(`no claim on offset ${m.offset}`);
  ctx.send({ type: 'cache_ok', requestId: m.requestId });
}

async function deadLetters(ctx: FelixStreamContext, m: MessageOf<'group_dead_letters'>): Promise<void> {
  const { groupId, topic } = target(ctx, m);
  const result = await ctx.services.queues.deadLetters(groupId, topic.internalId, m.shard);
  if (result.error !== 'none') throw groupFailure(result.error);
  ctx.send({ type: 'group_dead_letter_list', offsets: result.offsets.map((o) => BigInt(o)), requestId: m.requestId });
}

async function discardOrRedrive(ctx: FelixStreamContext, m: MessageOf<'group_discard' | 'group_redrive'>): Promise<void> {
  const { groupId, ref } = target(ctx, m);
  const queues = ctx.services.queues;
  const result = m.type === 'group_discard' ? await queues.discard(groupId, ref(m.offset)) : await queues.redrive(groupId, ref(m.offset));
  if (result.error !== 'none') throw groupFailure(result.error);
  if (!result.found) throw new FelixFailure(`no dead letter at offset ${m.offset}`);
  ctx.send({ type: 'cache_ok', requestId: m.requestId });
}

export const groupHandlers: readonly FelixHandler[] = [
  felixHandler(['group_poll'], poll, Feature.consumerGroup),
  felixHandler(['group_ack', 'group_nack'], settle, Feature.consumerGroup),
  felixHandler(['group_dead_letters'], deadLetters, Feature.groupDeadLetters),
  felixHandler(['group_discard', 'group_redrive'], discardOrRedrive, Feature.groupDeadLetters),
];
