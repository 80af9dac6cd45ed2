// The Kafka classic group coordinator: the core client-side group engine
// (src/core/groups/client-side.ts: members, generations, session, join and sync timeouts,
// fencing, rebalances) with Kafka's answers. Requests keep Kafka's shape (the JoinGroup version
// decides KIP-394's member-id round trip); every engine error becomes its one Kafka code
// (kafka-errors.ts). What only Kafka knows stays here: the topics a consumer subscribes to, read
// from its ConsumerProtocolSubscription metadata.

import { ClientSideGroups } from '../../../core/groups/client-side.js';
import type * as Core from '../../../core/groups/client-side-types.js';
import type { JoinGroupResult as CoreJoinGroupResult, SyncGroupResult as CoreSyncGroupResult } from '../../../core/groups/client-side-group.js';
import type { GroupError } from '../../../core/groups/model.js';
import { KafkaError, type KafkaErrorCode } from './kafka-errors.js';

export type { GroupProtocol, GroupState, JoinGroupMember } from '../../../core/groups/client-side-group.js';
export type {
  DescribedMember,
  GroupPersist,
  GroupSnapshot,
  HeartbeatRequest,
  LeavingMember,
  ListedGroup,
  MemberSnapshot,
  SyncGroupRequest,
} from '../../../core/groups/client-side-types.js';
export { defaultClientSideConfig as defaultGroupCoordinatorConfig } from '../../../core/groups/client-side-types.js';

export type GroupCoordinatorConfig = Core.ClientSideConfig;
export type GroupCoordinatorOptions = Core.ClientSideOptions;

/** Each engine error's Kafka code (Errors.java). */
export const kafkaCodeOfGroupError: Readonly<Record<GroupError, KafkaErrorCode>> = {
  none: KafkaError.NONE,
  unavailable: KafkaError.COORDINATOR_NOT_AVAILABLE,
  closed: KafkaError.NOT_COORDINATOR,
  stale_generation: KafkaError.ILLEGAL_GENERATION,
  inconsistent_protocol: KafkaError.INCONSISTENT_GROUP_PROTOCOL,
  invalid_group_id: KafkaError.INVALID_GROUP_ID,
  unknown_member: KafkaError.UNKNOWN_MEMBER_ID,
  invalid_session_timeout: KafkaError.INVALID_SESSION_TIMEOUT,
  rebalance_in_progress: KafkaError.REBALANCE_IN_PROGRESS,
  group_not_empty: KafkaError.NON_EMPTY_GROUP,
  group_not_found: KafkaError.GROUP_ID_NOT_FOUND,
  member_id_required: KafkaError.MEMBER_ID_REQUIRED,
  group_full: KafkaError.GROUP_MAX_SIZE_REACHED,
  fenced_instance: KafkaError.FENCED_INSTANCE_ID,
};

function code(error: GroupError): KafkaErrorCode {
  return kafkaCodeOfGroupError[error];
}

/** An engine answer with its error as a Kafka code. */
type Coded<T extends { error: GroupError }> = Omit<T, 'error'> & { errorCode: KafkaErrorCode };

function coded<T extends { error: GroupError }>(result: T): Coded<T> {
  const { error, ...rest } = result;
  return { ...rest, errorCode: code(error) };
}

export interface JoinGroupRequest extends Omit<Core.JoinGroupRequest, 'requireMemberId'> {
  /** The JoinGroup version: v4+ dynamic members get MEMBER_ID_REQUIRED first (KIP-394). */
  apiVersion: number;
}

export type JoinGroupResult = Coded<CoreJoinGroupResult>;
export type SyncGroupResult = Coded<CoreSyncGroupResult>;
export type DescribedGroup = Coded<Core.DescribedGroup>;
export type DeleteGroupResult = Coded<Core.DeleteGroupResult>;

export interface LeaveGroupResult {
  /** Group-level error. For LeaveGroup v0-2 the handler answers with the single member's error. */
  errorCode: KafkaErrorCode;
  members: { memberId: string; groupInstanceId: string | null; errorCode: KafkaErrorCode }[];
}

export class GroupCoordinator {
  private readonly engine: ClientSideGroups;

  constructor(options: GroupCoordinatorOptions) {
    this.engine = new ClientSideGroups(options);
  }

  get config(): Readonly<GroupCoordinatorConfig> {
    return this.engine.config;
  }

