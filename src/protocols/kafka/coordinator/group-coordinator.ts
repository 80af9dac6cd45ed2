// The Kafka classic consumer-group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// DescribeGroups, ListGroups, DeleteGroups, and the group checks of OffsetCommit) as a state
// machine with no I/O. Requests come in as plain objects; answers are plain objects carrying
// Kafka error codes. Time comes from an injected Clock and timeouts from an injected Scheduler.
// Everything runs on one event loop, so no operation interleaves with another.
//
// Behaviour follows apache/kafka's classic group coordinator: core/.../coordinator/group/
// GroupCoordinator.scala (3.x) and group-coordinator/.../classic/ClassicGroup.java. States:
//
//   Empty ──join──▶ PreparingRebalance ──all joined / timeout──▶ CompletingRebalance
//     ▲                  ▲      │ (nobody left)                       │ leader's SyncGroup
//     └──────────────────┼──────┘                                     ▼
//                        └────── join / leave / expiry ───────────  Stable
//   Empty ──DeleteGroups──▶ Dead
//
// Timeouts:
// - session: a member that sends nothing (Heartbeat, JoinGroup, SyncGroup, OffsetCommit) for
//   its session timeout is removed, unless it is waiting on a JoinGroup or SyncGroup answer;
// - join phase: the group waits up to the largest rebalance timeout for every known member to
//   rejoin, then drops the dynamic members that did not; a new (Empty) group first waits the
//   initial rebalance delay, extended while members keep arriving (InitialDelayedJoin);
// - sync phase: members that do not send SyncGroup within the rebalance timeout after the join
//   phase are removed and the group rebalances (Kafka's DelayedSync, KAFKA-13419);
// - MEMBER_ID_REQUIRED: a handed-out member id expires after the session timeout if unused;
// - a new member waiting on its first join is dropped after newMemberJoinTimeoutMs.

import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../base/clock.js';
import { silentLogger, type Logger } from '../../../base/logger.js';
import {
  ClassicGroup,
  GroupMember,
  emptyBytes,
  type GroupProtocol,
  type GroupState,
  type JoinGroupResult,
  type JoinWaiter,
  type SyncGroupResult,
  type SyncWaiter,
} from './classic-group.js';
import { KafkaError, type KafkaErrorCode } from './kafka-errors.js';
import type { Scheduler } from '../../../core/scheduler.js';

export type { GroupProtocol, GroupState, JoinGroupMember, JoinGroupResult, SyncGroupResult } from './classic-group.js';

// ---------------------------------------------------------------------------------------------
// Configuration

export interface GroupCoordinatorConfig {
  /** group.min.session.timeout.ms: shorter session timeouts get INVALID_SESSION_TIMEOUT. */
  sessionTimeoutMsMin: number;
  /** group.max.session.timeout.ms: longer session timeouts get INVALID_SESSION_TIMEOUT. */
  sessionTimeoutMsMax: number;
  /**
   * group.initial.rebalance.delay.ms: how long a new (Empty) group waits for more members before
   * its first generation. Kafka defaults to 3000 ms; we default to 300 ms because Quartet mostly
   * serves single-consumer and test workloads where three seconds on every first join hurts.
   */
  initialRebalanceDelayMs: number;
  /** group.max.size: members per group. Kafka defaults to unlimited; we cap it. */
  groupMembersMax: number;
  /** Groups this coordinator holds (Kafka has no such limit); new groups beyond it are refused. */
  groupsMax: number;
  /** How long a brand-new member may wait in its first join phase (Kafka's NewMemberJoinTimeoutMs). */
  newMemberJoinTimeoutMs: number;
}

export const defaultGroupCoordinatorConfig: Readonly<GroupCoordinatorConfig> = {
  sessionTimeoutMsMin: 6_000,
  sessionTimeoutMsMax: 1_800_000,
  initialRebalanceDelayMs: 300,
  groupMembersMax: 1_000,
  groupsMax: 100_000,
  newMemberJoinTimeoutMs: 5 * 60 * 1000,
};

// ---------------------------------------------------------------------------------------------
// Requests and results

export interface JoinGroupRequest {
  groupId: string;
  /** Empty for a member that has no id yet. */
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string;
  protocols: GroupProtocol[];
  sessionTimeoutMs: number;
  /** JoinGroup v0 has none: pass the session timeout, as Kafka does. */
  rebalanceTimeoutMs: number;
  /** The JoinGroup version: v4+ dynamic members get MEMBER_ID_REQUIRED first (KIP-394). */
  apiVersion: number;
  clientId: string;
  clientHost: string;
  /** The SASL user of the joining connection (null without SASL): recorded on a new member. */
  userId?: number | null;
}

export interface SyncGroupRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  /** SyncGroup v5+; null for older versions (then not checked). */
  protocolType: string | null;
  protocolName: string | null;
  /** The leader's assignment; followers send none. */
  assignments: { memberId: string; assignment: Buffer }[];
}

export interface HeartbeatRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

export interface LeavingMember {
  /** Empty when a static member leaves by instance id alone. */
  memberId: string;
  groupInstanceId: string | null;
}

export interface LeaveGroupResult {
  /** Group-level error. For LeaveGroup v0-2 the handler answers with the single member's error. */
  errorCode: KafkaErrorCode;
  members: { memberId: string; groupInstanceId: string | null; errorCode: KafkaErrorCode }[];
}

export interface DescribedMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** Metadata for the chosen protocol; empty unless the group is Stable (GroupMetadata.summary). */
  memberMetadata: Buffer;
  memberAssignment: Buffer;
}

export interface DescribedGroup {
  errorCode: KafkaErrorCode;
  groupId: string;
  /** Kafka's state name; a group that does not exist is described as Dead with no error (v0-5). */
  groupState: GroupState;
  protocolType: string;
  /** The chosen protocol name (DescribeGroups' protocol_data); empty unless Stable. */
  protocolData: string;
  members: DescribedMember[];
}

