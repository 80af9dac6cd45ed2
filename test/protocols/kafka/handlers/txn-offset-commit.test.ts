import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { addOffsetsToTxnHandler } from '../../../../src/protocols/kafka/handlers/add-offsets-to-txn.js';
import { endTxnHandler } from '../../../../src/protocols/kafka/handlers/end-txn.js';
import { initProducerIdHandler } from '../../../../src/protocols/kafka/handlers/init-producer-id.js';
import { joinGroupHandler } from '../../../../src/protocols/kafka/handlers/join-group.js';
import { offsetFetchHandler } from '../../../../src/protocols/kafka/handlers/offset-fetch.js';
import { txnOffsetCommitHandler } from '../../../../src/protocols/kafka/handlers/txn-offset-commit.js';
import { txnHarness, type TxnHarness } from './transactions-harness.js';

type Answer = { topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; errorCode: number }> }> };

function codes(r: Answer): string[] {
  return r.topics.flatMap((t) => t.partitions.map((p) => `${t.name}/${p.partitionIndex}:${p.errorCode}`));
}

async function withGroup(h: TxnHarness, transactionalId: string, groupId = 'g') {
  const id = await h.initTxn(transactionalId);
  assert.equal((await h.call(addOffsetsToTxnHandler, 3, { ...id, groupId })).errorCode, 0);
  return id;
}

function partition(partitionIndex: number, committedOffset: number, committedMetadata: string | null = null) {
  return { partitionIndex, committedOffset, committedMetadata };
}

test('TxnOffsetCommit advertises 0-3', () => {
  assert.equal(txnOffsetCommitHandler.minVersion, 0);
  assert.equal(txnOffsetCommitHandler.maxVersion, 3);
});

test('offsets are staged at every version and land at commit, with metadata and leader epoch', async (t) => {
  const h = await txnHarness(t, { topics: { in: 2 } });
  const topicIn = h.broker.catalog.requireTopic({ namespace: 'default', topic: 'in' });
  for (let version = 0; version <= 3; version++) {
    const id = await withGroup(h, `tx-${version}`, `g${version}`);
    const r = await h.call(txnOffsetCommitHandler, version, {
      ...id,
      groupId: `g${version}`,
      topics: [{ name: 'in', partitions: [{ partitionIndex: 0, committedOffset: 5 + version, committedLeaderEpoch: 3, committedMetadata: 'meta' }, partition(1, 1)] }],
    });
    assert.deepEqual(codes(r), ['in/0:0', 'in/1:0'], `v${version}`);
    assert.equal((await h.call(endTxnHandler, 3, { ...id, committed: true })).errorCode, 0);
    const stored = await h.broker.offsets.fetch('kafka', `g${version}`, topicIn.internalId, 0);
    assert.equal(stored?.offset, 5 + version);
    assert.equal(stored?.metadata, 'meta');
    assert.equal(stored?.leaderEpoch, version >= 2 ? 3 : -1, 'the leader epoch travels from v2');
  }
});

test('a group not added with AddOffsetsToTxn is INVALID_TXN_STATE', async (t) => {
  const h = await txnHarness(t, { topics: { in: 1 } });
  const id = await h.initTxn('tx-n');
  const r = await h.call(txnOffsetCommitHandler, 3, { ...id, groupId: 'g', topics: [{ name: 'in', partitions: [partition(0, 1)] }] });
  assert.deepEqual(codes(r), [`in/0:${ErrorCode.INVALID_TXN_STATE}`]);
});

test('per-partition problems answer alone: unknown partition, metadata too large, an offset past 2^53', async (t) => {
  const h = await txnHarness(t, { topics: { in: 1 } });
  const id = await withGroup(h, 'tx-p');
  const r = await h.call(txnOffsetCommitHandler, 3, {
    ...id,
    groupId: 'g',
    topics: [
      { name: 'in', partitions: [partition(0, 4), partition(3, 1), partition(0, 2 ** 60)] },
      { name: 'nope', partitions: [partition(0, 1)] },
      { name: 'in', partitions: [partition(0, 1, 'x'.repeat(5000))] },
    ],
  });
  assert.deepEqual(codes(r), [
    'in/0:0',
    `in/3:${ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}`,
    `in/0:${ErrorCode.INVALID_COMMIT_OFFSET_SIZE}`,
    `nope/0:${ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}`,
    `in/0:${ErrorCode.OFFSET_METADATA_TOO_LARGE}`,
  ]);
});

