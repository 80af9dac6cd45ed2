// Iggy consumer groups: server-side partition assignment with generations (server notes §7
// "Consumer groups"). A group belongs to a topic and has a numeric id and a name. Ids count up from
// 0 within the topic and are never given again, not even after the group is deleted (as the
// reference server's, so a new group never inherits a deleted one's offsets; the offsets of a
// deleted group are removed too, handlers/consumer-groups.ts). Members are connections (the Iggy client sessions): Join adds the caller,
// Leave removes it, a closed or evicted connection is removed; every membership change bumps the
// generation and reassigns the topic's partitions round-robin over the members in join order
// (member i gets partitions p with p % n == i). SyncConsumerGroup returns the caller's
// generation and partitions.
//
// Durable: the group's id, name and topic (group store, scope `iggy`, key
// `<topicInternalId>/<groupId>`), and per topic the next group id (key `<topicInternalId>/next`). Members are not: they are live connections, gone after a
// restart, as in Iggy.

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import type { Logger } from '../../core/logger.js';
import { IggyErrorCode, type Identifier } from './codec/index.js';
import { IggyFailure } from './errors.js';

export const iggyGroupScope = 'iggy';
/** Named limits. */
export const groupsPerTopicMax = 10_000;
export const membersPerGroupMax = 10_000;

export interface IggyGroupMember {
  readonly connectionId: number;
  readonly joinSeq: number;
  partitions: number[];
  /** Round-robin cursor over `partitions` for polls without a partition id. */
  cursor: number;
}

export interface IggyGroup {
  readonly topicInternalId: number;
  readonly id: number;
  readonly name: string;
  generation: bigint;
  readonly members: Map<number, IggyGroupMember>;
}

export class IggyGroups {
  /** topic internal id → group id → group. */
  private readonly byTopic = new Map<number, Map<number, IggyGroup>>();
  /** topic internal id → the id the next group gets (at least every existing id + 1). */
  private readonly nextIds = new Map<number, number>();
  private joinSeq = 0;

  constructor(
    private readonly broker: Broker,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<void> {
    for (const stored of await this.broker.groups.list(iggyGroupScope)) {
      const s = stored.state as { topicInternalId?: unknown; id?: unknown; name?: unknown; nextGroupId?: unknown } | null;
      if (!s || typeof s.topicInternalId !== 'number') continue;
      const nextId = typeof s.nextGroupId === 'number' ? s.nextGroupId : null;
      if (nextId === null && (typeof s.id !== 'number' || typeof s.name !== 'string')) continue;
      if (this.broker.catalog.topicByInternalId(s.topicInternalId) === null) {
        await this.broker.groups.delete(iggyGroupScope, stored.groupId).catch(() => undefined);
        continue;
      }
      if (nextId !== null) {
        this.nextIds.set(s.topicInternalId, Math.max(nextId, this.nextIds.get(s.topicInternalId) ?? 0));
        continue;
      }
      if (typeof s.id !== 'number' || typeof s.name !== 'string') continue;
      this.groupsOf(s.topicInternalId).set(s.id, { topicInternalId: s.topicInternalId, id: s.id, name: s.name, generation: 0n, members: new Map() });
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
    const group: IggyGroup = { topicInternalId: topic.internalId, id, name, generation: 0n, members: new Map() };
    // The counter first: a crash between the two writes leaves a gap in the ids, never a reuse.
    await this.broker.groups.save(iggyGroupScope, nextKey(topic.internalId), { topicInternalId: topic.internalId, nextGroupId: id + 1 });
    this.nextIds.set(topic.internalId, id + 1);
    await this.broker.groups.save(iggyGroupScope, key(topic.internalId, id), { topicInternalId: topic.internalId, id, name });
    groups.set(id, group);
    return group;
  }

  async delete(topic: Topic, group: IggyGroup): Promise<void> {
    await this.broker.groups.delete(iggyGroupScope, key(topic.internalId, group.id));
    this.byTopic.get(topic.internalId)?.delete(group.id);
  }

  /** Drops every group of a deleted topic. */
  async topicDeleted(topicInternalId: number): Promise<void> {
    if (this.nextIds.delete(topicInternalId)) await this.broker.groups.delete(iggyGroupScope, nextKey(topicInternalId)).catch(() => undefined);
    const groups = this.byTopic.get(topicInternalId);
    if (!groups) return;
    this.byTopic.delete(topicInternalId);
    for (const g of groups.values()) await this.broker.groups.delete(iggyGroupScope, key(topicInternalId, g.id)).catch(() => undefined);
  }

  join(topic: Topic, group: IggyGroup, connectionId: number): void {
    if (group.members.has(connectionId)) return;
    if (group.members.size >= membersPerGroupMax) throw new IggyFailure(IggyErrorCode.error, 'result', 'too many members');
    group.members.set(connectionId, { connectionId, joinSeq: this.joinSeq++, partitions: [], cursor: 0 });
    this.rebalance(group, topic.partitions);
  }

  leave(topic: Topic, group: IggyGroup, connectionId: number): void {
    if (!group.members.delete(connectionId)) throw new IggyFailure(IggyErrorCode.consumerGroupMemberNotFound, 'result', 'not a member');
    this.rebalance(group, topic.partitions);
  }

  /** A connection went away (closed, logged out, evicted): leave every group. */
  removeConnection(connectionId: number): void {
    for (const [internalId, groups] of this.byTopic) {
      for (const g of groups.values()) {
        if (!g.members.delete(connectionId)) continue;
        const topic = this.broker.catalog.topicByInternalId(internalId);
        this.rebalance(g, topic?.partitions ?? 0);
      }
    }
  }

  /** The topic's partition count changed: reassign its groups. */
  partitionsChanged(topic: Topic): void {
    for (const g of this.byTopic.get(topic.internalId)?.values() ?? []) this.rebalance(g, topic.partitions);
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

  private rebalance(group: IggyGroup, partitions: number): void {
    group.generation++;
    const members = [...group.members.values()].sort((a, b) => a.joinSeq - b.joinSeq);
    for (const m of members) {
      m.partitions = [];
      m.cursor = 0;
    }
    if (members.length === 0) return;
    for (let p = 0; p < partitions; p++) members[p % members.length]!.partitions.push(p);
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

function key(topicInternalId: number, groupId: number): string {
  return `${topicInternalId}/${groupId}`;
}

function nextKey(topicInternalId: number): string {
  return `${topicInternalId}/next`;
}
