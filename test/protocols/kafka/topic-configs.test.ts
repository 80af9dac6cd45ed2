import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { topicConfigKeys } from '../../../src/core/topic-config.js';
import { ConfigSource, checkTopicConfigValue, describeTopicConfigs, describedTopicKeys, kafkaTopicKey } from '../../../src/protocols/kafka/topic-configs.js';

describe('Kafka topic config table', () => {
  it('honours exactly the core keys, each with a broker synonym', () => {
    const honoured = describedTopicKeys.filter((k) => k.kind === 'honoured').map((k) => k.name);
    assert.deepEqual(honoured, topicConfigKeys);
    for (const k of topicConfigKeys) assert.ok(kafkaTopicKey(k)!.brokerSynonym, k);
  });

  it('stores honoured values, accepts fixed values only as Quartet behaves, type-checks and drops ignored ones', () => {
    assert.deepEqual(checkTopicConfigValue('retention.ms', '1000'), { store: '1000' });
    assert.equal((checkTopicConfigValue('retention.ms', 'soon') as { code: number }).code, 40);
    assert.deepEqual(checkTopicConfigValue('min.insync.replicas', ' 1 '), { store: null });
    assert.deepEqual(checkTopicConfigValue('flush.messages', '9223372036854775807'), { store: null });
    assert.equal((checkTopicConfigValue('flush.messages', '1') as { code: number }).code, 40);
    assert.deepEqual(checkTopicConfigValue('remote.storage.enable', 'FALSE'), { store: null });
    assert.deepEqual(checkTopicConfigValue('segment.jitter.ms', '10'), { store: null });
    assert.equal((checkTopicConfigValue('segment.jitter.ms', 'x') as { code: number }).code, 40);
    assert.deepEqual(checkTopicConfigValue('min.cleanable.dirty.ratio', '0.5'), { store: null });
    assert.deepEqual(checkTopicConfigValue('retention.ms', null), { code: 42, message: 'Null value not supported for topic config retention.ms' });
    assert.deepEqual(checkTopicConfigValue('log.retention.ms', '1'), { code: 40, message: 'Unknown topic config name: log.retention.ms' });
  });

  it('reports the most specific source first', () => {
    const described = new Map(describeTopicConfigs({ 'segment.ms': 5 }, { 'segment.ms': 6, 'flush.ms': 7 }).map((c) => [c.name, c]));
    assert.deepEqual(described.get('segment.ms')!.synonyms, [
      { name: 'segment.ms', value: '5', source: ConfigSource.DYNAMIC_TOPIC_CONFIG },
      { name: 'log.roll.ms', value: '6', source: ConfigSource.STATIC_BROKER_CONFIG },
      { name: 'log.roll.ms', value: '604800000', source: ConfigSource.DEFAULT_CONFIG },
    ]);
    assert.deepEqual([described.get('flush.ms')!.value, described.get('flush.ms')!.source], ['7', ConfigSource.STATIC_BROKER_CONFIG]);
    assert.deepEqual([described.get('retention.ms')!.value, described.get('retention.ms')!.source], ['604800000', ConfigSource.DEFAULT_CONFIG]);
  });
});
