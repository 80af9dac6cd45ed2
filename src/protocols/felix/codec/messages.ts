// Felix wire v1 JSON messages (docs/protocols/felix-wire-v1.md §4): every message type of the
// v0.5.0 wire (notes §8), as a tagged union and one table of fields per type.
//
//   payload := {"type":"<snake_case type>", <fields in the order of the table>}
//
// The table is the reference's field order, which the encoder must reproduce exactly (the public
// vectors are checked by decode -> re-encode -> byte compare). Properties are the camelCase of the
// wire names; u16/u32 are numbers, u64/i64 bigints, byte fields Buffers (base64 on the wire).
// Decoding ignores unknown keys and refuses an unknown type, a duplicate key, a missing required
// field and a value of the wrong type, each with the reason.

import { chunksLength, encodeFrameHeader, type Decoded } from './frame.js';
import { parseJsonPayload, type JsonValue } from './json.js';
import { bool, bytes, field, i64, listOf, oneOf, readFields, str, struct, u16, u32, u64, writeFields, type FieldSpec, type FieldType } from './values.js';
import { jsonKind } from './json.js';

export type AckMode = 'none' | 'per_message' | 'per_batch';
export type CursorErrorReason = 'too_old' | 'in_future';
/** subscribe.start: "latest", "earliest" or {"offset":n}. */
export type StartPosition = 'latest' | 'earliest' | { offset: bigint };
/** publish_refused.reason. */
export type PublishRefusalReason =
  | { kind: 'sequence_gap'; expected: bigint }
  | { kind: 'unknown_producer' }
  | { kind: 'sequence_expired' }
  | { kind: 'not_leader'; nodeId: string; addr?: string };

export interface BrokerEndpoint {
  nodeId: string;
  addr: string;
}

export interface GroupRecord {
  offset: bigint;
  payload: Buffer;
  /** Deliveries including this one; 0 = not reported. */
  attempts: number;
}

interface StreamScope {
  tenantId: string;
  namespace: string;
  stream: string;
}

interface CacheScope {
  tenantId: string;
  namespace: string;
  cache: string;
  key: string;
}

interface GroupScope extends StreamScope {
  shard: number;
  group: string;
}

