// Iggy consumer groups: server-side partition assignment with generations (server notes §7
// "Consumer groups"). A group belongs to a topic and has a numeric id and a name. Ids count up from
// 0 within the topic and are never given again, not even after the group is deleted (as the
// reference server's, so a new group never inherits a deleted one's offsets; the offsets of a
// deleted group are removed too, handlers/consumer-groups.ts). Members are connections (the Iggy
// client sessions): Join adds the caller, Leave removes it, a closed or evicted connection is
// removed.
//
// Assignment is balanced and sticky, with a cooperative hand-off, as the reference server's
// (`rebalance_members` / `complete_revocation`): every membership or partition-count change bumps
// the generation and gives each member its fair share (⌊partitions / members⌋, one more for the
// most loaded when they do not divide), keeping partitions where they are as far as that allows:
// a member over its share gives up its highest partitions, and the partitions without an owner go
// to the least loaded members. A partition whose current owner is still a member and has been
// served messages the group has not committed yet is not moved at once: it is pending revocation.
// Its owner no longer polls it (it is left out of the owner's SyncConsumerGroup and a poll of it is
// fenced) but may still commit its offset; the hand-off completes (a new generation) once the
// group's committed offset reaches the last offset served from it, after `rebalancingTimeoutMs`,
// when the group's offset for it is deleted or the topic purged, and only then does the new owner
// get it. Partitions with nothing in flight, and those whose owner left, move at once.
//
// Durable: the group's id, name and topic (group store, scope `iggy`, key
// `<topicInternalId>/<groupId>`), and per topic the next group id (the group store's id counters).
// Members are not: they are live connections, gone after a restart, as in Iggy.

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import type { Logger } from '../../base/logger.js';
import { IggyErrorCode, type Identifier } from './codec/index.js';
import { IggyFailure } from './errors.js';

export const iggyGroupScope = 'iggy';
/** Named limits. */
export const groupsPerTopicMax = 10_000;
export const membersPerGroupMax = 10_000;

export interface IggyGroupMember {
  readonly connectionId: number;
  readonly joinSeq: number;
  /** The partitions it owns, ascending: the ones it polls and those pending revocation. */
  partitions: number[];
  /** The partitions it polls (owned, not pending revocation), ascending. */
  pollable: number[];
  /** Round-robin cursor over `pollable` for polls without a partition id. */
  cursor: number;
}

/** A partition on its way from its owner to another member (cooperative hand-off). */
export interface PendingRevocation {
  /** The member that gets it once its owner has drained it. */
  target: number;
  /** When the revocation began (clock ms); it completes at the latest `rebalancingTimeoutMs` after. */
  sinceMs: number;
}

export interface IggyGroup {
  readonly topicInternalId: number;
  readonly id: number;
  readonly name: string;
  generation: bigint;
  readonly members: Map<number, IggyGroupMember>;
  /** partition → its pending revocation. */
  readonly revocations: Map<number, PendingRevocation>;
  /** partition → the last offset the group was served from it (polls), in this process. */
  readonly served: Map<number, number>;
  /** partition → the last offset the group committed for it (offset stores, auto-commit), in this process. */
  readonly committed: Map<number, number>;
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
  private joinSeq = 0;

