// Topic management commands (spec §4 "Topic Management", docs/protocols/cursus-wire-v2.md §5):
// CREATE, ALTER_TOPIC_CONFIG, DELETE, TRUNCATE, LIST, DESCRIBE, METADATA. The rules (presence-aware
// patch, revisions, immutables, guards) are the topic service's (../topics.ts); here the CRQ2
// fields are read and the replies written in the order the spec lists their fields.

import { partitionsPerTopicMax } from '../../../core/catalog.js';
import { optionalBool, optionalInt, optionalList, optionalText, requiredInt, requiredText } from '../args.js';
import type { Fields } from '../codec/lines.js';
import { CursusFailure, type CursusCommandHandler, type CursusContext, type CursusRequest } from '../handler.js';
import { authPolicies, partitioners, type CursusAuthPolicy, type CursusPartitioner } from '../topic-table.js';
import { assertTopicName, type CursusCleanupPolicy, type CursusTopicDefinition, type CursusTopicPatch } from '../topics.js';

/** Replication factors a definition may state (one node keeps one copy whatever it says). */
const replicationFactorMax = 255;

function oneOf<T extends string>(req: CursusRequest, key: string, allowed: readonly T[]): T | undefined {
  const v = optionalText(req, key);
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw CursusFailure.of(`invalid_${key}`, [['command', req.command]], `${key} must be one of ${allowed.join(', ')}`);
  return v as T;
}

/** `delete`, `compact`, `delete,compact` (either order, spaces ignored). */
function cleanupPolicyOf(req: CursusRequest): CursusCleanupPolicy | undefined {
  const v = optionalText(req, 'cleanup_policy');
  if (v === undefined) return undefined;
  const parts = [...new Set(v.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== ''))].sort();
  const joined = parts.join(',');
  if (joined === 'delete' || joined === 'compact') return joined;
  if (joined === 'compact,delete') return 'delete,compact';
  throw CursusFailure.of('invalid_cleanup_policy', [['command', req.command]], 'cleanup_policy must be delete, compact or delete,compact');
}

/** A count, or `default` (null) for the broker's fallback. */
function minInSyncReplicasOf(req: CursusRequest): number | null | undefined {
  if (optionalText(req, 'min_in_sync_replicas') === 'default') return null;
  return optionalInt(req, 'min_in_sync_replicas', 1, replicationFactorMax);
}

/** CREATE's fields, only those given. */
export function topicPatchOf(req: CursusRequest): CursusTopicPatch {
  const patch: CursusTopicPatch = {};
  const set = <K extends keyof CursusTopicPatch>(key: K, value: CursusTopicPatch[K] | undefined): void => {
    if (value !== undefined) patch[key] = value;
  };
  set('partitions', optionalInt(req, 'partitions', 1, partitionsPerTopicMax));
  set('idempotent', optionalBool(req, 'idempotent'));
  set('eventSourcing', optionalBool(req, 'event_sourcing'));
  set('aggregateReplay', optionalBool(req, 'aggregate_replay'));
  set('replicationFactor', optionalInt(req, 'replication_factor', 1, replicationFactorMax));
  set('minInSyncReplicas', minInSyncReplicasOf(req));
  set('cleanupPolicy', cleanupPolicyOf(req));
  set('retentionHours', optionalInt(req, 'retention_hours', 0));
  set('retentionBytes', optionalInt(req, 'retention_bytes', 0));
  set('partitioner', oneOf<CursusPartitioner>(req, 'partitioner', partitioners));
  set('authPolicy', oneOf<CursusAuthPolicy>(req, 'auth_policy', authPolicies));
  set('readAcl', optionalList(req, 'read_acl'));
  set('writeAcl', optionalList(req, 'write_acl'));
  return patch;
}

function minInSyncText(value: number | null): string {
  return value === null ? 'default' : String(value);
}

/** The CREATE reply (spec: "Response: OK topic= partitions= ..."). */
export function createReplyFields(ctx: CursusContext, d: CursusTopicDefinition): Fields {
  return [
    ['topic', d.name],
    ['partitions', String(d.partitions)],
    ['cleanup_policy', d.cleanupPolicy],
    ['partitioner', d.partitioner],
    ['auth_policy', d.authPolicy],
    ['read_acl', d.readAcl.join(',')],
    ['write_acl', d.writeAcl.join(',')],
    ['retention_hours', String(d.retentionHours)],
    ['retention_bytes', String(d.retentionBytes)],
    ['revision', String(d.revision)],
    ['replication_factor', String(d.replicationFactor)],
    ['idempotent', String(d.idempotent)],
    ['event_sourcing', String(d.eventSourcing)],
    ['lifecycle_epoch', String(d.lifecycleEpoch)],
    ['min_in_sync_replicas', minInSyncText(d.minInSyncReplicas)],
    ['effective_min_in_sync_replicas', String(ctx.services.topics.effectiveMinInSyncReplicas(d))],
  ];
}

/** The topic named by `topic`: a valid name, and a topic that exists. */
function requireTopic(ctx: CursusContext, req: CursusRequest): CursusTopicDefinition {
  const name = requiredText(req, 'topic');
  assertTopicName(name);
  return ctx.services.topics.require(name);
}

