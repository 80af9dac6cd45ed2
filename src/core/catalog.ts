// The catalog: namespaces → topics → partitions, with per-topic configuration.
//
// Protocols name things differently (Kafka topic names, Iggy stream/topic ids and names, Felix
// tenant/namespace/stream); all of them land here. A namespace is an Iggy stream or a Felix
// tenant+namespace; Kafka and Cursus topics live in the 'default' namespace. That namespace is
// created with the first topic made in it (or by name, as an Iggy stream), not at startup: a fresh
// broker has no namespaces, so an Iggy client sees no streams and its first stream gets id 0, as
// on the reference server. Once it exists it cannot be renamed or deleted.
//
// Reads are served from memory (they are on every produce and fetch); mutations run one at a
// time, are written to the metadata store first and then applied to memory, and are announced to
// an observer (the Broker) that opens, closes and destroys partition logs before the mutation
// returns. Objects handed out are frozen snapshots: a change replaces the object.

import { randomUUID } from 'node:crypto';
import { QuartetError } from '../base/errors.js';
import type { Clock } from '../base/clock.js';
import type { MetadataStore, NamespaceRecord, TopicRecord } from './metadata-store.js';
import { mergeTopicConfig, parseTopicConfig, type TopicConfig } from './topic-config.js';
import { SerialQueue } from './serial.js';

export const defaultNamespaceName = 'default';

// Named limits.
/** Iggy names are length-prefixed by a u8; Kafka's limit (249) is stricter and checked there. */
export const nameBytesMax = 255;
export const namespacesMax = 100_000;
export const topicsPerNamespaceMax = 100_000;
export const partitionsPerTopicMax = 100_000;
/** Numeric ids are u32 on the wire (Iggy). */
export const idMax = 0xffff_ffff;

export interface Namespace {
  readonly id: number;
  readonly name: string;
  readonly createdAt: number;
}

export interface Topic {
  /** Stable for the topic's whole life and never reused: names its directory `<dataDir>/logs/<internalId>/`. */
  readonly internalId: number;
  readonly namespaceId: number;
  /** The namespace's name when this snapshot was taken. */
  readonly namespace: string;
  /** u32, unique within the namespace (Iggy topic id). */
  readonly id: number;
  readonly name: string;
  /** 16 bytes (Kafka topic id); never all zeros. */
  readonly uuid: Buffer;
  /** Partitions are numbered 0 .. partitions-1. */
  readonly partitions: number;
  /** Explicitly set values only; see topic-config.ts for the effective ones. */
  readonly config: Readonly<TopicConfig>;
  readonly createdAt: number;
}

/** A namespace by name or by numeric id. */
export type NamespaceRef = string | number;

/**
 * How callers name a topic: a resolved Topic (checked to still exist by its internal id), or a
 * namespace (name or id; defaults to 'default') plus a topic (name or id).
 */
export type TopicRef = Topic | { namespace?: NamespaceRef; topic: string | number };

/** Told about every topic change, inside the mutation; the Broker opens and removes logs here. */
export interface CatalogObserver {
  topicCreated(topic: Topic): Promise<void>;
  topicDeleted(topic: Topic): Promise<void>;
  partitionsAdded(topic: Topic, previousCount: number): Promise<void>;
  /** Partitions topic.partitions .. previousCount-1 are gone: close and destroy their logs. */
  partitionsRemoved(topic: Topic, previousCount: number): Promise<void>;
  /** Every partition of the topic starts again empty at offset 0 (Iggy purge): replace their logs. */
  partitionsReset(topic: Topic): Promise<void>;
  topicConfigChanged(topic: Topic): Promise<void>;
  topicRenamed(topic: Topic): void;
  /** The namespace is gone (its topics were told first); its id is freed after this returns. */
  namespaceDeleted?(namespace: Namespace): Promise<void>;
}

/** Config changes: a value per key, null to remove the key. */
export type ConfigChanges = Readonly<Record<string, unknown>>;

/** Config changes to store with a topic's new partition count (null: none), from the topic before the change. */
export type PartitionCountConfig = (current: Topic, newCount: number) => ConfigChanges | null;

/** The topic's config after `configFor`'s changes for its new partition count; undefined when it gives none. */
function configAfterCountChange(topic: Topic, newCount: number, configFor: PartitionCountConfig | undefined): TopicConfig | undefined {
  const changes = configFor?.(topic, newCount) ?? null;
  return changes === null ? undefined : mergeTopicConfig(topic.config, changes);
}

