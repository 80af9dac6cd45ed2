// The replies of Cursus commands as typed values: `OK k=v` lines (docs/protocols/cursus-wire-v2.md
// §7.1, the shapes of §5) and JSON envelopes (§7.2), read strictly enough that a reply the SDK
// does not understand is a CursusProtocolError, not a silent zero.

import type { Fields } from '../../protocols/cursus/codec/index.js';
import { CursusProtocolError } from './errors.js';

const decimal = /^-?(0|[1-9][0-9]{0,15})$/;

/** The fields of an OK line, with typed getters that fail with the command's name. */
export class OkFields {
  private readonly map: Map<string, string>;

  constructor(
    readonly command: string,
    private readonly fields: Fields,
  ) {
    this.map = new Map(fields);
  }

  /** Every field, in the line's order. */
  entries(): Array<[string, string]> {
    return this.fields.map(([k, v]) => [k, v]);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  optString(key: string): string | undefined {
    return this.map.get(key);
  }

  string(key: string): string {
    const v = this.map.get(key);
    if (v === undefined) throw this.bad(key, 'is missing');
    return v;
  }

  int(key: string): number {
    const v = this.string(key);
    if (!decimal.test(v) || !Number.isSafeInteger(Number(v))) throw this.bad(key, `is not an integer: ${JSON.stringify(v)}`);
    return Number(v);
  }

  optInt(key: string): number | undefined {
    return this.map.has(key) ? this.int(key) : undefined;
  }

  bool(key: string): boolean {
    const v = this.string(key);
    if (v !== 'true' && v !== 'false') throw this.bad(key, `is not a boolean: ${JSON.stringify(v)}`);
    return v === 'true';
  }

  optBool(key: string): boolean | undefined {
    return this.map.has(key) ? this.bool(key) : undefined;
  }

  /** A comma-separated list; empty for an empty value. */
  list(key: string): string[] {
    const v = this.string(key);
    return v === '' ? [] : v.split(',');
  }

  /** `[0,1,2]` (or v1's `[0 1 2]`) as partition numbers. */
  partitions(key: string): number[] {
    const v = this.string(key).trim();
    if (!v.startsWith('[') || !v.endsWith(']')) throw this.bad(key, `is not a partition list: ${JSON.stringify(v)}`);
    const inner = v.slice(1, -1).trim();
    if (inner === '') return [];
    return inner.split(/[ ,]+/).map((p) => {
      if (!/^(0|[1-9][0-9]{0,9})$/.test(p)) throw this.bad(key, `holds ${JSON.stringify(p)}`);
      return Number(p);
    });
  }

  /** Embedded compact JSON (`snapshot=`, `brokers=`, `cluster=`, `proof=`). */
  json(key: string): unknown {
    const v = this.string(key);
    try {
      return JSON.parse(v) as unknown;
    } catch {
      throw this.bad(key, 'is not JSON');
    }
  }

  private bad(key: string, what: string): CursusProtocolError {
    return new CursusProtocolError(`${this.command} reply: field ${key} ${what}`);
  }
}

/** Reads a JSON envelope's values with the same strictness. */
export class JsonReader {
  constructor(
    readonly what: string,
    readonly value: Record<string, unknown>,
  ) {}

  static object(what: string, v: unknown): JsonReader {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CursusProtocolError(`${what} is not a JSON object`);
    return new JsonReader(what, v as Record<string, unknown>);
  }

