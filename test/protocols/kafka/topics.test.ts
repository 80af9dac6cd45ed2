// Kafka names of topics of every namespace (docs/mapping.md, src/protocols/kafka/topics.ts): a
// topic `orders` of namespace (Iggy stream) `s1` is the Kafka topic `s1.orders`; the data path,
// offsets and administration all resolve that name, and every response names the topic so.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../src/protocols/kafka/codec/errors.js';
import { zeroUuid } from '../../../src/protocols/kafka/codec/reader.js';
import { createTopicsHandler } from '../../../src/protocols/kafka/handlers/create-topics.js';
import { deleteRecordsHandler } from '../../../src/protocols/kafka/handlers/delete-records.js';
import { deleteTopicsHandler } from '../../../src/protocols/kafka/handlers/delete-topics.js';
import { describeConfigsHandler } from '../../../src/protocols/kafka/handlers/describe-configs.js';
import { fetchHandler } from '../../../src/protocols/kafka/handlers/fetch.js';
import { listOffsetsHandler } from '../../../src/protocols/kafka/handlers/list-offsets.js';
import { metadataHandler } from '../../../src/protocols/kafka/handlers/metadata.js';
import { offsetCommitHandler } from '../../../src/protocols/kafka/handlers/offset-commit.js';
import { offsetFetchHandler } from '../../../src/protocols/kafka/handlers/offset-fetch.js';
import { produceHandler } from '../../../src/protocols/kafka/handlers/produce.js';
import { findKafkaTopic, findKafkaTopicById, kafkaNameOf, listKafkaTopics } from '../../../src/protocols/kafka/topics.js';
import { batchOf, dataHarness, recordsOf, type DataHarness } from './handlers/data-harness.js';

const TOPIC_RESOURCE = 2;

async function withStreamTopic(h: DataHarness, namespace: string, topic: string, partitions = 1) {
  if (h.broker.catalog.getNamespace(namespace) === null) await h.broker.createNamespace(namespace);
  return h.broker.createTopic(namespace, topic, { partitions });
}

async function allTopicNames(h: DataHarness): Promise<string[]> {
  const r = await h.ask(metadataHandler, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  return r.topics.map((t) => t.name!).sort();
}

async function produce(h: DataHarness, topic: string, values: string[]) {
  const r = await h.ask(produceHandler, 9, {
    transactionalId: null,
    acks: -1,
    timeoutMs: 1000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: batchOf(values.map((value) => ({ key: null, value }))) }] }],
  });
  return r.responses[0]!;
}

async function fetchValues(h: DataHarness, topic: string, fetchOffset = 0) {
  const r = await h.ask(fetchHandler, 12, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [], rackId: '',
  });
  const p = r.responses[0]!.partitions[0]!;
  return { topic: r.responses[0]!.topic, errorCode: p.errorCode, logStartOffset: p.logStartOffset, values: recordsOf(p.records).map((x) => [x.offset, x.value]) };
}