test('an empty group id is INVALID_GROUP_ID; a fenced producer INVALID_PRODUCER_EPOCH; another producer id INVALID_PRODUCER_ID_MAPPING', async (t) => {
  const h = await txnHarness(t, { topics: { in: 1 } });
  const id = await withGroup(h, 'tx-e');
  const empty = await h.call(txnOffsetCommitHandler, 3, { ...id, groupId: '', topics: [{ name: 'in', partitions: [partition(0, 1)] }] });
  assert.deepEqual(codes(empty), [`in/0:${ErrorCode.INVALID_GROUP_ID}`]);
  const wrong = await h.call(txnOffsetCommitHandler, 3, { ...id, producerId: id.producerId + 77, groupId: 'g', topics: [{ name: 'in', partitions: [partition(0, 1)] }] });
  assert.deepEqual(codes(wrong), [`in/0:${ErrorCode.INVALID_PRODUCER_ID_MAPPING}`]);
  await h.call(initProducerIdHandler, 4, { transactionalId: 'tx-e', transactionTimeoutMs: 60_000 });
  for (let version = 0; version <= 3; version++) {
    const fenced = await h.call(txnOffsetCommitHandler, version, { ...id, groupId: 'g', topics: [{ name: 'in', partitions: [partition(0, 1)] }] });
    assert.deepEqual(codes(fenced), [`in/0:${ErrorCode.INVALID_PRODUCER_EPOCH}`], `v${version}`);
  }
});

test('v3 member fields are checked by the group coordinator; without them a group with members still accepts the commit', async (t) => {
  const h = await txnHarness(t, { topics: { in: 1 } });
  // A live member in generation 1 of group 'g' (v5: the first JoinGroup answers MEMBER_ID_REQUIRED).
  const joinRequest = {
    groupId: 'g',
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
  };
  const first = await h.call(joinGroupHandler, 5, joinRequest);
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  const pending = h.call(joinGroupHandler, 5, { ...joinRequest, memberId: first.memberId });
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    h.groupScheduler.advance(1);
  }
  const join = await pending;
  assert.equal(join.errorCode, 0);
  const id = await withGroup(h, 'tx-m');
  const body = { ...id, groupId: 'g', topics: [{ name: 'in', partitions: [partition(0, 1)] }] };
  const unknownMember = await h.call(txnOffsetCommitHandler, 3, { ...body, memberId: 'someone-else', generationId: join.generationId });
  assert.deepEqual(codes(unknownMember), [`in/0:${ErrorCode.UNKNOWN_MEMBER_ID}`]);
  const badGeneration = await h.call(txnOffsetCommitHandler, 3, { ...body, memberId: join.memberId, generationId: join.generationId + 1 });
  assert.deepEqual(codes(badGeneration), [`in/0:${ErrorCode.ILLEGAL_GENERATION}`]);
  // No member fields (v2, or v3 with defaults): Kafka's isTransactional exemption.
  assert.deepEqual(codes(await h.call(txnOffsetCommitHandler, 2, body)), ['in/0:0']);
  assert.deepEqual(codes(await h.call(txnOffsetCommitHandler, 3, body)), ['in/0:0']);
});

test('OffsetFetch require_stable answers UNSTABLE_OFFSET_COMMIT while a transaction holds a staged offset', async (t) => {
  const h = await txnHarness(t, { topics: { in: 2 } });
  const id = await withGroup(h, 'tx-stable', 'gs');
  await h.call(txnOffsetCommitHandler, 3, { ...id, groupId: 'gs', topics: [{ name: 'in', partitions: [partition(0, 7)] }] });
  const fetch = (version: number, requireStable: boolean) =>
    h.call(offsetFetchHandler, version, version >= 8
      ? { groups: [{ groupId: 'gs', topics: [{ name: 'in', partitionIndexes: [0, 1] }] }], requireStable }
      : { groupId: 'gs', topics: [{ name: 'in', partitionIndexes: [0, 1] }], requireStable });
  // The decoded response has every field of the schema; v8 answers per group.
  const parts = (r: { topics?: Answer['topics']; groups?: Array<{ topics: Answer['topics'] }> }, version: number) =>
    (version >= 8 ? r.groups![0]!.topics : r.topics!)[0]!.partitions.map((p) => [p.partitionIndex, (p as { committedOffset?: number }).committedOffset, p.errorCode]);
  for (const version of [7, 8]) {
    // Only the partition with a staged offset is unstable; without the flag nothing changes.
    assert.deepEqual(parts(await fetch(version, true), version), [[0, -1, ErrorCode.UNSTABLE_OFFSET_COMMIT], [1, -1, 0]], `v${version}`);
    assert.deepEqual(parts(await fetch(version, false), version), [[0, -1, 0], [1, -1, 0]], `v${version} without require_stable`);
  }
  assert.equal((await h.call(endTxnHandler, 3, { ...id, committed: true })).errorCode, 0);
  assert.deepEqual(parts(await fetch(7, true), 7), [[0, 7, 0], [1, -1, 0]], 'committed: stable again');
});