  /** Loads persisted groups at startup: members come back Stable with fresh session deadlines. */
  restore(snapshots: readonly Core.GroupSnapshot[]): void {
    this.engine.restore(snapshots);
  }

  /** Stops the coordinator: timers cancelled, waiting requests answered with NOT_COORDINATOR. */
  close(): void {
    this.engine.close();
  }

  /** Resolves when this member's join phase completes (or at once, with an error). */
  async joinGroup(request: JoinGroupRequest): Promise<JoinGroupResult> {
    const { apiVersion, ...rest } = request;
    return coded(await this.engine.joinGroup({ ...rest, requireMemberId: apiVersion >= 4 }));
  }

  /** Resolves with this member's assignment once the leader has sent it (or at once, with an error). */
  async syncGroup(request: Core.SyncGroupRequest): Promise<SyncGroupResult> {
    return coded(await this.engine.syncGroup(request));
  }

  heartbeat(request: Core.HeartbeatRequest): KafkaErrorCode {
    return code(this.engine.heartbeat(request));
  }

  /** LeaveGroup v0-2 sends one member (by id), v3+ a batch (by id and/or instance id). */
  leaveGroup(groupId: string, members: readonly Core.LeavingMember[]): LeaveGroupResult {
    const result = this.engine.leaveGroup(groupId, members);
    return { errorCode: code(result.error), members: result.members.map(coded) };
  }

  describeGroup(groupId: string): DescribedGroup {
    return coded(this.engine.describeGroup(groupId));
  }

  /** ListGroups; `statesFilter` (v4+) matches state names case-insensitively, empty means all. */
  listGroups(statesFilter: readonly string[] = []): { errorCode: KafkaErrorCode; groups: Core.ListedGroup[] } {
    return coded(this.engine.listGroups(statesFilter));
  }

  /** Deletes Empty groups (the caller then drops their committed offsets on NONE). */
  deleteGroups(groupIds: readonly string[]): DeleteGroupResult[] {
    return this.engine.deleteGroups(groupIds).map(coded);
  }

  /** The group checks of OffsetCommit (ClassicGroup.validateOffsetCommit); a valid commit is a sign of life. */
  validateOffsetCommit(groupId: string, generationId: number, memberId: string, groupInstanceId: string | null): KafkaErrorCode {
    return code(this.engine.validateOffsetCommit(groupId, generationId, memberId, groupInstanceId));
  }

  /**
   * The user whose connection made a member (its first JoinGroup): null without SASL or for a
   * member restored at start-up, undefined when the group has no such member.
   */
  memberUser(groupId: string, memberId: string): number | null | undefined {
    return this.engine.memberUser(groupId, memberId);
  }

  /**
   * The topics the members of a group subscribe to, as their JoinGroup metadata names them
   * (subscriptionTopics); empty for an unknown group or one with no members. Null when the
   * group's members are not consumers (protocol type other than "consumer": Kafka Connect, ...)
   * or their metadata does not decode: what they involve is not known.
   */
  /**
   * What OffsetDelete decides by: undefined when no live group has this id (it may still have
   * committed offsets), else its protocol type, member count and the topics its members subscribe
   * to (null when one member's subscription does not decode).
   */
  offsetDeleteView(groupId: string): { protocolType: string | null; members: number; subscribed: ReadonlySet<string> | null } | undefined {
    const group = this.engine.memberProtocols(groupId);
    if (group === undefined) return undefined;
    const subscribed = new Set<string>();
    for (const protocols of group.members) {
      for (const protocol of protocols) {
        const named = subscriptionTopics(protocol.metadata);
        if (named === null) return { protocolType: group.protocolType, members: group.members.length, subscribed: null };
        for (const topic of named) subscribed.add(topic);
      }
    }
    return { protocolType: group.protocolType, members: group.members.length, subscribed };
  }

  subscribedTopics(groupId: string): string[] | null {
    const group = this.engine.memberProtocols(groupId);
    if (group === undefined || group.members.length === 0) return [];
    if (group.protocolType !== 'consumer') return null;
    const topics = new Set<string>();
    for (const protocols of group.members) {
      for (const protocol of protocols) {
        const named = subscriptionTopics(protocol.metadata);
        if (named === null) return null;
        for (const topic of named) topics.add(topic);
      }
    }
    return [...topics];
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
