// Groups with server-side assignment: the engine assigns a group's partitions to its members
// itself (Iggy consumer groups, Cursus groups). A protocol keeps its own registry of groups (ids,
// names, persistence) and hands each group's state to this engine. Partitions are numbered
// 0..n-1: one topic's partitions, or a flat list of several topics' partitions that the adapter
// keeps (Cursus groups of several topics); when that list changes, `renumber` carries the owners
// over to the new numbering.
//
// Every membership or partition-count change bumps the generation and reassigns with the
// pluggable assignor (assignors.ts; balanced and sticky by default), with a cooperative hand-off,
// as the Iggy reference server's (`rebalance_members` / `complete_revocation`): a partition whose
// current owner is still a member and has been served records the group has not committed yet is
// not moved at once: it is pending revocation. Its owner no longer polls it (it leaves `pollable`)
// but still owns it for commits; the hand-off completes (a new generation) once the group's
// committed offset reaches the last offset served from it, after `rebalancingTimeoutMs`, when the
// group's offset for it is deleted or the topic purged, and only then does the new owner get it.
// Partitions with nothing in flight, and those whose owner left, move at once.
//
// Members live as long as the protocol says: as long as their connection (Iggy: no session
// timeout), or until they miss their session timeout (sessions.ts), when they are removed and
// the group rebalances. Fencing: a call naming another generation than the group's is refused
// (stale_generation), and a member may commit only partitions it owns.
//
// Groups are logged here for every protocol (events.ts): created and deleted (the adapter says
// when: created(), deleted()), members joining and leaving, and each new generation.

import type { Clock } from '../../base/clock.js';
import type { Scheduler } from '../scheduler.js';
import { stickyBalancedAssignor, type ServerSideAssignor } from './assignors.js';
import type { GroupEvents, GroupLabel } from './events.js';
import type { GroupError } from './model.js';
import { newMemberSession, SessionTimers, type MemberSession } from './sessions.js';

export type MemberKey = number | string;

export interface ServerSideMember<K extends MemberKey = MemberKey> {
  readonly memberId: K;
  /** Join order within the engine: ties in assignment go to the earlier member. */
  readonly joinSeq: number;
  /** The partitions it owns, ascending: the ones it polls and those pending revocation. */
  partitions: number[];
  /** The partitions it polls (owned, not pending revocation), ascending. */
  pollable: number[];
  /** Round-robin cursor over `pollable` for polls without a partition. */
  cursor: number;
  /** Its session, when it has a timeout; null for a member that lives as long as its connection. */
  readonly session: (MemberSession & { readonly timeoutMs: number }) | null;
}

/** A partition on its way from its owner to another member (cooperative hand-off). */
export interface PendingRevocation<K extends MemberKey = MemberKey> {
  /** The member that gets it once its owner has drained it. */
  target: K;
  /** When the revocation began (clock ms); it completes at the latest `rebalancingTimeoutMs` after. */
  sinceMs: number;
}

/** One group's assignment state. */
export interface ServerSideGroup<K extends MemberKey = MemberKey> {
  generation: bigint;
  /** The partition count of the last rebalance (a session expiry rebalances over it). */
  partitionCount: number;
  readonly members: Map<K, ServerSideMember<K>>;
  /** partition → its pending revocation. */
  readonly revocations: Map<number, PendingRevocation<K>>;
  /** partition → the last offset the group was served from it (polls), in this process. */
  readonly served: Map<number, number>;
  /** partition → the last offset the group committed for it, in this process. */
  readonly committed: Map<number, number>;
  /** How the log names the group (its protocol, name and topic); null: not logged. */
  readonly label: GroupLabel | null;
}

export function newServerSideGroup<K extends MemberKey>(label: GroupLabel | null = null): ServerSideGroup<K> {
  return { generation: 0n, partitionCount: 0, members: new Map(), revocations: new Map(), served: new Map(), committed: new Map(), label };
}

export interface ServerSideOptions<K extends MemberKey> {
  clock: Clock;
  /** Needed only for members with a session timeout. */
  scheduler?: Scheduler;
  /** A pending revocation completes at the latest this long after it began. */
  rebalancingTimeoutMs: number;
  membersPerGroupMax: number;
  assignor?: ServerSideAssignor;
  /** A member missed its session timeout: it was removed and the group rebalanced. */
  onSessionExpired?: (group: ServerSideGroup<K>, memberId: K) => void;
  /** Where group changes are logged (the broker's); none: not logged. */
  events?: GroupEvents;
}