export interface ListedGroup {
  groupId: string;
  protocolType: string;
  groupState: GroupState;
}

export interface DeleteGroupResult {
  groupId: string;
  errorCode: KafkaErrorCode;
}

// ---------------------------------------------------------------------------------------------
// Persistence

export interface MemberSnapshot {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocols: GroupProtocol[];
  assignment: Buffer;
}

/** The stable part of a group: what Kafka writes to __consumer_offsets as GroupMetadataValue. */
export interface GroupSnapshot {
  groupId: string;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leaderId: string | null;
  stateTimestampMs: number;
  members: MemberSnapshot[];
}

/**
 * Called synchronously whenever a group's stable state changes; `null` means the group was
 * deleted. A throw during SyncGroup fails that generation (COORDINATOR_NOT_AVAILABLE, then a
 * rebalance, as Kafka does when the group write fails); other throws are logged.
 */
export type GroupPersist = (groupId: string, snapshot: GroupSnapshot | null) => void;

export interface GroupCoordinatorOptions {
  clock: Clock;
  scheduler: Scheduler;
  config?: Partial<GroupCoordinatorConfig>;
  persist?: GroupPersist;
  logger?: Logger;
  /** Makes a member id from its prefix (client id or instance id); Kafka appends a UUID. */
  newMemberId?: (prefix: string) => string;
}

const noGeneration = -1;

function joinError(memberId: string, errorCode: KafkaErrorCode): JoinGroupResult {
  return { errorCode, generationId: noGeneration, protocolType: null, protocolName: null, leaderId: '', memberId, members: [] };
}

function syncError(errorCode: KafkaErrorCode): SyncGroupResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: emptyBytes };
}

function answerJoin(member: GroupMember, result: JoinGroupResult): boolean {
  const waiter = member.joinWaiter;
  if (waiter === null) return false;
  member.joinWaiter = null;
  waiter(result);
  return true;
}

function answerSync(member: GroupMember, result: SyncGroupResult): boolean {
  const waiter = member.syncWaiter;
  if (waiter === null) return false;
  member.syncWaiter = null;
  waiter(result);
  return true;
}

export class GroupCoordinator {
  readonly config: Readonly<GroupCoordinatorConfig>;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly persistHook: GroupPersist;
  private readonly log: Logger;
  private readonly newMemberId: (prefix: string) => string;
  private readonly groups = new Map<string, ClassicGroup>();
  private active = true;

  constructor(options: GroupCoordinatorOptions) {
    this.config = { ...defaultGroupCoordinatorConfig, ...options.config };
    this.clock = options.clock;
    this.scheduler = options.scheduler;
    this.persistHook = options.persist ?? (() => {});
    this.log = options.logger ?? silentLogger;
    this.newMemberId = options.newMemberId ?? ((prefix) => `${prefix}-${randomUUID()}`);
    if (this.config.sessionTimeoutMsMin > this.config.sessionTimeoutMsMax) throw new RangeError('sessionTimeoutMsMin exceeds sessionTimeoutMsMax');
  }

  // ------------------------------------------------------------------------------- lifecycle

  /** Loads persisted groups at startup: members come back Stable with fresh session deadlines. */
  restore(snapshots: readonly GroupSnapshot[]): void {
    if (this.groups.size > 0) throw new Error('restore() must run before any group exists');
    for (const snapshot of snapshots) this.restoreGroup(snapshot);
  }

  private restoreGroup(snapshot: GroupSnapshot): void {
    const now = this.clock.now();
    const group = new ClassicGroup(snapshot.groupId, snapshot.members.length > 0 ? 'Stable' : 'Empty', snapshot.stateTimestampMs);
    group.generationId = snapshot.generationId;
    group.protocolType = snapshot.protocolType;
    group.protocolName = snapshot.members.length > 0 ? snapshot.protocolName : null;
    for (const m of snapshot.members) group.add(new GroupMember({ ...m, protocolType: snapshot.protocolType ?? '' }));
    if (snapshot.leaderId !== null && group.has(snapshot.leaderId)) group.leaderId = snapshot.leaderId;
    this.groups.set(group.groupId, group);
    for (const member of group.members.values()) this.touch(group, member, member.sessionTimeoutMs, now);
    // Kafka's onGroupLoaded: a group loaded above the size limit rebalances so that the extra
    // members are shed at the next join phase.
    if (group.size > this.config.groupMembersMax) this.prepareRebalance(group, 'restored above groupMembersMax');
    group.assertInvariants();
  }

  /** Stops the coordinator: timers cancelled, waiting requests answered with NOT_COORDINATOR. */
  close(): void {
    this.active = false;
    for (const group of this.groups.values()) {
      this.cancelGroupTimers(group);
      for (const member of group.members.values()) {
        member.sessionTimer?.cancel();
        member.sessionTimer = null;
        answerJoin(member, joinError(member.memberId, KafkaError.NOT_COORDINATOR));
        answerSync(member, syncError(KafkaError.NOT_COORDINATOR));
      }
    }
    this.groups.clear();
  }

  // ------------------------------------------------------------------------------- JoinGroup

  /** Resolves when this member's join phase completes (or at once, with an error). */
  joinGroup(request: JoinGroupRequest): Promise<JoinGroupResult> {
    return new Promise((resolve) => this.handleJoin(request, resolve));
  }

