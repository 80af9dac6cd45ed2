// Iggy consumer groups (server notes §7 "Consumer groups") on the core engine's server-side
// model (src/core/groups/server-side.ts: members, generations, the balanced sticky assignment and
// the cooperative hand-off of partitions in flight, as the reference server's). This file keeps
// what is Iggy's: a group belongs to a topic and has a numeric id and a name. Ids count up from 0
// within the topic and are never given again, not even after the group is deleted (as the
// reference server's, so a new group never inherits a deleted one's offsets; the offsets of a
// deleted group are removed too, handlers/consumer-groups.ts). Members are connections (the Iggy
// client sessions, keyed by connection id): Join adds the caller, Leave removes it, a closed or
// evicted connection is removed; they have no session timeout of their own (the front-end evicts
// silent connections). Engine answers become Iggy error codes here.
//
// Durable: the group's id, name and topic (group store, scope `iggy`, key
// `<topicInternalId>/<groupId>`), and per topic the next group id (the group store's id counters).
// Members are not: they are live connections, gone after a restart, as in Iggy.

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import type { Logger } from '../../base/logger.js';
import type { LiveGroupMember } from '../../core/groups/directory.js';
import type { GroupLabel } from '../../core/groups/events.js';
import { ServerSideGroups, newServerSideGroup, type PendingRevocation, type ServerSideGroup, type ServerSideMember } from '../../core/groups/server-side.js';
import { IggyErrorCode, type Identifier } from './codec/index.js';
import { IggyFailure } from './errors.js';

export const iggyGroupScope = 'iggy';
/** Named limits. */
export const groupsPerTopicMax = 10_000;
export const membersPerGroupMax = 10_000;

/** A member: its id is the connection id. */
export type IggyGroupMember = ServerSideMember<number>;
export type { PendingRevocation };

export interface IggyGroup extends ServerSideGroup<number> {
  readonly topicInternalId: number;
  readonly id: number;
  readonly name: string;
}

export interface IggyGroupsOptions {
  /** Clock ms, for the revocations' deadline. */
  now: () => number;
  /** A pending revocation completes at the latest this long after it began. */
  rebalancingTimeoutMs: number;
}

export class IggyGroups {
  /** topic internal id → group id → group. */
  private readonly byTopic = new Map<number, Map<number, IggyGroup>>();
  /** topic internal id → the id the next group gets (at least every existing id + 1). */
  private readonly nextIds = new Map<number, number>();
  private readonly engine: ServerSideGroups<number>;

  constructor(
    private readonly broker: Broker,
    private readonly logger: Logger,
    options: IggyGroupsOptions = { now: () => Date.now(), rebalancingTimeoutMs: 10_000 },
  ) {
    this.engine = new ServerSideGroups<number>({ clock: { now: options.now }, rebalancingTimeoutMs: options.rebalancingTimeoutMs, membersPerGroupMax, events: broker.groupEvents });
    broker.groupEvents.nameOffsetKeys(iggyGroupScope, (key) => this.offsetKeyLabel(key));
  }

  /**
   * How an offset key (consumers.ts: `g:<group id>` or `c:...`, then `|<topic internal id>|<partition>`)
   * reads in the log: a group by its name (while it exists), with its stream, topic and partition.
   */
  private offsetKeyLabel(offsetKey: string): GroupLabel | null {
    const m = /^(.+)\|(\d+)\|(\d+)$/.exec(offsetKey);
    if (m === null) return null;
    const topicInternalId = Number(m[2]);
    const topic = this.broker.catalog.topicByInternalId(topicInternalId);
    const where = { partition: Number(m[3]), ...(topic !== null ? { stream: topic.namespace, topic: topic.name } : {}) };
    const groupId = /^g:(\d+)$/.exec(m[1]!);
    if (groupId === null) return { protocol: 'iggy', group: m[1]!, ...where };
    const id = Number(groupId[1]);
    return { protocol: 'iggy', group: this.byTopic.get(topicInternalId)?.get(id)?.name ?? m[1]!, groupId: id, ...where };
  }

