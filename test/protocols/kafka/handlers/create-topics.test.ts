import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { zeroUuid } from '../../../../src/protocols/kafka/codec/reader.js';
import { createTopicsHandler } from '../../../../src/protocols/kafka/handlers/create-topics.js';
import { ConfigSource } from '../../../../src/protocols/kafka/topic-configs.js';
import { adminHarness } from './admin-harness.js';

type Topic = { name: string; numPartitions?: number; replicationFactor?: number; configs?: Array<{ name: string; value: string | null }>; assignments?: Array<{ partitionIndex: number; brokerIds: number[] }> };

function topic(name: string, extra: Omit<Topic, 'name'> = {}): Topic {
  return { name, numPartitions: 1, replicationFactor: 1, ...extra };
}

describe('CreateTopics', () => {
  it('creates a topic and answers v7 with id, partitions, replication factor and configs', async (t) => {
    const h = await adminHarness(t, { topicDefaults: { 'retention.bytes': 1_000_000 } });
    const res = await h.call(createTopicsHandler, 7, { topics: [topic('orders', { numPartitions: 3, configs: [{ name: 'retention.ms', value: '60000' }] })], timeoutMs: 5000 });
    const [r] = res.topics;
    assert.equal(r!.errorCode, 0);
    assert.equal(r!.errorMessage, null);
    assert.equal(r!.numPartitions, 3);
    assert.equal(r!.replicationFactor, 1);
    const created = h.broker.catalog.getTopic({ topic: 'orders' })!;
    assert.deepEqual(r!.topicId, created.uuid);
    assert.equal(created.partitions, 3);
    assert.deepEqual(created.config, { 'retention.ms': 60000 });
    const byName = new Map(r!.configs!.map((c) => [c.name, c]));
    assert.deepEqual(byName.get('retention.ms'), { name: 'retention.ms', value: '60000', readOnly: false, configSource: ConfigSource.DYNAMIC_TOPIC_CONFIG, isSensitive: false });
    assert.deepEqual(byName.get('retention.bytes'), { name: 'retention.bytes', value: '1000000', readOnly: false, configSource: ConfigSource.STATIC_BROKER_CONFIG, isSensitive: false });
    assert.equal(byName.get('segment.bytes')!.configSource, ConfigSource.DEFAULT_CONFIG);
    assert.deepEqual(byName.get('min.insync.replicas'), { name: 'min.insync.replicas', value: '1', readOnly: true, configSource: ConfigSource.DEFAULT_CONFIG, isSensitive: false });
  });

  it('takes the default partition count for -1 and accepts replication factor -1', async (t) => {
    const h = await adminHarness(t, { settings: { defaultPartitions: 4 } });
    const res = await h.call(createTopicsHandler, 3, { topics: [topic('a', { numPartitions: -1, replicationFactor: -1 })], timeoutMs: 1000 });
    assert.deepEqual(res.topics, [{ name: 'a', topicId: zeroUuid, errorCode: 0, errorMessage: null, topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: null }]);
    assert.equal(h.broker.catalog.getTopic({ topic: 'a' })!.partitions, 4);
  });

  it('refuses bad replication factors, partition counts and names', async (t) => {
    const h = await adminHarness(t);
    const res = await h.call(createTopicsHandler, 4, {
      topics: [
        topic('rf3', { replicationFactor: 3 }),
        topic('rf0', { replicationFactor: 0 }),
        topic('p0', { numPartitions: 0 }),
        topic('pneg', { numPartitions: -2 }),
        topic('bad name!'),
        topic('..'),
        topic('x'.repeat(250)),
      ],
      timeoutMs: 1000,
    });
    assert.deepEqual(
      res.topics.map((r) => [r.name.slice(0, 10), r.errorCode]),
      [
        ['rf3', ErrorCode.INVALID_REPLICATION_FACTOR],
        ['rf0', ErrorCode.INVALID_REPLICATION_FACTOR],
        ['p0', ErrorCode.INVALID_PARTITIONS],
        ['pneg', ErrorCode.INVALID_PARTITIONS],
        ['bad name!', ErrorCode.INVALID_TOPIC_EXCEPTION],
        ['..', ErrorCode.INVALID_TOPIC_EXCEPTION],
        ['xxxxxxxxxx', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ],
    );
    assert.match(res.topics[0]!.errorMessage!, /replication factor of 3 cannot be reached because only 1 broker/);
    assert.equal(h.broker.catalog.listTopics().length, 0);
  });

  it('answers TOPIC_ALREADY_EXISTS, and INVALID_TOPIC_EXCEPTION for a name colliding on . and _', async (t) => {
    const h = await adminHarness(t, { topics: { 'a.b': 1 } });
    const res = await h.call(createTopicsHandler, 5, { topics: [topic('a.b'), topic('a_b')], timeoutMs: 1000 });
    assert.deepEqual(
      res.topics.map((r) => [r.name, r.errorCode, r.errorMessage, r.numPartitions, r.configs]),
      [
        ['a.b', ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'a.b' already exists.", -1, null],
        ['a_b', ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic 'a_b' collides with existing topic: a.b", -1, null],
      ],
    );
  });

  it('validates configs through the core and the Kafka key table', async (t) => {
    const h = await adminHarness(t);
    const res = await h.call(createTopicsHandler, 5, {
      topics: [
        topic('t1', { configs: [{ name: 'segment.bytes', value: '100' }] }),
        topic('t2', { configs: [{ name: 'no.such.key', value: '1' }] }),
        topic('t3', { configs: [{ name: 'min.insync.replicas', value: '2' }] }),
        topic('t4', { configs: [{ name: 'retention.ms', value: null }] }),
        topic('t5', { configs: [{ name: 'compression.type', value: 'ZSTD' }, { name: 'segment.jitter.ms', value: '0' }, { name: 'preallocate', value: 'TRUE' }, { name: 'cleanup.policy', value: 'compact' }] }),
        topic('t6', { configs: [{ name: 'message.downconversion.enable', value: 'maybe' }] }),
        topic('t7', { configs: [{ name: 'message.timestamp.type', value: 'NoTime' }] }),
        topic('t8', { configs: [{ name: 'preallocate', value: 'maybe' }] }),
      ],
      timeoutMs: 1000,
    });
    const out = res.topics.map((r) => [r.name, r.errorCode, r.errorMessage]);
    assert.deepEqual(out, [
      ['t1', ErrorCode.INVALID_CONFIG, 'Invalid value 100 for configuration segment.bytes: must be between 1024 and 2147483647, got 100'],
      ['t2', ErrorCode.INVALID_CONFIG, 'Unknown topic config name: no.such.key'],
      ['t3', ErrorCode.INVALID_CONFIG, 'Invalid value 2 for configuration min.insync.replicas: Quartet supports only 1 (Quartet keeps one replica of each partition)'],
      ['t4', ErrorCode.INVALID_REQUEST, 'Null value not supported for topic config retention.ms'],
      ['t5', 0, null],
      ['t6', ErrorCode.INVALID_CONFIG, 'Invalid value maybe for configuration message.downconversion.enable: Expected value to be either true or false, got "maybe"'],
      ['t7', ErrorCode.INVALID_CONFIG, out[6]![2]],
      ['t8', ErrorCode.INVALID_CONFIG, 'Invalid value maybe for configuration preallocate: must be true or false, got "maybe"'],
    ]);
    assert.match(String(out[6]![2]), /must be CreateTime or LogAppendTime/);
    // Fixed and ignored keys are not stored; honoured ones are, normalized by the core.
    assert.deepEqual(h.broker.catalog.getTopic({ topic: 't5' })!.config, { 'compression.type': 'zstd', preallocate: 'true', 'cleanup.policy': 'compact' });
    assert.deepEqual(h.broker.catalog.listTopics().map((tp) => tp.name), ['t5']);
  });

  it('validate_only checks everything and creates nothing', async (t) => {
    const h = await adminHarness(t, { topics: { taken: 1 } });
    const res = await h.call(createTopicsHandler, 5, { topics: [topic('fresh', { numPartitions: 2, configs: [{ name: 'cleanup.policy', value: 'compact' }] }), topic('taken')], timeoutMs: 1000, validateOnly: true });
    assert.equal(res.topics[0]!.errorCode, 0);
    assert.equal(res.topics[0]!.numPartitions, 2);
    assert.equal(res.topics[0]!.configs!.find((c) => c.name === 'cleanup.policy')!.configSource, ConfigSource.DYNAMIC_TOPIC_CONFIG);
    assert.equal(res.topics[1]!.errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
    assert.equal(h.broker.catalog.getTopic({ topic: 'fresh' }), null);
  });

  it('answers one INVALID_REQUEST for a name given twice and still creates the others', async (t) => {
    const h = await adminHarness(t);
    const res = await h.call(createTopicsHandler, 2, { topics: [topic('dup'), topic('ok'), topic('dup')], timeoutMs: 1000 });
    assert.deepEqual(
      res.topics.map((r) => [r.name, r.errorCode, r.errorMessage]),
      [
        ['dup', ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'],
        ['ok', 0, null],
      ],
    );
    assert.deepEqual(h.broker.catalog.listTopics().map((tp) => tp.name), ['ok']);
  });

  it('supports manual assignments on this broker and refuses the rest', async (t) => {
    const h = await adminHarness(t);
    const assign = (...lists: number[][]) => lists.map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds }));
    const res = await h.call(createTopicsHandler, 4, {
      topics: [
        topic('manual', { numPartitions: -1, replicationFactor: -1, assignments: assign([1], [1]) }),
        topic('both', { numPartitions: 2, replicationFactor: -1, assignments: assign([1]) }),
        topic('other', { numPartitions: -1, replicationFactor: -1, assignments: assign([2]) }),
        topic('twice', { numPartitions: -1, replicationFactor: -1, assignments: assign([1, 1]) }),
        topic('gap', { numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 1, brokerIds: [1] }] }),
      ],
      timeoutMs: 1000,
    });
    assert.deepEqual(
      res.topics.map((r) => [r.name, r.errorCode]),
      [
        ['manual', 0],
        ['both', ErrorCode.INVALID_REQUEST],
        ['other', ErrorCode.INVALID_REPLICA_ASSIGNMENT],
        ['twice', ErrorCode.INVALID_REPLICA_ASSIGNMENT],
        ['gap', ErrorCode.INVALID_REPLICA_ASSIGNMENT],
      ],
    );
    assert.equal(h.broker.catalog.getTopic({ topic: 'manual' })!.partitions, 2);
  });

  it('puts one error code on every topic for errorResponse', () => {
    const body = createTopicsHandler.errorResponse!({ topics: [{ name: 'a', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 0, validateOnly: false }, 7, null as never);
    assert.deepEqual(body.topics!.map((r) => [r.name, r.errorCode]), [['a', 7]]);
  });
});