  private handleJoin(req: JoinGroupRequest, respond: JoinWaiter): void {
    const invalid = this.validateJoin(req);
    if (invalid !== KafkaError.NONE) return respond(joinError(req.memberId, invalid));
    const isUnknownMember = req.memberId === '';
    let group = this.groups.get(req.groupId);
    if (group === undefined) {
      // Only a member without an id may create a group (GroupCoordinator.handleJoinGroup).
      if (!isUnknownMember) return respond(joinError(req.memberId, KafkaError.UNKNOWN_MEMBER_ID));
      if (this.groups.size >= this.config.groupsMax) {
        this.log.warn('group limit reached', { groupId: req.groupId, groupsMax: this.config.groupsMax });
        return respond(joinError(req.memberId, KafkaError.COORDINATOR_NOT_AVAILABLE));
      }
      group = new ClassicGroup(req.groupId, 'Empty', this.clock.now());
      this.groups.set(req.groupId, group);
    }
    if (!this.acceptJoiningMember(group, req.memberId)) {
      this.dropMember(group, req.memberId);
      respond(joinError('', KafkaError.GROUP_MAX_SIZE_REACHED));
    } else if (isUnknownMember) {
      this.joinNewMember(group, req, respond);
    } else {
      this.joinCurrentMember(group, req, respond);
    }
    this.maybeCompleteJoin(group);
    this.forgetIfUnused(group);
    group.assertInvariants();
  }

  private validateJoin(req: JoinGroupRequest): KafkaErrorCode {
    if (req.groupId === '') return KafkaError.INVALID_GROUP_ID;
    if (!this.active) return KafkaError.COORDINATOR_NOT_AVAILABLE;
    if (req.sessionTimeoutMs < this.config.sessionTimeoutMsMin || req.sessionTimeoutMs > this.config.sessionTimeoutMsMax) {
      return KafkaError.INVALID_SESSION_TIMEOUT;
    }
    return KafkaError.NONE;
  }

  /**
   * GroupCoordinator.acceptJoiningMember: while preparing, count the members already waiting
   * (so that the last rejoiners are the ones shed when the limit shrank); otherwise the size.
   */
  private acceptJoiningMember(group: ClassicGroup, memberId: string): boolean {
    const max = this.config.groupMembersMax;
    switch (group.state) {
      case 'Empty':
      case 'Dead':
        return true;
      case 'PreparingRebalance':
        return group.member(memberId)?.isAwaitingJoin === true || group.numAwaitingJoin() < max;
      case 'CompletingRebalance':
      case 'Stable':
        return group.has(memberId) || group.size < max;
    }
  }

  private joinNewMember(group: ClassicGroup, req: JoinGroupRequest, respond: JoinWaiter): void {
    if (group.state === 'Dead') return respond(joinError('', KafkaError.COORDINATOR_NOT_AVAILABLE));
    if (!group.supportsProtocols(req.protocolType, req.protocols.map((p) => p.name))) {
      return respond(joinError('', KafkaError.INCONSISTENT_GROUP_PROTOCOL));
    }
    const memberId = this.newMemberId(req.groupInstanceId ?? req.clientId);
    if (req.groupInstanceId !== null) {
      const oldMemberId = group.staticMembers.get(req.groupInstanceId);
      if (oldMemberId !== undefined) return this.replaceStaticMember(group, req, oldMemberId, memberId, respond);
      return this.addMemberAndRebalance(group, req, memberId, respond);
    }
    if (req.apiVersion >= 4) return this.requireMemberId(group, req, memberId, respond);
    this.addMemberAndRebalance(group, req, memberId, respond);
  }

  /** KIP-394: hand out an id and make the member come back with it; the id expires unused. */
  private requireMemberId(group: ClassicGroup, req: JoinGroupRequest, memberId: string, respond: JoinWaiter): void {
    const timer = this.scheduler.schedule(req.sessionTimeoutMs, () => this.onPendingMemberExpired(group, memberId));
    group.pendingJoinMembers.set(memberId, timer);
    respond(joinError(memberId, KafkaError.MEMBER_ID_REQUIRED));
  }

  private onPendingMemberExpired(group: ClassicGroup, memberId: string): void {
    if (!group.pendingJoinMembers.delete(memberId)) return;
    this.log.debug('pending member expired', { groupId: group.groupId, memberId });
    this.maybeCompleteJoin(group);
    this.forgetIfUnused(group);
    group.assertInvariants();
  }

  private joinCurrentMember(group: ClassicGroup, req: JoinGroupRequest, respond: JoinWaiter): void {
    if (group.state === 'Dead') return respond(joinError(req.memberId, KafkaError.COORDINATOR_NOT_AVAILABLE));
    if (!group.supportsProtocols(req.protocolType, req.protocols.map((p) => p.name))) {
      return respond(joinError(req.memberId, KafkaError.INCONSISTENT_GROUP_PROTOCOL));
    }
    const pendingTimer = group.pendingJoinMembers.get(req.memberId);
    if (pendingTimer !== undefined) {
      // Only dynamic members are ever pending. A static id here is a client bug; Kafka throws.
      if (req.groupInstanceId !== null) return respond(joinError(req.memberId, KafkaError.UNKNOWN_MEMBER_ID));
      pendingTimer.cancel();
      return this.addMemberAndRebalance(group, req, req.memberId, respond);
    }
    const memberError = this.validateCurrentMember(group, req.memberId, req.groupInstanceId);
    if (memberError !== KafkaError.NONE) return respond(joinError(req.memberId, memberError));
    const member = group.member(req.memberId)!;
    switch (group.state) {
      case 'PreparingRebalance':
        return this.updateMemberAndRebalance(group, member, req, respond);
      case 'CompletingRebalance':
        // Same metadata: the member probably lost our answer, so repeat it. Changed: rebalance.
        if (member.matches(req.protocols)) return respond(this.joinResultFor(group, member));
        return this.updateMemberAndRebalance(group, member, req, respond);
      case 'Stable':
        // The leader rejoining forces a rebalance: that is how it reacts to metadata changes
        // (new partitions, new topics for a pattern) that do not change its own subscription.
        if (group.isLeader(member.memberId) || !member.matches(req.protocols)) return this.updateMemberAndRebalance(group, member, req, respond);
        return respond(this.joinResultFor(group, member));
      case 'Empty':
        // Members of an Empty group were dropped: the client must rejoin from scratch.
        return respond(joinError(req.memberId, KafkaError.UNKNOWN_MEMBER_ID));
    }
  }