  async load(): Promise<void> {
    for (const [topicInternalId, nextId] of await this.broker.groups.nextGroupIds(iggyGroupScope)) {
      if (this.broker.catalog.topicByInternalId(topicInternalId) === null) {
        await this.broker.groups.deleteNextGroupId(iggyGroupScope, topicInternalId).catch(() => undefined);
        continue;
      }
      this.nextIds.set(topicInternalId, nextId);
    }
    for (const stored of await this.broker.groups.list(iggyGroupScope)) {
      const s = stored.state as { topicInternalId?: unknown; id?: unknown; name?: unknown } | null;
      if (!s || typeof s.topicInternalId !== 'number' || typeof s.id !== 'number' || typeof s.name !== 'string') continue;
      const topic = this.broker.catalog.topicByInternalId(s.topicInternalId);
      if (topic === null) {
        await this.broker.groups.delete(iggyGroupScope, stored.groupId).catch(() => undefined);
        continue;
      }
      this.groupsOf(s.topicInternalId).set(s.id, newGroup(topic, s.id, s.name));
    }
    this.logger.debug('loaded iggy consumer groups', { groups: this.count() });
  }

  /** Whether the group still exists (it may have been deleted while a request awaited). */
  isCurrent(group: IggyGroup): boolean {
    return this.byTopic.get(group.topicInternalId)?.get(group.id) === group;
  }

  /** Whether the topic has a group with this id. */
  has(topicInternalId: number, groupId: number): boolean {
    return this.byTopic.get(topicInternalId)?.has(groupId) ?? false;
  }

  count(): number {
    let n = 0;
    for (const m of this.byTopic.values()) n += m.size;
    return n;
  }

  list(topic: Topic): IggyGroup[] {
    return [...(this.byTopic.get(topic.internalId)?.values() ?? [])].sort((a, b) => a.id - b.id);
  }

  find(topic: Topic, id: Identifier): IggyGroup | null {
    const groups = this.byTopic.get(topic.internalId);
    if (!groups) return null;
    if (id.kind === 'numeric') return groups.get(id.value) ?? null;
    for (const g of groups.values()) if (g.name === id.value) return g;
    return null;
  }

  require(topic: Topic, id: Identifier, mode: 'status' | 'result' = 'result'): IggyGroup {
    const g = this.find(topic, id);
    // 5000 by id or by name, as the reference server's group commands commit (5003 is for offsets).
    if (g === null) throw new IggyFailure(IggyErrorCode.consumerGroupIdNotFound, mode, 'consumer group not found');
    return g;
  }

  async create(topic: Topic, name: string): Promise<IggyGroup> {
    const groups = this.groupsOf(topic.internalId);
    if (Buffer.byteLength(name) < 1 || Buffer.byteLength(name) > 255) throw new IggyFailure(IggyErrorCode.invalidFormat, 'result', 'invalid group name');
    for (const g of groups.values()) if (g.name === name) throw new IggyFailure(IggyErrorCode.consumerGroupNameAlreadyExists, 'result', `group '${name}' exists`);
    if (groups.size >= groupsPerTopicMax) throw new IggyFailure(IggyErrorCode.error, 'result', 'too many groups');
    let id = this.nextIds.get(topic.internalId) ?? 0;
    for (const g of groups.values()) id = Math.max(id, g.id + 1);
    const group = newGroup(topic, id, name);
    // The counter first: a crash between the two writes leaves a gap in the ids, never a reuse.
    await this.broker.groups.saveNextGroupId(iggyGroupScope, topic.internalId, id + 1);
    this.nextIds.set(topic.internalId, id + 1);
    await this.broker.groups.save(iggyGroupScope, key(topic.internalId, id), { topicInternalId: topic.internalId, id, name });
    groups.set(id, group);
    this.engine.created(group);
    return group;
  }

  async delete(topic: Topic, group: IggyGroup): Promise<void> {
    await this.broker.groups.delete(iggyGroupScope, key(topic.internalId, group.id));
    this.byTopic.get(topic.internalId)?.delete(group.id);
    this.engine.deleted(group);
  }

  /** Drops every group of a deleted topic. */
  async topicDeleted(topicInternalId: number): Promise<void> {
    if (this.nextIds.delete(topicInternalId)) await this.broker.groups.deleteNextGroupId(iggyGroupScope, topicInternalId).catch(() => undefined);
    const groups = this.byTopic.get(topicInternalId);
    if (!groups) return;
    this.byTopic.delete(topicInternalId);
    for (const g of groups.values()) {
      this.engine.deleted(g);
      await this.broker.groups.delete(iggyGroupScope, key(topicInternalId, g.id)).catch(() => undefined);
    }
  }