export class ServerSideGroups<K extends MemberKey> {
  private readonly assignor: ServerSideAssignor;
  private readonly sessions: SessionTimers | null;
  private joinSeq = 0;

  constructor(private readonly options: ServerSideOptions<K>) {
    this.assignor = options.assignor ?? stickyBalancedAssignor;
    this.sessions = options.scheduler === undefined ? null : new SessionTimers(options.clock, options.scheduler);
  }

  /**
   * Adds the member (a no-op for a member already in) and rebalances over `partitions`. With
   * `sessionTimeoutMs`, the member is removed unless a heartbeat comes within it.
   */
  join(group: ServerSideGroup<K>, memberId: K, partitions: number, sessionTimeoutMs?: number): GroupError {
    if (group.members.has(memberId)) return 'none';
    if (group.members.size >= this.options.membersPerGroupMax) return 'group_full';
    if (sessionTimeoutMs !== undefined && this.sessions === null) throw new Error('session timeouts need a scheduler');
    const session = sessionTimeoutMs === undefined ? null : { ...newMemberSession(), timeoutMs: sessionTimeoutMs };
    const member: ServerSideMember<K> = { memberId, joinSeq: this.joinSeq++, partitions: [], pollable: [], cursor: 0, session };
    group.members.set(memberId, member);
    if (session !== null) this.touch(group, member);
    if (group.label !== null) this.options.events?.memberJoined(group.label, { member: String(memberId) });
    this.rebalance(group, partitions);
    return 'none';
  }

  /**
   * Puts back a group's state kept across a restart: its generation, partition count and members
   * with the partitions they owned, without a rebalance (the generation stays). Each member with
   * `sessionTimeoutMs` starts a fresh session window now (its old deadline is not kept), so a
   * member that does not come back is removed once it passes. For an empty group only.
   */
  restore(group: ServerSideGroup<K>, generation: bigint, partitions: number, members: ReadonlyArray<{ memberId: K; partitions: readonly number[] }>, sessionTimeoutMs?: number): void {
    if (group.members.size > 0) throw new Error('restore needs an empty group');
    if (sessionTimeoutMs !== undefined && this.sessions === null) throw new Error('session timeouts need a scheduler');
    group.generation = generation;
    group.partitionCount = partitions;
    const owned = new Set<number>();
    for (const m of members.slice(0, this.options.membersPerGroupMax)) {
      if (group.members.has(m.memberId)) continue;
      const mine = m.partitions.filter((p) => Number.isInteger(p) && p >= 0 && p < partitions && !owned.has(p));
      for (const p of mine) owned.add(p);
      const session = sessionTimeoutMs === undefined ? null : { ...newMemberSession(), timeoutMs: sessionTimeoutMs };
      const member: ServerSideMember<K> = { memberId: m.memberId, joinSeq: this.joinSeq++, partitions: mine, pollable: [], cursor: 0, session };
      group.members.set(m.memberId, member);
      if (session !== null) this.touch(group, member);
    }
    refreshPollable(group);
  }

  /** Removes the member and rebalances over `partitions`; unknown_member if it was not in. `reason` is logged. */
  leave(group: ServerSideGroup<K>, memberId: K, partitions: number, reason: 'left' | 'disconnected' = 'left'): GroupError {
    const member = group.members.get(memberId);
    if (member === undefined) return 'unknown_member';
    this.drop(group, member);
    if (group.label !== null) this.options.events?.memberLeft(group.label, { member: String(memberId), reason });
    this.rebalance(group, partitions);
    return 'none';
  }

  /**
   * The fence on a member's calls: unknown_member if it is not in the group, stale_generation if
   * it names another generation than the group's (it missed a rebalance), else none.
   */
  validate(group: ServerSideGroup<K>, memberId: K, generation: bigint): GroupError {
    if (!group.members.has(memberId)) return 'unknown_member';
    return generation === group.generation ? 'none' : 'stale_generation';
  }