  /** GroupCoordinator.validateCurrentMember: the instance id maps to this member id, which exists. */
  private validateCurrentMember(group: ClassicGroup, memberId: string, groupInstanceId: string | null): KafkaErrorCode {
    if (groupInstanceId !== null) {
      const current = group.staticMembers.get(groupInstanceId);
      if (current === undefined) return KafkaError.UNKNOWN_MEMBER_ID;
      if (current !== memberId) return KafkaError.FENCED_INSTANCE_ID;
    }
    return group.has(memberId) ? KafkaError.NONE : KafkaError.UNKNOWN_MEMBER_ID;
  }

  private joinResultFor(group: ClassicGroup, member: GroupMember): JoinGroupResult {
    return {
      errorCode: KafkaError.NONE,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leaderId: group.leaderId ?? '',
      memberId: member.memberId,
      members: group.isLeader(member.memberId) ? group.membersForLeader() : [],
    };
  }

  private addMemberAndRebalance(group: ClassicGroup, req: JoinGroupRequest, memberId: string, respond: JoinWaiter): void {
    const member = new GroupMember({ ...req, memberId, rebalanceTimeoutMs: this.rebalanceTimeoutOf(req) });
    member.isNew = true;
    // A member joining a generation-0 group during the initial delay extends the delay.
    if (group.state === 'PreparingRebalance' && group.generationId === 0) group.newMemberAdded = true;
    group.add(member);
    member.joinWaiter = respond;
    // A new member cannot heartbeat before its first join answer, so its session timeout does
    // not apply yet; a long cap instead stops defunct joiners from piling up (Kafka's comment).
    this.touch(group, member, this.config.newMemberJoinTimeoutMs);
    this.maybePrepareRebalance(group, `adding member ${memberId}`);
  }

  private updateMemberAndRebalance(group: ClassicGroup, member: GroupMember, req: JoinGroupRequest, respond: JoinWaiter): void {
    this.updateMember(member, req, respond);
    this.maybePrepareRebalance(group, `member ${member.memberId} rejoined`);
  }

  private updateMember(member: GroupMember, req: JoinGroupRequest, respond: JoinWaiter): void {
    member.protocols = req.protocols;
    member.sessionTimeoutMs = req.sessionTimeoutMs;
    member.rebalanceTimeoutMs = this.rebalanceTimeoutOf(req);
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
    // A second JoinGroup supersedes the first; answer the old one so it does not hang forever.
    answerJoin(member, joinError(member.memberId, KafkaError.REBALANCE_IN_PROGRESS));
    member.joinWaiter = respond;
  }

  private rebalanceTimeoutOf(req: JoinGroupRequest): number {
    return req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs;
  }

  /**
   * A static member came back without its member id: it takes over the instance with a new id
   * and the old id is fenced (GroupCoordinator.updateStaticMemberAndRebalance).
   */
  private replaceStaticMember(group: ClassicGroup, req: JoinGroupRequest, oldMemberId: string, newMemberId: string, respond: JoinWaiter): void {
    const previousLeaderId = group.leaderId ?? '';
    const { old, replacement } = group.replaceStaticMember(req.groupInstanceId!, oldMemberId, newMemberId, req.userId ?? null);
    old.sessionTimer?.cancel();
    old.sessionTimer = null;
    answerJoin(old, joinError(oldMemberId, KafkaError.FENCED_INSTANCE_ID));
    answerSync(old, syncError(KafkaError.FENCED_INSTANCE_ID));
    this.touch(group, replacement, replacement.sessionTimeoutMs);
    this.updateMember(replacement, req, respond);
    switch (group.state) {
      case 'Stable':
        return this.completeStaticRejoinWhenStable(group, replacement, previousLeaderId);
      case 'CompletingRebalance':
        // The leader may already be assigning to the old id: start over so the new id gets one.
        return this.prepareRebalance(group, `static member ${req.groupInstanceId} replaced during CompletingRebalance`);
      case 'PreparingRebalance':
        return; // answered when the join phase completes
      case 'Empty':
      case 'Dead':
        throw new Error(`group ${group.groupId}: static member in state ${group.state}`);
    }
  }

  /**
   * In Stable, a replaced static member keeps its assignment and no rebalance happens unless the
   * protocol choice would change. Its answer names the previous leader id, so that a replaced
   * leader does not run a pointless assignment a Stable group would ignore (pre-v9 behaviour;
   * JoinGroup v9's SkipAssignment is not supported).
   */
  private completeStaticRejoinWhenStable(group: ClassicGroup, member: GroupMember, previousLeaderId: string): void {
    if (group.selectProtocol() !== group.protocolName) {
      return this.maybePrepareRebalance(group, `static member ${member.groupInstanceId} changed the protocol choice`);
    }
    this.persist(group);
    answerJoin(member, { ...this.joinResultFor(group, member), leaderId: previousLeaderId, members: [] });
  }

  // ------------------------------------------------------------------------------- rebalance

  private maybePrepareRebalance(group: ClassicGroup, reason: string): void {
    if (group.canRebalance()) this.prepareRebalance(group, reason);
  }

