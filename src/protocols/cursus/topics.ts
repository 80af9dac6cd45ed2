// Cursus topics (spec §4 "Topic Management"): the definitions the handlers read (view) and the
// changes CREATE, ALTER_TOPIC_CONFIG, DELETE and TRUNCATE make. A Cursus topic is a core catalog
// topic of namespace `default`, the one log a Kafka topic of the same name and an Iggy topic of
// stream `default` are: partitions, cleanup policy and retention are the core topic's (partition
// count, cleanup.policy, retention.ms = retention_hours × 3,600,000, retention.bytes), the rest is
// the Cursus topic table (topic-table.ts). Topics made by Kafka or Iggy have the defaults
// (revision 1). Changes are serialized; the revision grows by one per effective change made here.
//
// Deletion and truncation ask every guard of `deleteGuards` first: the group and transaction
// services add theirs, refusing while a group has active members or a transaction is open.

import type { Broker } from '../../core/broker.js';
import { defaultNamespaceName, type Topic } from '../../core/catalog.js';
import { SerialQueue } from '../../core/serial.js';
import { builtinTopicDefaults, type TopicConfigValues } from '../../core/topic-config.js';
import { CursusFailure, type CursusTopicView } from './handler.js';
import { cursusTopicTableOf, defaultStoredTopic, type CursusAuthPolicy, type CursusPartitioner, type CursusTopicTable, type StoredCursusTopic } from './topic-table.js';

export type CursusCleanupPolicy = CursusTopicView['cleanupPolicy'];
type CleanupPolicy = TopicConfigValues['cleanup.policy'];

/** A topic's whole Cursus definition: the view handlers share, with the replication factor. */
export interface CursusTopicDefinition extends CursusTopicView {
  readonly replicationFactor: number;
}

/** CREATE's fields, each present only when the request gave it (presence-aware patch). */
export interface CursusTopicPatch {
  partitions?: number;
  idempotent?: boolean;
  eventSourcing?: boolean;
  aggregateReplay?: boolean;
  replicationFactor?: number;
  /** null: back to the broker's fallback (`default`). */
  minInSyncReplicas?: number | null;
  cleanupPolicy?: CursusCleanupPolicy;
  retentionHours?: number;
  retentionBytes?: number;
  partitioner?: CursusPartitioner;
  authPolicy?: CursusAuthPolicy;
  readAcl?: string[];
  writeAcl?: string[];
}

/** Why a topic may not be deleted or truncated now (null: it may). */
export type CursusTopicGuard = (topic: CursusTopicDefinition, operation: 'delete' | 'truncate') => string | null;

export interface CursusTopicsOptions {
  broker: Broker;
  /** The broker-wide min_in_sync_replicas a topic without an override gets (one node: 1). */
  minInSyncReplicasFallback?: number;
}

/** The broker-owned offsets topic: never deleted nor truncated (spec: internal_topic_delete_forbidden). */
export const internalOffsetsTopic = '__consumer_offsets';
export const topicNameBytesMax = 249;
const topicNamePattern = /^[A-Za-z0-9._=-]+$/;
const hourMs = 3_600_000;

/** Why a name is not a portable Cursus topic name, or null (spec: 1-249 ASCII bytes of letters, digits, `.`, `_`, `-`, `=`). */
export function topicNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > topicNameBytesMax) return `a topic name has 1 to ${topicNameBytesMax} bytes`;
  if (!topicNamePattern.test(name)) return 'a topic name has only letters, digits, ., _, - and =';
  if (name === '.' || name === '..') return '. and .. are reserved';
  return null;
}

export function assertTopicName(name: string): void {
  const problem = topicNameProblem(name);
  if (problem !== null) throw CursusFailure.of('invalid_topic_name', [['topic', name]], problem);
}

/** The core's cleanup.policy in Cursus spelling (`compact,delete` is Cursus's `delete,compact`). */
export function cursusCleanupPolicy(policy: CleanupPolicy): CursusCleanupPolicy {
  return policy === 'compact,delete' ? 'delete,compact' : policy;
}

function coreCleanupPolicy(policy: CursusCleanupPolicy): CleanupPolicy {
  return policy === 'delete,compact' ? 'compact,delete' : policy;
}