export interface CreateTopicOptions {
  partitions: number;
  /** Raw config values (validated here). */
  config?: Readonly<Record<string, unknown>>;
  /** Explicit numeric id; allocated when absent. */
  id?: number;
}

const counters = {
  topicInternalId: 'topic_internal_id',
};

/** Where the search for a free namespace id (or a namespace's free topic id) starts. */
const idSpaces = {
  namespaceId: 'namespace',
  topicId: (namespaceId: number) => `topic:${namespaceId}`,
};

interface NamespaceEntry {
  ns: Namespace;
  byName: Map<string, Topic>;
  byId: Map<number, Topic>;
}

export class Catalog {
  private readonly namespacesById = new Map<number, NamespaceEntry>();
  private readonly namespacesByName = new Map<string, NamespaceEntry>();
  private readonly topicsByInternalId = new Map<number, Topic>();
  private readonly mutations = new SerialQueue();
  /** Per id space, an id below which every id is taken (allocateId). */
  private readonly freeIdFrom = new Map<string, number>();
  private observer: CatalogObserver | null = null;

  private constructor(
    private readonly store: MetadataStore,
    private readonly clock: Clock,
  ) {}

  /** Loads the catalog from the store ('default' is created with its first topic). */
  static async open(store: MetadataStore, clock: Clock): Promise<Catalog> {
    const catalog = new Catalog(store, clock);
    for (const record of await store.listNamespaces()) catalog.applyNamespace(record);
    for (const record of await store.listTopics()) catalog.applyTopic(record);
    return catalog;
  }

  setObserver(observer: CatalogObserver | null): void {
    this.observer = observer;
  }

  // --- reads ----------------------------------------------------------------------------------

  listNamespaces(): Namespace[] {
    return [...this.namespacesById.values()].map((e) => e.ns).sort((a, b) => a.id - b.id);
  }

  getNamespace(ref: NamespaceRef): Namespace | null {
    return this.namespaceEntry(ref)?.ns ?? null;
  }

  requireNamespace(ref: NamespaceRef): Namespace {
    return this.requireNamespaceEntry(ref).ns;
  }

  /** Topics of one namespace (by id), or of all namespaces. 'default' before it exists has none. */
  listTopics(namespace?: NamespaceRef): Topic[] {
    if (namespace === defaultNamespaceName && !this.namespacesByName.has(namespace)) return [];
    const topics = namespace === undefined ? [...this.topicsByInternalId.values()] : [...this.requireNamespaceEntry(namespace).byId.values()];
    return topics.sort((a, b) => a.namespaceId - b.namespaceId || a.id - b.id);
  }

  getTopic(ref: TopicRef): Topic | null {
    if (isTopic(ref)) return this.topicsByInternalId.get(ref.internalId) ?? null;
    const entry = this.namespaceEntry(ref.namespace ?? defaultNamespaceName);
    if (!entry) return null;
    return (typeof ref.topic === 'number' ? entry.byId.get(ref.topic) : entry.byName.get(ref.topic)) ?? null;
  }

  /** Like getTopic, but throws unknown_namespace / unknown_topic. */
  requireTopic(ref: TopicRef): Topic {
    const topic = this.getTopic(ref);
    if (topic) return topic;
    // A topic of 'default' before that namespace exists is an unknown topic, not namespace.
    if (!isTopic(ref) && ref.namespace !== undefined && ref.namespace !== defaultNamespaceName) this.requireNamespaceEntry(ref.namespace);
    throw new QuartetError('unknown_topic', `unknown topic ${describeRef(ref)}`);
  }

  topicByInternalId(internalId: number): Topic | null {
    return this.topicsByInternalId.get(internalId) ?? null;
  }

  topicByUuid(uuid: Uint8Array): Topic | null {
    for (const topic of this.topicsByInternalId.values()) if (topic.uuid.equals(uuid)) return topic;
    return null;
  }

  // --- namespace mutations --------------------------------------------------------------------

  createNamespace(name: string, options: { id?: number } = {}): Promise<Namespace> {
    return this.mutations.run(async () => (await this.createNamespaceNow(name, options)).ns);
  }