  join(topic: Topic, group: IggyGroup, connectionId: number): void {
    if (this.engine.join(group, connectionId, topic.partitions) === 'group_full') throw new IggyFailure(IggyErrorCode.error, 'result', 'too many members');
  }

  leave(topic: Topic, group: IggyGroup, connectionId: number): void {
    if (this.engine.leave(group, connectionId, topic.partitions) === 'unknown_member') throw new IggyFailure(IggyErrorCode.consumerGroupMemberNotFound, 'result', 'not a member');
  }

  /** A connection went away (closed, logged out, evicted): leave every group. */
  removeConnection(connectionId: number): void {
    for (const [internalId, groups] of this.byTopic) {
      for (const g of groups.values()) {
        if (!g.members.has(connectionId)) continue;
        const topic = this.broker.catalog.topicByInternalId(internalId);
        this.engine.leave(g, connectionId, topic?.partitions ?? 0, 'disconnected');
      }
    }
  }

  /** The topic's partition count changed: reassign its groups. */
  partitionsChanged(topic: Topic): void {
    for (const g of this.byTopic.get(topic.internalId)?.values() ?? []) this.engine.rebalance(g, topic.partitions);
  }

  /** The members of the group stored under `groupKey` (`<topic internal id>/<group id>`) now; null for no such group. */
  liveMembers(groupKey: string): LiveGroupMember[] | null {
    const [topicInternalId, groupId] = groupKey.split('/').map(Number);
    const group = this.byTopic.get(topicInternalId!)?.get(groupId!);
    if (group === undefined) return null;
    return [...group.members.values()].map((m) => ({ memberId: String(m.memberId), clientId: null, clientHost: null, partitions: [...m.partitions] }));
  }

  /** Groups the connection is a member of (GetMe / GetClient). */
  membershipsOf(connectionId: number): IggyGroup[] {
    const out: IggyGroup[] = [];
    for (const groups of this.byTopic.values()) for (const g of groups.values()) if (g.members.has(connectionId)) out.push(g);
    return out;
  }

  isMemberAnywhere(connectionId: number): boolean {
    return this.membershipsOf(connectionId).length > 0;
  }

  /** Whether `member` (still a member of the still-existing group) polls `partition` now. */
  polls(group: IggyGroup, member: IggyGroupMember, partition: number): boolean {
    return this.isCurrent(group) && this.engine.polls(group, member, partition);
  }

  /** The group was served messages from `partition` up to `lastOffset` (a poll). */
  served(group: IggyGroup, partition: number, lastOffset: number): void {
    this.engine.served(group, partition, lastOffset);
  }

  /** The group committed `offset` for `partition`: a pending revocation it drains completes. */
  committed(group: IggyGroup, partition: number, offset: number): void {
    this.engine.committed(group, partition, offset);
  }

  /** The group's offset for `partition` was deleted: a pending hand-off of the partition completes. */
  offsetDeleted(group: IggyGroup, partition: number): void {
    this.engine.offsetDeleted(group, partition);
  }

  /** The topic was purged: nothing is in flight any more; the pending hand-offs complete. */
  topicPurged(topicInternalId: number): void {
    for (const g of this.byTopic.get(topicInternalId)?.values() ?? []) this.engine.purged(g);
  }

  /** Completes the revocations pending for `rebalancingTimeoutMs` or longer (the stale-member sweep calls it). */
  expireRevocations(): void {
    for (const groups of this.byTopic.values()) for (const g of groups.values()) this.engine.expireRevocations(g);
  }

  private groupsOf(topicInternalId: number): Map<number, IggyGroup> {
    let m = this.byTopic.get(topicInternalId);
    if (!m) {
      m = new Map();
      this.byTopic.set(topicInternalId, m);
    }
    return m;
  }
}

function newGroup(topic: Topic, id: number, name: string): IggyGroup {
  // Logged under the stream and topic names it had when created or loaded.
  const label = { protocol: 'iggy', group: name, groupId: id, stream: topic.namespace, topic: topic.name };
  return { topicInternalId: topic.internalId, id, name, ...newServerSideGroup<number>(label) };
}

function key(topicInternalId: number, groupId: number): string {
  return `${topicInternalId}/${groupId}`;
}
