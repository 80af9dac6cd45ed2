// ApiVersions, Metadata, ListOffsets, OffsetForLeaderEpoch and DeleteRecords handlers.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKey } from '../../../../src/protocols/kafka/codec/api-keys.js';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { zeroUuid } from '../../../../src/protocols/kafka/codec/reader.js';
import { apiVersionsHandler } from '../../../../src/protocols/kafka/handlers/api-versions.js';
import { deleteRecordsHandler } from '../../../../src/protocols/kafka/handlers/delete-records.js';
import { fetchHandler } from '../../../../src/protocols/kafka/handlers/fetch.js';
import { kafkaHandlers } from '../../../../src/protocols/kafka/handlers/index.js';
import { listOffsetsHandler } from '../../../../src/protocols/kafka/handlers/list-offsets.js';
import { metadataHandler } from '../../../../src/protocols/kafka/handlers/metadata.js';
import { offsetForLeaderEpochHandler } from '../../../../src/protocols/kafka/handlers/offset-for-leader-epoch.js';
import { produceHandler } from '../../../../src/protocols/kafka/handlers/produce.js';
import { batchOf, dataHarness, type DataHarness } from './data-harness.js';

async function produce(h: DataHarness, topic: string, partition: number, records: Array<{ key: string; value: string; timestamp?: number }>) {
  const r = await h.ask(produceHandler, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: partition, records: batchOf(records) }] }] });
  assert.equal(r.responses[0]!.partitionResponses[0]!.errorCode, 0);
}