  number(key: string): number {
    const v = this.value[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new CursusProtocolError(`${this.what}: ${key} is not a number`);
    return v;
  }

  optNumber(key: string): number | undefined {
    return this.value[key] === undefined ? undefined : this.number(key);
  }

  string(key: string): string {
    const v = this.value[key];
    if (typeof v !== 'string') throw new CursusProtocolError(`${this.what}: ${key} is not a string`);
    return v;
  }

  optString(key: string): string | undefined {
    return this.value[key] === undefined || this.value[key] === null ? undefined : this.string(key);
  }

  bool(key: string): boolean {
    const v = this.value[key];
    if (typeof v !== 'boolean') throw new CursusProtocolError(`${this.what}: ${key} is not a boolean`);
    return v;
  }

  object(key: string): JsonReader {
    return JsonReader.object(`${this.what}.${key}`, this.value[key]);
  }

  optObject(key: string): JsonReader | undefined {
    return this.value[key] === undefined || this.value[key] === null ? undefined : this.object(key);
  }

  /** An array (null reads as empty, as Go marshals a nil slice). */
  array(key: string): unknown[] {
    const v = this.value[key];
    if (v === null || v === undefined) return [];
    if (!Array.isArray(v)) throw new CursusProtocolError(`${this.what}: ${key} is not an array`);
    return v;
  }

  strings(key: string): string[] {
    return this.array(key).map((x) => {
      if (typeof x !== 'string') throw new CursusProtocolError(`${this.what}: ${key} holds a non-string`);
      return x;
    });
  }

  numbers(key: string): number[] {
    return this.array(key).map((x) => {
      if (typeof x !== 'number') throw new CursusProtocolError(`${this.what}: ${key} holds a non-number`);
      return x;
    });
  }
}

// ---- topic management ----

export type CleanupPolicy = 'delete' | 'compact' | 'delete,compact';
export type Partitioner = 'hash_key' | 'round_robin';
export type AuthPolicy = 'open' | 'deny_write' | 'deny_read' | 'acl';

/** The topic definition CREATE answers with. */
export interface TopicDefinition {
  topic: string;
  partitions: number;
  cleanupPolicy: string;
  partitioner: string;
  authPolicy: string;
  readAcl: string[];
  writeAcl: string[];
  retentionHours: number;
  retentionBytes: number;
  revision: number;
  replicationFactor: number;
  idempotent: boolean;
  eventSourcing: boolean;
  lifecycleEpoch: number;
  /** null: the broker's default applies. */
  minInSyncReplicas: number | null;
  effectiveMinInSyncReplicas: number;
}

function minIsr(f: OkFields, key: string): number | null {
  return f.optString(key) === 'default' ? null : f.int(key);
}

export function topicDefinition(f: OkFields): TopicDefinition {
  return {
    topic: f.string('topic'),
    partitions: f.int('partitions'),
    cleanupPolicy: f.string('cleanup_policy'),
    partitioner: f.string('partitioner'),
    authPolicy: f.string('auth_policy'),
    readAcl: f.list('read_acl'),
    writeAcl: f.list('write_acl'),
    retentionHours: f.int('retention_hours'),
    retentionBytes: f.int('retention_bytes'),
    revision: f.int('revision'),
    replicationFactor: f.int('replication_factor'),
    idempotent: f.bool('idempotent'),
    eventSourcing: f.bool('event_sourcing'),
    lifecycleEpoch: f.int('lifecycle_epoch'),
    minInSyncReplicas: minIsr(f, 'min_in_sync_replicas'),
    effectiveMinInSyncReplicas: f.int('effective_min_in_sync_replicas'),
  };
}

export interface AlterTopicConfigResult {
  topic: string;
  minInSyncReplicas: number | null;
  effectiveMinInSyncReplicas: number;
  revision: number;
}

export function alterTopicConfigResult(f: OkFields): AlterTopicConfigResult {
  return {
    topic: f.string('topic'),
    minInSyncReplicas: minIsr(f, 'min_in_sync_replicas'),
    effectiveMinInSyncReplicas: f.int('effective_min_in_sync_replicas'),
    revision: f.int('revision'),
  };
}

export interface DeleteTopicResult {
  topic: string;
  deleted: boolean;
  /** The topic is gone; node-local cleanup will be retried. */
  cleanupPending: boolean;
}

export function deleteTopicResult(f: OkFields): DeleteTopicResult {
  return { topic: f.string('topic'), deleted: f.bool('deleted'), cleanupPending: f.optBool('cleanup_pending') ?? false };
}

export interface TruncateTopicResult {
  topic: string;
  revision: number;
  lifecycleEpoch: number;
  cleanupPending: boolean;
}

export function truncateTopicResult(f: OkFields): TruncateTopicResult {
  if (!f.bool('truncated')) throw new CursusProtocolError('TRUNCATE reply: truncated=false with status OK');
  return { topic: f.string('topic'), revision: f.int('revision'), lifecycleEpoch: f.int('lifecycle_epoch'), cleanupPending: f.optBool('cleanup_pending') ?? false };
}

/** METADATA: leaders and epochs in partition order, and the topic's policy. */
export interface TopicMetadata extends Omit<TopicDefinition, 'minInSyncReplicas' | 'effectiveMinInSyncReplicas'> {
  leaders: string[];
  epochs: number[];
}

export function topicMetadata(f: OkFields): TopicMetadata {
  return {
    topic: f.string('topic'),
    partitions: f.int('partitions'),
    leaders: f.list('leaders'),
    epochs: f.list('epochs').map(Number),
    revision: f.int('revision'),
    replicationFactor: f.int('replication_factor'),
    idempotent: f.bool('idempotent'),
    eventSourcing: f.bool('event_sourcing'),
    cleanupPolicy: f.string('cleanup_policy'),
    partitioner: f.string('partitioner'),
    authPolicy: f.string('auth_policy'),
    readAcl: f.list('read_acl'),
    writeAcl: f.list('write_acl'),
    retentionHours: f.int('retention_hours'),
    retentionBytes: f.int('retention_bytes'),
    lifecycleEpoch: f.int('lifecycle_epoch'),
  };
}

/** DESCRIBE's JSON envelope (§7.2), in camelCase. */
export interface TopicDescription {
  topic: string;
  definition: {
    name: string;
    revision: number;
    partitions: number;
    replicationFactor: number;
    idempotent: boolean;
    eventSourcing: boolean;
    policy: { cleanupPolicy: string; partitioner: string; authPolicy: string };
  };
  partitions: Array<{ id: number; leader: string; replicas: string[]; isr: string[]; leo: number; hwm: number }>;
}

export function topicDescription(v: unknown): TopicDescription {
  const o = JsonReader.object('DESCRIBE reply', v);
  const d = o.object('definition');
  const policy = d.object('policy');
  return {
    topic: o.string('topic'),
    definition: {
      name: d.string('name'),
      revision: d.number('revision'),
      partitions: d.number('partitions'),
      replicationFactor: d.number('replication_factor'),
      idempotent: d.bool('idempotent'),
      eventSourcing: d.bool('event_sourcing'),
      policy: { cleanupPolicy: policy.string('cleanup_policy'), partitioner: policy.string('partitioner'), authPolicy: policy.string('auth_policy') },
    },
    partitions: o.array('partitions').map((x) => {
      const p = JsonReader.object('DESCRIBE partition', x);
      return { id: p.number('id'), leader: p.optString('leader') ?? '', replicas: p.strings('replicas'), isr: p.strings('isr'), leo: p.number('leo'), hwm: p.number('hwm') };
    }),
  };
}

export interface PartitionOffsets {
  partition: number;
  /** First retained offset. */
  earliest: number;
  /** Next readable committed offset (what autoOffsetReset=latest resumes from). */
  latest: number;
  leo: number;
  hwm: number;
}

/** `offsets=P0:earliest=N:latest=N:leo=N:hwm=N,P1:...` */
export function partitionOffsets(f: OkFields): PartitionOffsets[] {
  return f.list('offsets').map((entry) => {
    const parts = entry.split(':');
    const m = /^P(0|[1-9][0-9]{0,9})$/.exec(parts[0] ?? '');
    const values = new Map(parts.slice(1).map((kv) => kv.split('=') as [string, string]));
    const n = (k: string): number => {
      const v = values.get(k);
      if (v === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(v)) throw new CursusProtocolError(`LIST_OFFSETS reply: entry ${JSON.stringify(entry)} has no valid ${k}`);
      return Number(v);
    };
    if (m === null) throw new CursusProtocolError(`LIST_OFFSETS reply: entry ${JSON.stringify(entry)} does not start with P<partition>`);
    return { partition: Number(m[1]), earliest: n('earliest'), latest: n('latest'), leo: n('leo'), hwm: n('hwm') };
  });
}

export interface Coordinator {
  coordinatorId: string;
  host: string;
  port: number;
}

export function coordinator(f: OkFields): Coordinator {
  return { coordinatorId: f.string('coordinator_id'), host: f.string('host'), port: f.int('port') };
}

// ---- publishing ----

/** PUBLISH's AckResponse (§7.2). */
export interface AckResponse {
  lastOffset: number;
  producerId: string;
  producerEpoch: number;
  seqStart: number;
  seqEnd: number;
  /** The leader's address, in a cluster. */
  leader?: string;
}

export function ackResponse(v: unknown): AckResponse {
  const o = JsonReader.object('PUBLISH AckResponse', v);
  if (o.optString('status') !== 'OK') throw new CursusProtocolError('PUBLISH AckResponse without "status":"OK"');
  const leader = o.optString('leader');
  return {
    lastOffset: o.number('last_offset'),
    producerId: o.string('producer_id'),
    producerEpoch: o.number('producer_epoch'),
    seqStart: o.number('seq_start'),
    seqEnd: o.number('seq_end'),
    ...(leader !== undefined ? { leader } : {}),
  };
}

// ---- groups ----

export interface JoinGroupResult {
  generation: number;
  /** The member ID the broker gave (the requested one with a suffix). */
  memberId: string;
  /** Single-topic groups: the assigned partitions. */
  assignments: number[];
  /** Multi-topic groups: the assigned topic-partitions. */
  topicAssignments: Array<{ topic: string; partition: number }>;
}

/** `topic_assignments=<topic>:P<partition>,...` */
function topicAssignments(f: OkFields): Array<{ topic: string; partition: number }> {
  return f.list('topic_assignments').map((entry) => {
    const m = /^(.+):P(0|[1-9][0-9]{0,9})$/.exec(entry);
    if (m === null) throw new CursusProtocolError(`JOIN_GROUP reply: topic assignment ${JSON.stringify(entry)}`);
    return { topic: m[1]!, partition: Number(m[2]) };
  });
}

export function joinGroupResult(f: OkFields): JoinGroupResult {
  return {
    generation: f.int('generation'),
    memberId: f.string('member'),
    assignments: f.has('assignments') ? f.partitions('assignments') : [],
    topicAssignments: f.has('topic_assignments') ? topicAssignments(f) : [],
  };
}

export interface GroupStatus {
  groupName: string;
  topicName: string;
  state: string;
  generation: number;
  memberCount: number;
  partitionCount: number;
  members: Array<{ memberId: string; lastHeartbeat: string; assignments: number[] }>;
  lastRebalance: string;
}

export function groupStatus(v: unknown): GroupStatus {
  const o = JsonReader.object('GROUP_STATUS reply', v);
  return {
    groupName: o.string('group_name'),
    topicName: o.string('topic_name'),
    state: o.string('state'),
    generation: o.number('generation'),
    memberCount: o.number('member_count'),
    partitionCount: o.number('partition_count'),
    members: o.array('members').map((x) => {
      const m = JsonReader.object('GROUP_STATUS member', x);
      return { memberId: m.string('member_id'), lastHeartbeat: m.string('last_heartbeat'), assignments: m.numbers('assignments') };
    }),
    lastRebalance: o.string('last_rebalance'),
  };
}

// ---- transactions ----

export interface ProducerSession {
  transactionalId: string;
  producerId: string;
  epoch: number;
}

export interface EndTxnResult {
  transactionalId: string;
  state: string;
  messages: number;
  offsets: number;
}

export interface TxnStatus {
  transactionalId: string;
  mode: string;
  state: string;
  messages: number;
  participants: number;
  offsets: number;
}

export function txnStatus(f: OkFields): TxnStatus {
  return {
    transactionalId: f.string('transactional_id'),
    mode: f.string('mode'),
    state: f.string('state'),
    messages: f.int('messages'),
    participants: f.int('participants'),
    offsets: f.int('offsets'),
  };
}

// ---- event sourcing ----

export interface Snapshot {
  version: number;
  payload: string;
}

export function snapshotOf(what: string, v: unknown): Snapshot | null {
  if (v === null) return null;
  const o = JsonReader.object(what, v);
  return { version: o.number('version'), payload: o.string('payload') };
}

/** READ_STREAM's first frame. */
export interface ReadStreamEnvelope {
  topic: string;
  key: string;
  partition: number;
  /** Events in the batch frame (the snapshot not included). */
  count: number;
  snapshot: Snapshot | null;
}

export function readStreamEnvelope(v: unknown): ReadStreamEnvelope {
  const o = JsonReader.object('READ_STREAM envelope', v);
  if (o.optString('status') !== 'OK') throw new CursusProtocolError('READ_STREAM envelope without "status":"OK"');
  return {
    topic: o.string('topic'),
    key: o.string('key'),
    partition: o.number('partition'),
    count: o.number('count'),
    snapshot: snapshotOf('READ_STREAM snapshot', o.value['snapshot'] ?? null),
  };
}
