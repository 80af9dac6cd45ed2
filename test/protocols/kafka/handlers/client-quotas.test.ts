// DescribeClientQuotas / AlterClientQuotas over the core quota store, and their enforcement on
// Produce and Fetch with the harness's manual clock: throttle_time_ms and the connection mute.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { alterClientQuotasHandler } from '../../../../src/protocols/kafka/handlers/alter-client-quotas.js';
import { describeClientQuotasHandler } from '../../../../src/protocols/kafka/handlers/describe-client-quotas.js';
import { fetchHandler } from '../../../../src/protocols/kafka/handlers/fetch.js';
import { produceHandler } from '../../../../src/protocols/kafka/handlers/produce.js';
import type { KafkaRequestContext } from '../../../../src/protocols/kafka/handlers/types.js';
import { decodeRequestHeader } from '../../../../src/protocols/kafka/codec/headers.js';
import { decodeRequest, encodeRequest } from '../../../../src/protocols/kafka/codec/frames.js';
import { ApiKey } from '../../../../src/protocols/kafka/codec/api-keys.js';
import type { RequestInputOf } from '../../../../src/protocols/kafka/codec/messages/index.js';
import { adminHarness, type AdminHarness } from './admin-harness.js';
import { sessionWith } from './admin-users.js';
import { batchOf } from './data-harness.js';

const user = (name: string | null) => ({ entityType: 'user', entityName: name });
const client = (name: string | null) => ({ entityType: 'client-id', entityName: name });
const set = (key: string, value: number) => ({ key, value, remove: false });

async function alter(h: AdminHarness, entries: RequestInputOf<typeof ApiKey.AlterClientQuotas>['entries'], validateOnly = false) {
  return (await h.call(alterClientQuotasHandler, 1, { entries, validateOnly })).entries!.map((e) => [e.errorCode, e.errorMessage]);
}

/** Runs a handler directly with a context that records the connection mute it asks for. */
async function produceWithMute(h: AdminHarness, clientId: string, bytes: number): Promise<{ throttleTimeMs: number; mutedMs: number | null }> {
  const records = batchOf([{ key: null, value: 'x'.repeat(bytes) }]);
  const input = { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }] };
  const frame = Buffer.concat(encodeRequest(ApiKey.Produce, 9, 1, clientId, input)).subarray(4);
  const header = decodeRequestHeader(frame);
  if (!header.ok) throw new Error(header.reason);
  const request = decodeRequest(ApiKey.Produce, 9, frame, header.bodyOffset);
  if (!request.ok) throw new Error(request.reason);
  h.session.clientId = clientId;
  let mutedMs: number | null = null;
  const context: KafkaRequestContext = { frontend: h.frontend, session: h.session, header: header.header, version: 9, throttleAfterResponse: (ms) => (mutedMs = ms) };
  const res = await produceHandler.handle(request.value as never, context);
  return { throttleTimeMs: (res as { throttleTimeMs: number }).throttleTimeMs, mutedMs };
}

