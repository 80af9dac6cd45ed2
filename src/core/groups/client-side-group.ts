// The data of one group with client-side assignment: members, static ids, the state machine and
// the rules that need nothing but the group itself (protocol choice, leader election, who has
// rejoined). Timers and answers to waiting requests belong to client-side.ts.
//
// Mirrors apache/kafka group-coordinator/.../classic/ClassicGroup.java (and the older
// core/.../coordinator/group/GroupMetadata.scala), Kafka's classic protocol being the model;
// comments say where and why we differ.

import assert from 'node:assert/strict';
import type { TimerHandle } from '../scheduler.js';
import type { GroupSnapshot } from './client-side-types.js';
import type { GroupError } from './model.js';
import type { MemberSession } from './sessions.js';

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export const allGroupStates: readonly GroupState[] = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead'];

/** Kafka's ClassicGroupState.validPreviousStates: the only transitions the machine makes. */
const validPreviousStates: Readonly<Record<GroupState, readonly GroupState[]>> = {
  Empty: ['PreparingRebalance'],
  PreparingRebalance: ['Stable', 'CompletingRebalance', 'Empty'],
  CompletingRebalance: ['PreparingRebalance'],
  Stable: ['CompletingRebalance'],
  Dead: ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'],
};

export interface GroupProtocol {
  name: string;
  metadata: Buffer;
}

export interface JoinGroupMember {
  memberId: string;
  groupInstanceId: string | null;
  metadata: Buffer;
}

export interface JoinGroupResult {
  error: GroupError;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leaderId: string;
  memberId: string;
  /** The members and their metadata for the chosen protocol: filled for the leader only. */
  members: JoinGroupMember[];
}

export interface SyncGroupResult {
  error: GroupError;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

export type JoinWaiter = (result: JoinGroupResult) => void;
export type SyncWaiter = (result: SyncGroupResult) => void;

export const emptyBytes: Buffer = Buffer.alloc(0);

export interface GroupMemberInit {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  protocolType: string;
  protocols: GroupProtocol[];
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  assignment?: Buffer;
  /** The SASL user of the connection that made the member; null when unknown or without SASL. */
  userId?: number | null;
}

export class GroupMember implements MemberSession {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  readonly protocolType: string;
  protocols: GroupProtocol[];
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  assignment: Buffer;
  readonly userId: number | null;
  /** The pending JoinGroup, answered when the join phase completes. */
  joinWaiter: JoinWaiter | null = null;
  /** The pending SyncGroup, answered when the leader's assignment arrives. */
  syncWaiter: SyncWaiter | null = null;
  /** Joined during the current rebalance and never completed one (Kafka's MemberMetadata.isNew). */
  isNew = false;
  /** When the member is considered gone unless it is waiting on a join or sync. */
  sessionDeadlineMs = 0;
  sessionTimer: TimerHandle | null = null;
  sessionTimerFireAtMs = 0;

  constructor(init: GroupMemberInit) {
    this.memberId = init.memberId;
    this.groupInstanceId = init.groupInstanceId;
    this.clientId = init.clientId;
    this.clientHost = init.clientHost;
    this.protocolType = init.protocolType;
    this.protocols = init.protocols;
    this.sessionTimeoutMs = init.sessionTimeoutMs;
    this.rebalanceTimeoutMs = init.rebalanceTimeoutMs;
    this.assignment = init.assignment ?? emptyBytes;
    this.userId = init.userId ?? null;
  }

  get isAwaitingJoin(): boolean {
    return this.joinWaiter !== null;
  }

  get isAwaitingSync(): boolean {
    return this.syncWaiter !== null;
  }

  supports(protocolName: string): boolean {
    return this.protocols.some((p) => p.name === protocolName);
  }

  metadataFor(protocolName: string): Buffer {
    const protocol = this.protocols.find((p) => p.name === protocolName);
    assert(protocol !== undefined, `member ${this.memberId} does not support protocol ${protocolName}`);
    return protocol.metadata;
  }