  renameNamespace(ref: NamespaceRef, newName: string): Promise<Namespace> {
    return this.mutations.run(async () => {
      const entry = this.requireNamespaceEntry(ref);
      assertValidName(newName, 'namespace');
      if (entry.ns.name === newName) return entry.ns;
      if (entry.ns.name === defaultNamespaceName) throw new QuartetError('invalid_request', 'the default namespace cannot be renamed');
      // 'default' holds every Kafka topic: no namespace (and its grants) may become it by a rename.
      if (newName === defaultNamespaceName) throw new QuartetError('invalid_request', `a namespace cannot be renamed to '${defaultNamespaceName}'`);
      if (this.namespacesByName.has(newName)) throw new QuartetError('namespace_exists', `namespace '${newName}' already exists`);
      const record: NamespaceRecord = { ...entry.ns, name: newName };
      await this.store.putNamespace(record);
      this.namespacesByName.delete(entry.ns.name);
      const renamed = this.applyNamespace(record);
      this.refreshNamespaceTopics(renamed);
      return renamed.ns;
    });
  }

  /** Deletes the namespace and every topic in it (Iggy DeleteStream). */
  deleteNamespace(ref: NamespaceRef): Promise<Namespace> {
    return this.mutations.run(async () => {
      const entry = this.requireNamespaceEntry(ref);
      if (entry.ns.name === defaultNamespaceName) throw new QuartetError('invalid_request', 'the default namespace cannot be deleted');
      const topics = [...entry.byId.values()];
      // One commit for the namespace and all its topics: a crash leaves it whole or gone, never
      // with part of its topics (their directories go at the next start, as after a crash inside
      // deleteTopic).
      await this.store.deleteNamespace(entry.ns.id);
      // Out of memory at once, so no lookup finds any of them while their logs close.
      for (const topic of topics) this.removeTopic(topic);
      this.namespacesById.delete(entry.ns.id);
      this.namespacesByName.delete(entry.ns.name);
      // Every topic's logs close even if one fails (its error is the answer, as in deleteTopic).
      let failure: unknown = null;
      for (const topic of topics) await this.observer?.topicDeleted(topic).catch((err: unknown) => void (failure ??= err));
      // Told inside the mutation, before the id can be handed out again.
      await this.observer?.namespaceDeleted?.(entry.ns);
      this.idFreed(idSpaces.namespaceId, entry.ns.id);
      this.freeIdFrom.delete(idSpaces.topicId(entry.ns.id));
      if (failure !== null) throw failure;
      return entry.ns;
    });
  }

  // --- topic mutations ------------------------------------------------------------------------

  /** Creates the topic; in 'default' (by name), creates that namespace first if it is missing. */
  createTopic(namespace: NamespaceRef, name: string, options: CreateTopicOptions): Promise<Topic> {
    return this.mutations.run(async () => {
      assertValidName(name, 'topic');
      assertPartitionCount(options.partitions);
      const config = parseTopicConfig(options.config ?? {});
      const madeDefault = namespace === defaultNamespaceName && !this.namespacesByName.has(namespace);
      const entry = madeDefault ? await this.createNamespaceNow(defaultNamespaceName) : this.requireNamespaceEntry(namespace);
      try {
        return await this.createTopicNow(entry, name, options, config);
      } catch (err) {
        // 'default' was made for this topic only: without the topic it goes again.
        // (Only if the topic's own rollback left it empty.)
        if (madeDefault && entry.byId.size === 0) {
          const dropped = await this.dropNamespaceNow(entry).then(
            () => true,
            () => false,
          );
          if (dropped) this.idFreed(idSpaces.namespaceId, entry.ns.id);
        }
        throw err;
      }
    });
  }

  private async createTopicNow(entry: NamespaceEntry, name: string, options: CreateTopicOptions, config: TopicConfig): Promise<Topic> {
    if (entry.byName.has(name)) throw new QuartetError('topic_exists', `topic '${name}' already exists in namespace '${entry.ns.name}'`);
    if (entry.byId.size >= topicsPerNamespaceMax) throw new QuartetError('resource_exhausted', `at most ${topicsPerNamespaceMax} topics per namespace`);
    const space = idSpaces.topicId(entry.ns.id);
    const id = this.allocateId(space, options.id, (n) => entry.byId.has(n), 'topic_exists');
    const record: TopicRecord = {
      internalId: await this.store.nextId(counters.topicInternalId, 1),
      namespaceId: entry.ns.id,
      id,
      name,
      uuid: newTopicUuid(),
      partitions: options.partitions,
      config: config as Record<string, string | number>,
      createdAt: this.clock.now(),
    };
    await this.store.putTopic(record);
    if (options.id === undefined) this.idClaimed(space, id);
    // The logs are opened before the topic is visible: a reader never finds it without them.
    const topic = this.topicOf(record);
    try {
      await this.observer?.topicCreated(topic);
    } catch (err) {
      // The topic could not be materialized (disk error): do not leave a topic without logs.
      await this.deleteTopicNow(this.register(topic)).catch(() => undefined);
      throw err;
    }
    return this.register(topic);
  }

