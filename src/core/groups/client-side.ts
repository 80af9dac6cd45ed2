// Groups with client-side assignment (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, describe, list,
// delete, and the group checks of an offset commit) as a state machine with no I/O: the members
// send their protocols and metadata, the engine elects a leader and bumps the generation, the
// leader's assignment goes to every member. Requests come in as plain objects; answers are plain
// objects carrying the engine's neutral GroupError (model.ts), which each protocol maps onto its
// own codes (Kafka: src/protocols/kafka/coordinator). Time comes from an injected Clock and
// timeouts from an injected Scheduler. Everything runs on one event loop, so no operation
// interleaves with another. Types: client-side-types.ts; one group's data: client-side-group.ts.
//
// Kafka's classic protocol is the model: behaviour follows apache/kafka's classic group
// coordinator, core/.../coordinator/group/GroupCoordinator.scala (3.x) and
// group-coordinator/.../classic/ClassicGroup.java. States:
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
// - member_id_required: a handed-out member id expires after the session timeout if unused;
// - a new member waiting on its first join is dropped after newMemberJoinTimeoutMs.

import { randomUUID } from 'node:crypto';
import type { Clock } from '../../base/clock.js';
import { silentLogger, type Logger } from '../../base/logger.js';
import type { GroupEvents, GroupLabel } from './events.js';
import type { Scheduler } from '../scheduler.js';
import {
  ClientSideGroup,
  GroupMember,
  answerJoin,
  answerSync,
  emptyBytes,
  groupSnapshot,
  joinError,
  syncError,
  type GroupProtocol,
  type JoinGroupResult,
  type JoinWaiter,
  type SyncGroupResult,
  type SyncWaiter,
} from './client-side-group.js';
import {
  defaultClientSideConfig,
  type ClientSideConfig,
  type ClientSideOptions,
  type DeleteGroupResult,
  type DescribedGroup,
  type GroupPersist,
  type GroupSnapshot,
  type HeartbeatRequest,
  type JoinGroupRequest,
  type LeaveGroupResult,
  type LeavingMember,
  type ListedGroup,
  type SyncGroupRequest,
} from './client-side-types.js';
import type { GroupError } from './model.js';
import { SessionTimers } from './sessions.js';

export type { GroupProtocol, GroupState, JoinGroupMember, JoinGroupResult, SyncGroupResult } from './client-side-group.js';

export class ClientSideGroups {
  readonly config: Readonly<ClientSideConfig>;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly sessions: SessionTimers;
  private readonly persistHook: GroupPersist;
  private readonly log: Logger;
  private readonly events: GroupEvents | null;
  private readonly newMemberId: (prefix: string) => string;
  private readonly groups = new Map<string, ClientSideGroup>();
  private active = true;