  /** Same protocols, in the same order, with the same metadata bytes (MemberMetadata.matches). */
  matches(protocols: readonly GroupProtocol[]): boolean {
    if (protocols.length !== this.protocols.length) return false;
    return protocols.every((p, i) => p.name === this.protocols[i]!.name && p.metadata.equals(this.protocols[i]!.metadata));
  }

  /** The member's first preference among the candidates (MemberMetadata.vote). */
  vote(candidates: ReadonlySet<string>): string {
    const choice = this.protocols.find((p) => candidates.has(p.name));
    assert(choice !== undefined, `member ${this.memberId} supports none of the candidate protocols`);
    return choice.name;
  }
}

export class ClientSideGroup {
  readonly groupId: string;
  state: GroupState;
  stateTimestampMs: number;
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  /** In insertion order: the first remaining member becomes leader when the leader goes. */
  readonly members = new Map<string, GroupMember>();
  /** group.instance.id → member id, for static members. */
  readonly staticMembers = new Map<string, string>();
  /** Member ids handed out with MEMBER_ID_REQUIRED and not yet used, with their expiry timers. */
  readonly pendingJoinMembers = new Map<string, TimerHandle>();
  /** Members of the current generation that have not sent SyncGroup yet. */
  readonly pendingSyncMembers = new Set<string>();
  /** Set when a member joins a generation-0 group during the initial delay: delay further. */
  newMemberAdded = false;
  joinTimer: TimerHandle | null = null;
  /** The join timer is the initial delay, which never completes early (InitialDelayedJoin). */
  joinTimerIsInitialDelay = false;
  syncTimer: TimerHandle | null = null;

  constructor(groupId: string, state: GroupState, nowMs: number) {
    this.groupId = groupId;
    this.state = state;
    this.stateTimestampMs = nowMs;
  }

  /** A state test that TypeScript does not narrow across the calls that change the state. */
  is(state: GroupState): boolean {
    return this.state === state;
  }

  get size(): number {
    return this.members.size;
  }

  has(memberId: string): boolean {
    return this.members.has(memberId);
  }