// Session.
export interface Auth { type: 'auth'; tenantId: string; token: string; clientFlags?: number; clientFeatures?: number }
export interface AuthOk { type: 'auth_ok'; serverFlags: number; serverFeatures?: number }
export interface Ok { type: 'ok' }
export interface ErrorMessage { type: 'error'; message: string }
// Topology and routing.
export interface Topology { type: 'topology' }
export interface TopologyView { type: 'topology_view'; brokers: BrokerEndpoint[] }
export interface NotLeader { type: 'not_leader'; nodeId: string; addr?: string; generation: bigint }
export interface StreamShards extends StreamScope { type: 'stream_shards'; requestId: bigint }
export interface StreamShardsView { type: 'stream_shards_view'; shards: number; requestId: bigint }
// Publishing.
export interface Publish extends StreamScope { type: 'publish'; payload: Buffer; key?: Buffer; requestId?: bigint; ack?: AckMode }
export interface PublishBatchMessage extends StreamScope { type: 'publish_batch'; payloads: Buffer[]; key?: Buffer; requestId?: bigint; ack?: AckMode }
export interface PublishOk { type: 'publish_ok'; requestId: bigint }
export interface PublishError { type: 'publish_error'; requestId: bigint; message: string }
export interface ProducerInit { type: 'producer_init'; requestId: bigint }
export interface ProducerInitOk { type: 'producer_init_ok'; requestId: bigint; producerId: bigint }
export interface PublishIdempotent extends StreamScope { type: 'publish_idempotent'; payloads: Buffer[]; key?: Buffer; requestId: bigint; producerId: bigint; sequence: bigint }
export interface PublishRefused { type: 'publish_refused'; requestId: bigint; reason: PublishRefusalReason; message: string }
// Subscribing.
export interface Subscribe extends StreamScope { type: 'subscribe'; subscriptionId?: bigint; start?: StartPosition; shard?: number }
export interface Subscribed { type: 'subscribed'; subscriptionId: bigint; startOffset?: bigint; liveOffset?: bigint }
export interface SubscribeCursorError { type: 'subscribe_cursor_error'; reason: CursorErrorReason; requested: bigint; available: bigint }
export interface EventStreamHello { type: 'event_stream_hello'; subscriptionId: bigint }
export interface EventMessage extends StreamScope { type: 'event'; payload: Buffer; offset?: bigint }
export interface EventBatchMessage extends StreamScope { type: 'event_batch'; payloads: Buffer[]; baseOffset?: bigint }
// Caches and counters.
export interface CachePut extends CacheScope { type: 'cache_put'; value: Buffer; requestId?: bigint; ttlMs: bigint | null }
export interface CacheGet extends CacheScope { type: 'cache_get'; requestId?: bigint }
export interface CacheDelete extends CacheScope { type: 'cache_delete'; requestId?: bigint }
export interface CacheValue extends CacheScope { type: 'cache_value'; value: Buffer | null; requestId?: bigint }
export interface CacheOk { type: 'cache_ok'; requestId: bigint }
export interface CacheWatch { type: 'cache_watch'; tenantId: string; namespace: string; cache: string; key?: string; prefix?: string; shard?: number; fromOffset?: bigint; retained: boolean; subscriptionId?: bigint }
export interface CacheWatchStarted { type: 'cache_watch_started'; subscriptionId: bigint; resumeOffset: bigint; resnapshot: boolean; retainedCount?: bigint }
export interface CacheEvent { type: 'cache_event'; key: string; value?: Buffer; offset: bigint; expiresAtMillis: bigint }
export interface CacheWatchLagged { type: 'cache_watch_lagged'; resumeFrom: bigint }
export interface CounterAdd extends CacheScope { type: 'counter_add'; delta: bigint; requestId: bigint }
export interface CounterGet extends CacheScope { type: 'counter_get'; requestId: bigint }
export interface CounterValue { type: 'counter_value'; value?: bigint; requestId: bigint }
// Consumer groups.
export interface GroupPoll extends GroupScope { type: 'group_poll'; maxRecords: number; waitMs: bigint; requestId: bigint }
export interface GroupRecords { type: 'group_records'; records: GroupRecord[]; requestId: bigint }
export interface GroupAck extends GroupScope { type: 'group_ack'; offset: bigint; requestId: bigint }
export interface GroupNack extends GroupScope { type: 'group_nack'; offset: bigint; requestId: bigint }
export interface GroupDeadLetters extends GroupScope { type: 'group_dead_letters'; requestId: bigint }
export interface GroupDeadLetterList { type: 'group_dead_letter_list'; offsets: bigint[]; requestId: bigint }
export interface GroupDiscard extends GroupScope { type: 'group_discard'; offset: bigint; requestId: bigint }
export interface GroupRedrive extends GroupScope { type: 'group_redrive'; offset: bigint; requestId: bigint }

export type FelixMessage =
  | Auth | AuthOk | Ok | ErrorMessage
  | Topology | TopologyView | NotLeader | StreamShards | StreamShardsView
  | Publish | PublishBatchMessage | PublishOk | PublishError | ProducerInit | ProducerInitOk | PublishIdempotent | PublishRefused
  | Subscribe | Subscribed | SubscribeCursorError | EventStreamHello | EventMessage | EventBatchMessage
  | CachePut | CacheGet | CacheDelete | CacheValue | CacheOk | CacheWatch | CacheWatchStarted | CacheEvent | CacheWatchLagged
  | CounterAdd | CounterGet | CounterValue
  | GroupPoll | GroupRecords | GroupAck | GroupNack | GroupDeadLetters | GroupDeadLetterList | GroupDiscard | GroupRedrive;

export type MessageType = FelixMessage['type'];
export type MessageOf<T extends MessageType> = Extract<FelixMessage, { type: T }>;

const ackMode = oneOf<AckMode>(['none', 'per_message', 'per_batch']);
const cursorReason = oneOf<CursorErrorReason>(['too_old', 'in_future']);
const payloads = listOf(bytes);

