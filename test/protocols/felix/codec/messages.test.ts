// Felix JSON messages: every type of the v0.5.0 wire round-trips with every field set and with
// only the required ones; the encoder writes the reference's presence rules; the decoder refuses
// what serde refuses (wrong types, out-of-range integers, floats, bad base64, duplicates, broken
// JSON) with a reason, and ignores unknown fields.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  authReply,
  brokerCapabilities,
  clientMessageTypes,
  decodeMessage,
  encodeMessagePayload,
  messageTypes,
  parseJson,
  requestFeature,
  serverFlags,
  singleNodeFeatures,
  type FelixMessage,
  type MessageType,
} from '../../../../src/protocols/felix/codec/index.js';

const b = (s: string): Buffer => Buffer.from(s);
const scope = { tenantId: 't1', namespace: 'default', stream: 'orders' };
const cache = { tenantId: 't1', namespace: 'default', cache: 'primary', key: 'k' };
const group = { ...scope, shard: 2, group: 'workers' };
const big = 0xffff_ffff_ffff_ffffn;

/** Every type with every field set (full) and with only what is required (minimal). */
const samples: Record<MessageType, { full: FelixMessage; minimal: FelixMessage }> = {
  auth: { full: { type: 'auth', tenantId: 't1', token: 'tok', clientFlags: 0xffff, clientFeatures: 0xffff_ffff }, minimal: { type: 'auth', tenantId: '', token: '' } },
  auth_ok: { full: { type: 'auth_ok', serverFlags: 255, serverFeatures: 1020 }, minimal: { type: 'auth_ok', serverFlags: 0 } },
  ok: { full: { type: 'ok' }, minimal: { type: 'ok' } },
  error: { full: { type: 'error', message: 'quote " backslash \\ newline \n tab \t nul \u0000 é 😀' }, minimal: { type: 'error', message: '' } },
  topology: { full: { type: 'topology' }, minimal: { type: 'topology' } },
  topology_view: { full: { type: 'topology_view', brokers: [{ nodeId: 'a', addr: '1.2.3.4:5000' }, { nodeId: 'b', addr: '[::1]:5000' }] }, minimal: { type: 'topology_view', brokers: [] } },
  not_leader: { full: { type: 'not_leader', nodeId: 'b', addr: 'h:1', generation: big }, minimal: { type: 'not_leader', nodeId: 'b', generation: 0n } },
  stream_shards: { full: { type: 'stream_shards', ...scope, requestId: big }, minimal: { type: 'stream_shards', ...scope, requestId: 0n } },
  stream_shards_view: { full: { type: 'stream_shards_view', shards: 0xffff_ffff, requestId: 1n }, minimal: { type: 'stream_shards_view', shards: 0, requestId: 1n } },
  publish: { full: { type: 'publish', ...scope, payload: b('p'), key: Buffer.alloc(0), requestId: 4n, ack: 'per_message' }, minimal: { type: 'publish', ...scope, payload: Buffer.alloc(0) } },
  publish_batch: { full: { type: 'publish_batch', ...scope, payloads: [b('a'), Buffer.alloc(0), Buffer.alloc(300, 7)], key: b('k'), requestId: 4n, ack: 'none' }, minimal: { type: 'publish_batch', ...scope, payloads: [] } },
  publish_ok: { full: { type: 'publish_ok', requestId: big }, minimal: { type: 'publish_ok', requestId: 0n } },
  publish_error: { full: { type: 'publish_error', requestId: 1n, message: 'no' }, minimal: { type: 'publish_error', requestId: 1n, message: '' } },
  producer_init: { full: { type: 'producer_init', requestId: 1n }, minimal: { type: 'producer_init', requestId: 1n } },
  producer_init_ok: { full: { type: 'producer_init_ok', requestId: 1n, producerId: big }, minimal: { type: 'producer_init_ok', requestId: 1n, producerId: 0n } },
  publish_idempotent: {
    full: { type: 'publish_idempotent', ...scope, payloads: [b('x')], key: b('k'), requestId: 1n, producerId: big, sequence: 5n },
    minimal: { type: 'publish_idempotent', ...scope, payloads: [], requestId: 1n, producerId: 2n, sequence: 0n },
  },
  publish_refused: {
    full: { type: 'publish_refused', requestId: 1n, reason: { kind: 'not_leader', nodeId: 'b', addr: 'h:1' }, message: 'm' },
    minimal: { type: 'publish_refused', requestId: 1n, reason: { kind: 'sequence_expired' }, message: '' },
  },
  subscribe: { full: { type: 'subscribe', ...scope, subscriptionId: 3n, start: { offset: big }, shard: 4 }, minimal: { type: 'subscribe', ...scope } },
  subscribed: { full: { type: 'subscribed', subscriptionId: 3n, startOffset: 1n, liveOffset: 2n }, minimal: { type: 'subscribed', subscriptionId: 3n } },
  subscribe_cursor_error: { full: { type: 'subscribe_cursor_error', reason: 'in_future', requested: 9n, available: 5n }, minimal: { type: 'subscribe_cursor_error', reason: 'too_old', requested: 0n, available: 0n } },
  event_stream_hello: { full: { type: 'event_stream_hello', subscriptionId: big }, minimal: { type: 'event_stream_hello', subscriptionId: 0n } },
  event: { full: { type: 'event', ...scope, payload: b('e'), offset: 7n }, minimal: { type: 'event', ...scope, payload: Buffer.alloc(0) } },
  event_batch: { full: { type: 'event_batch', ...scope, payloads: [b('a'), b('b')], baseOffset: 7n }, minimal: { type: 'event_batch', ...scope, payloads: [] } },
  cache_put: { full: { type: 'cache_put', ...cache, value: b('v'), requestId: 1n, ttlMs: 1000n }, minimal: { type: 'cache_put', ...cache, value: Buffer.alloc(0), ttlMs: null } },
  cache_get: { full: { type: 'cache_get', ...cache, requestId: 1n }, minimal: { type: 'cache_get', ...cache } },
  cache_delete: { full: { type: 'cache_delete', ...cache, requestId: 1n }, minimal: { type: 'cache_delete', ...cache } },
  cache_value: { full: { type: 'cache_value', ...cache, value: b('v'), requestId: 1n }, minimal: { type: 'cache_value', ...cache, value: null } },
  cache_ok: { full: { type: 'cache_ok', requestId: 1n }, minimal: { type: 'cache_ok', requestId: 0n } },
  cache_watch: {
    full: { type: 'cache_watch', tenantId: 't1', namespace: 'default', cache: 'c', key: 'k', prefix: 'p', shard: 1, fromOffset: 3n, retained: true, subscriptionId: 4n },
    minimal: { type: 'cache_watch', tenantId: 't1', namespace: 'default', cache: 'c', retained: false },
  },
  cache_watch_started: {
    full: { type: 'cache_watch_started', subscriptionId: 1n, resumeOffset: 2n, resnapshot: true, retainedCount: 0n },
    minimal: { type: 'cache_watch_started', subscriptionId: 1n, resumeOffset: 2n, resnapshot: false },
  },
  cache_event: { full: { type: 'cache_event', key: 'k', value: b('v'), offset: 1n, expiresAtMillis: 1_700_000_000_000n }, minimal: { type: 'cache_event', key: 'k', offset: 1n, expiresAtMillis: 0n } },
  cache_watch_lagged: { full: { type: 'cache_watch_lagged', resumeFrom: 3n }, minimal: { type: 'cache_watch_lagged', resumeFrom: 0n } },
  counter_add: { full: { type: 'counter_add', ...cache, delta: -(1n << 63n), requestId: 1n }, minimal: { type: 'counter_add', ...cache, delta: (1n << 63n) - 1n, requestId: 1n } },
  counter_get: { full: { type: 'counter_get', ...cache, requestId: 1n }, minimal: { type: 'counter_get', ...cache, requestId: 1n } },
  counter_value: { full: { type: 'counter_value', value: -3n, requestId: 1n }, minimal: { type: 'counter_value', requestId: 1n } },
  group_poll: { full: { type: 'group_poll', ...group, maxRecords: 10, waitMs: 500n, requestId: 1n }, minimal: { type: 'group_poll', ...group, maxRecords: 0, waitMs: 0n, requestId: 1n } },
  group_records: {
    full: { type: 'group_records', records: [{ offset: 1n, payload: b('x'), attempts: 2 }, { offset: 2n, payload: Buffer.alloc(0), attempts: 0 }], requestId: 1n },
    minimal: { type: 'group_records', records: [], requestId: 1n },
  },
  group_ack: { full: { type: 'group_ack', ...group, offset: 5n, requestId: 1n }, minimal: { type: 'group_ack', ...group, offset: 0n, requestId: 1n } },
  group_nack: { full: { type: 'group_nack', ...group, offset: 5n, requestId: 1n }, minimal: { type: 'group_nack', ...group, offset: 0n, requestId: 1n } },
  group_dead_letters: { full: { type: 'group_dead_letters', ...group, requestId: 1n }, minimal: { type: 'group_dead_letters', ...group, requestId: 1n } },
  group_dead_letter_list: { full: { type: 'group_dead_letter_list', offsets: [3n, big], requestId: 1n }, minimal: { type: 'group_dead_letter_list', offsets: [], requestId: 1n } },
  group_discard: { full: { type: 'group_discard', ...group, offset: 5n, requestId: 1n }, minimal: { type: 'group_discard', ...group, offset: 0n, requestId: 1n } },
  group_redrive: { full: { type: 'group_redrive', ...group, offset: 5n, requestId: 1n }, minimal: { type: 'group_redrive', ...group, offset: 0n, requestId: 1n } },
};