  member(memberId: string): GroupMember | undefined {
    return this.members.get(memberId);
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  transitionTo(target: GroupState, nowMs: number): void {
    assert(validPreviousStates[target].includes(this.state), `group ${this.groupId}: illegal transition ${this.state} -> ${target}`);
    this.state = target;
    this.stateTimestampMs = nowMs;
  }

  /** A rebalance can start from Stable, CompletingRebalance or Empty. */
  canRebalance(): boolean {
    return validPreviousStates.PreparingRebalance.includes(this.state);
  }

  add(member: GroupMember): void {
    assert(!this.members.has(member.memberId), `member ${member.memberId} is already in group ${this.groupId}`);
    if (this.members.size === 0) this.protocolType = member.protocolType;
    assert.equal(member.protocolType, this.protocolType, 'the group and member protocol types must match');
    if (member.groupInstanceId !== null) {
      assert(!this.staticMembers.has(member.groupInstanceId), `instance ${member.groupInstanceId} is already a member`);
      this.staticMembers.set(member.groupInstanceId, member.memberId);
    }
    if (this.leaderId === null) this.leaderId = member.memberId;
    this.members.set(member.memberId, member);
    this.pendingJoinMembers.delete(member.memberId);
  }

  /** Removes a member; the caller has answered its waiters and cancelled its timer. */
  remove(memberId: string): GroupMember | undefined {
    const removed = this.members.get(memberId);
    if (removed === undefined) return undefined;
    this.members.delete(memberId);
    if (removed.groupInstanceId !== null) this.staticMembers.delete(removed.groupInstanceId);
    this.pendingSyncMembers.delete(memberId);
    if (this.leaderId === memberId) this.leaderId = this.members.keys().next().value ?? null;
    return removed;
  }

  /**
   * Gives a static member a new member id, keeping everything else but the user of the connection
   * that now holds it (ClassicGroup.replaceStaticMember). The caller fences the old id's waiters.
   */
  replaceStaticMember(groupInstanceId: string, oldMemberId: string, newMemberId: string, userId: number | null = null): { old: GroupMember; replacement: GroupMember } {
    const old = this.members.get(oldMemberId);
    assert(old !== undefined && old.groupInstanceId === groupInstanceId, `no static member ${groupInstanceId}/${oldMemberId}`);
    const replacement = new GroupMember({ ...old, memberId: newMemberId, protocols: old.protocols, assignment: old.assignment, userId });
    this.members.delete(oldMemberId);
    this.members.set(newMemberId, replacement);
    this.staticMembers.set(groupInstanceId, newMemberId);
    if (this.leaderId === oldMemberId) this.leaderId = newMemberId;
    // Unlike Kafka, carry a pending sync over to the new id so that the sync timeout can find it.
    if (this.pendingSyncMembers.delete(oldMemberId)) this.pendingSyncMembers.add(newMemberId);
    return { old, replacement };
  }

  /** A known static instance id that maps to a different member id. */
  isStaticMemberFenced(groupInstanceId: string | null, memberId: string): boolean {
    if (groupInstanceId === null) return false;
    const current = this.staticMembers.get(groupInstanceId);
    return current !== undefined && current !== memberId;
  }

  /**
   * Whether a member with this type and these protocols can join: anything non-empty for an
   * Empty group; otherwise the same type and at least one protocol every member supports.
   */
  supportsProtocols(protocolType: string, protocolNames: readonly string[]): boolean {
    if (this.state === 'Empty') return protocolType !== '' && protocolNames.length > 0;
    if (this.protocolType !== protocolType) return false;
    return protocolNames.some((name) => this.isSupportedByAll(name));
  }

  private isSupportedByAll(protocolName: string): boolean {
    for (const member of this.members.values()) if (!member.supports(protocolName)) return false;
    return true;
  }

  candidateProtocols(): Set<string> {
    const first = this.members.values().next().value;
    if (first === undefined) return new Set();
    return new Set(first.protocols.map((p) => p.name).filter((name) => this.isSupportedByAll(name)));
  }

  /** Each member votes for its preferred candidate; most votes wins, ties to the first counted. */
  selectProtocol(): string {
    assert(this.members.size > 0, `cannot select a protocol for empty group ${this.groupId}`);
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    for (const member of this.members.values()) {
      const choice = member.vote(candidates);
      votes.set(choice, (votes.get(choice) ?? 0) + 1);
    }
    let best: string | null = null;
    let bestVotes = 0;
    for (const [name, count] of votes) {
      if (count > bestVotes) [best, bestVotes] = [name, count];
    }
    assert(best !== null);
    return best;
  }

  numAwaitingJoin(): number {
    let count = 0;
    for (const member of this.members.values()) if (member.isAwaitingJoin) count++;
    return count;
  }

  /** Every member has a pending JoinGroup and no MEMBER_ID_REQUIRED id is outstanding. */
  hasAllMembersJoined(): boolean {
    return this.numAwaitingJoin() === this.members.size && this.pendingJoinMembers.size === 0;
  }

  notYetRejoinedMembers(): GroupMember[] {
    return [...this.members.values()].filter((m) => !m.isAwaitingJoin);
  }

  /**
   * Keeps the leader if it rejoined, else promotes a member that did. False when nobody rejoined
   * (or the group is empty): the join phase cannot complete yet.
   */
  maybeElectNewJoinedLeader(): boolean {
    if (this.leaderId === null) return false;
    const leader = this.members.get(this.leaderId);
    if (leader?.isAwaitingJoin === true) return true;
    for (const member of this.members.values()) {
      if (member.isAwaitingJoin) {
        this.leaderId = member.memberId;
        return true;
      }
    }
    return false;
  }

  /** The longest rebalance timeout of any member: how long a join phase may wait. */
  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const member of this.members.values()) max = Math.max(max, member.rebalanceTimeoutMs);
    return max;
  }