const create: CursusCommandHandler = {
  command: 'CREATE',
  permissions: ['admin'],
  async handle(ctx, req) {
    const name = requiredText(req, 'topic');
    const { definition } = await ctx.services.topics.create(name, topicPatchOf(req));
    return { kind: 'text', fields: createReplyFields(ctx, definition) };
  },
};

const alterTopicConfig: CursusCommandHandler = {
  command: 'ALTER_TOPIC_CONFIG',
  permissions: ['admin'],
  async handle(ctx, req) {
    const name = requiredText(req, 'topic');
    assertTopicName(name);
    const value = minInSyncReplicasOf(req);
    if (value === undefined) throw CursusFailure.of('missing_min_in_sync_replicas', [['command', req.command]]);
    const { definition: d } = await ctx.services.topics.alterMinInSyncReplicas(name, value);
    return {
      kind: 'text',
      fields: [
        ['topic', d.name],
        ['min_in_sync_replicas', minInSyncText(d.minInSyncReplicas)],
        ['effective_min_in_sync_replicas', String(ctx.services.topics.effectiveMinInSyncReplicas(d))],
        ['revision', String(d.revision)],
      ],
    };
  },
};

const deleteTopic: CursusCommandHandler = {
  command: 'DELETE',
  permissions: ['admin'],
  async handle(ctx, req) {
    const name = requiredText(req, 'topic');
    const ifExistsText = optionalText(req, 'if_exists');
    if (ifExistsText !== undefined && ifExistsText !== 'true' && ifExistsText !== 'false') {
      throw CursusFailure.of('invalid_if_exists', [['command', req.command]], 'if_exists must be true or false');
    }
    assertTopicName(name);
    const deleted = await ctx.services.topics.delete(name, ifExistsText === 'true');
    return { kind: 'text', fields: [['topic', name], ['deleted', String(deleted)]] };
  },
};

const truncate: CursusCommandHandler = {
  command: 'TRUNCATE',
  permissions: ['admin'],
  async handle(ctx, req) {
    const name = requiredText(req, 'topic');
    const expected = requiredInt(req, 'expected_revision', 0);
    assertTopicName(name);
    const d = await ctx.services.topics.truncate(name, expected);
    return {
      kind: 'text',
      fields: [['topic', d.name], ['truncated', 'true'], ['revision', String(d.revision)], ['lifecycle_epoch', String(d.lifecycleEpoch)], ['leo', '0'], ['hwm', '0']],
    };
  },
};

const list: CursusCommandHandler = {
  command: 'LIST',
  permissions: ['topic.read'],
  handle(ctx) {
    const names = ctx.services.topics.names();
    return { kind: 'text', fields: [['count', String(names.length)], ['topics', names.join(',')]] };
  },
};

const describe: CursusCommandHandler = {
  command: 'DESCRIBE',
  permissions: ['topic.read'],
  handle(ctx, req) {
    const d = requireTopic(ctx, req);
    const { broker, node } = ctx.services;
    const topic = ctx.services.topics.coreTopic(d.name)!;
    const partitions = [];
    for (let p = 0; p < d.partitions; p++) {
      const state = broker.replicaState(topic, p);
      const ids = state.inSyncReplicas.map((id) => `broker-${id}`);
      partitions.push({ id: p, leader: node.hostPort(), replicas: state.replicas.map((id) => `broker-${id}`), isr: ids, leo: state.logEndOffset, hwm: state.highWatermark });
    }
    return {
      kind: 'json',
      value: {
        status: 'OK',
        topic: d.name,
        definition: {
          name: d.name,
          revision: d.revision,
          partitions: d.partitions,
          replication_factor: d.replicationFactor,
          idempotent: d.idempotent,
          event_sourcing: d.eventSourcing,
          policy: { cleanup_policy: d.cleanupPolicy, partitioner: d.partitioner, auth_policy: d.authPolicy },
        },
        partitions,
      },
    };
  },
};

const metadata: CursusCommandHandler = {
  command: 'METADATA',
  permissions: ['topic.read'],
  handle(ctx, req) {
    const d = requireTopic(ctx, req);
    const topic = ctx.services.topics.coreTopic(d.name)!;
    const leaders: string[] = [];
    const epochs: string[] = [];
    for (let p = 0; p < d.partitions; p++) {
      leaders.push(ctx.services.node.hostPort());
      epochs.push(String(ctx.services.broker.leadership(topic, p).leaderEpoch));
    }
    return {
      kind: 'text',
      fields: [
        ['topic', d.name],
        ['partitions', String(d.partitions)],
        ['leaders', leaders.join(',')],
        ['epochs', epochs.join(',')],
        ['revision', String(d.revision)],
        ['replication_factor', String(d.replicationFactor)],
        ['idempotent', String(d.idempotent)],
        ['event_sourcing', String(d.eventSourcing)],
        ['cleanup_policy', d.cleanupPolicy],
        ['partitioner', d.partitioner],
        ['auth_policy', d.authPolicy],
        ['read_acl', d.readAcl.join(',')],
        ['write_acl', d.writeAcl.join(',')],
        ['retention_hours', String(d.retentionHours)],
        ['retention_bytes', String(d.retentionBytes)],
        ['lifecycle_epoch', String(d.lifecycleEpoch)],
      ],
    };
  },
};

export const topicHandlers: readonly CursusCommandHandler[] = [create, alterTopicConfig, deleteTopic, truncate, list, describe, metadata];