  /** A sign of life: validates like `validate` and, when valid, pushes the member's session deadline. */
  heartbeat(group: ServerSideGroup<K>, memberId: K, generation: bigint): GroupError {
    const error = this.validate(group, memberId, generation);
    const member = group.members.get(memberId);
    if (error === 'none' && member?.session != null) this.touch(group, member);
    return error;
  }

  /** Whether the member owns `partition` now (it may commit it, even while it is pending revocation). */
  owns(group: ServerSideGroup<K>, memberId: K, partition: number): boolean {
    return group.members.get(memberId)?.partitions.includes(partition) ?? false;
  }

  /** Whether `member` is still this group's member and polls `partition` now. */
  polls(group: ServerSideGroup<K>, member: ServerSideMember<K>, partition: number): boolean {
    return group.members.get(member.memberId) === member && member.pollable.includes(partition);
  }

  /** The group was served records from `partition` up to `lastOffset` (a poll). */
  served(group: ServerSideGroup<K>, partition: number, lastOffset: number): void {
    group.served.set(partition, Math.max(lastOffset, group.served.get(partition) ?? -1));
  }

  /** The group committed `offset` for `partition`: a pending revocation it drains completes. */
  committed(group: ServerSideGroup<K>, partition: number, offset: number): void {
    group.committed.set(partition, offset);
    if (group.revocations.has(partition) && !inFlight(group, partition)) this.completeRevocation(group, partition);
  }

  /**
   * The group's offset for `partition` was deleted: its position starts over, so what it was
   * served no longer waits for a commit (a pending hand-off of the partition completes).
   */
  offsetDeleted(group: ServerSideGroup<K>, partition: number): void {
    group.committed.delete(partition);
    group.served.delete(partition);
    this.completeRevocation(group, partition);
  }

  /** The topic was purged: nothing is in flight any more; the pending hand-offs complete. */
  purged(group: ServerSideGroup<K>): void {
    group.served.clear();
    group.committed.clear();
    for (const p of [...group.revocations.keys()]) this.completeRevocation(group, p);
  }

  /**
   * The partitions were renumbered (an adapter's flat list of several topics' partitions changed):
   * partition `old` is now `newIndexOf(old)`, or gone when undefined. Owners, hand-offs and the
   * served and committed positions follow their partitions, then the group rebalances over
   * `partitions`, so a partition stays with its member as far as the assignor allows.
   */
  renumber(group: ServerSideGroup<K>, partitions: number, newIndexOf: (old: number) => number | undefined): void {
    const taken = new Set<number>();
    const moved = (p: number): number | undefined => {
      const n = newIndexOf(p);
      if (n === undefined) return undefined;
      if (!Number.isInteger(n) || n < 0 || n >= partitions) throw new Error(`partition ${p} renumbered to ${n}, outside 0..${partitions - 1}`);
      return n;
    };
    for (const m of group.members.values()) {
      m.partitions = m.partitions.map(moved).filter((p): p is number => p !== undefined);
      for (const p of m.partitions) {
        if (taken.has(p)) throw new Error(`two partitions renumbered to ${p}`);
        taken.add(p);
      }
      m.pollable = [];
    }
    remapKeys(group.revocations, moved);
    remapKeys(group.served, moved);
    remapKeys(group.committed, moved);
    this.rebalance(group, partitions);
  }

  /** Completes the group's revocations pending for `rebalancingTimeoutMs` or longer. */
  expireRevocations(group: ServerSideGroup<K>): void {
    const deadline = this.options.clock.now() - this.options.rebalancingTimeoutMs;
    for (const [p, r] of [...group.revocations]) if (r.sinceMs <= deadline) this.completeRevocation(group, p);
  }

  /** The group is gone from this process (the broker stops): its members' session timers stop. */
  forget(group: ServerSideGroup<K>): void {
    for (const m of group.members.values()) if (m.session !== null) this.sessions?.cancel(m.session);
  }

  /** A client or operator created the group (not one loaded at start). */
  created(group: ServerSideGroup<K>): void {
    if (group.label !== null) this.options.events?.created(group.label);
  }

  /** A client or operator deleted the group: forgotten, and logged. */
  deleted(group: ServerSideGroup<K>): void {
    this.forget(group);
    if (group.label !== null) this.options.events?.deleted(group.label);
  }

