// Cursus consumer groups (spec, "Consumer Group Coordination", "Offset Management", "6. Consumer
// Group Protocol") on the core group engine's server-side model (src/core/groups/server-side.ts:
// members, generations, the balanced sticky assignment, session timeouts on the injected clock and
// scheduler). This file keeps what is Cursus's: a group is a name and a selector (one topic,
// several, or a glob; groups-selector.ts) whose topic-partitions the engine assigns as one flat
// list, re-expanded when topics or partitions come or go; member ids get a random 4-digit suffix;
// engine answers become Cursus error codes.
//
// Durable: the registration (selector and expansion; group store, scope `cursus`, key = the group
// name) and, as Cursus v1 keeps its group lifecycle snapshot, the membership: the generation, the
// last rebalance and each member with its assignment, written after every change of them. A
// restart puts them back as they were (same generation, same assignments, no rebalance), each
// member with a fresh session window: a member that does not heartbeat within its session timeout
// (default 30 s) is removed then, as any other. Committed offsets are the core offset store's, in Kafka's scope
// (`kafka`, group, topic, partition), so a Cursus group's offsets are that group's Kafka offsets.

import { randomInt } from 'node:crypto';
import type { Clock } from '../../base/clock.js';
import { QuartetError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import type { Broker, TopicChangeListener } from '../../core/broker.js';
import { defaultNamespaceName, type Topic } from '../../core/catalog.js';
import type { GroupError } from '../../core/groups/model.js';
import { ServerSideGroups, newServerSideGroup, type ServerSideGroup } from '../../core/groups/server-side.js';
import { groupIdBytesMax, type OffsetCommit } from '../../core/offsets.js';
import { systemScheduler, type Scheduler } from '../../core/scheduler.js';
import { SerialQueue } from '../../core/serial.js';
import { CursusFailure, type CursusTopicView } from './handler.js';
import { topicNotFound } from './routing.js';
import {
  cursusTopics,
  expand,
  isMultiTopic,
  keyOf,
  parseStoredSelector,
  sameExpansion,
  sameSelector,
  selects,
  selectorText,
  storedExpansion,
  type Expansion,
  type GroupSelector,
  type TopicPartition,
} from './groups-selector.js';

export const cursusGroupScope = 'cursus';
/** The offset store scope of Cursus groups: Kafka's, so that both protocols see one group's offsets. */
export const cursusOffsetScope = 'kafka';

// Named limits.
export const cursusGroupsMax = 10_000;
export const membersPerGroupMax = 10_000;
/** Bytes of the member id a client sends (the broker adds `-NNNN`). */
export const memberIdBytesMax = 250;
/** Cursus's default session timeout (spec: "default ~30s"; heartbeats every 3 s are recommended). */
export const sessionTimeoutMsDefault = 30_000;
const memberSuffixes = 10_000;
const memberSuffixTriesMax = 16;

export interface CursusGroupsOptions {
  broker: Broker;
  logger: Logger;
  clock: Clock;
  /** Session timers; the process timers when absent (tests pass a ManualScheduler). */
  scheduler?: Scheduler;
  sessionTimeoutMs?: number;
  /** An integer in [0, bound): the member id suffixes. */
  random?: (bound: number) => number;
  /** The Cursus view of a topic (the topic table); a catalog topic it does not know is not a Cursus topic. */
  topicView?: (name: string) => CursusTopicView | undefined;
}

export interface CursusGroup {
  readonly name: string;
  selector: GroupSelector;
  expansion: Expansion;
  /** The engine's state: members, generation, assignment (over positions in `expansion.flat`). */
  readonly state: ServerSideGroup<string>;
  readonly registeredAtMs: number;
  lastRebalanceMs: number;
  /** member → the generation of the assignment it was last given (JOIN_GROUP, SYNC_GROUP). */
  readonly synced: Map<string, bigint>;
  /** The group's commits, one at a time (read the committed offsets, compare, write). */
  readonly commits: SerialQueue;
}

interface StoredRegistration {
  version: 1;
  selector: GroupSelector;
  expansion: Array<{ topic: string; partitions: number }>;
  registeredAt: number;
  /** The membership when it was written (absent in records written before it was kept). */
  membership?: StoredMembership;
}

interface StoredMembership {
  generation: number;
  lastRebalance: number;
  /** In join order; each assignment as (topic name, partition). */
  members: Array<{ id: string; assignments: Array<[string, number]> }>;
}

export class CursusGroups {
  private readonly groups = new Map<string, CursusGroup>();
  private readonly byState = new WeakMap<ServerSideGroup<string>, CursusGroup>();
  private readonly engine: ServerSideGroups<string>;
  /** Registrations and re-expansions, one at a time. */
  private readonly registry = new SerialQueue();
  /** Writes of membership records, one at a time (each writes the state as it is when it runs). */
  private readonly writes = new SerialQueue();
  private readonly broker: Broker;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly sessionTimeoutMs: number;
  private readonly random: (bound: number) => number;
  private readonly topicView: ((name: string) => CursusTopicView | undefined) | undefined;
  private unsubscribe: (() => void) | null = null;
  private unregisterLive: (() => void) | null = null;

  constructor(options: CursusGroupsOptions) {
    this.broker = options.broker;
    this.logger = options.logger;
    this.clock = options.clock;
    this.sessionTimeoutMs = options.sessionTimeoutMs ?? sessionTimeoutMsDefault;
    this.random = options.random ?? randomInt;
    this.topicView = options.topicView;
    this.engine = new ServerSideGroups<string>({
      clock: options.clock,
      scheduler: options.scheduler ?? systemScheduler,
      // Cursus reads are stateless (nothing is served through the engine): nothing is ever pending.
      rebalancingTimeoutMs: 0,
      membersPerGroupMax,
      onSessionExpired: (state, memberId) => this.sessionExpired(state, memberId),
      events: options.broker.groupEvents,
    });
  }

  /** Loads the registrations (re-expanded over the topics as they are now) and follows topic changes. */
  async start(): Promise<void> {
    this.unsubscribe ??= this.broker.onTopicChanges(this.topicChanges);
    // Admin tools (the HTTP admin API) ask who is in a group now; assignments are over the
    // group's topic expansion, not one topic's partitions, so none are given.
    this.unregisterLive ??= this.broker.liveGroups.register(cursusGroupScope, {
      membersOf: (name) => {
        const group = this.groups.get(name);
        return group === undefined ? null : [...group.state.members.keys()].map((memberId) => ({ memberId, clientId: null, clientHost: null, partitions: null }));
      },
      deleteGroup: (name) => this.delete(name),
    });
    await this.registry.run(() => this.load());
  }

  /** Stops following topic changes; members' session timers stop. */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.unregisterLive?.();
    this.unregisterLive = null;
    await this.registry.run(async () => {
      for (const g of this.groups.values()) this.engine.forget(g.state);
    });
  }

  get(name: string): CursusGroup | undefined {
    return this.groups.get(name);
  }

  /** Every group, by name. */
  list(): CursusGroup[] {
    return [...this.groups.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** REGISTER_GROUP: a new group, or a new selector for an existing one (its members rebalance). */
  register(name: string, selector: GroupSelector): Promise<CursusGroup> {
    return this.registry.run(async () => {
      const topics = this.topics();
      const names = selector.kind === 'topic' ? [selector.topic] : selector.kind === 'topics' ? selector.topics : [];
      for (const n of names) if (!topics.some((t) => t.name === n)) throw topicNotFound(n);
      const existing = this.groups.get(name);
      if (existing !== undefined && sameSelector(existing.selector, selector)) return existing;
      const expansion = expand(selector, topics);
      if (existing !== undefined) {
        await this.save(name, selector, expansion, existing.registeredAtMs);
        existing.selector = selector;
        this.apply(existing, expansion);
        await this.persist(existing);
        return existing;
      }
      return this.create(name, selector, expansion);
    });
  }

  /**
   * Deletes the group's registration, from the coordinator and the group store (the admin API's
   * group delete; Cursus itself has no command for it): refused with group_not_empty while it has
   * members. Its committed offsets are the caller's to delete (Kafka's scope, cursusOffsetScope).
   */
  delete(name: string): Promise<void> {
    return this.registry.run(async () => {
      const group = this.groups.get(name);
      if (group !== undefined) {
        const members = group.state.members.size;
        if (members > 0) throw new QuartetError('group_not_empty', `group '${name}' has ${members} active member(s)`);
        this.forget(group);
      }
      // After any write of its record already queued.
      await this.writes.run(() => this.broker.groups.delete(cursusGroupScope, name));
    });
  }

  /**
   * JOIN_GROUP: a new member (`member` plus `-NNNN`) joins and the group rebalances; a member
   * that is still in (it sent its full id) resumes with its assignment, unless `alwaysNew` (Cursus
   * v1, whose JOIN_GROUP without a generation always makes a new member `<member>-NNNN`, whatever
   * `member` is). A missing group is registered against `topicName` first (spec: "A fresh join
   * atomically registers a missing group against the supplied topic").
   */
  async join(name: string, member: string, topicName: string | undefined, options: { alwaysNew?: boolean } = {}): Promise<{ group: CursusGroup; memberId: string }> {
    checkMemberId(member);
    let group = this.groups.get(name);
    if (group === undefined) {
      if (topicName === undefined) throw groupNotFound(name);
      group = await this.registry.run(async () => this.groups.get(name) ?? this.createForTopic(name, topicName));
      if (this.groups.get(name) !== group) throw groupNotFound(name);
    }
    if (topicName !== undefined) requireSelected(group, topicName);
    let memberId = member;
    if (options.alwaysNew !== true && group.state.members.has(member)) {
      this.engine.heartbeat(group.state, member, group.state.generation);
    } else {
      memberId = this.newMemberId(group, member);
      if (this.engine.join(group.state, memberId, group.expansion.flat.length, this.sessionTimeoutMs) === 'group_full') {
        throw CursusFailure.of('group_full', [['group', name]], `at most ${membersPerGroupMax} members per group`);
      }
      this.rebalanced(group);
      await this.persist(group);
    }
    group.synced.set(memberId, group.state.generation);
    return { group, memberId };
  }

  /** SYNC_GROUP: the member's assignment in `generation`, which must be the group's. */
  sync(name: string, memberId: string, generation: number, topicName: string | undefined): CursusGroup {
    const group = this.require(name);
    if (topicName !== undefined) requireSelected(group, topicName);
    this.fenceMember(group, memberId, generation);
    group.synced.set(memberId, group.state.generation);
    return group;
  }

  /** HEARTBEAT: keeps the member's session; checks `generation` when given. Returns the group's generation. */
  heartbeat(name: string, memberId: string, generation: number | undefined, topicName: string): bigint {
    const group = this.require(name);
    requireSelected(group, topicName);
    const requested = generation === undefined ? group.state.generation : BigInt(generation);
    failOn(this.engine.heartbeat(group.state, memberId, requested), group, memberId, requested);
    return group.state.generation;
  }

  /** LEAVE_GROUP: the member goes and the group rebalances. */
  async leave(name: string, memberId: string, topicName: string): Promise<void> {
    const group = this.require(name);
    requireSelected(group, topicName);
    if (this.engine.leave(group.state, memberId, group.expansion.flat.length) === 'unknown_member') throw memberNotFound(memberId, name);
    group.synced.delete(memberId);
    this.rebalanced(group);
    await this.persist(group);
  }

  /** The member's topic-partitions, in the order of the expansion. */
  assignmentOf(group: CursusGroup, memberId: string): TopicPartition[] {
    return (group.state.members.get(memberId)?.partitions ?? []).map((i) => group.expansion.flat[i]!);
  }

  /** The group, or group_not_found. */
  require(name: string): CursusGroup {
    const group = this.groups.get(name);
    if (group === undefined) throw groupNotFound(name);
    return group;
  }

  /** A Cursus topic by name, or null. */
  topic(name: string): Topic | null {
    const topic = this.broker.catalog.getTopic({ namespace: defaultNamespaceName, topic: name });
    return topic !== null && this.visible(topic.name) ? topic : null;
  }

  /** A Cursus topic by name with every one of `partitions`, or topic_not_found / PARTITION_NOT_FOUND. */
  requirePartitions(topicName: string, partitions: Iterable<number>): Topic {
    const topic = this.topic(topicName);
    if (topic === null) throw topicNotFound(topicName);
    for (const p of partitions) {
      if (p >= topic.partitions) throw CursusFailure.of('PARTITION_NOT_FOUND', [['partition', String(p)]], `topic '${topicName}' has ${topic.partitions} partitions`);
    }
    return topic;
  }

  /**
   * The fence on a commit (COMMIT_OFFSET, BATCH_COMMIT, SEND_OFFSETS_TO_TXN): the group exists
   * and takes the topic, the member is in it, in `generation`, and owns every one of `partitions`
   * now. Throws group_not_found, topic_not_found, topic_not_assigned_to_group,
   * PARTITION_NOT_FOUND, member_not_found, GEN_MISMATCH or NOT_OWNER.
   */
  validateOwnership(groupName: string, memberId: string, generation: number, topicName: string, partitions: Iterable<number>): void {
    const group = this.require(groupName);
    const list = [...partitions];
    const topic = this.subscribedTopic(group, topicName, list);
    this.fence(group, memberId, generation, topic, list);
  }

  /** The group's committed next offset for the partition (CONSUME resumes from it), or null when none. */
  async committedOffset(groupName: string, topic: string | Topic, partition: number): Promise<number | null> {
    const resolved = typeof topic === 'string' ? this.topic(topic) : topic;
    if (resolved === null) return null;
    const stored = await this.broker.offsets.fetch(cursusOffsetScope, groupName, resolved.internalId, partition);
    // Kafka clients may store a negative offset (a reset to earliest): that is no offset.
    return stored === null || stored.offset < 0 ? null : stored.offset;
  }

  /**
   * COMMIT_OFFSET and BATCH_COMMIT: every offset, or none. Fenced as validateOwnership; monotonic
   * per partition (a lower offset than the committed one is offset_regression, the same one
   * changes nothing); durable once this resolves. Returns how many entries the commit had.
   */
  async commit(groupName: string, memberId: string, generation: number, topicName: string, offsets: ReadonlyMap<number, number>): Promise<number> {
    const group = this.require(groupName);
    const topic = this.subscribedTopic(group, topicName, [...offsets.keys()]);
    return group.commits.run(async () => {
      this.fence(group, memberId, generation, topic, offsets.keys());
      const committed = new Map<number, number>();
      for (const o of await this.broker.offsets.fetchGroup(cursusOffsetScope, groupName, topic.internalId)) committed.set(o.partition, o.offset);
      const changes: OffsetCommit[] = [];
      for (const [partition, offset] of offsets) {
        const current = committed.get(partition) ?? -1;
        if (offset < current) {
          const reason = `offset ${offset} of partition ${partition} is below the committed offset ${current}`;
          throw CursusFailure.of('offset_regression', [['reason', reason]], reason);
        }
        if (offset !== current) changes.push({ topicInternalId: topic.internalId, partition, offset });
      }
      // The membership may have changed while the offsets were read.
      this.fence(group, memberId, generation, topic, offsets.keys());
      if (changes.length > 0) await this.broker.offsets.commit(cursusOffsetScope, groupName, changes);
      return offsets.size;
    });
  }

  /** Whether a group that takes the topic has members now (DELETE and TRUNCATE are refused then). */
  hasActiveMembers(topicName: string): boolean {
    for (const g of this.groups.values()) {
      if (g.state.members.size > 0 && (selects(g.selector, topicName) || g.expansion.topics.some((t) => t.name === topicName))) return true;
    }
    return false;
  }

  /** GROUP_STATUS (docs/protocols/cursus-wire-v2.md §7.2). */
  status(name: string): object {
    const group = this.require(name);
    const multi = isMultiTopic(group.selector);
    const members = [...group.state.members.values()].map((m) => ({
      member_id: m.memberId,
      last_heartbeat: rfc3339(m.session === null ? group.lastRebalanceMs : m.session.sessionDeadlineMs - m.session.timeoutMs),
      assignments: this.assignmentOf(group, m.memberId).map((tp) => (multi ? topicPartitionText(tp) : tp.partition)),
    }));
    return {
      group_name: group.name,
      topic_name: selectorText(group.selector),
      state: stateOf(group),
      generation: Number(group.state.generation),
      member_count: members.length,
      partition_count: group.expansion.flat.length,
      members,
      last_rebalance: rfc3339(group.lastRebalanceMs),
    };
  }

  // --- registrations ----------------------------------------------------------------------------

  private async load(): Promise<void> {
    const topics = this.topics();
    for (const stored of await this.broker.groups.list(cursusGroupScope)) {
      const registration = parseRegistration(stored.state);
      if (registration === null) {
        this.logger.warn('ignoring an unreadable cursus group registration', { group: stored.groupId });
        continue;
      }
      const { selector } = registration;
      if (selector.kind === 'topic' && !topics.some((t) => t.name === selector.topic)) {
        // Its topic was deleted while the broker was down (or the deletion's cleanup failed).
        await this.broker.groups.delete(cursusGroupScope, stored.groupId).catch((error: unknown) => this.logger.warn('could not remove a cursus group registration', { group: stored.groupId, error }));
        continue;
      }
      const group = this.add(stored.groupId, selector, expand(selector, topics), registration.registeredAt);
      const expansionChanged = JSON.stringify(storedExpansion(group.expansion)) !== JSON.stringify(registration.expansion);
      if (registration.membership !== undefined) this.restore(group, registration.membership, expansionChanged);
      if (expansionChanged) await this.persist(group);
    }
    this.logger.debug('loaded cursus consumer groups', { groups: this.groups.size });
  }

  private createForTopic(name: string, topicName: string): Promise<CursusGroup> {
    const topics = this.topics();
    if (!topics.some((t) => t.name === topicName)) throw topicNotFound(topicName);
    const selector: GroupSelector = { kind: 'topic', topic: topicName };
    return this.create(name, selector, expand(selector, topics));
  }

  private async create(name: string, selector: GroupSelector, expansion: Expansion): Promise<CursusGroup> {
    if (this.groups.size >= cursusGroupsMax) throw CursusFailure.of('too_many_groups', [['group', name]], `at most ${cursusGroupsMax} groups`);
    const now = this.clock.now();
    await this.save(name, selector, expansion, now);
    const group = this.add(name, selector, expansion, now);
    this.engine.created(group.state);
    return group;
  }

  private add(name: string, selector: GroupSelector, expansion: Expansion, registeredAtMs: number): CursusGroup {
    const group: CursusGroup = {
      name,
      selector,
      expansion,
      state: newServerSideGroup<string>({ protocol: 'cursus', group: name }),
      registeredAtMs,
      lastRebalanceMs: registeredAtMs,
      synced: new Map(),
      commits: new SerialQueue(),
    };
    this.groups.set(name, group);
    this.byState.set(group.state, group);
    return group;
  }

  private save(name: string, selector: GroupSelector, expansion: Expansion, registeredAt: number): Promise<void> {
    const record: StoredRegistration = { version: 1, selector, expansion: storedExpansion(expansion), registeredAt };
    return this.broker.groups.save(cursusGroupScope, name, record);
  }

  /**
   * Writes the group's registration with its membership as it is when the write runs. A failed
   * write is logged: the group goes on in memory (a restart re-expands the registration from the
   * catalog, and members whose record was lost rejoin).
   */
  private persist(group: CursusGroup): Promise<void> {
    return this.writes.run(async () => {
      if (this.groups.get(group.name) !== group) return;
      const record: StoredRegistration = { version: 1, selector: group.selector, expansion: storedExpansion(group.expansion), registeredAt: group.registeredAtMs, membership: this.membershipOf(group) };
      await this.broker.groups.save(cursusGroupScope, group.name, record).catch((error: unknown) => this.logger.warn('could not store a cursus group registration', { group: group.name, error }));
    });
  }

  private membershipOf(group: CursusGroup): StoredMembership {
    const members = [...group.state.members.values()].sort((a, b) => a.joinSeq - b.joinSeq);
    return {
      generation: Number(group.state.generation),
      lastRebalance: group.lastRebalanceMs,
      members: members.map((m) => ({ id: m.memberId, assignments: this.assignmentOf(group, m.memberId).map((tp): [string, number] => [tp.topic.name, tp.partition]) })),
    };
  }

  /**
   * Puts a stored membership back: its generation and members, each assignment found again in the
   * expansion as it is now. When the expansion changed while the broker was down, the group then
   * rebalances over it (a new generation), as it would have on the change.
   */
  private restore(group: CursusGroup, membership: StoredMembership, expansionChanged: boolean): void {
    const indexOf = new Map(group.expansion.flat.map((tp, i) => [`${tp.topic.name}\u0000${tp.partition}`, i]));
    const members = membership.members.map((m) => ({
      memberId: m.id,
      partitions: m.assignments.map(([t, p]) => indexOf.get(`${t}\u0000${p}`)).filter((i): i is number => i !== undefined),
    }));
    this.engine.restore(group.state, BigInt(membership.generation), group.expansion.flat.length, members, this.sessionTimeoutMs);
    group.lastRebalanceMs = membership.lastRebalance;
    if (expansionChanged && members.length > 0) {
      this.engine.rebalance(group.state, group.expansion.flat.length);
      this.rebalanced(group);
    }
    for (const id of group.state.members.keys()) group.synced.set(id, expansionChanged ? group.state.generation - 1n : group.state.generation);
  }

  /** The group now covers `next`: the engine renumbers its partitions and rebalances. */
  private apply(group: CursusGroup, next: Expansion): void {
    const previous = group.expansion;
    group.expansion = next;
    this.engine.renumber(group.state, next.flat.length, (i) => {
      const tp = previous.flat[i]!;
      return next.indexOf.get(keyOf(tp.topic.internalId, tp.partition));
    });
    this.rebalanced(group);
  }

  // --- topic changes ----------------------------------------------------------------------------

  private readonly topicChanges: TopicChangeListener = {
    topicCreated: (topic) => this.topicChanged(topic, false),
    partitionsChanged: (topic) => this.topicChanged(topic, false),
    topicDeleted: (topic) => this.topicChanged(topic, true),
  };

  /**
   * A topic came, went or changed its partitions: the groups that take it are expanded again. A
   * group registered for that one topic goes with it (its offsets went with the topic).
   */
  private topicChanged(topic: Topic, deleted: boolean): Promise<void> {
    if (topic.namespace !== defaultNamespaceName) return Promise.resolve();
    return this.registry.run(async () => {
      const topics = this.topics();
      for (const group of [...this.groups.values()]) {
        const covered = group.expansion.topics.some((t) => t.internalId === topic.internalId);
        if (!covered && !selects(group.selector, topic.name)) continue;
        if (deleted && group.selector.kind === 'topic' && group.selector.topic === topic.name) {
          await this.drop(group);
          continue;
        }
        const next = expand(group.selector, topics);
        if (sameExpansion(group.expansion, next)) continue;
        this.apply(group, next);
        await this.persist(group);
      }
    });
  }

  private async drop(group: CursusGroup): Promise<void> {
    this.forget(group);
    // After any write of its record already queued.
    await this.writes.run(() => this.broker.groups.delete(cursusGroupScope, group.name)).catch((error: unknown) => this.logger.warn('could not remove a cursus group registration', { group: group.name, error }));
  }

  /** The coordinator no longer knows the group (its session timers stop). */
  private forget(group: CursusGroup): void {
    this.engine.deleted(group.state);
    this.groups.delete(group.name);
  }

  // --- members and fences -----------------------------------------------------------------------

  private newMemberId(group: CursusGroup, base: string): string {
    const withSuffix = (n: number): string => `${base}-${String(n).padStart(4, '0')}`;
    for (let i = 0; i < memberSuffixTriesMax; i++) {
      const id = withSuffix(this.random(memberSuffixes));
      if (!group.state.members.has(id)) return id;
    }
    // Crowded: the first free suffix after a random one.
    const start = this.random(memberSuffixes);
    for (let i = 0; i < memberSuffixes; i++) {
      const id = withSuffix((start + i) % memberSuffixes);
      if (!group.state.members.has(id)) return id;
    }
    throw CursusFailure.of('group_full', [['group', group.name]], `every suffix of member id '${base}' is taken`);
  }

  private sessionExpired(state: ServerSideGroup<string>, memberId: string): void {
    const group = this.byState.get(state);
    if (group === undefined) return;
    group.synced.delete(memberId);
    this.rebalanced(group);
    void this.persist(group);
    this.logger.debug('cursus group member missed its session timeout', { group: group.name, member: memberId });
  }

  private rebalanced(group: CursusGroup): void {
    group.lastRebalanceMs = this.clock.now();
  }

  /** member_not_found or GEN_MISMATCH unless the member is in the group's current generation. */
  private fenceMember(group: CursusGroup, memberId: string, generation: number): void {
    const requested = BigInt(generation);
    failOn(this.engine.validate(group.state, memberId, requested), group, memberId, requested);
  }

  private fence(group: CursusGroup, memberId: string, generation: number, topic: Topic, partitions: Iterable<number>): void {
    if (this.groups.get(group.name) !== group) throw groupNotFound(group.name);
    this.fenceMember(group, memberId, generation);
    for (const partition of partitions) {
      const index = group.expansion.indexOf.get(keyOf(topic.internalId, partition));
      if (index === undefined || !this.engine.owns(group.state, memberId, index)) {
        throw CursusFailure.of('NOT_OWNER', [['partition', String(partition)], ['member', memberId], ['group', group.name], ['generation', String(generation)]]);
      }
    }
  }

  /** The topic as the group covers it now, with every one of `partitions` in it. */
  private subscribedTopic(group: CursusGroup, topicName: string, partitions: readonly number[]): Topic {
    requireSelected(group, topicName);
    return this.requirePartitions(topicName, partitions);
  }

  private topics(): Topic[] {
    return cursusTopics(this.broker.catalog.listTopics(defaultNamespaceName), (name) => this.visible(name));
  }

  private visible(name: string): boolean {
    return this.topicView === undefined || this.topicView(name) !== undefined;
  }
}

// --- answers -------------------------------------------------------------------------------------

/** `<topic>:P<partition>`, as in `topic_assignments=`. */
export function topicPartitionText(tp: TopicPartition): string {
  return `${tp.topic.name}:P${tp.partition}`;
}

/** The member's assignment as a reply field: `assignments=[0,1]`, or `topic_assignments=a:P0,b:P1` for a group of several topics. */
export function assignmentField(group: CursusGroup, assignment: readonly TopicPartition[]): [string, string] {
  if (isMultiTopic(group.selector)) return ['topic_assignments', assignment.map(topicPartitionText).join(',')];
  return ['assignments', `[${assignment.map((tp) => tp.partition).join(',')}]`];
}

function stateOf(group: CursusGroup): 'Stable' | 'Rebalancing' | 'Dead' {
  if (group.state.members.size === 0) return 'Dead';
  for (const id of group.state.members.keys()) if (group.synced.get(id) !== group.state.generation) return 'Rebalancing';
  return 'Stable';
}

/** RFC 3339 in UTC, without fractional seconds when there are none. */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function failOn(error: GroupError, group: CursusGroup, memberId: string, requested: bigint): void {
  if (error === 'unknown_member') throw memberNotFound(memberId, group.name);
  if (error === 'stale_generation') {
    throw CursusFailure.of('GEN_MISMATCH', [['current', String(group.state.generation)], ['requested', String(requested)], ['group', group.name], ['member', memberId]]);
  }
}

/**
 * The topic a group command names must be one the group takes, or its selector as written (a
 * member of a group of several topics names any of them, or the list or pattern itself).
 */
function requireSelected(group: CursusGroup, topicName: string): void {
  if (selects(group.selector, topicName) || topicName === selectorText(group.selector)) return;
  throw CursusFailure.of('topic_not_assigned_to_group', [['expected', selectorText(group.selector)], ['actual', topicName]]);
}

function checkMemberId(member: string): void {
  if (Buffer.byteLength(member) > memberIdBytesMax) throw CursusFailure.of('invalid_member', [['command', 'JOIN_GROUP']], `member ids are at most ${memberIdBytesMax} bytes`);
}

/** A group name the store can key: 1..groupIdBytesMax bytes. */
export function checkGroupName(name: string, command: string): void {
  if (Buffer.byteLength(name) > groupIdBytesMax) throw CursusFailure.of('invalid_group', [['command', command]], `group names are at most ${groupIdBytesMax} bytes`);
}

export function groupNotFound(name: string): CursusFailure {
  return CursusFailure.of('group_not_found', [['group', name]]);
}

function memberNotFound(memberId: string, group: string): CursusFailure {
  return CursusFailure.of('member_not_found', [['member', memberId], ['group', group]]);
}

function parseRegistration(state: unknown): StoredRegistration | null {
  if (typeof state !== 'object' || state === null) return null;
  const s = state as { version?: unknown; selector?: unknown; expansion?: unknown; registeredAt?: unknown };
  const selector = parseStoredSelector(s.selector);
  if (s.version !== 1 || selector === null || typeof s.registeredAt !== 'number' || !Array.isArray(s.expansion)) return null;
  const registration: StoredRegistration = { version: 1, selector, expansion: s.expansion as StoredRegistration['expansion'], registeredAt: s.registeredAt };
  const membership = parseMembership((state as { membership?: unknown }).membership);
  if (membership !== null) registration.membership = membership;
  return registration;
}

/** A stored membership, or null when absent or not of its shape (the members then rejoin). */
function parseMembership(value: unknown): StoredMembership | null {
  if (typeof value !== 'object' || value === null) return null;
  const m = value as { generation?: unknown; lastRebalance?: unknown; members?: unknown };
  if (!Number.isSafeInteger(m.generation) || (m.generation as number) < 0 || typeof m.lastRebalance !== 'number' || !Array.isArray(m.members)) return null;
  const members: StoredMembership['members'] = [];
  for (const entry of m.members as unknown[]) {
    const e = entry as { id?: unknown; assignments?: unknown } | null;
    if (typeof e?.id !== 'string' || !Array.isArray(e.assignments)) return null;
    const assignments: Array<[string, number]> = [];
    for (const a of e.assignments as unknown[]) {
      if (!Array.isArray(a) || a.length !== 2 || typeof a[0] !== 'string' || !Number.isSafeInteger(a[1])) return null;
      assignments.push([a[0], a[1] as number]);
    }
    members.push({ id: e.id, assignments });
  }
  return { generation: m.generation as number, lastRebalance: m.lastRebalance, members };
}