describe('client quotas', () => {
  it('alters and describes user / client-id quotas, defaults included, with Kafka filters', async (t) => {
    const h = await adminHarness(t);
    assert.deepEqual(await alter(h, [
      { entity: [user('alice')], ops: [set('producer_byte_rate', 1024), set('request_percentage', 50)] },
      { entity: [user(null), client('app')], ops: [set('consumer_byte_rate', 2048)] },
      { entity: [client(null)], ops: [set('producer_byte_rate', 4096)] },
    ]), [[0, null], [0, null], [0, null]]);
    const describeWith = async (components: RequestInputOf<typeof ApiKey.DescribeClientQuotas>['components'], strict = false) =>
      (await h.call(describeClientQuotasHandler, 1, { components, strict })).entries!.map((e) => [e.entity.map((p) => `${p.entityType}=${p.entityName}`).join(','), Object.fromEntries(e.values.map((v) => [v.key, v.value]))]);
    assert.deepEqual(await describeWith([{ entityType: 'user', matchType: 0, match: 'alice' }]), [['user=alice', { producer_byte_rate: 1024, request_percentage: 50 }]]);
    assert.deepEqual(await describeWith([{ entityType: 'user', matchType: 1, match: null }]), [['user=null,client-id=app', { consumer_byte_rate: 2048 }]]);
    assert.deepEqual(await describeWith([{ entityType: 'user', matchType: 2, match: null }], true), [['user=alice', { producer_byte_rate: 1024, request_percentage: 50 }]]);
    assert.equal((await describeWith([])).length, 3);
    assert.deepEqual(await alter(h, [{ entity: [user('alice')], ops: [{ key: 'producer_byte_rate', value: 0, remove: true }] }]), [[0, null]]);
    assert.deepEqual(await describeWith([{ entityType: 'user', matchType: 0, match: 'alice' }]), [['user=alice', { request_percentage: 50 }]]);
    const res = await h.call(describeClientQuotasHandler, 0, { components: [{ entityType: 'ip', matchType: 2, match: null }], strict: false });
    assert.equal(res.errorCode, ErrorCode.INVALID_REQUEST);
  });

  it('refuses bad entities, keys and values per entry; validate_only stores nothing', async (t) => {
    const h = await adminHarness(t);
    const answers = await alter(h, [
      { entity: [], ops: [set('producer_byte_rate', 1)] },
      { entity: [user('a'), user('b')], ops: [set('producer_byte_rate', 1)] },
      { entity: [{ entityType: 'ip', entityName: null }], ops: [set('connection_creation_rate', 1)] },
      { entity: [user('a')], ops: [set('controller_mutation_rate', 1)] },
      { entity: [user('a')], ops: [set('producer_byte_rate', -5)] },
      { entity: [user('a')], ops: [set('producer_byte_rate', 1.5)] },
      { entity: [user('a')], ops: [set('request_percentage', 1), set('request_percentage', 2)] },
      { entity: [user('ok')], ops: [set('consumer_byte_rate', 10)] },
    ]);
    assert.deepEqual(answers.map(([code]) => code), [...Array(7).fill(ErrorCode.INVALID_REQUEST), 0]);
    assert.deepEqual(h.broker.clientQuotas.list().map((q) => q.entity), [{ user: 'ok' }]);
    await alter(h, [{ entity: [user('dry')], ops: [set('consumer_byte_rate', 10)] }], true);
    assert.equal(h.broker.clientQuotas.list().length, 1, 'validate_only stores nothing');
  });

  it('throttles a producer over its byte rate and asks the connection to mute; others are not', async (t) => {
    const h = await adminHarness(t, { topics: { t: 1 } });
    const clock = h.frontend.clock as unknown as { advance(ms: number): void };
    assert.equal((await produceWithMute(h, 'free', 5000)).throttleTimeMs, 0, 'no quota: never throttled');
    await alter(h, [{ entity: [client('slow')], ops: [set('producer_byte_rate', 1000)] }]);
    // 10 s of window at 1000 B/s allows ~10 kB; the first requests stay within it.
    const first = await produceWithMute(h, 'slow', 2000);
    assert.deepEqual(first, { throttleTimeMs: 0, mutedMs: null });
    let throttled = { throttleTimeMs: 0, mutedMs: null as number | null };
    for (let i = 0; i < 10 && throttled.throttleTimeMs === 0; i++) throttled = await produceWithMute(h, 'slow', 2000);
    assert.ok(throttled.throttleTimeMs > 0, 'over quota: throttle_time_ms > 0');
    assert.equal(throttled.mutedMs, throttled.throttleTimeMs, 'the connection is muted for the throttle time');
    assert.equal((await produceWithMute(h, 'other', 2000)).throttleTimeMs, 0, 'another client id has no quota');
    // Once the window has passed, the same client is within its quota again.
    clock.advance(12_000);
    assert.equal((await produceWithMute(h, 'slow', 100)).throttleTimeMs, 0);
  });

  it('a throttled Fetch answers without records, so the consumer does not move past its quota', async (t) => {
    const h = await adminHarness(t, { topics: { t: 1 } });
    await produceWithMute(h, 'p', 30_000);
    await alter(h, [{ entity: [user(null)], ops: [set('consumer_byte_rate', 1000)] }]);
    const fetchOnce = () => h.call(fetchHandler, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 't', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [], rackId: '',
    });
    const res = await fetchOnce();
    assert.ok(res.throttleTimeMs > 0, 'the default user quota applies to ANONYMOUS');
    assert.equal(res.responses[0]!.partitions[0]!.records?.length ?? 0, 0);
  });

  it('needs read_servers to describe and manage_servers to alter', async (t) => {
    const h = await adminHarness(t);
    const plain = await sessionWith(h, 'plain', ['read_topics']);
    assert.equal((await h.call(describeClientQuotasHandler, 1, { components: [], strict: false }, plain)).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const res = await h.call(alterClientQuotasHandler, 1, { entries: [{ entity: [user('a')], ops: [set('producer_byte_rate', 5)] }], validateOnly: false }, plain);
    assert.equal(res.entries[0]!.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });
});