const sameNames = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

export class CursusTopics {
  readonly minInSyncReplicasFallback: number;
  private readonly broker: Broker;
  private readonly table: CursusTopicTable;
  private readonly mutations = new SerialQueue();
  /** What DELETE and TRUNCATE ask first: the group and transaction services add theirs at start. */
  readonly deleteGuards = new Set<CursusTopicGuard>();

  constructor(options: CursusTopicsOptions) {
    this.broker = options.broker;
    this.table = cursusTopicTableOf(options.broker);
    this.minInSyncReplicasFallback = options.minInSyncReplicasFallback ?? 1;
  }

  /** Loads the topic table (the server has usually done it already). */
  start(): Promise<void> {
    return this.table.watch();
  }

  close(): void {}

  /** The topic's definition, or undefined when there is no such topic. */
  view(name: string): CursusTopicDefinition | undefined {
    const topic = this.coreTopic(name);
    return topic === null ? undefined : this.definitionOf(topic);
  }

  /** The definition, or `topic_not_found topic=<name>`. */
  require(name: string): CursusTopicDefinition {
    const view = this.view(name);
    if (view === undefined) throw CursusFailure.of('topic_not_found', [['topic', name]]);
    return view;
  }

  /** The core topic behind a Cursus name, or null. */
  coreTopic(name: string): Topic | null {
    return this.broker.catalog.getTopic({ namespace: defaultNamespaceName, topic: name });
  }

  /** Every Cursus topic name, sorted. */
  names(): string[] {
    if (this.broker.catalog.getNamespace(defaultNamespaceName) === null) return [];
    return this.broker.catalog
      .listTopics(defaultNamespaceName)
      .map((t) => t.name)
      .sort();
  }

  effectiveMinInSyncReplicas(view: CursusTopicView): number {
    return view.minInSyncReplicas ?? this.minInSyncReplicasFallback;
  }

  /** Adds a guard to deleteGuards; returns its removal. */
  registerDeleteGuard(guard: CursusTopicGuard): () => void {
    this.deleteGuards.add(guard);
    return () => this.deleteGuards.delete(guard);
  }

  /**
   * CREATE: a missing topic is made from the defaults and the patch; an existing one takes the
   * patch (partitions only grow; idempotent, event_sourcing, aggregate_replay and
   * replication_factor may only be restated). `changed` is false for a no-op, which keeps the revision.
   */
  create(name: string, patch: CursusTopicPatch): Promise<{ definition: CursusTopicDefinition; created: boolean; changed: boolean }> {
    assertTopicName(name);
    return this.mutations.run(async () => {
      const topic = this.coreTopic(name);
      if (topic === null) return { definition: await this.createNew(name, patch), created: true, changed: true };
      const { definition, changed } = await this.patchExisting(topic, patch);
      return { definition, created: false, changed };
    });
  }

  /** ALTER_TOPIC_CONFIG: replaces only the min_in_sync_replicas override (null: the fallback). */
  alterMinInSyncReplicas(name: string, value: number | null): Promise<{ definition: CursusTopicDefinition; changed: boolean }> {
    return this.mutations.run(async () => this.patchExisting(this.requireCore(name), { minInSyncReplicas: value }));
  }

  /** DELETE: true when deleted, false when missing and `ifExists`. */
  delete(name: string, ifExists: boolean): Promise<boolean> {
    return this.mutations.run(async () => {
      if (name === internalOffsetsTopic) throw CursusFailure.of('internal_topic_delete_forbidden', [['topic', name]]);
      const topic = this.coreTopic(name);
      if (topic === null) {
        if (ifExists) return false;
        throw CursusFailure.of('topic_not_found', [['topic', name]]);
      }
      this.checkGuards(this.definitionOf(topic), 'delete');
      try {
        await this.broker.deleteTopic(topic);
      } catch (err) {
        throw CursusFailure.of('delete_topic_failed', [['topic', name]], (err as Error).message);
      }
      return true;
    });
  }