  private prepareRebalance(group: ClassicGroup, reason: string): void {
    // Members waiting on SyncGroup must rejoin instead.
    if (group.state === 'CompletingRebalance') this.resetAndPropagateAssignmentError(group, KafkaError.REBALANCE_IN_PROGRESS);
    group.syncTimer?.cancel();
    group.syncTimer = null;
    group.pendingSyncMembers.clear();
    const fromEmpty = group.state === 'Empty';
    group.transitionTo('PreparingRebalance', this.clock.now());
    this.log.info('preparing to rebalance', { groupId: group.groupId, generationId: group.generationId, reason });
    if (fromEmpty) {
      const delayMs = this.config.initialRebalanceDelayMs;
      this.scheduleInitialJoin(group, delayMs, Math.max(group.rebalanceTimeoutMs() - delayMs, 0));
    } else {
      this.scheduleJoin(group, group.rebalanceTimeoutMs());
      this.maybeCompleteJoin(group);
    }
  }

  /** InitialDelayedJoin: wait `delayMs`; while members keep arriving, wait again, within the budget. */
  private scheduleInitialJoin(group: ClassicGroup, delayMs: number, remainingMs: number): void {
    group.joinTimerIsInitialDelay = true;
    group.joinTimer = this.scheduler.schedule(delayMs, () => {
      group.joinTimer = null;
      if (group.newMemberAdded && remainingMs > 0) {
        group.newMemberAdded = false;
        const nextDelayMs = Math.min(this.config.initialRebalanceDelayMs, remainingMs);
        this.scheduleInitialJoin(group, nextDelayMs, Math.max(remainingMs - nextDelayMs, 0));
      } else {
        this.completeJoin(group);
      }
      group.assertInvariants();
    });
  }

  private scheduleJoin(group: ClassicGroup, timeoutMs: number): void {
    group.joinTimerIsInitialDelay = false;
    group.joinTimer = this.scheduler.schedule(timeoutMs, () => {
      group.joinTimer = null;
      this.completeJoin(group);
      this.forgetIfUnused(group);
      group.assertInvariants();
    });
  }

  /** DelayedJoin.tryComplete: finish early once everybody is back (never during the initial delay). */
  private maybeCompleteJoin(group: ClassicGroup): void {
    if (group.state !== 'PreparingRebalance' || group.joinTimerIsInitialDelay) return;
    if (group.hasAllMembersJoined()) this.completeJoin(group);
  }

  /** GroupCoordinator.onCompleteJoin. */
  private completeJoin(group: ClassicGroup): void {
    if (group.state !== 'PreparingRebalance') return;
    group.joinTimer?.cancel();
    group.joinTimer = null;
    group.newMemberAdded = false;
    // Dynamic members that did not rejoin in time are dropped; static ones keep their place.
    for (const member of group.notYetRejoinedMembers()) {
      if (member.groupInstanceId === null) this.dropMember(group, member.memberId);
    }
    if (!group.maybeElectNewJoinedLeader() && group.size > 0) {
      // Only static members that have not rejoined are left: wait another rebalance timeout
      // until they rejoin or their sessions expire.
      this.log.warn('no member rejoined, extending the join phase', { groupId: group.groupId });
      return this.scheduleJoin(group, group.rebalanceTimeoutMs());
    }
    group.initNextGeneration(this.clock.now());
    if (group.is('Empty')) {
      this.log.info('group is now empty', { groupId: group.groupId, generationId: group.generationId });
      return this.persist(group);
    }
    this.log.info('join phase complete', { groupId: group.groupId, generationId: group.generationId, members: group.size });
    for (const member of group.members.values()) group.pendingSyncMembers.add(member.memberId);
    this.scheduleSyncTimeout(group);
    for (const member of group.members.values()) {
      answerJoin(member, this.joinResultFor(group, member));
      this.touch(group, member, member.sessionTimeoutMs);
      member.isNew = false;
    }
  }

  /** DelayedSync: members of the new generation must send SyncGroup within the rebalance timeout. */
  private scheduleSyncTimeout(group: ClassicGroup): void {
    const generationId = group.generationId;
    group.syncTimer = this.scheduler.schedule(group.rebalanceTimeoutMs(), () => {
      group.syncTimer = null;
      this.onSyncExpired(group, generationId);
      group.assertInvariants();
    });
  }

  private onSyncExpired(group: ClassicGroup, generationId: number): void {
    if (generationId !== group.generationId || (group.state !== 'CompletingRebalance' && group.state !== 'Stable')) return;
    if (group.pendingSyncMembers.size === 0) return;
    const missing = [...group.pendingSyncMembers];
    this.log.info('members did not sync in time', { groupId: group.groupId, generationId, members: missing });
    for (const memberId of missing) this.removeMember(group, memberId);
    this.prepareRebalance(group, 'pending sync expired');
  }

  // ------------------------------------------------------------------------------- SyncGroup

  /** Resolves with this member's assignment once the leader has sent it (or at once, with an error). */
  syncGroup(request: SyncGroupRequest): Promise<SyncGroupResult> {
    return new Promise((resolve) => this.handleSync(request, resolve));
  }

  private handleSync(req: SyncGroupRequest, respond: SyncWaiter): void {
    if (req.groupId === '') return respond(syncError(KafkaError.INVALID_GROUP_ID));
    if (!this.active) return respond(syncError(KafkaError.COORDINATOR_NOT_AVAILABLE));
    const group = this.groups.get(req.groupId);
    if (group === undefined) return respond(syncError(KafkaError.UNKNOWN_MEMBER_ID));
    const invalid = this.validateSync(group, req);
    if (invalid !== KafkaError.NONE) return respond(syncError(invalid));
    const member = group.member(req.memberId)!;
    switch (group.state) {
      case 'Empty':
        return respond(syncError(KafkaError.UNKNOWN_MEMBER_ID));
      case 'PreparingRebalance':
        return respond(syncError(KafkaError.REBALANCE_IN_PROGRESS));
      case 'CompletingRebalance':
        this.awaitAssignment(group, member, req, respond);
        break;
      case 'Stable':
        this.markSynced(group, member.memberId);
        respond(this.syncResultFor(group, member));
        this.touch(group, member, member.sessionTimeoutMs);
        break;
      case 'Dead':
        return respond(syncError(KafkaError.COORDINATOR_NOT_AVAILABLE));
    }
    group.assertInvariants();
  }

