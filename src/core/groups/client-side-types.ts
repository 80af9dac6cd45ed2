// The client-side assignment engine's configuration, requests, results and snapshots (plain
// objects; errors are the engine's neutral GroupError, model.ts). The engine: client-side.ts.

import type { Clock } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';
import type { GroupEvents } from './events.js';
import type { Scheduler } from '../scheduler.js';
import type { GroupProtocol, GroupState } from './client-side-group.js';
import type { GroupError } from './model.js';

// ---------------------------------------------------------------------------------------------
// Configuration

export interface ClientSideConfig {
  /** group.min.session.timeout.ms: shorter session timeouts get invalid_session_timeout. */
  sessionTimeoutMsMin: number;
  /** group.max.session.timeout.ms: longer session timeouts get invalid_session_timeout. */
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

export const defaultClientSideConfig: Readonly<ClientSideConfig> = {
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
  /**
   * A dynamic member without an id gets one with member_id_required and must come back with it
   * before it counts as a member (Kafka's KIP-394, JoinGroup v4+).
   */
  requireMemberId: boolean;
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
  error: GroupError;
  members: { memberId: string; groupInstanceId: string | null; error: GroupError }[];
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
  error: GroupError;
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
  error: GroupError;
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
 * deleted. A throw during SyncGroup fails that generation (unavailable, then a
 * rebalance, as Kafka does when the group write fails); other throws are logged.
 */
export type GroupPersist = (groupId: string, snapshot: GroupSnapshot | null) => void;

export interface ClientSideOptions {
  clock: Clock;
  scheduler: Scheduler;
  config?: Partial<ClientSideConfig>;
  persist?: GroupPersist;
  logger?: Logger;
  /** Where group changes are logged (the broker's; protocol `kafka`); none: not logged. */
  events?: GroupEvents;
  /** Makes a member id from its prefix (client id or instance id); Kafka appends a UUID. */
  newMemberId?: (prefix: string) => string;
}