  /**
   * A new generation over `partitions`: every member its share from the assignor, partitions kept
   * where they are as far as it allows, moves of partitions with records in flight left pending
   * until their owner drains them (see the top of the file).
   */
  rebalance(group: ServerSideGroup<K>, partitions: number): void {
    group.generation++;
    group.partitionCount = partitions;
    const members = [...group.members.values()].sort((a, b) => a.joinSeq - b.joinSeq);
    // Partitions that are gone, and hand-offs whose target left, are forgotten.
    for (const p of [...group.served.keys()]) if (p >= partitions) group.served.delete(p);
    for (const p of [...group.committed.keys()]) if (p >= partitions) group.committed.delete(p);
    for (const [p, r] of [...group.revocations]) if (p >= partitions || !group.members.has(r.target)) group.revocations.delete(p);
    const owner = new Map<number, ServerSideMember<K>>();
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
    const current: Array<ServerSideMember<K> | undefined> = [];
    for (let p = 0; p < partitions; p++) {
      const pending = group.revocations.get(p);
      current.push(pending !== undefined ? group.members.get(pending.target) : owner.get(p));
    }
    const desired = this.assignor(members, current, partitions);
    this.apply(group, owner, desired);
    refreshPollable(group);
    this.logGeneration(group);
  }

  private logGeneration(group: ServerSideGroup<K>): void {
    if (group.label !== null) this.options.events?.rebalanced(group.label, group.generation, group.members.size);
  }

  /** Moves each partition to its desired member, or leaves it pending while its owner drains it. */
  private apply(group: ServerSideGroup<K>, owner: Map<number, ServerSideMember<K>>, desired: readonly ServerSideMember<K>[]): void {
    const now = this.options.clock.now();
    for (let p = 0; p < desired.length; p++) {
      const to = desired[p]!;
      const from = owner.get(p);
      if (from === to) {
        group.revocations.delete(p);
      } else if (from !== undefined && inFlight(group, p)) {
        // The owner keeps it, not pollable, until it has committed what it was served (or the deadline).
        group.revocations.set(p, { target: to.memberId, sinceMs: group.revocations.get(p)?.sinceMs ?? now });
      } else {
        group.revocations.delete(p);
        if (from !== undefined) from.partitions = from.partitions.filter((x) => x !== p);
        to.partitions.push(p);
      }
    }
  }

  /** Hands a pending partition to its target: a new generation. */
  private completeRevocation(group: ServerSideGroup<K>, partition: number): void {
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
    this.logGeneration(group);
  }

  private touch(group: ServerSideGroup<K>, member: ServerSideMember<K>): void {
    const session = member.session!;
    this.sessions!.touch(session, session.timeoutMs, {
      isCurrent: () => group.members.get(member.memberId) === member,
      expired: () => {
        this.drop(group, member);
        if (group.label !== null) this.options.events?.memberLeft(group.label, { member: String(member.memberId), reason: 'session expired' });
        this.rebalance(group, group.partitionCount);
        this.options.onSessionExpired?.(group, member.memberId);
      },
    });
  }

  private drop(group: ServerSideGroup<K>, member: ServerSideMember<K>): void {
    group.members.delete(member.memberId);
    if (member.session !== null) this.sessions?.cancel(member.session);
  }
}

/** Moves each entry of `map` to its partition's new number, dropping those that are gone. */
function remapKeys<V>(map: Map<number, V>, moved: (p: number) => number | undefined): void {
  const entries = [...map];
  map.clear();
  for (const [p, v] of entries) {
    const n = moved(p);
    if (n !== undefined) map.set(n, v);
  }
}

/** Served records of `partition` the group has not committed. */
function inFlight(group: ServerSideGroup, partition: number): boolean {
  const served = group.served.get(partition);
  return served !== undefined && (group.committed.get(partition) ?? -1) < served;
}

/** Sorts each member's partitions and derives the ones it polls (owned, not pending revocation). */
function refreshPollable(group: ServerSideGroup): void {
  for (const m of group.members.values()) {
    m.partitions.sort((a, b) => a - b);
    m.pollable = m.partitions.filter((p) => !group.revocations.has(p));
    if (m.cursor >= m.pollable.length) m.cursor = 0;
  }
}