  private validateSync(group: ClassicGroup, req: SyncGroupRequest): KafkaErrorCode {
    if (group.state === 'Dead') return KafkaError.COORDINATOR_NOT_AVAILABLE;
    const memberError = this.validateCurrentMember(group, req.memberId, req.groupInstanceId);
    if (memberError !== KafkaError.NONE) return memberError;
    if (req.generationId !== group.generationId) return KafkaError.ILLEGAL_GENERATION;
    // SyncGroup v5 carries the protocol type and name; they must match the group's.
    if (req.protocolType !== null && req.protocolType !== group.protocolType) return KafkaError.INCONSISTENT_GROUP_PROTOCOL;
    if (req.protocolName !== null && req.protocolName !== group.protocolName) return KafkaError.INCONSISTENT_GROUP_PROTOCOL;
    return KafkaError.NONE;
  }

  private awaitAssignment(group: ClassicGroup, member: GroupMember, req: SyncGroupRequest, respond: SyncWaiter): void {
    answerSync(member, syncError(KafkaError.REBALANCE_IN_PROGRESS));
    member.syncWaiter = respond;
    this.markSynced(group, member.memberId);
    if (!group.isLeader(member.memberId)) return;
    this.log.info('assignment received from leader', { groupId: group.groupId, generationId: group.generationId });
    const assignments = new Map(req.assignments.map((a) => [a.memberId, a.assignment]));
    // Members the leader left out get an empty assignment; unknown member ids are ignored.
    for (const m of group.members.values()) m.assignment = assignments.get(m.memberId) ?? emptyBytes;
    if (!this.tryPersist(group)) {
      this.resetAndPropagateAssignmentError(group, KafkaError.COORDINATOR_NOT_AVAILABLE);
      return this.maybePrepareRebalance(group, 'storing the assignment failed');
    }
    group.transitionTo('Stable', this.clock.now());
    this.propagateAssignment(group);
  }

  private markSynced(group: ClassicGroup, memberId: string): void {
    group.pendingSyncMembers.delete(memberId);
    if (group.pendingSyncMembers.size === 0) {
      group.syncTimer?.cancel();
      group.syncTimer = null;
    }
  }

  private syncResultFor(group: ClassicGroup, member: GroupMember): SyncGroupResult {
    return { errorCode: KafkaError.NONE, protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment };
  }

  /** Answers every waiting SyncGroup with its assignment; their sessions restart from now. */
  private propagateAssignment(group: ClassicGroup): void {
    for (const member of group.members.values()) {
      if (answerSync(member, this.syncResultFor(group, member))) this.touch(group, member, member.sessionTimeoutMs);
    }
  }

  private resetAndPropagateAssignmentError(group: ClassicGroup, errorCode: KafkaErrorCode): void {
    for (const member of group.members.values()) {
      member.assignment = emptyBytes;
      answerSync(member, syncError(errorCode));
    }
  }

  // ------------------------------------------------------------------------------- Heartbeat

  heartbeat(req: HeartbeatRequest): KafkaErrorCode {
    if (req.groupId === '') return KafkaError.INVALID_GROUP_ID;
    if (!this.active) return KafkaError.COORDINATOR_NOT_AVAILABLE;
    const group = this.groups.get(req.groupId);
    if (group === undefined) return KafkaError.UNKNOWN_MEMBER_ID;
    if (group.state === 'Dead') return KafkaError.COORDINATOR_NOT_AVAILABLE;
    const memberError = this.validateCurrentMember(group, req.memberId, req.groupInstanceId);
    if (memberError !== KafkaError.NONE) return memberError;
    if (req.generationId !== group.generationId) return KafkaError.ILLEGAL_GENERATION;
    if (group.state === 'Empty') return KafkaError.UNKNOWN_MEMBER_ID;
    const member = group.member(req.memberId)!;
    this.touch(group, member, member.sessionTimeoutMs);
    // In CompletingRebalance a heartbeat is normal: clients start heartbeating right after
    // their JoinGroup answer (Kafka 2.x onwards answers NONE there).
    return group.state === 'PreparingRebalance' ? KafkaError.REBALANCE_IN_PROGRESS : KafkaError.NONE;
  }

  // ------------------------------------------------------------------------------- LeaveGroup

  /** LeaveGroup v0-2 sends one member (by id), v3+ a batch (by id and/or instance id). */
  leaveGroup(groupId: string, members: readonly LeavingMember[]): LeaveGroupResult {
    if (groupId === '') return { errorCode: KafkaError.INVALID_GROUP_ID, members: [] };
    if (!this.active) return { errorCode: KafkaError.COORDINATOR_NOT_AVAILABLE, members: [] };
    const group = this.groups.get(groupId);
    const results = members.map((m) => ({ ...m, errorCode: group === undefined ? KafkaError.UNKNOWN_MEMBER_ID : this.leaveOne(group, m) }));
    if (group !== undefined) {
      this.forgetIfUnused(group);
      group.assertInvariants();
    }
    return { errorCode: group?.state === 'Dead' ? KafkaError.COORDINATOR_NOT_AVAILABLE : KafkaError.NONE, members: results };
  }

