import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuartetError } from '../../../../src/base/errors.js';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { kafkaOffsetScope, offsetCommitHandler } from '../../../../src/protocols/kafka/handlers/offset-commit.js';
import { offsetFetchHandler } from '../../../../src/protocols/kafka/handlers/offset-fetch.js';
import type { KafkaRequestContext } from '../../../../src/protocols/kafka/handlers/types.js';
import { formGroup, groupsHarness, type GroupsHarness } from './groups-harness.js';

function errors(res: { topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[] }): [string, number, number][] {
  return res.topics.flatMap((t) => t.partitions.map((p): [string, number, number] => [t.name, p.partitionIndex, p.errorCode]));
}

async function committed(h: GroupsHarness, groupId: string, topic: string, partition: number): Promise<[number, number, string]> {
  const res = await h.call(offsetFetchHandler, 5, { groupId, topics: [{ name: topic, partitionIndexes: [partition] }] });
  const p = res.topics[0]!.partitions[0]!;
  return [p.committedOffset, p.committedLeaderEpoch, p.metadata ?? 'null'];
}

describe('OffsetCommit handler', () => {
  it('a simple consumer (generation -1, no member) commits into an unknown group', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 3 } });
    const res = await h.call(offsetCommitHandler, 2, {
      groupId: 'simple',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      retentionTimeMs: 60_000,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 42, committedMetadata: 'm0' }, { partitionIndex: 2, committedOffset: 7, committedMetadata: null }] }],
    });
    assert.deepEqual(errors(res), [['orders', 0, 0], ['orders', 2, 0]]);
    assert.deepEqual(await committed(h, 'simple', 'orders', 0), [42, -1, 'm0']);
    assert.deepEqual(await committed(h, 'simple', 'orders', 2), [7, -1, '']);
    const stored = await h.broker.offsets.fetchGroup(kafkaOffsetScope, 'simple');
    assert.equal(stored.length, 2);
  });

  it('v0 (no generation, no member) commits too', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    const res = await h.call(offsetCommitHandler, 0, { groupId: 'g0', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 5, committedMetadata: '' }] }] });
    assert.deepEqual(errors(res), [['orders', 0, 0]]);
    assert.deepEqual(await committed(h, 'g0', 'orders', 0), [5, -1, '']);
  });

  it('unknown topics and partitions answer UNKNOWN_TOPIC_OR_PARTITION; the rest is stored', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 2 } });
    const res = await h.call(offsetCommitHandler, 8, {
      groupId: 'g',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [
        { name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: 3, committedMetadata: null }, { partitionIndex: 2, committedOffset: 3, committedMetadata: null }, { partitionIndex: -1, committedOffset: 3, committedMetadata: null }] },
        { name: 'missing', partitions: [{ partitionIndex: 0, committedOffset: 3, committedMetadata: null }] },
      ],
    });
    assert.deepEqual(errors(res), [
      ['orders', 1, ErrorCode.NONE],
      ['orders', 2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ['orders', -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ['missing', 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    assert.deepEqual(await committed(h, 'g', 'orders', 1), [3, -1, '']);
  });

  it('metadata over 4096 bytes answers OFFSET_METADATA_TOO_LARGE for that partition only', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 2 } });
    const res = await h.call(offsetCommitHandler, 3, {
      groupId: 'g',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: 'x'.repeat(4097) }, { partitionIndex: 1, committedOffset: 1, committedMetadata: 'y'.repeat(4096) }] }],
    });
    assert.deepEqual(errors(res), [['orders', 0, ErrorCode.OFFSET_METADATA_TOO_LARGE], ['orders', 1, ErrorCode.NONE]]);
    assert.deepEqual(await committed(h, 'g', 'orders', 0), [-1, -1, '']);
  });

  it('a negative offset is stored and handed back, as Kafka does (KafkaJS commits -2 to reset); one past 2^53 is INVALID_COMMIT_OFFSET_SIZE', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 2 } });
    const res = await h.call(offsetCommitHandler, 2, { groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: -2, committedMetadata: null }, { partitionIndex: 1, committedOffset: 2 ** 60, committedMetadata: null }] }] });
    assert.deepEqual(errors(res), [['orders', 0, ErrorCode.NONE], ['orders', 1, ErrorCode.INVALID_COMMIT_OFFSET_SIZE]]);
    assert.deepEqual((await committed(h, 'g', 'orders', 0))[0], -2);
  });

  it('v6+ stores the committed leader epoch; OffsetFetch v5+ returns it', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    await h.call(offsetCommitHandler, 6, { groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 9, committedLeaderEpoch: 4, committedMetadata: 'e' }] }] });
    assert.deepEqual(await committed(h, 'g', 'orders', 0), [9, 4, 'e']);
  });

  it('members commit with their generation; stale generations and strangers are refused', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 2 } });
    const { generationId, memberIds } = await formGroup(h, 'g', 1);
    const memberId = memberIds[0]!;
    const commit = (version: number, over: { generationIdOrMemberEpoch?: number; memberId?: string; groupInstanceId?: string | null }) =>
      h.call(offsetCommitHandler, version, {
        groupId: 'g',
        generationIdOrMemberEpoch: generationId,
        memberId,
        ...over,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 11, committedMetadata: null }, { partitionIndex: 5, committedOffset: 1, committedMetadata: null }] }],
      });
    assert.deepEqual(errors(await commit(5, {})), [['orders', 0, ErrorCode.NONE], ['orders', 5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    assert.deepEqual(errors(await commit(5, { generationIdOrMemberEpoch: generationId + 1 })), [['orders', 0, ErrorCode.ILLEGAL_GENERATION], ['orders', 5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    assert.deepEqual(errors(await commit(7, { memberId: 'ghost' }))[0], ['orders', 0, ErrorCode.UNKNOWN_MEMBER_ID]);
    // A simple commit into a group with members is refused (only members commit there).
    assert.deepEqual(errors(await commit(2, { generationIdOrMemberEpoch: -1, memberId: '' }))[0], ['orders', 0, ErrorCode.UNKNOWN_MEMBER_ID]);
    assert.deepEqual(errors(await commit(0, {}))[0], ['orders', 0, ErrorCode.UNKNOWN_MEMBER_ID]);
    // A generation for a group this coordinator does not know: a group we lost.
    const lost = await h.call(offsetCommitHandler, 2, { groupId: 'lost', generationIdOrMemberEpoch: 3, memberId: 'm', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: null }] }] });
    assert.deepEqual(errors(lost), [['orders', 0, ErrorCode.ILLEGAL_GENERATION]]);
  });

  it('when no partition exists the group is not consulted', async (t) => {
    const h = await groupsHarness(t);
    const res = await h.call(offsetCommitHandler, 2, { groupId: 'lost', generationIdOrMemberEpoch: 3, memberId: 'm', topics: [{ name: 'nope', partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: null }] }] });
    assert.deepEqual(errors(res), [['nope', 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
  });

  it('a storage failure answers COORDINATOR_NOT_AVAILABLE (retriable) for the stored partitions', async (t) => {
    const h = await groupsHarness(t, { topics: { orders: 1 } });
    h.broker.offsets.commit = () => Promise.reject(new QuartetError('storage_error', 'disk full'));
    const res = await h.call(offsetCommitHandler, 8, { groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: null }] }] });
    assert.deepEqual(errors(res), [['orders', 0, ErrorCode.COORDINATOR_NOT_AVAILABLE]]);
  });

  it('the error response puts the code on every partition', (t) => {
    void t;
    const res = offsetCommitHandler.errorResponse!(
      { groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1, topics: [{ name: 'a', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }] },
      ErrorCode.NOT_COORDINATOR,
      {} as KafkaRequestContext,
    );
    assert.deepEqual(res.topics?.[0]?.partitions, [{ partitionIndex: 0, errorCode: ErrorCode.NOT_COORDINATOR }]);
  });
});