  deleteTopic(ref: TopicRef): Promise<Topic> {
    return this.mutations.run(async () => this.deleteTopicNow(this.requireTopic(ref)));
  }

  renameTopic(ref: TopicRef, newName: string): Promise<Topic> {
    return this.mutations.run(async () => {
      const topic = this.requireTopic(ref);
      assertValidName(newName, 'topic');
      if (topic.name === newName) return topic;
      const entry = this.namespacesById.get(topic.namespaceId)!;
      if (entry.byName.has(newName)) throw new QuartetError('topic_exists', `topic '${newName}' already exists in namespace '${entry.ns.name}'`);
      const renamed = await this.replaceTopic(topic, { name: newName });
      this.observer?.topicRenamed(renamed);
      return renamed;
    });
  }

  /**
   * Applies config changes: null removes a key; replace=true drops keys not given (Kafka
   * AlterConfigs). `changes` may be a function of the topic as it is when the change runs (after
   * the mutations queued before it), for a change that depends on it.
   */
  updateTopicConfig(ref: TopicRef, changes: ConfigChanges | ((current: Topic) => ConfigChanges), replace = false): Promise<Topic> {
    return this.mutations.run(async () => {
      const topic = this.requireTopic(ref);
      const config = mergeTopicConfig(topic.config, typeof changes === 'function' ? changes(topic) : changes, replace);
      const updated = await this.replaceTopic(topic, { config });
      await this.observer?.topicConfigChanged(updated);
      return updated;
    });
  }

  /**
   * Grows the topic to `newCount` partitions. `configFor` may give config changes stored in the
   * same step as the new count (a limit spread over the partitions), from the topic as it is then.
   */
  addPartitions(ref: TopicRef, newCount: number, configFor?: PartitionCountConfig): Promise<Topic> {
    return this.mutations.run(async () => {
      const topic = this.requireTopic(ref);
      assertPartitionCount(newCount);
      if (newCount <= topic.partitions) {
        throw new QuartetError('invalid_partitions', `topic '${topic.name}' has ${topic.partitions} partitions; the new count ${newCount} must be larger`);
      }
      const config = configAfterCountChange(topic, newCount, configFor);
      // The new partitions' logs are opened before the new count is visible (after it is stored).
      const updated = await this.replaceTopic(topic, { partitions: newCount, config }, (t) => this.observer?.partitionsAdded(t, topic.partitions));
      if (config !== undefined) await this.observer?.topicConfigChanged(updated);
      return updated;
    });
  }

  /**
   * Shrinks the topic to `newCount` partitions (Iggy DeletePartitions): the last ones go. Zero is
   * allowed (an Iggy topic may have no partitions). The new count is stored first, so a restart
   * never reopens a removed partition; then the observer destroys the removed logs.
   */
  removePartitions(ref: TopicRef, newCount: number, configFor?: PartitionCountConfig): Promise<Topic> {
    return this.mutations.run(async () => {
      const topic = this.requireTopic(ref);
      assertPartitionCount(newCount);
      if (newCount >= topic.partitions) {
        throw new QuartetError('invalid_partitions', `topic '${topic.name}' has ${topic.partitions} partitions; the new count ${newCount} must be smaller`);
      }
      const config = configAfterCountChange(topic, newCount, configFor);
      const updated = await this.replaceTopic(topic, { partitions: newCount, config });
      await this.observer?.partitionsRemoved(updated, topic.partitions);
      if (config !== undefined) await this.observer?.topicConfigChanged(updated);
      return updated;
    });
  }

  /**
   * Empties every partition of the topic and restarts it at offset 0 (Iggy PurgeTopic): the
   * observer replaces the logs, inside the mutation queue, so no create, delete or partition
   * change of the topic runs meanwhile.
   */
  resetPartitions(ref: TopicRef): Promise<Topic> {
    return this.mutations.run(async () => {
      const topic = this.requireTopic(ref);
      // No observer: no logs to replace (the broker is stopping), so nothing would be purged.
      if (this.observer === null) throw new QuartetError('shutting_down', 'the broker is stopping; nothing was purged');
      await this.observer.partitionsReset(topic);
      return topic;
    });
  }

  // --- internals ------------------------------------------------------------------------------