  /** Next generation: pick the protocol and wait for assignments, or fall back to Empty. */
  initNextGeneration(nowMs: number): void {
    this.generationId++;
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol();
      this.transitionTo('CompletingRebalance', nowMs);
    } else {
      this.protocolName = null;
      this.transitionTo('Empty', nowMs);
    }
    this.pendingSyncMembers.clear();
  }

  /** The member list the leader receives in its JoinGroup response. */
  membersForLeader(): JoinGroupMember[] {
    const protocolName = this.protocolName;
    assert(protocolName !== null, `group ${this.groupId} has no protocol in state ${this.state}`);
    return [...this.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadataFor(protocolName) }));
  }

  /** Structural invariants, checked by the coordinator after every operation that mutates. */
  assertInvariants(): void {
    const id = this.groupId;
    assert.equal(this.leaderId === null, this.members.size === 0, `group ${id}: leader must exist iff members do`);
    if (this.leaderId !== null) assert(this.members.has(this.leaderId), `group ${id}: leader is not a member`);
    for (const [instanceId, memberId] of this.staticMembers) {
      assert.equal(this.members.get(memberId)?.groupInstanceId, instanceId, `group ${id}: static map out of sync for ${instanceId}`);
    }
    for (const memberId of this.pendingSyncMembers) assert(this.members.has(memberId), `group ${id}: pending sync ${memberId} is not a member`);
    for (const memberId of this.pendingJoinMembers.keys()) assert(!this.members.has(memberId), `group ${id}: pending member ${memberId} is a member`);
    if (this.state === 'Empty' || this.state === 'Dead') assert.equal(this.members.size, 0, `group ${id}: ${this.state} with members`);
    if (this.state === 'Stable' || this.state === 'CompletingRebalance') {
      assert(this.members.size > 0 && this.protocolName !== null, `group ${id}: ${this.state} needs members and a protocol`);
    }
    if (this.state !== 'PreparingRebalance') assert.equal(this.joinTimer, null, `group ${id}: join timer outside PreparingRebalance`);
    for (const member of this.members.values()) {
      if (member.isAwaitingJoin) assert.equal(this.state, 'PreparingRebalance', `group ${id}: join waiter outside PreparingRebalance`);
      if (member.isAwaitingSync) assert.equal(this.state, 'CompletingRebalance', `group ${id}: sync waiter outside CompletingRebalance`);
    }
  }
}

/** Answers to waiting requests. */
const noGeneration = -1;

export function joinError(memberId: string, error: GroupError): JoinGroupResult {
  return { error, generationId: noGeneration, protocolType: null, protocolName: null, leaderId: '', memberId, members: [] };
}

export function syncError(error: GroupError): SyncGroupResult {
  return { error, protocolType: null, protocolName: null, assignment: emptyBytes };
}

export function answerJoin(member: GroupMember, result: JoinGroupResult): boolean {
  const waiter = member.joinWaiter;
  if (waiter === null) return false;
  member.joinWaiter = null;
  waiter(result);
  return true;
}

export function answerSync(member: GroupMember, result: SyncGroupResult): boolean {
  const waiter = member.syncWaiter;
  if (waiter === null) return false;
  member.syncWaiter = null;
  waiter(result);
  return true;
}

/** The stable part of the group, for the persist hook. */
export function groupSnapshot(group: ClientSideGroup): GroupSnapshot {
  return {
    groupId: group.groupId,
    generationId: group.generationId,
    protocolType: group.protocolType,
    protocolName: group.protocolName,
    leaderId: group.leaderId,
    stateTimestampMs: group.stateTimestampMs,
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      sessionTimeoutMs: m.sessionTimeoutMs,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      protocols: m.protocols,
      assignment: m.assignment,
    })),
  };
}
