import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { joinGroupHandler } from '../../../../src/protocols/kafka/handlers/join-group.js';
import { kafkaOffsetScope, offsetCommitHandler } from '../../../../src/protocols/kafka/handlers/offset-commit.js';
import { offsetDeleteHandler } from '../../../../src/protocols/kafka/handlers/offset-delete.js';
import { adminHarness } from './admin-harness.js';
import { sessionReadingTopic, sessionWith } from './admin-users.js';
import { groupsHarness, settle, type GroupsHarness } from './groups-harness.js';
import { rebalanceTimeoutMs, sessionTimeoutMs } from './groups-harness.js';

/** ConsumerProtocolSubscription v0: int16 version, int32 count, int16-length topic names, null user data. */
function subscriptionOf(topics: string[]): Buffer {
  const parts = [Buffer.from([0, 0]), Buffer.alloc(4)];
  parts[1]!.writeInt32BE(topics.length);
  for (const t of topics) {
    const len = Buffer.alloc(2);
    len.writeInt16BE(Buffer.byteLength(t));
    parts.push(len, Buffer.from(t));
  }
  parts.push(Buffer.from([0xff, 0xff, 0xff, 0xff]));
  return Buffer.concat(parts);
}

async function commit(h: GroupsHarness, groupId: string, topic: string, partitions: number[]): Promise<void> {
  const res = await h.call(offsetCommitHandler, 5, { groupId, generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: topic, partitions: partitions.map((p) => ({ partitionIndex: p, committedOffset: 5, committedMetadata: null })) }] });
  assert.ok(res.topics.every((t) => t.partitions.every((p) => p.errorCode === 0)));
}

async function committed(h: GroupsHarness, groupId: string): Promise<string[]> {
  const all = await h.broker.offsets.fetchGroup(kafkaOffsetScope, groupId);
  return all.map((o) => `${h.broker.catalog.topicByInternalId(o.topicInternalId)!.name}-${o.partition}`).sort();
}

describe('OffsetDelete', () => {
  it('deletes the named partitions of a group known by its offsets, keeps the rest', async (t) => {
    const h = await groupsHarness(t, { topics: { a: 2, b: 1 } });
    await commit(h, 'g', 'a', [0, 1]);
    await commit(h, 'g', 'b', [0]);
    const res = await h.call(offsetDeleteHandler, 0, { groupId: 'g', topics: [{ name: 'a', partitions: [{ partitionIndex: 1 }, { partitionIndex: 5 }] }, { name: 'nope', partitions: [{ partitionIndex: 0 }] }] });
    assert.equal(res.errorCode, 0);
    assert.deepEqual(res.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])]), [
      ['a', [[1, 0], [5, 0]]],
      ['nope', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
    ]);
    assert.deepEqual(await committed(h, 'g'), ['a-0', 'b-0']);
  });

  it('answers GROUP_ID_NOT_FOUND for a group with neither members nor offsets', async (t) => {
    const h = await groupsHarness(t, { topics: { a: 1 } });
    const res = await h.call(offsetDeleteHandler, 0, { groupId: 'ghost', topics: [{ name: 'a', partitions: [{ partitionIndex: 0 }] }] });
    assert.deepEqual([res.errorCode, res.topics], [ErrorCode.GROUP_ID_NOT_FOUND, []]);
  });

  it('refuses the topics an active consumer group subscribes to (GROUP_SUBSCRIBED_TO_TOPIC), not the others', async (t) => {
    const h = await groupsHarness(t, { topics: { a: 1, b: 1 } });
    await commit(h, 'live', 'a', [0]);
    await commit(h, 'live', 'b', [0]);
    const joined = await settle(h, h.call(joinGroupHandler, 3, { groupId: 'live', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscriptionOf(['a']) }] }));
    assert.equal(joined.errorCode, 0);
    const res = await h.call(offsetDeleteHandler, 0, { groupId: 'live', topics: [{ name: 'a', partitions: [{ partitionIndex: 0 }] }, { name: 'b', partitions: [{ partitionIndex: 0 }] }] });
    assert.deepEqual(res.topics.map((t) => [t.name, t.partitions[0]!.errorCode]), [['a', ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC], ['b', 0]]);
    assert.deepEqual(await committed(h, 'live'), ['a-0']);
  });

  it('refuses a non-empty group of another protocol type (NON_EMPTY_GROUP)', async (t) => {
    const h = await groupsHarness(t, { topics: { a: 1 } });
    await commit(h, 'connect', 'a', [0]);
    const joined = await settle(h, h.call(joinGroupHandler, 3, { groupId: 'connect', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'connect', protocols: [{ name: 'default', metadata: Buffer.from('x') }] }));
    assert.equal(joined.errorCode, 0);
    const res = await h.call(offsetDeleteHandler, 0, { groupId: 'connect', topics: [{ name: 'a', partitions: [{ partitionIndex: 0 }] }] });
    assert.equal(res.errorCode, ErrorCode.NON_EMPTY_GROUP);
    assert.deepEqual(await committed(h, 'connect'), ['a-0']);
  });
});

describe('OffsetDelete authorization', () => {
  it('a SASL user needs read on the group\'s topics (GROUP_AUTHORIZATION_FAILED) and on each named topic (29)', async (t) => {
    const h = await adminHarness(t, { topics: { a: 1, b: 1 } });
    const a = h.broker.catalog.getTopic({ topic: 'a' })!;
    await h.broker.offsets.commit(kafkaOffsetScope, 'g', [{ topicInternalId: a.internalId, partition: 0, offset: 3 }]);
    const nobody = await sessionWith(h, 'nobody', ['read_servers']);
    const denied = await h.call(offsetDeleteHandler, 0, { groupId: 'g', topics: [{ name: 'a', partitions: [{ partitionIndex: 0 }] }] }, nobody);
    assert.equal(denied.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.equal((await h.broker.offsets.fetchGroup(kafkaOffsetScope, 'g')).length, 1, 'nothing deleted');
    const session = await sessionReadingTopic(h, 'reader', 'a');
    const res = await h.call(offsetDeleteHandler, 0, { groupId: 'g', topics: [{ name: 'b', partitions: [{ partitionIndex: 0 }] }, { name: 'a', partitions: [{ partitionIndex: 0 }] }] }, session);
    assert.deepEqual(res.topics.map((t) => [t.name, t.partitions[0]!.errorCode]), [['b', ErrorCode.TOPIC_AUTHORIZATION_FAILED], ['a', 0]]);
    assert.equal((await h.broker.offsets.fetchGroup(kafkaOffsetScope, 'g')).length, 0);
  });
});
