import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { alterConfigsHandler } from '../../../../src/protocols/kafka/handlers/alter-configs.js';
import { adminHarness } from './admin-harness.js';

const TOPIC = 2;
const BROKER = 4;

describe('AlterConfigs (legacy)', () => {
  it('replaces the whole set: keys left out go back to their defaults (v0 and v2)', async (t) => {
    const h = await adminHarness(t);
    await h.broker.createTopic('default', 't', { partitions: 1, config: { 'retention.ms': '1000', 'segment.bytes': '2048' } });
    const res = await h.call(alterConfigsHandler, 0, {
      resources: [{ resourceType: TOPIC, resourceName: 't', configs: [{ name: 'retention.bytes', value: '9999' }, { name: 'min.insync.replicas', value: '1' }] }],
      validateOnly: false,
    });
    assert.deepEqual(res.responses, [{ errorCode: 0, errorMessage: null, resourceType: TOPIC, resourceName: 't' }]);
    assert.deepEqual(h.broker.catalog.getTopic({ topic: 't' })!.config, { 'retention.bytes': 9999 });
    assert.equal(h.broker.partition({ topic: 't' }, 0).config.retentionBytes, 9999);
    const empty = await h.call(alterConfigsHandler, 2, { resources: [{ resourceType: TOPIC, resourceName: 't', configs: [] }], validateOnly: false });
    assert.equal(empty.responses[0]!.errorCode, 0);
    assert.deepEqual(h.broker.catalog.getTopic({ topic: 't' })!.config, {}, 'an empty set clears every value');
  });

  it('checks every key as IncrementalAlterConfigs does, and validate_only changes nothing', async (t) => {
    const h = await adminHarness(t, { topics: { t: 1 } });
    await h.broker.updateTopicConfig({ topic: 't' }, { 'retention.ms': '5000' });
    const alter = async (configs: Array<{ name: string; value: string | null }>, validateOnly = false) =>
      (await h.call(alterConfigsHandler, 1, { resources: [{ resourceType: TOPIC, resourceName: 't', configs }], validateOnly })).responses[0]!;
    const unknown = await alter([{ name: 'no.such.key', value: '1' }]);
    assert.deepEqual([unknown.errorCode, unknown.errorMessage], [ErrorCode.INVALID_CONFIG, 'Unknown topic config name: no.such.key']);
    assert.equal((await alter([{ name: 'segment.bytes', value: '1' }])).errorCode, ErrorCode.INVALID_CONFIG);
    assert.equal((await alter([{ name: 'min.insync.replicas', value: '2' }])).errorCode, ErrorCode.INVALID_CONFIG);
    const nul = await alter([{ name: 'retention.ms', value: null }]);
    assert.deepEqual([nul.errorCode, nul.errorMessage], [ErrorCode.INVALID_REQUEST, 'Null value not supported for : retention.ms']);
    const dup = await alter([{ name: 'retention.ms', value: '1' }, { name: 'retention.ms', value: '2' }]);
    assert.equal(dup.errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await alter([{ name: 'retention.bytes', value: '7' }], true)).errorCode, 0);
    assert.deepEqual(h.broker.catalog.getTopic({ topic: 't' })!.config, { 'retention.ms': 5000 }, 'refused and validate-only requests change nothing');
  });

  it('answers unknown topics, twice-named resources and broker resources as Kafka', async (t) => {
    const h = await adminHarness(t, { topics: { t: 1 } });
    const res = await h.call(alterConfigsHandler, 2, {
      resources: [
        { resourceType: TOPIC, resourceName: 'nope', configs: [] },
        { resourceType: TOPIC, resourceName: 't', configs: [] },
        { resourceType: TOPIC, resourceName: 't', configs: [] },
        { resourceType: BROKER, resourceName: '1', configs: [{ name: 'log.retention.ms', value: '1' }] },
        { resourceType: BROKER, resourceName: '7', configs: [] },
        { resourceType: 99, resourceName: 'x', configs: [] },
      ],
      validateOnly: false,
    });
    assert.deepEqual(res.responses.map((r) => [r.resourceType, r.resourceName, r.errorCode]), [
      [TOPIC, 'nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      [TOPIC, 't', ErrorCode.INVALID_REQUEST],
      [BROKER, '1', ErrorCode.INVALID_CONFIG],
      [BROKER, '7', ErrorCode.INVALID_REQUEST],
      [99, 'x', ErrorCode.INVALID_REQUEST],
    ]);
  });

  it('needs ALTER_CONFIGS (Iggy manage_topic) on the topic for a SASL user', async (t) => {
    const h = await adminHarness(t, { topics: { t: 1 }, users: { alice: 'alice-pw' } });
    const session = h.newSession();
    session.principal = 'alice';
    session.principalUserId = h.broker.users.get('alice')!.id;
    const res = await h.call(alterConfigsHandler, 1, {
      resources: [{ resourceType: TOPIC, resourceName: 't', configs: [] }, { resourceType: BROKER, resourceName: '1', configs: [] }],
      validateOnly: false,
    }, session);
    assert.deepEqual(res.responses.map((r) => r.errorCode), [ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);
  });

  it('puts one error code on every resource for errorResponse', () => {
    const resources = [
      { resourceType: TOPIC, resourceName: 't', configs: [{ name: 'retention.ms', value: '1' }] },
      { resourceType: BROKER, resourceName: '1', configs: [] },
    ];
    const body = alterConfigsHandler.errorResponse!({ resources, validateOnly: false }, ErrorCode.NOT_CONTROLLER, null as never);
    assert.deepEqual(body, {
      throttleTimeMs: 0,
      responses: [
        { errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null, resourceType: TOPIC, resourceName: 't' },
        { errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null, resourceType: BROKER, resourceName: '1' },
      ],
    });
  });
});
