// The queue model of the group engine (model.ts): Felix queue groups, and Kafka share groups
// (KIP-932) later. Nobody owns a partition: any member may receive any record, and the unit of
// work is one record, claimed by one holder at a time (queue-partition.ts keeps the state).
//
// - claim() delivers records with a visibility deadline (KIP-932's acquisition lock); a claimed
//   record goes to nobody else until it is settled or the deadline passes. A claim may name no
//   member (Felix v1 polls name none): it then lives by its deadline alone.
// - settle(): ack (Kafka: accept) settles for good; nack (release) gives the record back, after an
//   optional delay; reject sends it to the dead letters. A lapsed deadline is a nack. A record
//   delivered deliveryAttemptsMax times goes to the dead letters instead of coming back.
// - Dead letters are offsets of the record's own partition kept in the group's durable state (the
//   record stays where it is in the log, as KIP-932 archives it): listed, discarded or redriven
//   (delivered again, its attempts counted from zero) by a protocol. No copy to another topic.
// - The group's position in a partition (lowest unsettled offset) is committed to the core offset
//   store (scope = the engine's scope); the window above it (acks past an unsettled record,
//   delivery counts, dead letters) is saved in the group store before every answer that changed it.
// - After a restart, claims are released with their delivery counts kept (members do not survive a
//   restart), as KIP-932 does when a share partition is loaded; a nack's delay is not kept.
// - Members join with a session timeout (sessions.ts); a member that leaves or expires releases its
//   claims at once, as a nack would. A long poll waits for an append (append-waiters.ts) or a
//   release in the group, within its wait.