describe('ApiVersions', () => {
  it('advertises exactly the registry, every range from 0, at every version', async (t) => {
    const h = await dataHarness(t);
    const expected = [...kafkaHandlers].sort((a, b) => a.apiKey - b.apiKey).map((x) => ({ apiKey: x.apiKey, minVersion: x.minVersion, maxVersion: x.maxVersion }));
    for (const version of [0, 1, 2, 3]) {
      const r = await h.ask(apiVersionsHandler, version, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
      assert.equal(r.errorCode, 0);
      assert.deepEqual(r.apiKeys.map((k) => ({ ...k })), expected);
    }
    for (const x of kafkaHandlers) assert.equal(x.minVersion, 0, `API ${x.apiKey} min version`);
    const produce = expected.find((k) => k.apiKey === ApiKey.Produce)!;
    assert.deepEqual([produce.minVersion, produce.maxVersion], [0, 9]);
  });
});

describe('Metadata', () => {
  it('describes this node, the cluster and every topic (null list v1+, empty list v0)', async (t) => {
    const h = await dataHarness(t, { topics: { a: 2, b: 1 } });
    for (const [version, topics] of [[0, []], [1, null], [9, null], [12, null]] as const) {
      const r = await h.ask(metadataHandler, version, { topics, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      assert.deepEqual(r.brokers.map((b) => [b.nodeId, b.host, b.port]), [[1, '127.0.0.1', 19092]]);
      if (version >= 2) assert.equal(r.clusterId, 'test-cluster');
      if (version >= 1) assert.equal(r.controllerId, 1);
      const a = r.topics.find((x) => x.name === 'a')!;
      assert.equal(r.topics.length, 2);
      assert.deepEqual(a.partitions.map((p) => [p.partitionIndex, p.leaderId, p.replicaNodes, p.isrNodes, p.errorCode]), [
        [0, 1, [1], [1], 0],
        [1, 1, [1], [1], 0],
      ]);
      if (version >= 7) assert.equal(a.partitions[0]!.leaderEpoch, 0);
      if (version >= 10) assert.deepEqual(a.topicId, h.broker.catalog.getTopic({ topic: 'a' })!.uuid);
    }
    const none = await h.ask(metadataHandler, 4, { topics: [], allowAutoTopicCreation: true });
    assert.equal(none.topics.length, 0, 'an empty list means no topics from v1');
  });

  it('auto-creates unknown topics with the default partition count unless the request or the setting forbids it', async (t) => {
    const h = await dataHarness(t);
    const created = await h.ask(metadataHandler, 12, { topics: [{ name: 'fresh', topicId: zeroUuid }], allowAutoTopicCreation: true });
    assert.deepEqual([created.topics[0]!.errorCode, created.topics[0]!.partitions.length], [0, 2]);
    assert.equal(h.broker.catalog.getTopic({ topic: 'fresh' })!.partitions, 2);
    const refused = await h.ask(metadataHandler, 4, { topics: [{ name: 'not-asked' }], allowAutoTopicCreation: false });
    assert.equal(refused.topics[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(h.broker.catalog.getTopic({ topic: 'not-asked' }), null);
    const v1 = await h.ask(metadataHandler, 1, { topics: [{ name: 'old-client' }] });
    assert.equal(v1.topics[0]!.errorCode, 0, 'below v4 creation is always allowed');
  });

  it('does not auto-create when the setting is off', async (t) => {
    const h = await dataHarness(t, { settings: { autoCreateTopics: false } });
    const r = await h.ask(metadataHandler, 12, { topics: [{ name: 'x', topicId: zeroUuid }], allowAutoTopicCreation: true });
    assert.equal(r.topics[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('answers INVALID_TOPIC_EXCEPTION for names Kafka does not allow, and UNKNOWN_TOPIC_ID for unknown ids', async (t) => {
    const h = await dataHarness(t, { topics: { known: 1 } });
    const r = await h.ask(metadataHandler, 12, {
      topics: [{ name: 'bad name!', topicId: zeroUuid }, { name: '..', topicId: zeroUuid }, { name: 'x'.repeat(250), topicId: zeroUuid }, { name: null, topicId: Buffer.alloc(16, 7) }, { name: null, topicId: h.broker.catalog.getTopic({ topic: 'known' })!.uuid }],
      allowAutoTopicCreation: true,
    });
    assert.deepEqual(r.topics.map((x) => x.errorCode), [ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.UNKNOWN_TOPIC_ID, 0]);
    assert.equal(r.topics[4]!.name, 'known');
  });
});

describe('ListOffsets', () => {
  it('answers earliest, latest, by timestamp, max timestamp, and the v0 form', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    const t0 = 1_700_000_000_000;
    await produce(h, 'orders', 0, [{ key: 'a', value: '1', timestamp: t0 }, { key: 'b', value: '2', timestamp: t0 + 100 }]);
    await produce(h, 'orders', 0, [{ key: 'c', value: '3', timestamp: t0 + 50 }, { key: 'd', value: '4', timestamp: t0 + 300 }]);
    const ask = async (version: number, timestamp: number, isolationLevel = 0) =>
      (await h.ask(listOffsetsHandler, version, { replicaId: -1, isolationLevel, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, timestamp, currentLeaderEpoch: -1, maxNumOffsets: 1 }] }] })).topics[0]!.partitions[0]!;
    assert.deepEqual([(await ask(7, -2)).offset, (await ask(7, -1)).offset, (await ask(7, -1, 1)).offset], [0, 4, 4]);
    const byTime = await ask(7, t0 + 60);
    assert.deepEqual([byTime.offset, byTime.timestamp, byTime.leaderEpoch], [1, t0 + 100, 0]);
    const inSecondBatch = await ask(1, t0 + 200);
    assert.deepEqual([inSecondBatch.offset, inSecondBatch.timestamp], [3, t0 + 300]);
    assert.deepEqual([(await ask(7, t0 + 1000)).offset, (await ask(7, t0 + 1000)).timestamp], [-1, -1]);
    const max = await ask(7, -3);
    assert.deepEqual([max.offset, max.timestamp], [3, t0 + 300]);
    assert.deepEqual((await ask(0, -1)).oldStyleOffsets, [4]);
    assert.deepEqual((await ask(0, -2)).oldStyleOffsets, [0]);
    const unknown = await h.ask(listOffsetsHandler, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'nope', partitions: [{ partitionIndex: 0, timestamp: -1 }] }] });
    assert.equal(unknown.topics[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});

describe('OffsetForLeaderEpoch', () => {
  it('answers the high watermark for epoch 0 and undefined for other epochs', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    await produce(h, 'orders', 0, [{ key: 'a', value: '1' }, { key: 'b', value: '2' }]);
    const ask = async (version: number, leaderEpoch: number, currentLeaderEpoch = -1, topic = 'orders') =>
      (await h.ask(offsetForLeaderEpochHandler, version, { replicaId: -1, topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch, leaderEpoch }] }] })).topics[0]!.partitions[0]!;
    for (const version of [0, 2, 4]) {
      const r = await ask(version, 0);
      assert.deepEqual([r.errorCode, r.endOffset], [0, 2]);
      if (version >= 1) assert.equal(r.leaderEpoch, 0);
    }
    const later = await ask(3, 5);
    assert.deepEqual([later.errorCode, later.leaderEpoch, later.endOffset], [0, -1, -1]);
    assert.equal((await ask(2, 0, 3)).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal((await ask(2, 0, 0)).errorCode, 0);
    assert.equal((await ask(2, 0, -1, 'nope')).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});

describe('DeleteRecords', () => {
  it('advances the log start; a fetch below it is OFFSET_OUT_OF_RANGE; -1 means the high watermark', async (t) => {
    const h = await dataHarness(t, { topics: { orders: 1 } });
    await produce(h, 'orders', 0, [{ key: 'a', value: '1' }, { key: 'b', value: '2' }]);
    await produce(h, 'orders', 0, [{ key: 'c', value: '3' }]);
    const del = async (offset: number, version = 2) =>
      (await h.ask(deleteRecordsHandler, version, { topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset }] }], timeoutMs: 1000 })).topics[0]!.partitions[0]!;
    const first = await del(2, 0);
    assert.deepEqual([first.errorCode, first.lowWatermark], [0, 2]);
    assert.equal((await del(9)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    const fetched = await h.ask(fetchHandler, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'orders', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [], rackId: '',
    });
    assert.deepEqual([fetched.responses[0]!.partitions[0]!.errorCode, fetched.responses[0]!.partitions[0]!.logStartOffset], [ErrorCode.OFFSET_OUT_OF_RANGE, 2]);
    const all = await del(-1, 1);
    assert.deepEqual([all.errorCode, all.lowWatermark], [0, 3]);
    const listed = await h.ask(listOffsetsHandler, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, timestamp: -2 }] }] });
    assert.equal(listed.topics[0]!.partitions[0]!.offset, 3);
  });
});