function decodeText(text: string): ReturnType<typeof decodeMessage> {
  return decodeMessage(Buffer.from(text, 'utf8'));
}

function refused(text: string | Buffer, reason: RegExp): void {
  const r = typeof text === 'string' ? decodeText(text) : decodeMessage(text);
  assert.ok(!r.ok, `decoded ${String(text)}`);
  assert.match(r.reason, reason);
}

describe('felix messages', () => {
  it('has a sample of every message type (43 in the v0.5.0 wire)', () => {
    assert.equal(messageTypes.length, 43);
    assert.deepEqual(Object.keys(samples).sort(), [...messageTypes].sort());
  });

  for (const type of Object.keys(samples) as MessageType[]) {
    it(`${type} round-trips, full and minimal`, () => {
      for (const m of [samples[type].full, samples[type].minimal]) {
        const payload = encodeMessagePayload(m);
        const d = decodeMessage(payload);
        assert.ok(d.ok, d.ok ? '' : d.reason);
        assert.deepEqual(d.value, m);
        // The JSON is valid for any parser, and `type` comes first.
        const parsed = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
        assert.equal(Object.keys(parsed)[0], 'type');
        assert.equal(parsed.type, type);
      }
    });
  }

  it('writes the always-serialized fields and omits the skipped ones (notes §3)', () => {
    const text = (m: FelixMessage): string => encodeMessagePayload(m).toString('utf8');
    assert.match(text(samples.cache_put.minimal), /"ttl_ms":null\}$/);
    assert.match(text(samples.cache_value.minimal), /"value":null\}$/);
    assert.match(text(samples.cache_event.minimal), /"expires_at_millis":0\}$/);
    assert.doesNotMatch(text(samples.cache_event.minimal), /"value"/);
    assert.match(text(samples.cache_watch_started.minimal), /"resnapshot":false\}$/);
    assert.doesNotMatch(text(samples.cache_watch.minimal), /retained/);
    assert.match(text(samples.cache_watch.full), /"retained":true/);
    assert.match(text(samples.group_poll.minimal), /"wait_ms":0,"request_id":1\}$/);
    assert.match(text(samples.group_records.full), /"attempts":0\}\]/);
    assert.equal(text(samples.subscribe.minimal), '{"type":"subscribe","tenant_id":"t1","namespace":"default","stream":"orders"}');
    assert.equal(text(samples.ok.full), '{"type":"ok"}');
  });

  it('reads defaults for fields the reference always writes but older peers may omit', () => {
    const poll = decodeText('{"type":"group_poll","tenant_id":"t","namespace":"n","stream":"s","shard":0,"group":"g","max_records":1,"request_id":1}');
    assert.ok(poll.ok && poll.value.type === 'group_poll' && poll.value.waitMs === 0n);
    const rec = decodeText('{"type":"group_records","records":[{"offset":1,"payload":""}],"request_id":1}');
    assert.ok(rec.ok && rec.value.type === 'group_records' && rec.value.records[0]!.attempts === 0);
    const put = decodeText('{"type":"cache_put","tenant_id":"t","namespace":"n","cache":"c","key":"k","value":""}');
    assert.ok(put.ok && put.value.type === 'cache_put' && put.value.ttlMs === null);
    const started = decodeText('{"type":"cache_watch_started","subscription_id":1,"resume_offset":2}');
    assert.ok(started.ok && started.value.type === 'cache_watch_started' && started.value.resnapshot === false);
  });

  it('ignores unknown fields, in any order, and accepts null for an optional field', () => {
    const d = decodeText(' {"stream":"s","extra":{"x":[1,2.5,null]},"namespace":"n","type":"subscribe","tenant_id":"t","shard":null} \n');
    assert.ok(d.ok, d.ok ? '' : d.reason);
    assert.deepEqual(d.value, { type: 'subscribe', tenantId: 't', namespace: 'n', stream: 's' });
  });

  it('refuses what the reference decoder refuses, with a reason', () => {
    refused('{"type":"frobnicate"}', /unknown message type "frobnicate"/);
    refused('{"tenant_id":"t"}', /missing field type/);
    refused('[1]', /JSON object/);
    refused('{"type":"error"}', /error\.message: missing field/);
    refused('{"type":"error","message":null}', /invalid type: null/);
    refused('{"type":"error","message":5}', /expected a string/);
    refused('{"type":"auth_ok","server_flags":65536}', /out of range for u16/);
    refused('{"type":"auth_ok","server_flags":-1}', /out of range for u16/);
    refused('{"type":"publish_ok","request_id":18446744073709551616}', /out of range for u64/);
    refused('{"type":"publish_ok","request_id":1e3}', /floating point/);
    refused('{"type":"publish_ok","request_id":"1"}', /expected u64/);
    refused('{"type":"counter_value","value":9223372036854775808,"request_id":1}', /out of range for i64/);
    refused('{"type":"publish","tenant_id":"t","namespace":"n","stream":"s","payload":"aGVsbG8"}', /invalid base64/);
    refused('{"type":"publish","tenant_id":"t","namespace":"n","stream":"s","payload":"aGVs bG8="}', /invalid base64/);
    refused('{"type":"publish","tenant_id":"t","namespace":"n","stream":"s","payload":"aGVsbG8=","ack":"always"}', /unknown variant "always"/);
    refused('{"type":"subscribe","tenant_id":"t","namespace":"n","stream":"s","start":{"offset":1,"x":2}}', /expected "latest"/);
    refused('{"type":"subscribe","tenant_id":"t","namespace":"n","stream":"s","start":"oldest"}', /expected "latest"/);
    refused('{"type":"cache_watch_started","subscription_id":1,"resume_offset":2,"resnapshot":null}', /invalid type: null/);
    refused('{"type":"publish_refused","request_id":1,"reason":"gap","message":""}', /unknown publish refusal reason/);
    refused('{"type":"ok","type":"ok"}', /duplicate field "type"/);
    refused('{"type":"ok"} x', /trailing characters/);
    refused('{"type":"ok"', /expected ',' or '}'/);
    refused('{"type":"e\u0001"}', /control character/);
    refused('{"type":"\\ud800"}', /lone leading surrogate/);
    refused('{"type":"\\udc00"}', /lone trailing surrogate/);
    refused('{"type":"\\q"}', /invalid escape/);
    refused(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), /not valid UTF-8/);
    refused(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"type":"ok"}')]), /unexpected character/);
    refused(`${'['.repeat(40)}${']'.repeat(40)}`, /nesting deeper than 32/);
    refused('', /unexpected end of input/);
  });

  it('parses JSON strings with escapes and surrogate pairs', () => {
    const r = parseJson('"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00"');
    assert.deepEqual(r, { ok: true, value: 'a"b\\c/d\b\f\n\r\t\u00e9😀' });
  });
});

