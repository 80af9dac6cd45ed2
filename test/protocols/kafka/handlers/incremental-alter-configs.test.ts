import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { OpType, incrementalAlterConfigsHandler } from '../../../../src/protocols/kafka/handlers/incremental-alter-configs.js';
import { adminHarness } from './admin-harness.js';

const TOPIC = 2;
const BROKER = 4;
type Op = { name: string; configOperation: number; value: string | null };
const set = (name: string, value: string): Op => ({ name, configOperation: OpType.SET, value });
const del = (name: string): Op => ({ name, configOperation: OpType.DELETE, value: null });
const append = (name: string, value: string): Op => ({ name, configOperation: OpType.APPEND, value });
const subtract = (name: string, value: string): Op => ({ name, configOperation: OpType.SUBTRACT, value });

describe('IncrementalAlterConfigs', () => {
  it('SETs and DELETEs topic keys, leaving the others alone (v0)', async (t) => {
    const h = await adminHarness(t);
    await h.broker.createTopic('default', 't', { partitions: 1, config: { 'retention.ms': '1000', 'segment.bytes': '2048' } });
    const res = await h.call(incrementalAlterConfigsHandler, 0, {
      resources: [{ resourceType: TOPIC, resourceName: 't', configs: [set('retention.bytes', '9999'), del('retention.ms'), set('compression.type', 'lz4'), set('message.timestamp.type', 'LogAppendTime'), set('segment.jitter.ms', '0'), set('preallocate', 'true')] }],
      validateOnly: false,
    });
    assert.deepEqual(res.responses, [{ errorCode: 0, errorMessage: null, resourceType: TOPIC, resourceName: 't' }]);
    assert.deepEqual(h.broker.catalog.getTopic({ topic: 't' })!.config, { 'segment.bytes': 2048, 'retention.bytes': 9999, 'compression.type': 'lz4', 'message.timestamp.type': 'LogAppendTime', preallocate: 'true' });
    assert.equal(h.broker.partition({ topic: 't' }, 0).config.retentionBytes, 9999);
    assert.equal(h.broker.partition({ topic: 't' }, 0).config.preallocate, true);
  });

  it('APPENDs to and SUBTRACTs from cleanup.policy, starting from the default (v1, flexible)', async (t) => {
    const h = await adminHarness(t, { topics: { t: 1 } });
    const alter = (op: Op) => h.call(incrementalAlterConfigsHandler, 1, { resources: [{ resourceType: TOPIC, resourceName: 't', configs: [op] }], validateOnly: false });
    assert.equal((await alter(append('cleanup.policy', 'compact'))).responses[0]!.errorCode, 0);
    assert.equal(h.broker.catalog.getTopic({ topic: 't' })!.config['cleanup.policy'], 'compact,delete');
    assert.equal((await alter(append('cleanup.policy', 'compact'))).responses[0]!.errorCode, 0, 'appending an item already there changes nothing');
    assert.equal(h.broker.catalog.getTopic({ topic: 't' })!.config['cleanup.policy'], 'compact,delete');
    assert.equal((await alter(subtract('cleanup.policy', 'delete'))).responses[0]!.errorCode, 0);
    assert.equal(h.broker.catalog.getTopic({ topic: 't' })!.config['cleanup.policy'], 'compact');
    const empty = await alter(subtract('cleanup.policy', 'compact'));
    assert.equal(empty.responses[0]!.errorCode, ErrorCode.INVALID_CONFIG);
    const notList = await alter(append('retention.ms', '5'));
    assert.deepEqual([notList.responses[0]!.errorCode, notList.responses[0]!.errorMessage], [ErrorCode.INVALID_REQUEST, 'Config value append is not allowed for config key: retention.ms']);
  });

  it('refuses the whole resource on any bad op, and validate_only changes nothing', async (t) => {
    const h = await adminHarness(t, { topics: { t: 1 } });
    const res = await h.call(incrementalAlterConfigsHandler, 1, {
      resources: [
        { resourceType: TOPIC, resourceName: 't', configs: [set('retention.ms', '5'), set('segment.bytes', '1')] },
        { resourceType: TOPIC, resourceName: 'nope', configs: [set('retention.ms', '5')] },
      ],
      validateOnly: false,
    });
    assert.deepEqual(res.responses.map((r) => [r.resourceName, r.errorCode]), [
      ['t', ErrorCode.INVALID_CONFIG],
      ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    assert.deepEqual(h.broker.catalog.getTopic({ topic: 't' })!.config, {});
    const dry = await h.call(incrementalAlterConfigsHandler, 1, { resources: [{ resourceType: TOPIC, resourceName: 't', configs: [set('retention.ms', '5')] }], validateOnly: true });
    assert.equal(dry.responses[0]!.errorCode, 0);
    assert.deepEqual(h.broker.catalog.getTopic({ topic: 't' })!.config, {});
  });

  it('answers INVALID_REQUEST for duplicates, nulls and unknown operations; INVALID_CONFIG for unknown and fixed keys', async (t) => {
    const h = await adminHarness(t, { topics: { t: 1 } });
    const one = async (configs: Op[]) => {
      const r = (await h.call(incrementalAlterConfigsHandler, 0, { resources: [{ resourceType: TOPIC, resourceName: 't', configs }], validateOnly: false })).responses[0]!;
      return [r.errorCode, r.errorMessage];
    };
    assert.deepEqual(await one([set('retention.ms', '1'), del('retention.ms')]), [ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys : retention.ms']);
    assert.deepEqual(await one([{ name: 'retention.ms', configOperation: OpType.SET, value: null }]), [ErrorCode.INVALID_REQUEST, 'Null value not supported for : SET:retention.ms']);
    assert.deepEqual(await one([{ name: 'retention.ms', configOperation: 9, value: '1' }]), [ErrorCode.INVALID_REQUEST, 'Unknown alter config operation type 9 for retention.ms']);
    assert.deepEqual(await one([set('bogus', '1')]), [ErrorCode.INVALID_CONFIG, 'Unknown topic config name: bogus']);
    assert.equal((await one([set('min.insync.replicas', '2')]))[0], ErrorCode.INVALID_CONFIG);
    assert.deepEqual(await one([set('min.insync.replicas', '1'), del('message.timestamp.type')]), [0, null]);
    const dup = await h.call(incrementalAlterConfigsHandler, 0, {
      resources: [
        { resourceType: TOPIC, resourceName: 't', configs: [] },
        { resourceType: TOPIC, resourceName: 't', configs: [] },
      ],
      validateOnly: false,
    });
    assert.deepEqual(dup.responses.map((r) => [r.errorCode, r.errorMessage]), [[ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.']]);
  });

  it('keeps broker configs read-only', async (t) => {
    const h = await adminHarness(t);
    const res = await h.call(incrementalAlterConfigsHandler, 0, {
      resources: [
        { resourceType: BROKER, resourceName: '1', configs: [set('log.retention.ms', '1')] },
        { resourceType: BROKER, resourceName: '7', configs: [set('log.retention.ms', '1')] },
        { resourceType: 8, resourceName: '1', configs: [] },
      ],
      validateOnly: false,
    });
    assert.deepEqual(res.responses.map((r) => r.errorCode), [ErrorCode.INVALID_CONFIG, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
  });

  it('puts one error code on every resource for errorResponse', () => {
    const body = incrementalAlterConfigsHandler.errorResponse!({ resources: [{ resourceType: TOPIC, resourceName: 't', configs: [set('retention.ms', '1')] }], validateOnly: true }, ErrorCode.NOT_CONTROLLER, null as never);
    assert.deepEqual(body, { throttleTimeMs: 0, responses: [{ errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null, resourceType: TOPIC, resourceName: 't' }] });
  });
});