/** serde's externally tagged enum: a unit variant is its name, a newtype variant {name: value}. */
const startPosition: FieldType<StartPosition> = {
  read(v, what) {
    if (v === 'latest' || v === 'earliest') return { ok: true, value: v };
    if (v instanceof Map && v.size === 1 && v.has('offset')) {
      const r = u64.read(v.get('offset')!, `${what}.offset`);
      return r.ok ? { ok: true, value: { offset: r.value } } : r;
    }
    return { ok: false, reason: `${what}: expected "latest", "earliest" or {"offset":n}, got ${jsonKind(v)}` };
  },
  write: (v) => (typeof v === 'string' ? `"${v}"` : `{"offset":${v.offset}}`),
};

const sequenceGapFields = [field('expected', u64)];
const notLeaderReasonFields = [field('nodeId', str), field('addr', str, 'optional')];

const refusalReason: FieldType<PublishRefusalReason> = {
  read(v, what) {
    if (v === 'unknown_producer' || v === 'sequence_expired') return { ok: true, value: { kind: v } };
    if (v instanceof Map && v.size === 1) {
      const [name, body] = [...v.entries()][0]!;
      const fields = name === 'sequence_gap' ? sequenceGapFields : name === 'not_leader' ? notLeaderReasonFields : null;
      if (fields !== null && body instanceof Map) {
        const out: Record<string, unknown> = { kind: name };
        const problem = readFields(body, fields, out, `${what}.${name}`);
        return problem === null ? { ok: true, value: out as PublishRefusalReason } : { ok: false, reason: problem };
      }
    }
    return { ok: false, reason: `${what}: unknown publish refusal reason` };
  },
  write(v) {
    switch (v.kind) {
      case 'unknown_producer':
      case 'sequence_expired':
        return `"${v.kind}"`;
      case 'sequence_gap':
        return `{"sequence_gap":{${writeFields(v as unknown as Record<string, unknown>, sequenceGapFields, false)}}}`;
      case 'not_leader':
        return `{"not_leader":{${writeFields(v as unknown as Record<string, unknown>, notLeaderReasonFields, false)}}}`;
    }
  },
};

const brokerEndpoint = struct<BrokerEndpoint>('BrokerEndpoint', [field('nodeId', str), field('addr', str)]);
const groupRecord = struct<GroupRecord>('GroupRecord', [field('offset', u64), field('payload', bytes), field('attempts', u32, 'defaulted', 0)]);

const streamScope = [field('tenantId', str), field('namespace', str), field('stream', str)];
const cacheScope = [field('tenantId', str), field('namespace', str), field('cache', str), field('key', str)];
const groupScope = [...streamScope, field('shard', u32), field('group', str)];
const requestId = field('requestId', u64);
const optionalRequestId = field('requestId', u64, 'optional');