  constructor(
    private readonly broker: Broker,
    private readonly logger: Logger,
    private readonly options: IggyGroupsOptions = { now: () => Date.now(), rebalancingTimeoutMs: 10_000 },
  ) {}

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
      if (this.broker.catalog.topicByInternalId(s.topicInternalId) === null) {
        await this.broker.groups.delete(iggyGroupScope, stored.groupId).catch(() => undefined);
        continue;
      }
      this.groupsOf(s.topicInternalId).set(s.id, newGroup(s.topicInternalId, s.id, s.name));
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
    const group = newGroup(topic.internalId, id, name);
    // The counter first: a crash between the two writes leaves a gap in the ids, never a reuse.
    await this.broker.groups.saveNextGroupId(iggyGroupScope, topic.internalId, id + 1);
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
    if (this.nextIds.delete(topicInternalId)) await this.broker.groups.deleteNextGroupId(iggyGroupScope, topicInternalId).catch(() => undefined);
    const groups = this.byTopic.get(topicInternalId);
    if (!groups) return;
    this.byTopic.delete(topicInternalId);
    for (const g of groups.values()) await this.broker.groups.delete(iggyGroupScope, key(topicInternalId, g.id)).catch(() => undefined);
  }

  join(topic: Topic, group: IggyGroup, connectionId: number): void {
    if (group.members.has(connectionId)) return;
    if (group.members.size >= membersPerGroupMax) throw new IggyFailure(IggyErrorCode.error, 'result', 'too many members');
    group.members.set(connectionId, { connectionId, joinSeq: this.joinSeq++, partitions: [], pollable: [], cursor: 0 });
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

  /** Whether `member` (still a member of the still-existing group) polls `partition` now. */
  polls(group: IggyGroup, member: IggyGroupMember, partition: number): boolean {
    return this.isCurrent(group) && group.members.get(member.connectionId) === member && member.pollable.includes(partition);
  }

  /** The group was served messages from `partition` up to `lastOffset` (a poll). */
  served(group: IggyGroup, partition: number, lastOffset: number): void {
    group.served.set(partition, Math.max(lastOffset, group.served.get(partition) ?? -1));
  }

  /** The group committed `offset` for `partition`: a pending revocation it drains completes. */
  committed(group: IggyGroup, partition: number, offset: number): void {
    group.committed.set(partition, offset);
    if (group.revocations.has(partition) && !this.inFlight(group, partition)) this.completeRevocation(group, partition);
  }

  /**
   * The group's offset for `partition` was deleted: its position starts over, so what it was
   * served no longer waits for a commit (a pending hand-off of the partition completes).
   */
  offsetDeleted(group: IggyGroup, partition: number): void {
    group.committed.delete(partition);
    group.served.delete(partition);
    this.completeRevocation(group, partition);
  }

  /**
   * The topic was purged: its messages and offsets are gone, so nothing is in flight any more; the
   * pending hand-offs complete.
   */
  topicPurged(topicInternalId: number): void {
    for (const g of this.byTopic.get(topicInternalId)?.values() ?? []) {
      g.served.clear();
      g.committed.clear();
      for (const p of [...g.revocations.keys()]) this.completeRevocation(g, p);
    }
  }

  /** Completes the revocations pending for `rebalancingTimeoutMs` or longer (the stale-member sweep calls it). */
  expireRevocations(): void {
    const deadline = this.options.now() - this.options.rebalancingTimeoutMs;
    for (const groups of this.byTopic.values()) {
      for (const g of groups.values()) {
        for (const [p, r] of [...g.revocations]) if (r.sinceMs <= deadline) this.completeRevocation(g, p);
      }
    }
  }

  /** Served messages of `partition` the group has not committed. */
  private inFlight(group: IggyGroup, partition: number): boolean {
    const served = group.served.get(partition);
    return served !== undefined && (group.committed.get(partition) ?? -1) < served;
  }

  /** Hands a pending partition to its target: a new generation. */
  private completeRevocation(group: IggyGroup, partition: number): void {
    const pending = group.revocations.get(partition);
    if (pending === undefined) return;
    group.revocations.delete(partition);
    const target = group.members.get(pending.target);
    // (A target that left took its hand-offs with it in that rebalance; kept defensively: the owner keeps it.)
    if (target !== undefined) {
      for (const m of group.members.values()) m.partitions = m.partitions.filter((p) => p !== partition);
      target.partitions.push(partition);
    }
    group.generation++;
    refreshPollable(group);
  }

  /**
   * Balanced, sticky reassignment with cooperative hand-off (see the top of the file): a new
   * generation, every member its fair share, partitions kept where they are as far as that allows,
   * moves of partitions with messages in flight left pending until their owner drains them.
   */
  private rebalance(group: IggyGroup, partitions: number): void {
    group.generation++;
    const members = [...group.members.values()].sort((a, b) => a.joinSeq - b.joinSeq);
    // Partitions that are gone, and hand-offs whose target left, are forgotten.
    for (const p of [...group.served.keys()]) if (p >= partitions) group.served.delete(p);
    for (const p of [...group.committed.keys()]) if (p >= partitions) group.committed.delete(p);
    for (const [p, r] of [...group.revocations]) if (p >= partitions || !group.members.has(r.target)) group.revocations.delete(p);
    const owner = new Map<number, IggyGroupMember>();
    for (const m of members) {
      m.partitions = m.partitions.filter((p) => p < partitions);
      for (const p of m.partitions) owner.set(p, m);
      m.cursor = 0;
    }
    if (members.length === 0) {
      group.revocations.clear();
      return;
    }
    // Where each partition is headed now: a pending hand-off's target, else its owner.
    const desired: Array<IggyGroupMember | undefined> = [];
    const load = new Map<IggyGroupMember, number>(members.map((m) => [m, 0]));
    for (let p = 0; p < partitions; p++) {
      const pending = group.revocations.get(p);
      const m = pending !== undefined ? group.members.get(pending.target) : owner.get(p);
      desired.push(m);
      if (m !== undefined) load.set(m, load.get(m)! + 1);
    }
    // Fair shares; the remainder goes to the most loaded (then the earliest joined), so fewer move.
    const fair = Math.floor(partitions / members.length);
    const capacity = new Map<IggyGroupMember, number>(members.map((m) => [m, fair]));
    const byLoad = [...members].sort((a, b) => load.get(b)! - load.get(a)! || a.joinSeq - b.joinSeq);
    for (const m of byLoad.slice(0, partitions % members.length)) capacity.set(m, fair + 1);
    // A member over its share gives up its highest partitions; the free ones go to the least loaded.
    for (let p = partitions - 1; p >= 0; p--) {
      const m = desired[p];
      if (m !== undefined && load.get(m)! > capacity.get(m)!) {
        load.set(m, load.get(m)! - 1);
        desired[p] = undefined;
      }
    }
    for (let p = 0; p < partitions; p++) {
      if (desired[p] !== undefined) continue;
      let best: IggyGroupMember | undefined;
      for (const m of members) if (load.get(m)! < capacity.get(m)! && (best === undefined || load.get(m)! < load.get(best)!)) best = m;
      desired[p] = best!;
      load.set(best!, load.get(best!)! + 1);
    }
    const now = this.options.now();
    for (let p = 0; p < partitions; p++) {
      const to = desired[p]!;
      const from = owner.get(p);
      if (from === to) {
        group.revocations.delete(p);
      } else if (from !== undefined && this.inFlight(group, p)) {
        // The owner keeps it, not pollable, until it has committed what it was served (or the deadline).
        group.revocations.set(p, { target: to.connectionId, sinceMs: group.revocations.get(p)?.sinceMs ?? now });
      } else {
        group.revocations.delete(p);
        if (from !== undefined) from.partitions = from.partitions.filter((x) => x !== p);
        to.partitions.push(p);
      }
    }
    refreshPollable(group);
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

function newGroup(topicInternalId: number, id: number, name: string): IggyGroup {
  return { topicInternalId, id, name, generation: 0n, members: new Map(), revocations: new Map(), served: new Map(), committed: new Map() };
}

/** Sorts each member's partitions and derives the ones it polls (owned, not pending revocation). */
function refreshPollable(group: IggyGroup): void {
  for (const m of group.members.values()) {
    m.partitions.sort((a, b) => a - b);
    m.pollable = m.partitions.filter((p) => !group.revocations.has(p));
    if (m.cursor >= m.pollable.length) m.cursor = 0;
  }
}

function key(topicInternalId: number, groupId: number): string {
  return `${topicInternalId}/${groupId}`;
}