describe('Kafka names of non-default namespaces', () => {
  it('lists a topic of namespace s1 as s1.orders, by name, by id and in "all topics"', async (t) => {
    const h = await dataHarness(t, { topics: { plain: 1 } });
    const topic = await withStreamTopic(h, 's1', 'orders', 2);
    assert.equal(kafkaNameOf(topic), 's1.orders');
    assert.deepEqual(await allTopicNames(h), ['plain', 's1.orders']);
    assert.deepEqual(listKafkaTopics(h.broker).map(kafkaNameOf).sort(), ['plain', 's1.orders']);

    const byName = await h.ask(metadataHandler, 12, { topics: [{ name: 's1.orders', topicId: zeroUuid }], allowAutoTopicCreation: true });
    assert.deepEqual(byName.topics.map((x) => [x.errorCode, x.name, x.partitions.length]), [[0, 's1.orders', 2]]);
    assert.deepEqual(byName.topics[0]!.topicId, topic.uuid);
    const byId = await h.ask(metadataHandler, 12, { topics: [{ name: null, topicId: topic.uuid }], allowAutoTopicCreation: false });
    assert.deepEqual(byId.topics.map((x) => [x.errorCode, x.name]), [[0, 's1.orders']]);
    assert.equal(findKafkaTopicById(h.broker, topic.uuid)?.internalId, topic.internalId);
    // Resolving found the stream's topic: auto-creation made nothing in the default namespace.
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 's1.orders' }), null);
    // The namespace part alone, or the topic part alone, is not the topic.
    assert.equal(findKafkaTopic(h.broker, 'orders'), null);
    assert.equal(findKafkaTopic(h.broker, 'default.orders'), null);
  });

  it('produces, fetches, lists offsets, deletes records and commits offsets through the mapped name', async (t) => {
    const h = await dataHarness(t);
    const topic = await withStreamTopic(h, 's1', 'orders');
    const produced = await produce(h, 's1.orders', ['a', 'b', 'c']);
    assert.equal(produced.name, 's1.orders');
    assert.deepEqual([produced.partitionResponses[0]!.errorCode, produced.partitionResponses[0]!.baseOffset], [0, 0]);
    assert.equal(h.broker.partition(topic, 0).stats().nextOffset, 3, 'the records landed in the stream topic');

    assert.deepEqual(await fetchValues(h, 's1.orders'), { topic: 's1.orders', errorCode: 0, logStartOffset: 0, values: [[0, 'a'], [1, 'b'], [2, 'c']] });

    const latest = await h.ask(listOffsetsHandler, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 's1.orders', partitions: [{ partitionIndex: 0, timestamp: -1 }] }] });
    assert.deepEqual([latest.topics[0]!.name, latest.topics[0]!.partitions[0]!.errorCode, latest.topics[0]!.partitions[0]!.offset], ['s1.orders', 0, 3]);

    const deleted = await h.ask(deleteRecordsHandler, 2, { topics: [{ name: 's1.orders', partitions: [{ partitionIndex: 0, offset: 1 }] }], timeoutMs: 1000 });
    assert.deepEqual([deleted.topics[0]!.name, deleted.topics[0]!.partitions[0]!.errorCode, deleted.topics[0]!.partitions[0]!.lowWatermark], ['s1.orders', 0, 1]);
    const afterDelete = await fetchValues(h, 's1.orders', 0);
    assert.deepEqual([afterDelete.errorCode, afterDelete.logStartOffset], [ErrorCode.OFFSET_OUT_OF_RANGE, 1]);

    const committed = await h.ask(offsetCommitHandler, 8, {
      groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: 's1.orders', partitions: [{ partitionIndex: 0, committedOffset: 2, committedLeaderEpoch: -1, committedMetadata: 'm' }] }],
    });
    assert.deepEqual(committed.topics.map((x) => [x.name, x.partitions[0]!.errorCode]), [['s1.orders', 0]]);
    const fetched = await h.ask(offsetFetchHandler, 8, { groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: [{ name: 's1.orders', partitionIndexes: [0] }] }], requireStable: false });
    assert.equal(fetched.groups[0]!.topics[0]!.partitions[0]!.committedOffset, 2);
    // "All topics" names the topic by its Kafka name.
    const all = await h.ask(offsetFetchHandler, 8, { groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: null }], requireStable: false });
    assert.deepEqual(all.groups[0]!.topics.map((x) => [x.name, x.partitions.map((p) => p.committedOffset)]), [['s1.orders', [2]]]);

    const configs = await h.ask(describeConfigsHandler, 4, { resources: [{ resourceType: TOPIC_RESOURCE, resourceName: 's1.orders', configurationKeys: ['cleanup.policy'] }], includeSynonyms: false, includeDocumentation: false });
    assert.deepEqual([configs.results[0]!.errorCode, configs.results[0]!.configs.map((c) => c.name)], [0, ['cleanup.policy']]);
  });

  it('CreateTopics of a name that maps to an existing stream topic is TOPIC_ALREADY_EXISTS; new names go to default', async (t) => {
    const h = await dataHarness(t);
    await withStreamTopic(h, 's1', 'orders');
    const res = await h.ask(createTopicsHandler, 7, {
      topics: [
        { name: 's1.orders', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
        { name: 's1.other', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
        { name: 's1_orders', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
      ],
      timeoutMs: 1000,
      validateOnly: false,
    });
    assert.deepEqual(res.topics.map((x) => [x.name, x.errorCode]), [
      ['s1.orders', ErrorCode.TOPIC_ALREADY_EXISTS],
      ['s1.other', 0],
      // Kafka's '.'/'_' collision rule sees the mapped name.
      ['s1_orders', ErrorCode.INVALID_TOPIC_EXCEPTION],
    ]);
    assert.ok(h.broker.catalog.getTopic({ namespace: 'default', topic: 's1.other' }), 'created in the default namespace');
    assert.equal(h.broker.catalog.getTopic({ namespace: 's1', topic: 'other' }), null);
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 's1.orders' }), null);
  });

  it('a default-namespace topic with the mapped name shadows the stream topic', async (t) => {
    const h = await dataHarness(t, { topics: { 's1.orders': 1 } });
    const shadowed = await withStreamTopic(h, 's1', 'orders');
    const shadow = h.broker.catalog.getTopic({ namespace: 'default', topic: 's1.orders' })!;
    assert.deepEqual(await allTopicNames(h), ['s1.orders']);
    const md = await h.ask(metadataHandler, 12, { topics: [{ name: 's1.orders', topicId: zeroUuid }], allowAutoTopicCreation: false });
    assert.deepEqual(md.topics[0]!.topicId, shadow.uuid);
    assert.equal(findKafkaTopicById(h.broker, shadowed.uuid), null, 'the shadowed topic is not reachable by id either');
    await produce(h, 's1.orders', ['x']);
    assert.equal(h.broker.partition(shadow, 0).stats().nextOffset, 1);
    assert.equal(h.broker.partition(shadowed, 0).stats().nextOffset, 0);

    // Once the default topic is gone, the stream topic is visible again under that name.
    const del = await h.ask(deleteTopicsHandler, 6, { topics: [{ name: 's1.orders', topicId: zeroUuid }], timeoutMs: 1000 });
    assert.deepEqual([del.responses[0]!.name, del.responses[0]!.topicId], ['s1.orders', shadow.uuid]);
    assert.deepEqual(await allTopicNames(h), ['s1.orders']);
    assert.equal(findKafkaTopic(h.broker, 's1.orders')?.internalId, shadowed.internalId);
  });

  it('escapes names: stream "my stream" / topic "x" is my_20stream.x', async (t) => {
    const h = await dataHarness(t);
    const topic = await withStreamTopic(h, 'my stream', 'x');
    await withStreamTopic(h, 'my.shop', 'eu_orders');
    assert.deepEqual(await allTopicNames(h), ['my_20stream.x', 'my_2eshop.eu_5forders']);
    await produce(h, 'my_20stream.x', ['v']);
    assert.equal(h.broker.partition(topic, 0).stats().nextOffset, 1);
    assert.deepEqual((await fetchValues(h, 'my_20stream.x')).values, [[0, 'v']]);
    // Non-canonical spellings do not resolve.
    assert.equal(findKafkaTopic(h.broker, 'my_20stream.x_'), null);
    assert.equal(findKafkaTopic(h.broker, 'my_20Stream.x'), null);
    // Deleting by id answers with the mapped name.
    const del = await h.ask(deleteTopicsHandler, 6, { topics: [{ name: null, topicId: topic.uuid }], timeoutMs: 1000 });
    assert.deepEqual([del.responses[0]!.name, del.responses[0]!.errorCode], ['my_20stream.x', 0]);
    assert.equal(h.broker.catalog.getTopic({ namespace: 'my stream', topic: 'x' }), null);
  });

  it('leaves out topics Kafka cannot name', async (t) => {
    const h = await dataHarness(t);
    const illegal = await h.broker.createTopic('default', 'eu orders', { partitions: 1 });
    const tooLong = await withStreamTopic(h, 's'.repeat(200), 't'.repeat(60));
    await withStreamTopic(h, 's1', 'ok');
    assert.deepEqual(await allTopicNames(h), ['s1.ok']);
    assert.equal(findKafkaTopicById(h.broker, illegal.uuid), null);
    assert.equal(findKafkaTopicById(h.broker, tooLong.uuid), null);
    const byId = await h.ask(metadataHandler, 12, { topics: [{ name: null, topicId: tooLong.uuid }], allowAutoTopicCreation: false });
    assert.equal(byId.topics[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
  });
});