  private leaveOne(group: ClassicGroup, leaving: LeavingMember): KafkaErrorCode {
    if (group.state === 'Dead') return KafkaError.COORDINATOR_NOT_AVAILABLE;
    if (leaving.memberId !== '' && group.isStaticMemberFenced(leaving.groupInstanceId, leaving.memberId)) return KafkaError.FENCED_INSTANCE_ID;
    const pendingTimer = group.pendingJoinMembers.get(leaving.memberId);
    if (pendingTimer !== undefined) {
      pendingTimer.cancel();
      group.pendingJoinMembers.delete(leaving.memberId);
      this.maybeCompleteJoin(group);
      return KafkaError.NONE;
    }
    const staticId = leaving.groupInstanceId === null ? undefined : group.staticMembers.get(leaving.groupInstanceId);
    const member = group.member(staticId ?? leaving.memberId);
    if (member === undefined) return KafkaError.UNKNOWN_MEMBER_ID;
    this.log.info('member left', { groupId: group.groupId, memberId: member.memberId, groupInstanceId: member.groupInstanceId });
    this.removeMemberAndUpdateGroup(group, member);
    return KafkaError.NONE;
  }

  // ------------------------------------------------------------------------------- admin

  describeGroup(groupId: string): DescribedGroup {
    const empty: DescribedGroup = { errorCode: KafkaError.NONE, groupId, groupState: 'Dead', protocolType: '', protocolData: '', members: [] };
    if (!this.active) return { ...empty, errorCode: KafkaError.COORDINATOR_NOT_AVAILABLE };
    const group = this.groups.get(groupId);
    if (group === undefined) return empty;
    const stable = group.state === 'Stable';
    const protocolName = stable ? group.protocolName ?? '' : '';
    return {
      errorCode: KafkaError.NONE,
      groupId,
      groupState: group.state,
      protocolType: group.protocolType ?? '',
      protocolData: protocolName,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: stable ? m.metadataFor(protocolName) : emptyBytes,
        memberAssignment: stable ? m.assignment : emptyBytes,
      })),
    };
  }

  /**
   * The topics the members of a group subscribe to, as their JoinGroup metadata names them
   * (subscriptionTopics); empty for an unknown group or one with no members. Null when the
   * group's members are not consumers (protocol type other than "consumer": Kafka Connect, ...)
   * or their metadata does not decode: what they involve is not known.
   */
  subscribedTopics(groupId: string): string[] | null {
    const group = this.groups.get(groupId);
    if (group === undefined || group.members.size === 0) return [];
    if (group.protocolType !== 'consumer') return null;
    const topics = new Set<string>();
    for (const member of group.members.values()) {
      for (const protocol of member.protocols) {
        const named = subscriptionTopics(protocol.metadata);
        if (named === null) return null;
        for (const topic of named) topics.add(topic);
      }
    }
    return [...topics];
  }

  /**
   * The user whose connection made a member (its first JoinGroup): null without SASL or for a
   * member restored at start-up, undefined when the group has no such member.
   */
  memberUser(groupId: string, memberId: string): number | null | undefined {
    return this.groups.get(groupId)?.members.get(memberId)?.userId;
  }

  /** ListGroups; `statesFilter` (v4+) matches state names case-insensitively, empty means all. */
  listGroups(statesFilter: readonly string[] = []): { errorCode: KafkaErrorCode; groups: ListedGroup[] } {
    if (!this.active) return { errorCode: KafkaError.COORDINATOR_NOT_AVAILABLE, groups: [] };
    const wanted = new Set(statesFilter.map((s) => s.toLowerCase()));
    const groups: ListedGroup[] = [];
    for (const group of this.groups.values()) {
      if (wanted.size > 0 && !wanted.has(group.state.toLowerCase())) continue;
      groups.push({ groupId: group.groupId, protocolType: group.protocolType ?? '', groupState: group.state });
    }
    return { errorCode: KafkaError.NONE, groups };
  }

  /** Deletes Empty groups (the caller then drops their committed offsets on NONE). */
  deleteGroups(groupIds: readonly string[]): DeleteGroupResult[] {
    return groupIds.map((groupId) => ({ groupId, errorCode: this.deleteOne(groupId) }));
  }

  private deleteOne(groupId: string): KafkaErrorCode {
    if (!this.active) return KafkaError.COORDINATOR_NOT_AVAILABLE;
    const group = this.groups.get(groupId);
    if (group === undefined || group.state === 'Dead') return KafkaError.GROUP_ID_NOT_FOUND;
    if (group.state !== 'Empty') return KafkaError.NON_EMPTY_GROUP;
    this.cancelGroupTimers(group);
    group.transitionTo('Dead', this.clock.now());
    this.groups.delete(groupId);
    this.persistDeletion(groupId);
    return KafkaError.NONE;
  }

  // ------------------------------------------------------------------------------- offsets

  /**
   * The group checks of OffsetCommit (ClassicGroup.validateOffsetCommit). Generation -1 with no
   * member is a simple consumer (or admin) commit: allowed when the group is Empty or unknown.
   * A member's valid commit also counts as a sign of life, as in Kafka's coordinator.
   */
  validateOffsetCommit(groupId: string, generationId: number, memberId: string, groupInstanceId: string | null): KafkaErrorCode {
    if (!this.active) return KafkaError.COORDINATOR_NOT_AVAILABLE;
    const group = this.groups.get(groupId);
    // An unknown group accepts only simple commits; a generation means a group we lost.
    if (group === undefined) return generationId < 0 ? KafkaError.NONE : KafkaError.ILLEGAL_GENERATION;
    if (group.state === 'Dead') return KafkaError.COORDINATOR_NOT_AVAILABLE;
    if (generationId < 0 && group.state === 'Empty') return KafkaError.NONE;
    if (generationId >= 0 || memberId !== '' || groupInstanceId !== null) {
      const memberError = this.validateCurrentMember(group, memberId, groupInstanceId);
      if (memberError !== KafkaError.NONE) return memberError;
      if (generationId !== group.generationId) return KafkaError.ILLEGAL_GENERATION;
    } else if (group.state !== 'Empty') {
      // OffsetCommit v0 (no member, no generation) only for a group nobody is consuming in.
      return KafkaError.UNKNOWN_MEMBER_ID;
    }
    // The member has this generation's JoinGroup answer but no assignment yet.
    if (group.state === 'CompletingRebalance') return KafkaError.REBALANCE_IN_PROGRESS;
    const member = group.member(memberId);
    if (member !== undefined) this.touch(group, member, member.sessionTimeoutMs);
    return KafkaError.NONE;
  }

  // ------------------------------------------------------------------------------- sessions

  /** Pushes the member's session deadline to now + timeoutMs, (re)arming its timer if needed. */
  private touch(group: ClassicGroup, member: GroupMember, timeoutMs: number, nowMs = this.clock.now()): void {
    member.sessionDeadlineMs = nowMs + timeoutMs;
    // The timer is lazy: it fires at the old deadline and re-arms if the deadline moved later.
    // Only a deadline earlier than the armed one needs a new timer.
    if (member.sessionTimer !== null && member.sessionTimerFireAtMs <= member.sessionDeadlineMs) return;
    member.sessionTimer?.cancel();
    member.sessionTimerFireAtMs = member.sessionDeadlineMs;
    member.sessionTimer = this.scheduler.schedule(timeoutMs, () => this.onSessionTimer(group, member));
  }

  private onSessionTimer(group: ClassicGroup, member: GroupMember): void {
    member.sessionTimer = null;
    if (group.member(member.memberId) !== member) return; // removed or replaced meanwhile
    const now = this.clock.now();
    if (member.sessionDeadlineMs > now) {
      member.sessionTimerFireAtMs = member.sessionDeadlineMs;
      member.sessionTimer = this.scheduler.schedule(member.sessionDeadlineMs - now, () => this.onSessionTimer(group, member));
      return;
    }
    // MemberMetadata.shouldKeepAlive: a member waiting on our answer cannot heartbeat; the join
    // and sync timeouts govern it instead. New members waiting on their first join are the
    // exception: their (long) deadline was set by addMemberAndRebalance.
    if (member.isAwaitingSync || (member.isAwaitingJoin && !member.isNew)) {
      this.touch(group, member, member.sessionTimeoutMs, now);
      return;
    }
    this.log.info('member session expired', { groupId: group.groupId, memberId: member.memberId });
    this.removeMemberAndUpdateGroup(group, member);
    this.forgetIfUnused(group);
    group.assertInvariants();
  }

  // ------------------------------------------------------------------------------- helpers

  /** GroupCoordinator.removeMemberAndUpdateGroup: answer its waiters, remove, move the group on. */
  private removeMemberAndUpdateGroup(group: ClassicGroup, member: GroupMember): void {
    this.removeMember(group, member.memberId);
    switch (group.state) {
      case 'Stable':
      case 'CompletingRebalance':
        return this.maybePrepareRebalance(group, `member ${member.memberId} removed`);
      case 'PreparingRebalance':
        return this.maybeCompleteJoin(group);
      case 'Empty':
      case 'Dead':
        return;
    }
  }

  /** Removes a member, answering anything it waits on with UNKNOWN_MEMBER_ID. */
  private removeMember(group: ClassicGroup, memberId: string): void {
    const member = group.member(memberId);
    if (member === undefined) return;
    answerJoin(member, joinError('', KafkaError.UNKNOWN_MEMBER_ID));
    answerSync(member, syncError(KafkaError.UNKNOWN_MEMBER_ID));
    this.dropMember(group, memberId);
  }

  /** Removes a member that waits on nothing, cancelling its session timer. */
  private dropMember(group: ClassicGroup, memberId: string): void {
    const removed = group.remove(memberId);
    removed?.sessionTimer?.cancel();
    if (removed !== undefined) removed.sessionTimer = null;
  }

  private cancelGroupTimers(group: ClassicGroup): void {
    group.joinTimer?.cancel();
    group.joinTimer = null;
    group.syncTimer?.cancel();
    group.syncTimer = null;
    for (const timer of group.pendingJoinMembers.values()) timer.cancel();
    group.pendingJoinMembers.clear();
  }

  /**
   * Drops a group that never got a member (a join that failed validation, or a MEMBER_ID_REQUIRED
   * id that expired unused): nothing about it was ever persisted, and it would count against
   * groupsMax forever. Kafka keeps such groups until offset expiry cleans them up.
   */
  private forgetIfUnused(group: ClassicGroup): void {
    const unused = group.state === 'Empty' && group.generationId === 0 && group.protocolType === null && group.pendingJoinMembers.size === 0;
    if (unused && this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
  }

  private snapshotOf(group: ClassicGroup): GroupSnapshot {
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

  private tryPersist(group: ClassicGroup): boolean {
    try {
      this.persistHook(group.groupId, this.snapshotOf(group));
      return true;
    } catch (error) {
      this.log.error('persisting group failed', { groupId: group.groupId, error });
      return false;
    }
  }

  private persist(group: ClassicGroup): void {
    this.tryPersist(group);
  }

  private persistDeletion(groupId: string): void {
    try {
      this.persistHook(groupId, null);
    } catch (error) {
      this.log.error('persisting group deletion failed', { groupId, error });
    }
  }
}

/**
 * The topic names of a ConsumerProtocolSubscription (any version: int16 version, then the topics
 * as an int32-counted array of int16-length strings; what follows differs by version and is not
 * read), or null when the bytes do not hold them.
 */
export function subscriptionTopics(metadata: Buffer): string[] | null {
  if (metadata.length < 6) return null;
  const count = metadata.readInt32BE(2);
  if (count < 0 || count > (metadata.length - 6) / 2) return null;
  const topics: string[] = [];
  let at = 6;
  for (let i = 0; i < count; i++) {
    if (at + 2 > metadata.length) return null;
    const length = metadata.readInt16BE(at);
    at += 2;
    if (length < 0 || at + length > metadata.length) return null;
    topics.push(metadata.toString('utf8', at, at + length));
    at += length;
  }
  return topics;
}