  private async createNamespaceNow(name: string, options: { id?: number } = {}): Promise<NamespaceEntry> {
    assertValidName(name, 'namespace');
    if (this.namespacesByName.has(name)) throw new QuartetError('namespace_exists', `namespace '${name}' already exists`);
    if (this.namespacesById.size >= namespacesMax) throw new QuartetError('resource_exhausted', `at most ${namespacesMax} namespaces`);
    const id = this.allocateId(idSpaces.namespaceId, options.id, (n) => this.namespacesById.has(n), 'namespace_exists');
    const record: NamespaceRecord = { id, name, createdAt: this.clock.now() };
    await this.store.putNamespace(record);
    const entry = this.applyNamespace(record);
    if (options.id === undefined) this.idClaimed(idSpaces.namespaceId, id);
    return entry;
  }

  /** Removes an empty namespace from the store and from memory (its id is freed by the caller). */
  private async dropNamespaceNow(entry: NamespaceEntry): Promise<void> {
    await this.store.deleteNamespace(entry.ns.id);
    this.namespacesById.delete(entry.ns.id);
    this.namespacesByName.delete(entry.ns.name);
  }

  private async deleteTopicNow(topic: Topic): Promise<Topic> {
    await this.store.deleteTopic(topic.internalId);
    // Out of memory first, so no new append finds the partitions while the logs close.
    this.removeTopic(topic);
    this.idFreed(idSpaces.topicId(topic.namespaceId), topic.id);
    await this.observer?.topicDeleted(topic);
    return topic;
  }

  /** Stores the changed topic, runs `beforeVisible` with it (if given), then makes it the one readers find. */
  private async replaceTopic(topic: Topic, change: Partial<Pick<Topic, 'name' | 'partitions' | 'config'>>, beforeVisible?: (t: Topic) => Promise<void> | undefined): Promise<Topic> {
    const record: TopicRecord = {
      ...toRecord(topic),
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.partitions !== undefined ? { partitions: change.partitions } : {}),
      ...(change.config !== undefined ? { config: { ...change.config } as Record<string, string | number> } : {}),
    };
    await this.store.putTopic(record);
    const updated = this.topicOf(record);
    try {
      await beforeVisible?.(updated);
    } catch (err) {
      // Not applied: the store goes back to what readers still see.
      await this.store.putTopic(toRecord(topic)).catch(() => undefined);
      throw err;
    }
    this.removeTopic(topic);
    return this.register(updated);
  }

  /**
   * An explicit id (refused when taken), or the lowest id not in use: a freed id is handed out
   * again, as the reference Iggy server does (its BDD scenarios delete their streams and expect
   * the next one to be stream 0 again). Topic directories and every per-topic record use the
   * internal id, which is never reused. The search starts at the lowest id freed since the last
   * allocation in that space (or 0 after a restart), so creations without deletions take O(1).
   */
  private allocateId(space: string, explicit: number | undefined, taken: (id: number) => boolean, existsCode: 'namespace_exists' | 'topic_exists'): number {
    if (explicit !== undefined) {
      if (!Number.isInteger(explicit) || explicit < 0 || explicit > idMax) throw new QuartetError('invalid_request', `id ${explicit} is not a u32`);
      if (taken(explicit)) throw new QuartetError(existsCode, `id ${explicit} is already in use`);
      return explicit;
    }
    let id = this.freeIdFrom.get(space) ?? 0;
    while (id <= idMax && taken(id)) id++;
    if (id > idMax) throw new QuartetError('resource_exhausted', 'numeric ids are exhausted');
    return id;
  }

  /** A lowest-free `id` of `space` is now stored and applied: every id up to it is taken. */
  private idClaimed(space: string, id: number): void {
    this.freeIdFrom.set(space, id + 1);
  }

  /** `id` of `space` is free again: the next allocation there may take it. */
  private idFreed(space: string, id: number): void {
    this.freeIdFrom.set(space, Math.min(this.freeIdFrom.get(space) ?? 0, id));
  }

  private applyNamespace(record: NamespaceRecord): NamespaceEntry {
    const existing = this.namespacesById.get(record.id);
    const ns: Namespace = Object.freeze({ id: record.id, name: record.name, createdAt: record.createdAt });
    const entry: NamespaceEntry = { ns, byName: existing?.byName ?? new Map(), byId: existing?.byId ?? new Map() };
    this.namespacesById.set(ns.id, entry);
    this.namespacesByName.set(ns.name, entry);
    return entry;
  }

  private refreshNamespaceTopics(entry: NamespaceEntry): void {
    for (const topic of [...entry.byId.values()]) {
      this.removeTopic(topic);
      const renamed = this.applyTopic(toRecord(topic));
      this.observer?.topicRenamed(renamed);
    }
  }

  private applyTopic(record: TopicRecord): Topic {
    return this.register(this.topicOf(record));
  }

  /** The Topic of a stored record, not yet one that readers find (register). */
  private topicOf(record: TopicRecord): Topic {
    const entry = this.namespacesById.get(record.namespaceId);
    if (!entry) throw new Error(`topic ${record.internalId} refers to missing namespace ${record.namespaceId}`);
    if (record.uuid.length !== 16) throw new Error(`topic ${record.internalId} has a ${record.uuid.length}-byte uuid`);
    return Object.freeze({
      internalId: record.internalId,
      namespaceId: record.namespaceId,
      namespace: entry.ns.name,
      id: record.id,
      name: record.name,
      uuid: record.uuid,
      partitions: record.partitions,
      config: Object.freeze({ ...record.config }) as TopicConfig,
      createdAt: record.createdAt,
    });
  }

  private register(topic: Topic): Topic {
    const entry = this.namespacesById.get(topic.namespaceId)!;
    entry.byName.set(topic.name, topic);
    entry.byId.set(topic.id, topic);
    this.topicsByInternalId.set(topic.internalId, topic);
    return topic;
  }

  private removeTopic(topic: Topic): void {
    const entry = this.namespacesById.get(topic.namespaceId);
    entry?.byName.delete(topic.name);
    entry?.byId.delete(topic.id);
    this.topicsByInternalId.delete(topic.internalId);
  }

  private namespaceEntry(ref: NamespaceRef): NamespaceEntry | undefined {
    return typeof ref === 'number' ? this.namespacesById.get(ref) : this.namespacesByName.get(ref);
  }

  private requireNamespaceEntry(ref: NamespaceRef): NamespaceEntry {
    const entry = this.namespaceEntry(ref);
    if (!entry) throw new QuartetError('unknown_namespace', `unknown namespace ${typeof ref === 'number' ? `#${ref}` : `'${ref}'`}`);
    return entry;
  }
}