  constructor(options: ClientSideOptions) {
    this.config = { ...defaultClientSideConfig, ...options.config };
    this.clock = options.clock;
    this.scheduler = options.scheduler;
    this.sessions = new SessionTimers(options.clock, options.scheduler);
    this.persistHook = options.persist ?? (() => {});
    this.log = options.logger ?? silentLogger;
    this.events = options.events ?? null;
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
    const group = new ClientSideGroup(snapshot.groupId, snapshot.members.length > 0 ? 'Stable' : 'Empty', snapshot.stateTimestampMs);
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

  /** Stops the coordinator: timers cancelled, waiting requests answered with closed. */
  close(): void {
    this.active = false;
    for (const group of this.groups.values()) {
      this.cancelGroupTimers(group);
      for (const member of group.members.values()) {
        this.sessions.cancel(member);
        answerJoin(member, joinError(member.memberId, 'closed'));
        answerSync(member, syncError('closed'));
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
    if (invalid !== 'none') return respond(joinError(req.memberId, invalid));
    const isUnknownMember = req.memberId === '';
    let group = this.groups.get(req.groupId);
    let created = false;
    if (group === undefined) {
      // Only a member without an id may create a group (GroupCoordinator.handleJoinGroup).
      if (!isUnknownMember) return respond(joinError(req.memberId, 'unknown_member'));
      if (this.groups.size >= this.config.groupsMax) {
        this.log.warn('group limit reached', { groupId: req.groupId, groupsMax: this.config.groupsMax });
        return respond(joinError(req.memberId, 'unavailable'));
      }
      group = new ClientSideGroup(req.groupId, 'Empty', this.clock.now());
      this.groups.set(req.groupId, group);
      created = true;
    }
    if (!this.acceptJoiningMember(group, req.memberId)) {
      this.dropMember(group, req.memberId);
      respond(joinError('', 'group_full'));
    } else if (isUnknownMember) {
      this.joinNewMember(group, req, respond);
    } else {
      this.joinCurrentMember(group, req, respond);
    }
    this.maybeCompleteJoin(group);
    this.forgetIfUnused(group);
    // Logged once the first join kept it (a join that failed left nothing).
    if (created && this.groups.get(req.groupId) === group) this.events?.created(label(group));
    group.assertInvariants();
  }

  private validateJoin(req: JoinGroupRequest): GroupError {
    if (req.groupId === '') return 'invalid_group_id';
    if (!this.active) return 'unavailable';
    if (req.sessionTimeoutMs < this.config.sessionTimeoutMsMin || req.sessionTimeoutMs > this.config.sessionTimeoutMsMax) {
      return 'invalid_session_timeout';
    }
    return 'none';
  }

  /**
   * GroupCoordinator.acceptJoiningMember: while preparing, count the members already waiting
   * (so that the last rejoiners are the ones shed when the limit shrank); otherwise the size.
   */
  private acceptJoiningMember(group: ClientSideGroup, memberId: string): boolean {
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

  private joinNewMember(group: ClientSideGroup, req: JoinGroupRequest, respond: JoinWaiter): void {
    if (group.state === 'Dead') return respond(joinError('', 'unavailable'));
    if (!group.supportsProtocols(req.protocolType, req.protocols.map((p) => p.name))) {
      return respond(joinError('', 'inconsistent_protocol'));
    }
    const memberId = this.newMemberId(req.groupInstanceId ?? req.clientId);
    if (req.groupInstanceId !== null) {
      const oldMemberId = group.staticMembers.get(req.groupInstanceId);
      if (oldMemberId !== undefined) return this.replaceStaticMember(group, req, oldMemberId, memberId, respond);
      return this.addMemberAndRebalance(group, req, memberId, respond);
    }
    if (req.requireMemberId) return this.requireMemberId(group, req, memberId, respond);
    this.addMemberAndRebalance(group, req, memberId, respond);
  }

  /** Kafka's KIP-394: hand out an id and make the member come back with it; the id expires unused. */
  private requireMemberId(group: ClientSideGroup, req: JoinGroupRequest, memberId: string, respond: JoinWaiter): void {
    const timer = this.scheduler.schedule(req.sessionTimeoutMs, () => this.onPendingMemberExpired(group, memberId));
    group.pendingJoinMembers.set(memberId, timer);
    respond(joinError(memberId, 'member_id_required'));
  }

  private onPendingMemberExpired(group: ClientSideGroup, memberId: string): void {
    if (!group.pendingJoinMembers.delete(memberId)) return;
    this.log.debug('pending member expired', { groupId: group.groupId, memberId });
    this.maybeCompleteJoin(group);
    this.forgetIfUnused(group);
    group.assertInvariants();
  }

  private joinCurrentMember(group: ClientSideGroup, req: JoinGroupRequest, respond: JoinWaiter): void {
    if (group.state === 'Dead') return respond(joinError(req.memberId, 'unavailable'));
    if (!group.supportsProtocols(req.protocolType, req.protocols.map((p) => p.name))) {
      return respond(joinError(req.memberId, 'inconsistent_protocol'));
    }
    const pendingTimer = group.pendingJoinMembers.get(req.memberId);
    if (pendingTimer !== undefined) {
      // Only dynamic members are ever pending. A static id here is a client bug; Kafka throws.
      if (req.groupInstanceId !== null) return respond(joinError(req.memberId, 'unknown_member'));
      pendingTimer.cancel();
      return this.addMemberAndRebalance(group, req, req.memberId, respond);
    }
    const memberError = this.validateCurrentMember(group, req.memberId, req.groupInstanceId);
    if (memberError !== 'none') return respond(joinError(req.memberId, memberError));
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
        return respond(joinError(req.memberId, 'unknown_member'));
    }
  }

  /** GroupCoordinator.validateCurrentMember: the instance id maps to this member id, which exists. */
  private validateCurrentMember(group: ClientSideGroup, memberId: string, groupInstanceId: string | null): GroupError {
    if (groupInstanceId !== null) {
      const current = group.staticMembers.get(groupInstanceId);
      if (current === undefined) return 'unknown_member';
      if (current !== memberId) return 'fenced_instance';
    }
    return group.has(memberId) ? 'none' : 'unknown_member';
  }

  private joinResultFor(group: ClientSideGroup, member: GroupMember): JoinGroupResult {
    return {
      error: 'none',
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leaderId: group.leaderId ?? '',
      memberId: member.memberId,
      members: group.isLeader(member.memberId) ? group.membersForLeader() : [],
    };
  }

  private addMemberAndRebalance(group: ClientSideGroup, req: JoinGroupRequest, memberId: string, respond: JoinWaiter): void {
    const member = new GroupMember({ ...req, memberId, rebalanceTimeoutMs: this.rebalanceTimeoutOf(req) });
    member.isNew = true;
    // A member joining a generation-0 group during the initial delay extends the delay.
    if (group.state === 'PreparingRebalance' && group.generationId === 0) group.newMemberAdded = true;
    group.add(member);
    this.events?.memberJoined(label(group), { member: memberId, clientId: req.clientId, peer: req.clientHost, ...(req.groupInstanceId !== null ? { groupInstanceId: req.groupInstanceId } : {}) });
    member.joinWaiter = respond;
    // A new member cannot heartbeat before its first join answer, so its session timeout does
    // not apply yet; a long cap instead stops defunct joiners from piling up (Kafka's comment).
    this.touch(group, member, this.config.newMemberJoinTimeoutMs);
    this.maybePrepareRebalance(group, `adding member ${memberId}`);
  }

  private updateMemberAndRebalance(group: ClientSideGroup, member: GroupMember, req: JoinGroupRequest, respond: JoinWaiter): void {
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
    answerJoin(member, joinError(member.memberId, 'rebalance_in_progress'));
    member.joinWaiter = respond;
  }

  private rebalanceTimeoutOf(req: JoinGroupRequest): number {
    return req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs;
  }

  /**
   * A static member came back without its member id: it takes over the instance with a new id
   * and the old id is fenced (GroupCoordinator.updateStaticMemberAndRebalance).
   */
  private replaceStaticMember(group: ClientSideGroup, req: JoinGroupRequest, oldMemberId: string, newMemberId: string, respond: JoinWaiter): void {
    const previousLeaderId = group.leaderId ?? '';
    const { old, replacement } = group.replaceStaticMember(req.groupInstanceId!, oldMemberId, newMemberId, req.userId ?? null);
    this.sessions.cancel(old);
    answerJoin(old, joinError(oldMemberId, 'fenced_instance'));
    answerSync(old, syncError('fenced_instance'));
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
  private completeStaticRejoinWhenStable(group: ClientSideGroup, member: GroupMember, previousLeaderId: string): void {
    if (group.selectProtocol() !== group.protocolName) {
      return this.maybePrepareRebalance(group, `static member ${member.groupInstanceId} changed the protocol choice`);
    }
    this.persist(group);
    answerJoin(member, { ...this.joinResultFor(group, member), leaderId: previousLeaderId, members: [] });
  }

  // ------------------------------------------------------------------------------- rebalance

  private maybePrepareRebalance(group: ClientSideGroup, reason: string): void {
    if (group.canRebalance()) this.prepareRebalance(group, reason);
  }

  private prepareRebalance(group: ClientSideGroup, reason: string): void {
    // Members waiting on SyncGroup must rejoin instead.
    if (group.state === 'CompletingRebalance') this.resetAndPropagateAssignmentError(group, 'rebalance_in_progress');
    group.syncTimer?.cancel();
    group.syncTimer = null;
    group.pendingSyncMembers.clear();
    const fromEmpty = group.state === 'Empty';
    group.transitionTo('PreparingRebalance', this.clock.now());
    // At debug: the generation it leads to is logged at info (GroupEvents.rebalanced).
    this.log.debug('preparing to rebalance', { groupId: group.groupId, generationId: group.generationId, reason });
    if (fromEmpty) {
      const delayMs = this.config.initialRebalanceDelayMs;
      this.scheduleInitialJoin(group, delayMs, Math.max(group.rebalanceTimeoutMs() - delayMs, 0));
    } else {
      this.scheduleJoin(group, group.rebalanceTimeoutMs());
      this.maybeCompleteJoin(group);
    }
  }

  /** InitialDelayedJoin: wait `delayMs`; while members keep arriving, wait again, within the budget. */
  private scheduleInitialJoin(group: ClientSideGroup, delayMs: number, remainingMs: number): void {
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

  private scheduleJoin(group: ClientSideGroup, timeoutMs: number): void {
    group.joinTimerIsInitialDelay = false;
    group.joinTimer = this.scheduler.schedule(timeoutMs, () => {
      group.joinTimer = null;
      this.completeJoin(group);
      this.forgetIfUnused(group);
      group.assertInvariants();
    });
  }

  /** DelayedJoin.tryComplete: finish early once everybody is back (never during the initial delay). */
  private maybeCompleteJoin(group: ClientSideGroup): void {
    if (group.state !== 'PreparingRebalance' || group.joinTimerIsInitialDelay) return;
    if (group.hasAllMembersJoined()) this.completeJoin(group);
  }

  /** GroupCoordinator.onCompleteJoin. */
  private completeJoin(group: ClientSideGroup): void {
    if (group.state !== 'PreparingRebalance') return;
    group.joinTimer?.cancel();
    group.joinTimer = null;
    group.newMemberAdded = false;
    // Dynamic members that did not rejoin in time are dropped; static ones keep their place.
    for (const member of group.notYetRejoinedMembers()) {
      if (member.groupInstanceId !== null) continue;
      this.events?.memberLeft(label(group), { member: member.memberId, reason: 'not rejoined' });
      this.dropMember(group, member.memberId);
    }
    if (!group.maybeElectNewJoinedLeader() && group.size > 0) {
      // Only static members that have not rejoined are left: wait another rebalance timeout
      // until they rejoin or their sessions expire.
      this.log.warn('no member rejoined, extending the join phase', { groupId: group.groupId });
      return this.scheduleJoin(group, group.rebalanceTimeoutMs());
    }
    group.initNextGeneration(this.clock.now());
    if (group.is('Empty')) {
      this.events?.rebalanced(label(group), group.generationId, 0);
      return this.persist(group);
    }
    this.events?.rebalanced(label(group), group.generationId, group.size);
    for (const member of group.members.values()) group.pendingSyncMembers.add(member.memberId);
    this.scheduleSyncTimeout(group);
    for (const member of group.members.values()) {
      answerJoin(member, this.joinResultFor(group, member));
      this.touch(group, member, member.sessionTimeoutMs);
      member.isNew = false;
    }
  }

  /** DelayedSync: members of the new generation must send SyncGroup within the rebalance timeout. */
  private scheduleSyncTimeout(group: ClientSideGroup): void {
    const generationId = group.generationId;
    group.syncTimer = this.scheduler.schedule(group.rebalanceTimeoutMs(), () => {
      group.syncTimer = null;
      this.onSyncExpired(group, generationId);
      group.assertInvariants();
    });
  }

  private onSyncExpired(group: ClientSideGroup, generationId: number): void {
    if (generationId !== group.generationId || (group.state !== 'CompletingRebalance' && group.state !== 'Stable')) return;
    if (group.pendingSyncMembers.size === 0) return;
    const missing = [...group.pendingSyncMembers];
    for (const memberId of missing) {
      this.events?.memberLeft(label(group), { member: memberId, reason: 'not synced' });
      this.removeMember(group, memberId);
    }
    this.prepareRebalance(group, 'pending sync expired');
  }

  // ------------------------------------------------------------------------------- SyncGroup

  /** Resolves with this member's assignment once the leader has sent it (or at once, with an error). */
  syncGroup(request: SyncGroupRequest): Promise<SyncGroupResult> {
    return new Promise((resolve) => this.handleSync(request, resolve));
  }

  private handleSync(req: SyncGroupRequest, respond: SyncWaiter): void {
    if (req.groupId === '') return respond(syncError('invalid_group_id'));
    if (!this.active) return respond(syncError('unavailable'));
    const group = this.groups.get(req.groupId);
    if (group === undefined) return respond(syncError('unknown_member'));
    const invalid = this.validateSync(group, req);
    if (invalid !== 'none') return respond(syncError(invalid));
    const member = group.member(req.memberId)!;
    switch (group.state) {
      case 'Empty':
        return respond(syncError('unknown_member'));
      case 'PreparingRebalance':
        return respond(syncError('rebalance_in_progress'));
      case 'CompletingRebalance':
        this.awaitAssignment(group, member, req, respond);
        break;
      case 'Stable':
        this.markSynced(group, member.memberId);
        respond(this.syncResultFor(group, member));
        this.touch(group, member, member.sessionTimeoutMs);
        break;
      case 'Dead':
        return respond(syncError('unavailable'));
    }
    group.assertInvariants();
  }

  private validateSync(group: ClientSideGroup, req: SyncGroupRequest): GroupError {
    if (group.state === 'Dead') return 'unavailable';
    const memberError = this.validateCurrentMember(group, req.memberId, req.groupInstanceId);
    if (memberError !== 'none') return memberError;
    if (req.generationId !== group.generationId) return 'stale_generation';
    // SyncGroup v5 carries the protocol type and name; they must match the group's.
    if (req.protocolType !== null && req.protocolType !== group.protocolType) return 'inconsistent_protocol';
    if (req.protocolName !== null && req.protocolName !== group.protocolName) return 'inconsistent_protocol';
    return 'none';
  }

  private awaitAssignment(group: ClientSideGroup, member: GroupMember, req: SyncGroupRequest, respond: SyncWaiter): void {
    answerSync(member, syncError('rebalance_in_progress'));
    member.syncWaiter = respond;
    this.markSynced(group, member.memberId);
    if (!group.isLeader(member.memberId)) return;
    this.log.info('assignment received from leader', { groupId: group.groupId, generationId: group.generationId });
    const assignments = new Map(req.assignments.map((a) => [a.memberId, a.assignment]));
    // Members the leader left out get an empty assignment; unknown member ids are ignored.
    for (const m of group.members.values()) m.assignment = assignments.get(m.memberId) ?? emptyBytes;
    if (!this.tryPersist(group)) {
      this.resetAndPropagateAssignmentError(group, 'unavailable');
      return this.maybePrepareRebalance(group, 'storing the assignment failed');
    }
    group.transitionTo('Stable', this.clock.now());
    this.propagateAssignment(group);
  }

  private markSynced(group: ClientSideGroup, memberId: string): void {
    group.pendingSyncMembers.delete(memberId);
    if (group.pendingSyncMembers.size === 0) {
      group.syncTimer?.cancel();
      group.syncTimer = null;
    }
  }

  private syncResultFor(group: ClientSideGroup, member: GroupMember): SyncGroupResult {
    return { error: 'none', protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment };
  }

  /** Answers every waiting SyncGroup with its assignment; their sessions restart from now. */
  private propagateAssignment(group: ClientSideGroup): void {
    for (const member of group.members.values()) {
      if (answerSync(member, this.syncResultFor(group, member))) this.touch(group, member, member.sessionTimeoutMs);
    }
  }

  private resetAndPropagateAssignmentError(group: ClientSideGroup, error: GroupError): void {
    for (const member of group.members.values()) {
      member.assignment = emptyBytes;
      answerSync(member, syncError(error));
    }
  }

  // ------------------------------------------------------------------------------- Heartbeat

  heartbeat(req: HeartbeatRequest): GroupError {
    if (req.groupId === '') return 'invalid_group_id';
    if (!this.active) return 'unavailable';
    const group = this.groups.get(req.groupId);
    if (group === undefined) return 'unknown_member';
    if (group.state === 'Dead') return 'unavailable';
    const memberError = this.validateCurrentMember(group, req.memberId, req.groupInstanceId);
    if (memberError !== 'none') return memberError;
    if (req.generationId !== group.generationId) return 'stale_generation';
    if (group.state === 'Empty') return 'unknown_member';
    const member = group.member(req.memberId)!;
    this.touch(group, member, member.sessionTimeoutMs);
    // In CompletingRebalance a heartbeat is normal: clients start heartbeating right after
    // their JoinGroup answer (Kafka 2.x onwards answers without error there).
    return group.state === 'PreparingRebalance' ? 'rebalance_in_progress' : 'none';
  }

  // ------------------------------------------------------------------------------- LeaveGroup

  /** LeaveGroup v0-2 sends one member (by id), v3+ a batch (by id and/or instance id). */
  leaveGroup(groupId: string, members: readonly LeavingMember[]): LeaveGroupResult {
    if (groupId === '') return { error: 'invalid_group_id', members: [] };
    if (!this.active) return { error: 'unavailable', members: [] };
    const group = this.groups.get(groupId);
    const results = members.map((m) => ({ ...m, error: group === undefined ? 'unknown_member' : this.leaveOne(group, m) }));
    if (group !== undefined) {
      this.forgetIfUnused(group);
      group.assertInvariants();
    }
    return { error: group?.state === 'Dead' ? 'unavailable' : 'none', members: results };
  }

  private leaveOne(group: ClientSideGroup, leaving: LeavingMember): GroupError {
    if (group.state === 'Dead') return 'unavailable';
    if (leaving.memberId !== '' && group.isStaticMemberFenced(leaving.groupInstanceId, leaving.memberId)) return 'fenced_instance';
    const pendingTimer = group.pendingJoinMembers.get(leaving.memberId);
    if (pendingTimer !== undefined) {
      pendingTimer.cancel();
      group.pendingJoinMembers.delete(leaving.memberId);
      this.maybeCompleteJoin(group);
      return 'none';
    }
    const staticId = leaving.groupInstanceId === null ? undefined : group.staticMembers.get(leaving.groupInstanceId);
    const member = group.member(staticId ?? leaving.memberId);
    if (member === undefined) return 'unknown_member';
    this.events?.memberLeft(label(group), { member: member.memberId, reason: 'left', ...(member.groupInstanceId !== null ? { groupInstanceId: member.groupInstanceId } : {}) });
    this.removeMemberAndUpdateGroup(group, member);
    return 'none';
  }

  // ------------------------------------------------------------------------------- admin

  describeGroup(groupId: string): DescribedGroup {
    const empty: DescribedGroup = { error: 'none', groupId, groupState: 'Dead', protocolType: '', protocolData: '', members: [] };
    if (!this.active) return { ...empty, error: 'unavailable' };
    const group = this.groups.get(groupId);
    if (group === undefined) return empty;
    const stable = group.state === 'Stable';
    const protocolName = stable ? group.protocolName ?? '' : '';
    return {
      error: 'none',
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
   * The group's protocol type and every member's protocols (what a protocol reads the members'
   * subscriptions from); undefined for an unknown group.
   */
  memberProtocols(groupId: string): { protocolType: string | null; members: (readonly GroupProtocol[])[] } | undefined {
    const group = this.groups.get(groupId);
    if (group === undefined) return undefined;
    return { protocolType: group.protocolType, members: [...group.members.values()].map((m) => m.protocols) };
  }

  /**
   * The user whose connection made a member (its first JoinGroup): null without SASL or for a
   * member restored at start-up, undefined when the group has no such member.
   */
  memberUser(groupId: string, memberId: string): number | null | undefined {
    return this.groups.get(groupId)?.members.get(memberId)?.userId;
  }

  /** ListGroups; `statesFilter` (v4+) matches state names case-insensitively, empty means all. */
  listGroups(statesFilter: readonly string[] = []): { error: GroupError; groups: ListedGroup[] } {
    if (!this.active) return { error: 'unavailable', groups: [] };
    const wanted = new Set(statesFilter.map((s) => s.toLowerCase()));
    const groups: ListedGroup[] = [];
    for (const group of this.groups.values()) {
      if (wanted.size > 0 && !wanted.has(group.state.toLowerCase())) continue;
      groups.push({ groupId: group.groupId, protocolType: group.protocolType ?? '', groupState: group.state });
    }
    return { error: 'none', groups };
  }

  /** Deletes Empty groups (the caller then drops their committed offsets on none). */
  deleteGroups(groupIds: readonly string[]): DeleteGroupResult[] {
    return groupIds.map((groupId) => ({ groupId, error: this.deleteOne(groupId) }));
  }

  private deleteOne(groupId: string): GroupError {
    if (!this.active) return 'unavailable';
    const group = this.groups.get(groupId);
    if (group === undefined || group.state === 'Dead') return 'group_not_found';
    if (group.state !== 'Empty') return 'group_not_empty';
    this.cancelGroupTimers(group);
    group.transitionTo('Dead', this.clock.now());
    this.groups.delete(groupId);
    this.persistDeletion(groupId);
    this.events?.deleted(label(group));
    return 'none';
  }

  // ------------------------------------------------------------------------------- offsets

  /**
   * The group checks of OffsetCommit (Kafka's ClassicGroup.validateOffsetCommit). Generation -1 with no
   * member is a simple consumer (or admin) commit: allowed when the group is Empty or unknown.
   * A member's valid commit also counts as a sign of life, as in Kafka's coordinator.
   */
  validateOffsetCommit(groupId: string, generationId: number, memberId: string, groupInstanceId: string | null): GroupError {
    if (!this.active) return 'unavailable';
    const group = this.groups.get(groupId);
    // An unknown group accepts only simple commits; a generation means a group we lost.
    if (group === undefined) return generationId < 0 ? 'none' : 'stale_generation';
    if (group.state === 'Dead') return 'unavailable';
    if (generationId < 0 && group.state === 'Empty') return 'none';
    if (generationId >= 0 || memberId !== '' || groupInstanceId !== null) {
      const memberError = this.validateCurrentMember(group, memberId, groupInstanceId);
      if (memberError !== 'none') return memberError;
      if (generationId !== group.generationId) return 'stale_generation';
    } else if (group.state !== 'Empty') {
      // OffsetCommit v0 (no member, no generation) only for a group nobody is consuming in.
      return 'unknown_member';
    }
    // The member has this generation's JoinGroup answer but no assignment yet.
    if (group.state === 'CompletingRebalance') return 'rebalance_in_progress';
    const member = group.member(memberId);
    if (member !== undefined) this.touch(group, member, member.sessionTimeoutMs);
    return 'none';
  }

  // ------------------------------------------------------------------------------- sessions

  /** Pushes the member's session deadline to now + timeoutMs (sessions.ts). */
  private touch(group: ClientSideGroup, member: GroupMember, timeoutMs: number, nowMs = this.clock.now()): void {
    this.sessions.touch(member, timeoutMs, { isCurrent: () => group.member(member.memberId) === member, expired: (now) => this.onSessionExpired(group, member, now) }, nowMs);
  }

  private onSessionExpired(group: ClientSideGroup, member: GroupMember, now: number): void {
    // MemberMetadata.shouldKeepAlive: a member waiting on our answer cannot heartbeat; the join
    // and sync timeouts govern it instead. New members waiting on their first join are the
    // exception: their (long) deadline was set by addMemberAndRebalance.
    if (member.isAwaitingSync || (member.isAwaitingJoin && !member.isNew)) {
      this.touch(group, member, member.sessionTimeoutMs, now);
      return;
    }
    this.events?.memberLeft(label(group), { member: member.memberId, reason: 'session expired' });
    this.removeMemberAndUpdateGroup(group, member);
    this.forgetIfUnused(group);
    group.assertInvariants();
  }

  // ------------------------------------------------------------------------------- helpers

  /** GroupCoordinator.removeMemberAndUpdateGroup: answer its waiters, remove, move the group on. */
  private removeMemberAndUpdateGroup(group: ClientSideGroup, member: GroupMember): void {
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

  /** Removes a member, answering anything it waits on with unknown_member. */
  private removeMember(group: ClientSideGroup, memberId: string): void {
    const member = group.member(memberId);
    if (member === undefined) return;
    answerJoin(member, joinError('', 'unknown_member'));
    answerSync(member, syncError('unknown_member'));
    this.dropMember(group, memberId);
  }

  /** Removes a member that waits on nothing, cancelling its session timer. */
  private dropMember(group: ClientSideGroup, memberId: string): void {
    const removed = group.remove(memberId);
    if (removed !== undefined) this.sessions.cancel(removed);
  }

  private cancelGroupTimers(group: ClientSideGroup): void {
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
  private forgetIfUnused(group: ClientSideGroup): void {
    const unused = group.state === 'Empty' && group.generationId === 0 && group.protocolType === null && group.pendingJoinMembers.size === 0;
    if (unused && this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
  }

  private tryPersist(group: ClientSideGroup): boolean {
    try {
      this.persistHook(group.groupId, groupSnapshot(group));
      return true;
    } catch (error) {
      this.log.error('persisting group failed', { groupId: group.groupId, error });
      return false;
    }
  }

  private persist(group: ClientSideGroup): void {
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

/** How the log names a Kafka group. */
function label(group: ClientSideGroup): GroupLabel {
  return { protocol: 'kafka', group: group.groupId };
}