  /**
   * TRUNCATE: every partition starts again empty at offset 0 (the core purge, which also drops the
   * topic's committed offsets and producer state); the definition stays, with revision and
   * lifecycle epoch one higher.
   */
  truncate(name: string, expectedRevision: number): Promise<CursusTopicDefinition> {
    return this.mutations.run(async () => {
      if (name === internalOffsetsTopic) throw CursusFailure.of('internal_topic_delete_forbidden', [['topic', name]]);
      const topic = this.requireCore(name);
      const stored = this.table.storedOf(topic);
      if (stored.revision !== expectedRevision) {
        throw CursusFailure.of('revision_mismatch', [['topic', name], ['current', String(stored.revision)], ['expected', String(expectedRevision)]]);
      }
      this.checkGuards(this.definitionOf(topic), 'truncate');
      await this.broker.purgeTopic(topic);
      await this.table.save(topic, { ...stored, revision: stored.revision + 1, lifecycleEpoch: stored.lifecycleEpoch + 1 });
      return this.definitionOf(this.requireCore(name));
    });
  }

  // --- internals ---------------------------------------------------------------------------------

  private requireCore(name: string): Topic {
    const topic = this.coreTopic(name);
    if (topic === null) throw CursusFailure.of('topic_not_found', [['topic', name]]);
    return topic;
  }

  private definitionOf(topic: Topic): CursusTopicDefinition {
    const s = this.table.storedOf(topic);
    const retentionMs = topic.config['retention.ms'];
    const retentionBytes = topic.config['retention.bytes'];
    return {
      name: topic.name,
      partitions: topic.partitions,
      revision: s.revision,
      lifecycleEpoch: s.lifecycleEpoch,
      idempotent: s.idempotent,
      eventSourcing: s.eventSourcing,
      aggregateReplay: s.aggregateReplay,
      partitioner: s.partitioner,
      authPolicy: s.authPolicy,
      readAcl: s.readAcl,
      writeAcl: s.writeAcl,
      cleanupPolicy: cursusCleanupPolicy(this.effectiveCleanupPolicy(topic)),
      // Hours are what Cursus states; a retention set in ms by another protocol rounds up.
      retentionHours: retentionMs !== undefined && retentionMs > 0 ? Math.ceil(retentionMs / hourMs) : 0,
      retentionBytes: retentionBytes !== undefined && retentionBytes > 0 ? retentionBytes : 0,
      minInSyncReplicas: s.minInSyncReplicas,
      replicationFactor: s.replicationFactor,
    };
  }

  private effectiveCleanupPolicy(topic: Topic): CleanupPolicy {
    return topic.config['cleanup.policy'] ?? this.broker.topicDefaults['cleanup.policy'] ?? builtinTopicDefaults['cleanup.policy'];
  }

  private async createNew(name: string, patch: CursusTopicPatch): Promise<CursusTopicDefinition> {
    const stored: StoredCursusTopic = {
      ...defaultStoredTopic,
      ...pick(patch, ['idempotent', 'eventSourcing', 'aggregateReplay', 'replicationFactor', 'minInSyncReplicas', 'partitioner', 'authPolicy', 'readAcl', 'writeAcl']),
    };
    const cleanup = patch.cleanupPolicy ?? cursusCleanupPolicy(this.broker.topicDefaults['cleanup.policy'] ?? builtinTopicDefaults['cleanup.policy']);
    checkPolicy(name, stored, cleanup);
    const config: Record<string, unknown> = {};
    if (patch.cleanupPolicy !== undefined) config['cleanup.policy'] = coreCleanupPolicy(patch.cleanupPolicy);
    if (patch.retentionHours !== undefined && patch.retentionHours > 0) config['retention.ms'] = patch.retentionHours * hourMs;
    if (patch.retentionBytes !== undefined && patch.retentionBytes > 0) config['retention.bytes'] = patch.retentionBytes;
    const topic = await this.broker.createTopic(defaultNamespaceName, name, { ...(patch.partitions !== undefined ? { partitions: patch.partitions } : {}), config });
    await this.table.save(topic, stored);
    return this.definitionOf(topic);
  }