describe('felix capability negotiation', () => {
  it('answers a legacy auth with ok and assumes the original flags', () => {
    const { reply, peer } = authReply({ type: 'auth', tenantId: 't', token: 'x' }, { flags: serverFlags, features: singleNodeFeatures });
    assert.deepEqual(reply, { type: 'ok' });
    assert.deepEqual(peer, { flags: 0x0007, features: 0 });
  });

  it('answers an auth with client_flags with auth_ok carrying the server flags and features', () => {
    const { reply, peer } = authReply({ type: 'auth', tenantId: 't', token: 'x', clientFlags: 25, clientFeatures: 2 }, { flags: serverFlags, features: singleNodeFeatures });
    assert.deepEqual(reply, { type: 'auth_ok', serverFlags: 0xff, serverFeatures: 0x3fc });
    assert.deepEqual(peer, { flags: 25, features: 2 });
    assert.deepEqual(brokerCapabilities(reply), { flags: 0xff, features: 0x3fc });
    assert.deepEqual(brokerCapabilities({ type: 'ok' }), { flags: 0x0007, features: 0 });
  });

  it('gates every featured request, and every gated type is a client request', () => {
    for (const type of Object.keys(requestFeature) as MessageType[]) assert.ok(clientMessageTypes.has(type), type);
    assert.equal(singleNodeFeatures & 0x3, 0, 'no topology or redirect on one node');
  });
});