import type { Clock } from '../../base/clock.js';
import { QuartetError, isQuartetError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import { BatchFormat, type NeutralRecord } from '../../log/types.js';
import type { AppendWaiters } from '../append-waiters.js';
import type { Broker } from '../broker.js';
import type { Topic } from '../catalog.js';
import type { Isolation, PartitionReader } from '../reads.js';
import type { Scheduler, TimerHandle } from '../scheduler.js';
import { groupIdBytesMax } from '../offsets.js';
import { SerialQueue } from '../serial.js';
import type { GroupError } from './model.js';
import type { GroupLabel } from './events.js';
import { QueuePartition, type StoredQueuePartition, type TrackedRecord } from './queue-partition.js';
import { newMemberSession, SessionTimers, type MemberSession } from './sessions.js';

export interface QueueGroupConfig {
  /** How long a delivered record stays claimed without an ack (KIP-932: group.share.record.lock.duration.ms). */
  visibilityTimeoutMs: number;
  /** Deliveries of one record before it is dead-lettered (KIP-932: group.share.delivery.count.limit). */
  deliveryAttemptsMax: number;
  /** Records tracked per partition: claims, records awaiting redelivery, acks above the position (KIP-932: record locks). */
  claimsMax: number;
  /** Dead letters kept per partition; past it the oldest is forgotten (logged). */
  deadLettersMax: number;
  /** Where a group with no position starts in a partition (KIP-932: share.auto.offset.reset). */
  startAt: 'earliest' | 'latest';
  /** read_committed delivers committed records only (KIP-932: share.isolation.level). */
  isolation: Isolation;
}

export const queueGroupConfigDefault: Readonly<QueueGroupConfig> = {
  visibilityTimeoutMs: 30_000,
  deliveryAttemptsMax: 5,
  claimsMax: 2_000,
  deadLettersMax: 10_000,
  startAt: 'earliest',
  isolation: 'read_uncommitted',
};

// Named limits.
export const queueGroupsMaxDefault = 10_000;
export const queueMembersPerGroupMaxDefault = 10_000;
/** Records one claim returns at most (Felix: 1,000 per poll). */
export const claimRecordsMax = 1_000;
/** Record bytes one claim reads at most (Felix: about 4 MiB per poll). */
export const claimBytesMaxDefault = 4 * 1024 * 1024;
/** A long poll's wait at most. */
export const claimWaitMsMax = 30_000;
/** A visibility timeout, an extension or a nack's delay at most (12 hours). */
export const queueDelayMsMax = 12 * 60 * 60 * 1000;
/** Wake-ups one long poll follows before it answers with what it has. */
const claimRoundsMax = 64;

export interface QueueGroupsOptions {
  broker: Broker;
  /** The offset store scope of the groups' positions (a protocol's: `felix`); durable state goes under `<scope>.queue`. */
  scope: string;
  clock: Clock;
  scheduler: Scheduler;
  /** The front-end's long-poll pool. */
  waiters: AppendWaiters;
  logger?: Logger;
  /** Every group's settings (a protocol may set a group's own with configure()). */
  config?: Partial<QueueGroupConfig>;
  groupsMax?: number;
  membersPerGroupMax?: number;
  claimBytesMax?: number;
}

/** A record's place: what settle, extend and the dead-letter calls name. */
export interface QueueRecordRef {
  topicInternalId: number;
  partition: number;
  offset: number;
}

/** One record claimed by a member. */
export interface QueueClaim extends QueueRecordRef {
  /** 1 for the first delivery (KIP-932's delivery count; Felix's attempts). */
  deliveryAttempt: number;
  /** Clock ms after which the claim lapses and the record is delivered again. */
  visibleAtMs: number;
  record: NeutralRecord;
}

export interface ClaimRequest {
  groupId: string;
  /** The claiming member (it must have joined), or null for a claim with no member. */
  memberId: string | null;
  topic: Topic;
  /** The partitions to claim from (default: all of the topic's). */
  partitions?: readonly number[];
  recordsMax: number;
  /** How long to wait for records when there are none now (capped at claimWaitMsMax); 0 answers at once. */
  waitMs?: number;
  /** This claim's visibility timeout instead of the group's. */
  visibilityTimeoutMs?: number;
  /** Ends a long poll early (the connection closed). */
  signal?: AbortSignal;
}

export interface ClaimResult {
  error: GroupError;
  claims: QueueClaim[];
}

export type QueueSettlement =
  /** Processed: never delivered again (Kafka: accept). */
  | { kind: 'ack' }
  /** Not processed: delivered again after `delayMs` (0: at once) unless its deliveries are used up (Kafka: release). */
  | { kind: 'nack'; delayMs: number }
  /** Poison: straight to the dead letters (Kafka: reject). */
  | { kind: 'reject' };

/** Per record: settled, or stale_claim when it is not claimed (by the member) any more: it lapsed, or was never delivered. */
export type QueueRecordResult = 'none' | 'stale_claim';

export interface SettleResult {
  error: GroupError;
  /** One per ref, in order (empty when `error` is not none). */
  results: QueueRecordResult[];
}

interface QueueMember {
  readonly memberId: string;
  readonly session: MemberSession;
  timeoutMs: number;
}

interface QueueGroup {
  readonly groupId: string;
  readonly members: Map<string, QueueMember>;
  /** `${topicInternalId}/${partition}` → its state. */
  readonly partitions: Map<string, QueuePartition>;
  /** Stored partitions not touched since the group was loaded (restored on first use). */
  readonly stored: Map<string, StoredQueuePartition>;
  readonly serial: SerialQueue;
  config: QueueGroupConfig;
  /** Long polls waiting for a release in the group. */
  readonly wakers: Set<() => void>;
  timer: TimerHandle | null;
  timerAtMs: number;
  cursor: number;
  /** The state last saved (JSON): an answer that changed nothing writes nothing. */
  savedJson: string;
  /** The last save failed: the group is not idle (it cannot be unloaded). */
  unsaved: boolean;
  /** Calls using the group now (group() to using()): a group in use is never unloaded. */
  users: number;
}

interface StoredQueueGroup {
  version: 1;
  partitions: StoredQueuePartition[];
}

const keyOf = (topicInternalId: number, partition: number): string => `${topicInternalId}/${partition}`;

export class QueueGroups {
  private readonly groups = new Map<string, QueueGroup>();
  private readonly loading = new Map<string, Promise<QueueGroup>>();
  private readonly sessions: SessionTimers;
  private readonly defaults: QueueGroupConfig;
  private readonly stateScope: string;
  private readonly stopWatchingTopics: () => void;
  private closed = false;

  constructor(private readonly options: QueueGroupsOptions) {
    this.defaults = { ...queueGroupConfigDefault, ...options.config };
    this.sessions = new SessionTimers(options.clock, options.scheduler);
    this.stateScope = `${options.scope}.queue`;
    this.stopWatchingTopics = options.broker.onTopicChanges({ topicDeleted: (topic) => this.topicDeleted(topic.internalId) });
  }

  /** Replaces the group's settings (fields not given keep the engine's defaults). */
  async configure(groupId: string, config: Partial<QueueGroupConfig>): Promise<GroupError> {
    const group = await this.group(groupId);
    if (typeof group === 'string') return group;
    return this.using(group, async (): Promise<GroupError> => {
      group.config = { ...this.defaults, ...config };
      return 'none';
    });
  }

  /** Adds the member, or refreshes its session; group_full past membersPerGroupMax. */
  async join(groupId: string, memberId: string, sessionTimeoutMs: number): Promise<GroupError> {
    if (!(sessionTimeoutMs > 0) || !Number.isFinite(sessionTimeoutMs)) return 'invalid_session_timeout';
    const group = await this.group(groupId);
    if (typeof group === 'string') return group;
    return this.using(group, async () => {
      const existing = group.members.get(memberId);
      if (existing !== undefined) {
        existing.timeoutMs = sessionTimeoutMs;
        this.touch(group, existing);
        return 'none';
      }
      if (group.members.size >= (this.options.membersPerGroupMax ?? queueMembersPerGroupMaxDefault)) return 'group_full';
      const member: QueueMember = { memberId, session: newMemberSession(), timeoutMs: sessionTimeoutMs };
      group.members.set(memberId, member);
      this.touch(group, member);
      this.options.broker.groupEvents.memberJoined(this.label(groupId), { member: memberId });
      return 'none';
    });
  }

  /** A sign of life: pushes the member's session deadline; unknown_member if it is not in the group. */
  async heartbeat(groupId: string, memberId: string): Promise<GroupError> {
    const group = await this.group(groupId);
    if (typeof group === 'string') return group;
    return this.using(group, async () => {
      const member = group.members.get(memberId);
      if (member === undefined) return 'unknown_member';
      this.touch(group, member);
      return 'none';
    });
  }

  /** Removes the member; its claims go back for redelivery at once. */
  async leave(groupId: string, memberId: string): Promise<GroupError> {
    const group = await this.group(groupId);
    if (typeof group === 'string') return group;
    return this.using(group, async () => {
      const member = group.members.get(memberId);
      if (member === undefined) return 'unknown_member';
      return this.removeMember(group, member, 'left');
    });
  }

  /** Members of the group now. */
  async members(groupId: string): Promise<string[]> {
    const group = await this.group(groupId);
    if (typeof group === 'string') return [];
    return this.using(group, async () => [...group.members.keys()]);
  }

  /**
   * Claims up to recordsMax records of the topic for the member: records due for redelivery
   * first, then records never delivered, partition by partition from a rotating start. With
   * waitMs, an empty claim waits for an append or a release and tries again. Throws
   * unknown_partition / invalid_request (QuartetError) for a request that names no valid partition.
   */
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const { topic } = request;
    const partitions = request.partitions ?? Array.from({ length: topic.partitions }, (_, p) => p);
    if (!Number.isInteger(request.recordsMax) || request.recordsMax < 1) throw new QuartetError('invalid_request', `records wanted must be at least 1, not ${request.recordsMax}`);
    if (request.visibilityTimeoutMs !== undefined) checkDelayMs('visibility timeout', request.visibilityTimeoutMs);
    if (request.waitMs !== undefined && !(request.waitMs >= 0)) throw new QuartetError('invalid_request', `invalid wait ${request.waitMs} ms`);
    for (const p of partitions) if (!Number.isInteger(p) || p < 0 || p >= topic.partitions) throw new QuartetError('unknown_partition', `partition ${p} of topic '${topic.name}' does not exist`);
    const group = await this.group(request.groupId);
    if (typeof group === 'string') return { error: group, claims: [] };
    return this.using(group, async () => {
      const readers = partitions.map((p) => this.options.broker.reads.open(topic, p));
      const waitMs = Math.min(Math.max(0, request.waitMs ?? 0), claimWaitMsMax);
      const startMs = this.options.clock.now();
      for (let round = 0; ; round++) {
        let released = false;
        let wake: (() => void) | null = null;
        const waker = (): void => {
          released = true;
          wake?.();
        };
        group.wakers.add(waker);
        try {
          const result = await group.serial.run(() => this.claimOnce(group, request, readers));
          const remainingMs = startMs + waitMs - this.options.clock.now();
          if (result.error !== 'none' || result.claims.length > 0 || remainingMs <= 0 || round >= claimRoundsMax || this.closed) return result;
          if (released || this.appendedPast(group, readers)) continue;
          const abort = new AbortController();
          wake = () => abort.abort();
          const onAbort = (): void => abort.abort();
          request.signal?.addEventListener('abort', onAbort, { once: true });
          const appended = await this.options.waiters.waitForAppend(readers, remainingMs, abort.signal);
          request.signal?.removeEventListener('abort', onAbort);
          if (request.signal?.aborted === true || (!appended && !released)) return result;
        } finally {
          group.wakers.delete(waker);
        }
      }
    });
  }

  /** Settles the claims (by the member, or by any holder when memberId is null). */
  async settle(groupId: string, memberId: string | null, refs: readonly QueueRecordRef[], how: QueueSettlement): Promise<SettleResult> {
    if (how.kind === 'nack') checkDelayMs('nack delay', how.delayMs);
    const group = await this.group(groupId);
    if (typeof group === 'string') return { error: group, results: [] };
    return this.using(group, () =>
      group.serial.run(async () => {
        const member = this.memberCheck(group, memberId);
        if (member !== 'none') return { error: member, results: [] };
        const now = this.options.clock.now();
        const results: QueueRecordResult[] = [];
        let released = false;
        for (const ref of refs) {
          const p = group.partitions.get(keyOf(ref.topicInternalId, ref.partition));
          const record = p?.claimOf(ref.offset, memberId ?? undefined);
          if (p === undefined || record === undefined || record.dueMs <= now) {
            results.push('stale_claim');
            continue;
          }
          results.push('none');
          if (how.kind === 'ack') p.ack(record);
          else if (how.kind === 'reject') this.deadLetter(group, p, record);
          else released = this.release(group, p, record, now, how.delayMs) || released;
        }
        const error = await this.persist(group);
        if (released) this.wakeAll(group);
        this.armTimer(group);
        return error === 'none' ? { error, results } : { error, results: [] };
      }),
    );
  }

  /** Pushes the claims' deadlines to now + visibilityTimeoutMs (a holder still working on them). */
  async extend(groupId: string, memberId: string | null, refs: readonly QueueRecordRef[], visibilityTimeoutMs: number): Promise<SettleResult> {
    checkDelayMs('visibility timeout', visibilityTimeoutMs);
    const group = await this.group(groupId);
    if (typeof group === 'string') return { error: group, results: [] };
    return this.using(group, () =>
      group.serial.run(async () => {
        const member = this.memberCheck(group, memberId);
        if (member !== 'none') return { error: member, results: [] };
        const now = this.options.clock.now();
        const results = refs.map((ref): QueueRecordResult => {
          const record = group.partitions.get(keyOf(ref.topicInternalId, ref.partition))?.claimOf(ref.offset, memberId ?? undefined);
          if (record === undefined || record.dueMs <= now) return 'stale_claim';
          record.dueMs = now + Math.max(0, visibilityTimeoutMs);
          return 'none';
        });
        this.armTimer(group);
        return { error: 'none', results };
      }),
    );
  }

  /** The partition's dead letters (offsets, ascending). */
  async deadLetters(groupId: string, topicInternalId: number, partition: number): Promise<{ error: GroupError; offsets: number[] }> {
    const group = await this.group(groupId);
    if (typeof group === 'string') return { error: group, offsets: [] };
    return this.using(group, () =>
      group.serial.run(async () => {
        const p = this.restored(group, topicInternalId, partition);
        return { error: 'none', offsets: p?.sortedDeadLetters() ?? [] };
      }),
    );
  }

  /** Forgets a dead letter; found false when the offset is not one. */
  discard(groupId: string, ref: QueueRecordRef): Promise<{ error: GroupError; found: boolean }> {
    return this.onDeadLetter(groupId, ref, (p) => p.discard(ref.offset));
  }

  /** Delivers a dead letter again (its attempts counted from zero); found false when the offset is not one. */
  redrive(groupId: string, ref: QueueRecordRef): Promise<{ error: GroupError; found: boolean }> {
    return this.onDeadLetter(groupId, ref, (p) => p.redrive(ref.offset));
  }

  /** The group's position in a partition (its committed offset), or null when it has none yet. */
  async position(groupId: string, topicInternalId: number, partition: number): Promise<number | null> {
    const group = await this.group(groupId);
    if (typeof group === 'string') return null;
    return this.using(group, () => group.serial.run(async () => this.restored(group, topicInternalId, partition)?.position ?? null));
  }

  /**
   * Deletes the group: its durable state and its positions. group_not_empty while it has members;
   * claims with no member are dropped with it.
   */
  async deleteGroup(groupId: string): Promise<GroupError> {
    const group = await this.group(groupId);
    if (typeof group === 'string') return group;
    return this.using(group, () =>
      group.serial.run(async () => {
        if (group.members.size > 0) return 'group_not_empty';
        group.timer?.cancel();
        this.groups.delete(groupId);
        this.wakeAll(group);
        try {
          await this.options.broker.groups.delete(this.stateScope, groupId);
          await this.options.broker.offsets.deleteGroup(this.options.scope, groupId);
        } catch (err) {
          this.options.logger?.warn('queue group could not be deleted', { group: groupId, error: String(err) });
          return 'unavailable';
        }
        this.options.broker.groupEvents.deleted(this.label(groupId));
        return 'none';
      }),
    );
  }

  /** How the group is named in the log (group changes: core/groups/events.ts). */
  private label(groupId: string): GroupLabel {
    return { protocol: this.options.scope, group: groupId };
  }

  /** Stops timers and sessions and ends the long polls; later calls answer closed. */
  close(): void {
    this.closed = true;
    this.stopWatchingTopics();
    for (const group of this.groups.values()) {
      group.timer?.cancel();
      group.timer = null;
      for (const m of group.members.values()) this.sessions.cancel(m.session);
      this.wakeAll(group);
    }
  }

  /** A deleted topic's partitions leave every loaded group (the broker deletes their offsets). */
  private async topicDeleted(topicInternalId: number): Promise<void> {
    const prefix = `${topicInternalId}/`;
    await Promise.all(
      [...this.groups.values()].map((group) =>
        group.serial.run(async () => {
          for (const key of [...group.partitions.keys(), ...group.stored.keys()]) {
            if (!key.startsWith(prefix)) continue;
            group.partitions.delete(key);
            group.stored.delete(key);
          }
          await this.persist(group);
        }),
      ),
    );
  }

  // ---- claims

  private async claimOnce(group: QueueGroup, request: ClaimRequest, readers: readonly PartitionReader[]): Promise<ClaimResult> {
    if (this.closed) return { error: 'closed', claims: [] };
    const member = this.memberCheck(group, request.memberId);
    if (member !== 'none') return { error: member, claims: [] };
    if (request.memberId !== null) this.touch(group, group.members.get(request.memberId)!);
    const now = this.options.clock.now();
    this.sweep(group, now);
    const deadlineMs = now + (request.visibilityTimeoutMs ?? group.config.visibilityTimeoutMs);
    const claims: QueueClaim[] = [];
    const want = Math.min(request.recordsMax, claimRecordsMax);
    const budget = { bytes: this.options.claimBytesMax ?? claimBytesMaxDefault };
    const start = group.cursor++ % readers.length;
    try {
      for (let i = 0; i < readers.length && claims.length < want && budget.bytes > 0; i++) {
        const reader = readers[(start + i) % readers.length]!;
        const p = await this.partitionOf(group, reader);
        await this.claimIn(group, p, reader, request.memberId, deadlineMs, want - claims.length, budget, claims);
      }
    } catch (err) {
      // What it claimed before the failure stays claimed, and lapses: at least once.
      if (claims.length === 0) throw err;
      this.options.logger?.warn('queue group claim read failed', { group: group.groupId, error: String(err) });
    }
    const error = await this.persist(group);
    this.armTimer(group);
    return error === 'none' ? { error, claims } : { error, claims: [] };
  }

  /** Claims from one partition: redeliveries first, then new records from fetchedTo. */
  private async claimIn(group: QueueGroup, p: QueuePartition, reader: PartitionReader, holder: string | null, deadlineMs: number, want: number, budget: { bytes: number }, into: QueueClaim[]): Promise<void> {
    const now = this.options.clock.now();
    const isolation = group.config.isolation;
    for (const record of p.redeliverable(now, want)) {
      if (budget.bytes <= 0) return;
      const read = await reader.readRecords({ from: record.offset, end: record.offset + 1, recordsMax: 1, bytesMax: budget.bytes, format: BatchFormat.neutral, isolation, decode: true });
      const found = read.decoded?.[0];
      if (found === undefined || found.offset !== record.offset) {
        // Removed from the log (retention, compaction) since it was delivered: nothing to deliver.
        if (read.reachedEnd) p.gone(record);
        continue;
      }
      budget.bytes -= read.bytes;
      p.claim(record, holder, deadlineMs);
      into.push(claimOf(p, record, found));
      want--;
    }
    const room = Math.min(want, group.config.claimsMax - p.tracked);
    if (room <= 0 || budget.bytes <= 0) return;
    const position = reader.position();
    const end = isolation === 'read_committed' ? position.lastStableOffset : position.highWatermark;
    if (p.fetchedTo >= end) return;
    const read = await reader.readRecords({ from: Math.max(p.fetchedTo, position.logStartOffset), end, recordsMax: room, bytesMax: budget.bytes, format: BatchFormat.neutral, isolation, decode: true });
    budget.bytes -= read.bytes;
    for (const r of read.decoded ?? []) into.push(claimOf(p, p.claimNew(r.offset, holder, deadlineMs), r));
    // A read stopped by its record budget goes on after its last record; otherwise from where it got to.
    p.fetchedUpTo(read.records >= room ? read.lastOffset + 1 : read.next);
    p.advancePosition();
  }

  /** Whether a partition with room in the window has records past what the group fetched (an append raced the claim). */
  private appendedPast(group: QueueGroup, readers: readonly PartitionReader[]): boolean {
    return readers.some((reader) => {
      const p = group.partitions.get(keyOf(reader.topic.internalId, reader.partition));
      if (p === undefined || p.tracked >= group.config.claimsMax) return false;
      const position = reader.position();
      return (group.config.isolation === 'read_committed' ? position.lastStableOffset : position.highWatermark) > p.fetchedTo;
    });
  }

  // ---- releases, dead letters, deadlines

  /** Releases a claim (nack, lapse, member gone); true when it is available again (not dead-lettered). */
  private release(group: QueueGroup, p: QueuePartition, record: TrackedRecord, nowMs: number, delayMs: number): boolean {
    const outcome = p.release(record, nowMs, delayMs, group.config.deliveryAttemptsMax, group.config.deadLettersMax);
    if (outcome === 'dead_lettered') this.logDeadLetter(group, p, record.offset, null);
    return outcome === 'released';
  }

  private deadLetter(group: QueueGroup, p: QueuePartition, record: TrackedRecord): void {
    const dropped = p.deadLetter(record, group.config.deadLettersMax);
    this.logDeadLetter(group, p, record.offset, dropped);
  }

  private logDeadLetter(group: QueueGroup, p: QueuePartition, offset: number, dropped: number | null): void {
    this.options.logger?.info('queue group record dead-lettered', { group: group.groupId, topic: p.topicInternalId, partition: p.partition, offset });
    if (dropped !== null) this.options.logger?.warn('queue group dead letters full: oldest forgotten', { group: group.groupId, topic: p.topicInternalId, partition: p.partition, offset: dropped });
  }

  /** Lapsed claims go back (or to the dead letters); true if any record became available. */
  private sweep(group: QueueGroup, nowMs: number): boolean {
    let released = false;
    for (const p of group.partitions.values()) {
      for (const record of p.lapsed(nowMs)) released = this.release(group, p, record, nowMs, 0) || released;
      p.advancePosition();
    }
    return released;
  }

  /** One timer per group, at its earliest deadline: lapses claims and wakes long polls when records come back. */
  private armTimer(group: QueueGroup): void {
    if (this.closed) return;
    const now = this.options.clock.now();
    let next: number | null = null;
    for (const p of group.partitions.values()) {
      const due = p.nextDueMs(now);
      if (due !== null && (next === null || due < next)) next = due;
    }
    if (next === null) {
      // Nothing waits on time: no timer (an idle group may be unloaded).
      group.timer?.cancel();
      group.timer = null;
      return;
    }
    if (group.timer !== null && group.timerAtMs <= next) return;
    group.timer?.cancel();
    group.timerAtMs = next;
    group.timer = this.options.scheduler.schedule(next - now, () => {
      group.timer = null;
      group.serial
        .run(async () => {
          this.sweep(group, this.options.clock.now());
          await this.persist(group);
          this.armTimer(group);
        })
        .then(
          () => this.wakeAll(group),
          (err: unknown) => this.options.logger?.error('queue group deadline pass failed', { group: group.groupId, error: String(err) }),
        );
    });
  }

  private wakeAll(group: QueueGroup): void {
    for (const wake of [...group.wakers]) wake();
  }

  // ---- members

  private memberCheck(group: QueueGroup, memberId: string | null): GroupError {
    if (this.closed) return 'closed';
    if (this.groups.get(group.groupId) !== group) return 'group_not_found';
    return memberId === null || group.members.has(memberId) ? 'none' : 'unknown_member';
  }

  private touch(group: QueueGroup, member: QueueMember): void {
    this.sessions.touch(member.session, member.timeoutMs, {
      isCurrent: () => group.members.get(member.memberId) === member,
      expired: () => void this.removeMember(group, member, 'session expired'),
    });
  }

  private removeMember(group: QueueGroup, member: QueueMember, reason: 'left' | 'session expired'): Promise<GroupError> {
    group.members.delete(member.memberId);
    this.sessions.cancel(member.session);
    this.options.broker.groupEvents.memberLeft(this.label(group.groupId), { member: member.memberId, reason });
    return group.serial.run(async () => {
      const now = this.options.clock.now();
      let released = false;
      for (const p of group.partitions.values()) for (const record of p.claimsOf(member.memberId)) released = this.release(group, p, record, now, 0) || released;
      const error = await this.persist(group);
      if (released) this.wakeAll(group);
      this.armTimer(group);
      return error;
    });
  }

  // ---- dead letters

  private async onDeadLetter(groupId: string, ref: QueueRecordRef, change: (p: QueuePartition) => boolean): Promise<{ error: GroupError; found: boolean }> {
    const group = await this.group(groupId);
    if (typeof group === 'string') return { error: group, found: false };
    return this.using(group, () =>
      group.serial.run(async () => {
        if (this.closed) return { error: 'closed' as const, found: false };
        const p = this.restored(group, ref.topicInternalId, ref.partition);
        if (p === undefined || !change(p)) return { error: 'none' as const, found: false };
        const error = await this.persist(group);
        this.wakeAll(group);
        return { error, found: error === 'none' };
      }),
    );
  }

  // ---- state: loading and persisting

  private async group(groupId: string): Promise<QueueGroup | GroupError> {
    if (this.closed) return 'closed';
    if (groupId.length === 0 || Buffer.byteLength(groupId) > groupIdBytesMax) return 'invalid_group_id';
    const known = this.groups.get(groupId);
    if (known !== undefined) {
      known.users++;
      return known;
    }
    if (this.groups.size + this.loading.size >= (this.options.groupsMax ?? queueGroupsMaxDefault) && !this.unloadIdle()) return 'unavailable';
    let loading = this.loading.get(groupId);
    if (loading === undefined) {
      loading = this.load(groupId).finally(() => this.loading.delete(groupId));
      this.loading.set(groupId, loading);
    }
    try {
      const group = await loading;
      group.users++;
      return group;
    } catch (err) {
      if (isQuartetError(err) && err.code === 'invalid_request') return 'invalid_group_id';
      this.options.logger?.warn('queue group state could not be loaded', { group: groupId, error: String(err) });
      return 'unavailable';
    }
  }

  /** Runs a call on a group group() handed out (and counted as in use). */
  private async using<T>(group: QueueGroup, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      group.users--;
    }
  }

  /**
   * Unloads one idle group (in no call, no members, no claims, no timer, saved): its state is all
   * in the stores and comes back on its next use. False when none is idle.
   */
  private unloadIdle(): boolean {
    for (const [id, g] of this.groups) {
      if (g.users > 0 || g.members.size > 0 || g.wakers.size > 0 || g.timer !== null || g.unsaved) continue;
      if ([...g.partitions.values()].some((p) => p.hasClaims())) continue;
      this.groups.delete(id);
      return true;
    }
    return false;
  }

  private async load(groupId: string): Promise<QueueGroup> {
    const stored = await this.options.broker.groups.load(this.stateScope, groupId);
    const group: QueueGroup = {
      groupId,
      members: new Map(),
      partitions: new Map(),
      stored: new Map(),
      serial: new SerialQueue(),
      config: { ...this.defaults },
      wakers: new Set(),
      timer: null,
      timerAtMs: 0,
      cursor: 0,
      savedJson: JSON.stringify(stored?.state ?? null),
      unsaved: false,
      users: 0,
    };
    for (const p of parseStored(stored?.state)) group.stored.set(keyOf(p.topicInternalId, p.partition), p);
    // Positions from the offset store: stored partitions are restored with theirs on first use.
    for (const c of await this.options.broker.offsets.fetchGroup(this.options.scope, groupId)) {
      const key = keyOf(c.topicInternalId, c.partition);
      const s = group.stored.get(key);
      group.stored.set(key, s === undefined ? emptyStored(c.topicInternalId, c.partition, c.offset) : { ...s, position: Math.max(s.position, c.offset) });
    }
    this.groups.set(groupId, group);
    return group;
  }

  /** The partition's state, restored from the stored group if it was not in use yet; undefined when the group has none. */
  private restored(group: QueueGroup, topicInternalId: number, partition: number): QueuePartition | undefined {
    const key = keyOf(topicInternalId, partition);
    const known = group.partitions.get(key);
    if (known !== undefined) return known;
    const stored = group.stored.get(key);
    if (stored === undefined) return undefined;
    group.stored.delete(key);
    const p = QueuePartition.restore(stored, stored.position);
    group.partitions.set(key, p);
    return p;
  }

  /** The partition's state; a partition the group never read starts at the group's startAt. */
  private async partitionOf(group: QueueGroup, reader: PartitionReader): Promise<QueuePartition> {
    const p = this.restored(group, reader.topic.internalId, reader.partition);
    const position = reader.position();
    const purged = p !== undefined && p.fetchedTo > position.nextOffset;
    if (purged) {
      // The log is shorter than what the group read: a purge replaced it. The group starts over.
      group.partitions.delete(keyOf(p.topicInternalId, p.partition));
    } else if (p !== undefined) {
      // Retention may have removed records the group had not settled: they are not delivered.
      if (p.fetchedTo < position.logStartOffset) p.fetchedUpTo(position.logStartOffset);
      p.dropDeadLettersBelow(position.logStartOffset);
      return p;
    }
    const start = purged || group.config.startAt === 'earliest' ? position.logStartOffset : position.highWatermark;
    const created = new QueuePartition(reader.topic.internalId, reader.partition, start, start);
    created.committedPosition = -1;
    group.partitions.set(keyOf(reader.topic.internalId, reader.partition), created);
    return created;
  }

  /**
   * Saves the group's window and dead letters, then commits the positions that moved (in that
   * order: after a crash between the two, the saved window's position is the later one and wins).
   */
  private async persist(group: QueueGroup): Promise<GroupError> {
    // A group deleted under a long poll or a timer is not written back.
    if (this.groups.get(group.groupId) !== group) return 'group_not_found';
    const commits = [];
    for (const p of group.partitions.values()) {
      p.advancePosition();
      if (p.position !== p.committedPosition) commits.push({ topicInternalId: p.topicInternalId, partition: p.partition, offset: p.position });
    }
    const state: StoredQueueGroup = { version: 1, partitions: [...[...group.partitions.values()].map((p) => p.snapshot()), ...group.stored.values()] };
    const json = JSON.stringify(state);
    try {
      if (json !== group.savedJson) await this.options.broker.groups.save(this.stateScope, group.groupId, state);
      group.savedJson = json;
      if (commits.length > 0) await this.options.broker.offsets.commit(this.options.scope, group.groupId, commits);
    } catch (err) {
      group.unsaved = true;
      this.options.logger?.warn('queue group state could not be saved', { group: group.groupId, error: String(err) });
      return 'unavailable';
    }
    group.unsaved = false;
    for (const c of commits) group.partitions.get(keyOf(c.topicInternalId, c.partition))!.committedPosition = c.offset;
    return 'none';
  }
}

function checkDelayMs(what: string, ms: number): void {
  if (!(ms >= 0 && ms <= queueDelayMsMax)) throw new QuartetError('invalid_request', `${what} must be 0 to ${queueDelayMsMax} ms, not ${ms}`);
}

function claimOf(p: QueuePartition, record: TrackedRecord, data: NeutralRecord): QueueClaim {
  return { topicInternalId: p.topicInternalId, partition: p.partition, offset: record.offset, deliveryAttempt: record.attempts, visibleAtMs: record.dueMs, record: data };
}

function emptyStored(topicInternalId: number, partition: number, position: number): StoredQueuePartition {
  return { topicInternalId, partition, position, fetchedTo: position, records: [], deadLetters: [] };
}

/** The stored group's partitions; anything else (an older or foreign shape) starts empty. */
function parseStored(state: unknown): StoredQueuePartition[] {
  if (typeof state !== 'object' || state === null || (state as { version?: unknown }).version !== 1) return [];
  const partitions = (state as { partitions?: unknown }).partitions;
  return Array.isArray(partitions) ? (partitions as StoredQueuePartition[]) : [];
}