  private async patchExisting(topic: Topic, patch: CursusTopicPatch): Promise<{ definition: CursusTopicDefinition; changed: boolean }> {
    const current = this.definitionOf(topic);
    for (const field of ['idempotent', 'eventSourcing', 'aggregateReplay', 'replicationFactor'] as const) {
      const requested = patch[field];
      if (requested !== undefined && requested !== current[field]) {
        throw CursusFailure.of('invalid_topic_policy', [['topic', topic.name], ['field', snake(field)], ['current', String(current[field])], ['requested', String(requested)]], `${snake(field)} cannot change after creation`);
      }
    }
    const partitions = patch.partitions ?? current.partitions;
    if (partitions < current.partitions) {
      throw CursusFailure.of('invalid_partitions', [['topic', topic.name], ['current', String(current.partitions)], ['requested', String(partitions)]], 'the partition count can only increase');
    }
    if (current.aggregateReplay && partitions !== current.partitions) {
      throw CursusFailure.of('invalid_topic_policy', [['topic', topic.name], ['reason', 'aggregate_replay topics keep their partition count']]);
    }
    const stored = this.table.storedOf(topic);
    const next: StoredCursusTopic = { ...stored, ...pick(patch, ['minInSyncReplicas', 'partitioner', 'authPolicy', 'readAcl', 'writeAcl']) };
    const cleanup = patch.cleanupPolicy ?? current.cleanupPolicy;
    checkPolicy(topic.name, next, cleanup);
    const retentionHours = patch.retentionHours ?? current.retentionHours;
    const retentionBytes = patch.retentionBytes ?? current.retentionBytes;
    const config: Record<string, unknown> = {};
    if (cleanup !== current.cleanupPolicy) config['cleanup.policy'] = coreCleanupPolicy(cleanup);
    if (retentionHours !== current.retentionHours) config['retention.ms'] = retentionHours > 0 ? retentionHours * hourMs : null;
    if (retentionBytes !== current.retentionBytes) config['retention.bytes'] = retentionBytes > 0 ? retentionBytes : null;
    const changed =
      partitions !== current.partitions ||
      Object.keys(config).length > 0 ||
      next.minInSyncReplicas !== stored.minInSyncReplicas ||
      next.partitioner !== stored.partitioner ||
      next.authPolicy !== stored.authPolicy ||
      !sameNames(next.readAcl, stored.readAcl) ||
      !sameNames(next.writeAcl, stored.writeAcl);
    if (!changed) return { definition: current, changed: false };
    let updated = topic;
    if (partitions > current.partitions) updated = await this.broker.addPartitions(updated, partitions);
    if (Object.keys(config).length > 0) updated = await this.broker.updateTopicConfig(updated, config);
    await this.table.save(updated, { ...next, revision: stored.revision + 1 });
    return { definition: this.definitionOf(updated), changed: true };
  }

  private checkGuards(definition: CursusTopicDefinition, operation: 'delete' | 'truncate'): void {
    for (const guard of this.deleteGuards) {
      const reason = guard(definition, operation);
      if (reason !== null) throw CursusFailure.of('topic_delete_blocked', [['topic', definition.name], ['reason', reason]]);
    }
  }
}

/** The combinations the spec rules out, and min_in_sync_replicas within the replication factor. */
function checkPolicy(name: string, s: StoredCursusTopic, cleanup: CursusCleanupPolicy): void {
  if (s.minInSyncReplicas !== null && s.minInSyncReplicas > s.replicationFactor) {
    throw CursusFailure.of('invalid_min_in_sync_replicas', [['topic', name], ['requested', String(s.minInSyncReplicas)], ['replication_factor', String(s.replicationFactor)]]);
  }
  if (s.eventSourcing && cleanup !== 'delete') throw CursusFailure.of('invalid_topic_policy', [['topic', name], ['reason', 'event_sourcing topics keep their whole history: cleanup_policy must be delete']]);
  if (s.aggregateReplay && !(s.eventSourcing && s.idempotent)) throw CursusFailure.of('invalid_topic_policy', [['topic', name], ['reason', 'aggregate_replay needs event_sourcing=true and idempotent=true']]);
}

function pick<K extends keyof CursusTopicPatch>(patch: CursusTopicPatch, keys: readonly K[]): Partial<Pick<CursusTopicPatch, K>> {
  const out: Partial<Pick<CursusTopicPatch, K>> = {};
  for (const k of keys) if (patch[k] !== undefined) out[k] = patch[k];
  return out;
}

function snake(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