/** Every message type with its fields in wire order (notes §8). */
export const messageFields: { readonly [T in MessageType]: readonly FieldSpec[] } = {
  auth: [field('tenantId', str), field('token', str), field('clientFlags', u16, 'optional'), field('clientFeatures', u32, 'optional')],
  auth_ok: [field('serverFlags', u16), field('serverFeatures', u32, 'optional')],
  ok: [],
  error: [field('message', str)],
  topology: [],
  topology_view: [field('brokers', listOf(brokerEndpoint))],
  not_leader: [field('nodeId', str), field('addr', str, 'optional'), field('generation', u64)],
  stream_shards: [...streamScope, requestId],
  stream_shards_view: [field('shards', u32), requestId],
  publish: [...streamScope, field('payload', bytes), field('key', bytes, 'optional'), optionalRequestId, field('ack', ackMode, 'optional')],
  publish_batch: [...streamScope, field('payloads', payloads), field('key', bytes, 'optional'), optionalRequestId, field('ack', ackMode, 'optional')],
  publish_ok: [requestId],
  publish_error: [requestId, field('message', str)],
  producer_init: [requestId],
  producer_init_ok: [requestId, field('producerId', u64)],
  publish_idempotent: [...streamScope, field('payloads', payloads), field('key', bytes, 'optional'), requestId, field('producerId', u64), field('sequence', u64)],
  publish_refused: [requestId, field('reason', refusalReason), field('message', str)],
  subscribe: [...streamScope, field('subscriptionId', u64, 'optional'), field('start', startPosition, 'optional'), field('shard', u32, 'optional')],
  subscribed: [field('subscriptionId', u64), field('startOffset', u64, 'optional'), field('liveOffset', u64, 'optional')],
  subscribe_cursor_error: [field('reason', cursorReason), field('requested', u64), field('available', u64)],
  event_stream_hello: [field('subscriptionId', u64)],
  event: [...streamScope, field('payload', bytes), field('offset', u64, 'optional')],
  event_batch: [...streamScope, field('payloads', payloads), field('baseOffset', u64, 'optional')],
  cache_put: [...cacheScope, field('value', bytes), optionalRequestId, field('ttlMs', u64, 'nullable')],
  cache_get: [...cacheScope, optionalRequestId],
  cache_delete: [...cacheScope, optionalRequestId],
  cache_value: [...cacheScope, field('value', bytes, 'nullable'), optionalRequestId],
  cache_ok: [requestId],
  cache_watch: [
    field('tenantId', str),
    field('namespace', str),
    field('cache', str),
    field('key', str, 'optional'),
    field('prefix', str, 'optional'),
    field('shard', u32, 'optional'),
    field('fromOffset', u64, 'optional'),
    field('retained', bool, 'omitDefault', false),
    field('subscriptionId', u64, 'optional'),
  ],
  cache_watch_started: [field('subscriptionId', u64), field('resumeOffset', u64), field('resnapshot', bool, 'defaulted', false), field('retainedCount', u64, 'optional')],
  cache_event: [field('key', str), field('value', bytes, 'optional'), field('offset', u64), field('expiresAtMillis', u64, 'defaulted', 0n)],
  cache_watch_lagged: [field('resumeFrom', u64)],
  counter_add: [...cacheScope, field('delta', i64), requestId],
  counter_get: [...cacheScope, requestId],
  counter_value: [field('value', i64, 'optional'), requestId],
  group_poll: [...groupScope, field('maxRecords', u32), field('waitMs', u64, 'defaulted', 0n), requestId],
  group_records: [field('records', listOf(groupRecord)), requestId],
  group_ack: [...groupScope, field('offset', u64), requestId],
  group_nack: [...groupScope, field('offset', u64), requestId],
  group_dead_letters: [...groupScope, requestId],
  group_dead_letter_list: [field('offsets', listOf(u64)), requestId],
  group_discard: [...groupScope, field('offset', u64), requestId],
  group_redrive: [...groupScope, field('offset', u64), requestId],
};

export const messageTypes = Object.keys(messageFields) as MessageType[];

function isMessageType(t: string): t is MessageType {
  return Object.prototype.hasOwnProperty.call(messageFields, t);
}

/** Decodes a JSON payload (a frame with flags 0) into a message. */
export function decodeMessage(payload: Buffer): Decoded<FelixMessage> {
  const parsed = parseJsonPayload(payload);
  if (!parsed.ok) return parsed;
  return messageFromJson(parsed.value);
}

/** A parsed JSON value as a message. */
export function messageFromJson(v: JsonValue): Decoded<FelixMessage> {
  if (!(v instanceof Map)) return { ok: false, reason: `a message is a JSON object, not ${jsonKind(v)}` };
  const type = v.get('type');
  if (type === undefined) return { ok: false, reason: 'missing field type' };
  if (typeof type !== 'string') return { ok: false, reason: `type: invalid type: ${jsonKind(type)}` };
  if (!isMessageType(type)) return { ok: false, reason: `unknown message type ${JSON.stringify(type)}` };
  const out: Record<string, unknown> = { type };
  const problem = readFields(v, messageFields[type], out, type);
  return problem === null ? { ok: true, value: out as unknown as FelixMessage } : { ok: false, reason: problem };
}

/** The JSON payload of a message, fields in wire order. */
export function encodeMessagePayload(m: FelixMessage): Buffer {
  const fields = writeFields(m as unknown as Record<string, unknown>, messageFields[m.type], true);
  return Buffer.from(`{"type":"${m.type}"${fields}}`, 'utf8');
}

/** A whole JSON frame (header, payload) as chunks for a write. */
export function encodeMessage(m: FelixMessage): Buffer[] {
  const payload = encodeMessagePayload(m);
  return [encodeFrameHeader(0, payload.length), payload];
}

/** A whole JSON frame as one buffer. */
export function encodeMessageFrame(m: FelixMessage): Buffer {
  const chunks = encodeMessage(m);
  return Buffer.concat(chunks, chunksLength(chunks));
}
