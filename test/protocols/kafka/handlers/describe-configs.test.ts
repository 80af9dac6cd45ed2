import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { describeConfigsHandler } from '../../../../src/protocols/kafka/handlers/describe-configs.js';
import { ConfigSource, ConfigType } from '../../../../src/protocols/kafka/topic-configs.js';
import { adminHarness } from './admin-harness.js';

const TOPIC = 2;
const BROKER = 4;

describe('DescribeConfigs', () => {
  it('describes every honoured and fixed key of a topic with its source (v1, synonyms)', async (t) => {
    const h = await adminHarness(t, { topicDefaults: { 'retention.bytes': 5000 } });
    await h.broker.createTopic('default', 'orders', { partitions: 1, config: { 'retention.ms': '60000' } });
    const res = await h.call(describeConfigsHandler, 1, { resources: [{ resourceType: TOPIC, resourceName: 'orders', configurationKeys: null }], includeSynonyms: true });
    const [r] = res.results;
    assert.equal(r!.errorCode, 0);
    assert.equal(r!.resourceName, 'orders');
    assert.deepEqual(
      r!.configs.map((c) => c.name),
      [
        'retention.ms', 'retention.bytes', 'segment.bytes', 'segment.ms', 'cleanup.policy', 'max.message.bytes', 'flush.ms', 'quartet.fsync.policy',
        'preallocate', 'quartet.segment.roll', 'compression.type', 'message.timestamp.type', 'message.timestamp.difference.max.ms', 'message.timestamp.before.max.ms',
        'message.timestamp.after.max.ms', 'min.insync.replicas', 'delete.retention.ms', 'min.compaction.lag.ms', 'flush.messages', 'remote.storage.enable',
      ],
    );
    const by = new Map(r!.configs.map((c) => [c.name, c]));
    assert.deepEqual(by.get('retention.ms'), {
      name: 'retention.ms',
      value: '60000',
      readOnly: false,
      isDefault: false,
      configSource: ConfigSource.DYNAMIC_TOPIC_CONFIG,
      isSensitive: false,
      synonyms: [
        { name: 'retention.ms', value: '60000', source: ConfigSource.DYNAMIC_TOPIC_CONFIG },
        { name: 'log.retention.ms', value: '604800000', source: ConfigSource.DEFAULT_CONFIG },
      ],
      configType: 0,
      documentation: '', // not in v1: the schema default
    });
    assert.deepEqual(by.get('retention.bytes')!.synonyms, [
      { name: 'log.retention.bytes', value: '5000', source: ConfigSource.STATIC_BROKER_CONFIG },
      { name: 'log.retention.bytes', value: '-1', source: ConfigSource.DEFAULT_CONFIG },
    ]);
    assert.equal(by.get('retention.bytes')!.configSource, ConfigSource.STATIC_BROKER_CONFIG);
    assert.equal(by.get('cleanup.policy')!.value, 'delete');
    assert.equal(by.get('cleanup.policy')!.configSource, ConfigSource.DEFAULT_CONFIG);
    assert.equal(by.get('compression.type')!.value, 'producer');
    assert.equal(by.get('compression.type')!.readOnly, false);
    assert.equal(by.get('message.timestamp.before.max.ms')!.value, '9223372036854775807');
    assert.deepEqual(by.get('message.timestamp.type')!.synonyms, [{ name: 'log.message.timestamp.type', value: 'CreateTime', source: ConfigSource.DEFAULT_CONFIG }]);
    assert.equal(by.get('min.insync.replicas')!.readOnly, true);
  });

  it('sets is_default in v0, leaves synonyms out unless asked, and filters keys', async (t) => {
    const h = await adminHarness(t);
    await h.broker.createTopic('default', 't', { partitions: 1, config: { 'cleanup.policy': 'compact' } });
    const res = await h.call(describeConfigsHandler, 0, { resources: [{ resourceType: TOPIC, resourceName: 't', configurationKeys: ['cleanup.policy', 'segment.bytes', 'not.a.key'] }] });
    // Fields v0 lacks decode to their schema defaults (config_source -1, documentation '').
    assert.deepEqual(res.results[0]!.configs, [
      { name: 'segment.bytes', value: '1073741824', readOnly: false, isDefault: true, configSource: -1, isSensitive: false, synonyms: [], configType: 0, documentation: '' },
      { name: 'cleanup.policy', value: 'compact', readOnly: false, isDefault: false, configSource: -1, isSensitive: false, synonyms: [], configType: 0, documentation: '' },
    ]);
  });

  it('adds config types and documentation from v3 (v4 flexible)', async (t) => {
    const h = await adminHarness(t, { topics: { t: 1 } });
    const res = await h.call(describeConfigsHandler, 4, {
      resources: [{ resourceType: TOPIC, resourceName: 't', configurationKeys: ['segment.bytes', 'cleanup.policy', 'retention.ms'] }],
      includeSynonyms: false,
      includeDocumentation: true,
    });
    const by = new Map(res.results[0]!.configs.map((c) => [c.name, c]));
    assert.equal(by.get('segment.bytes')!.configType, ConfigType.INT);
    assert.equal(by.get('cleanup.policy')!.configType, ConfigType.LIST);
    assert.equal(by.get('retention.ms')!.configType, ConfigType.LONG);
    assert.match(by.get('retention.ms')!.documentation!, /sealed segments/);
    assert.deepEqual(by.get('retention.ms')!.synonyms, []);
  });

  it('answers per resource: unknown topic, invalid name, unknown resource type', async (t) => {
    const h = await adminHarness(t);
    const res = await h.call(describeConfigsHandler, 2, {
      resources: [
        { resourceType: TOPIC, resourceName: 'nope', configurationKeys: null },
        { resourceType: TOPIC, resourceName: 'bad name', configurationKeys: null },
        { resourceType: 16, resourceName: 'x', configurationKeys: null },
      ],
    });
    assert.deepEqual(res.results.map((r) => [r.resourceName, r.errorCode, r.configs.length]), [
      ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0],
      ['bad name', ErrorCode.INVALID_TOPIC_EXCEPTION, 0],
      ['x', ErrorCode.INVALID_REQUEST, 0],
    ]);
  });

  it('describes this broker read-only, nothing for the cluster default, and refuses other ids', async (t) => {
    const h = await adminHarness(t, { topicDefaults: { 'retention.ms': 1000 }, settings: { defaultPartitions: 3 } });
    const res = await h.call(describeConfigsHandler, 1, {
      resources: [
        { resourceType: BROKER, resourceName: '1', configurationKeys: null },
        { resourceType: BROKER, resourceName: '', configurationKeys: null },
        { resourceType: BROKER, resourceName: '2', configurationKeys: null },
        { resourceType: BROKER, resourceName: 'one', configurationKeys: null },
      ],
      includeSynonyms: false,
    });
    const [mine, cluster, other, notInt] = res.results;
    assert.equal(mine!.errorCode, 0);
    const by = new Map(mine!.configs.map((c) => [c.name, c]));
    assert.ok(mine!.configs.every((c) => c.readOnly));
    assert.deepEqual([by.get('num.partitions')!.value, by.get('num.partitions')!.configSource], ['3', ConfigSource.STATIC_BROKER_CONFIG]);
    assert.deepEqual([by.get('log.retention.ms')!.value, by.get('log.retention.ms')!.configSource], ['1000', ConfigSource.STATIC_BROKER_CONFIG]);
    assert.deepEqual([by.get('log.segment.bytes')!.value, by.get('log.segment.bytes')!.configSource], ['1073741824', ConfigSource.DEFAULT_CONFIG]);
    assert.equal(by.get('default.replication.factor')!.value, '1');
    assert.equal(by.get('min.insync.replicas')!.value, '1');
    assert.equal(by.get('sasl.enabled.mechanisms')!.value, 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512');
    assert.equal(new Set(mine!.configs.map((c) => c.name)).size, mine!.configs.length, 'no name twice');
    assert.deepEqual([cluster!.errorCode, cluster!.configs], [0, []]);
    assert.deepEqual([other!.errorCode, other!.errorMessage], [ErrorCode.INVALID_REQUEST, 'Unexpected broker id, expected 1 or empty string, but received 2']);
    assert.deepEqual([notInt!.errorCode, notInt!.errorMessage], [ErrorCode.INVALID_REQUEST, 'Broker id must be an integer, but it is: one']);
  });
});