export function isTopic(ref: TopicRef): ref is Topic {
  return 'internalId' in ref;
}

/**
 * Why a namespace or topic name is invalid, or null. Rules common to every protocol: 1..255 UTF-8
 * bytes, no control characters, no leading or trailing whitespace. Stricter protocol rules (Kafka
 * allows only [a-zA-Z0-9._-], at most 249) are checked by that front-end.
 */
export function nameProblem(name: string): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'the name is empty';
  if (Buffer.byteLength(name, 'utf8') > nameBytesMax) return `the name is longer than ${nameBytesMax} bytes`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'the name contains a control character';
  if (name.trim() !== name) return 'the name starts or ends with whitespace';
  return null;
}

function assertValidName(name: string, what: 'namespace' | 'topic'): void {
  const problem = nameProblem(name);
  if (problem) throw new QuartetError('invalid_name', `invalid ${what} name ${JSON.stringify(name)}: ${problem}`);
}

function assertPartitionCount(count: number): void {
  // Zero is allowed: an Iggy topic may be created empty and given partitions later.
  if (!Number.isInteger(count) || count < 0 || count > partitionsPerTopicMax) {
    throw new QuartetError('invalid_partitions', `the partition count must be between 0 and ${partitionsPerTopicMax}, got ${count}`);
  }
}

function toRecord(topic: Topic): TopicRecord {
  return {
    internalId: topic.internalId,
    namespaceId: topic.namespaceId,
    id: topic.id,
    name: topic.name,
    uuid: topic.uuid,
    partitions: topic.partitions,
    config: { ...topic.config } as Record<string, string | number>,
    createdAt: topic.createdAt,
  };
}

function newTopicUuid(): Buffer {
  return Buffer.from(randomUUID().replace(/-/g, ''), 'hex');
}

function describeRef(ref: TopicRef): string {
  if (isTopic(ref)) return `'${ref.namespace}/${ref.name}' (#${ref.internalId})`;
  const topic = typeof ref.topic === 'number' ? `#${ref.topic}` : `'${ref.topic}'`;
  const ns = ref.namespace === undefined ? defaultNamespaceName : ref.namespace;
  return `${topic} in namespace ${typeof ns === 'number' ? `#${ns}` : `'${ns}'`}`;
}
