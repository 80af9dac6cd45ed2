// LeaveGroup (key 13), v0-4.
//
// v0-2 name one member by id; the answer has no member list, so the member's own error becomes
// the top-level error (apache/kafka LeaveGroupResponse: for version <= 2 a NONE top-level error is
// replaced by the first member's error). v3+ (KIP-345) batch members by id and/or
// group.instance.id and answer each one; the top-level error is the group's alone.
// A SASL user that may not use the group (../access.ts, mayUseGroup) → GROUP_AUTHORIZATION_FAILED
// (30) and no member leaves, unless each leaving member is named by the member id of a member this
// user's connections made (a member leaving itself; JoinGroup records the user on the member).

import { kafkaAccessOf, mayUseGroup } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { defineHandler, type KafkaFrontend, type KafkaSession } from './types.js';

/**
 * Whether every member leaving is one this user's connections made (by member id): a member may
 * always leave, even a group that has come to involve topics its user may not read. (A member id
 * alone proves nothing: a leader's JoinGroup answer lists every member's.)
 */
function namesItsOwnMembers(frontend: KafkaFrontend, session: KafkaSession, groupId: string, memberIds: readonly string[]): boolean {
  const userId = session.principalUserId ?? null;
  if (userId === null || memberIds.length === 0) return false;
  return memberIds.every((id) => id !== '' && frontend.groups.memberUser(groupId, id) === userId);
}

export const leaveGroupHandler = defineHandler({
  apiKey: ApiKey.LeaveGroup,
  minVersion: 0,
  maxVersion: 4,
  async handle(request, { frontend, session, version }) {
    const access = kafkaAccessOf(frontend, session);
    const leavingIds = version <= 2 ? [request.memberId] : request.members.map((m) => m.memberId);
    if (access.restricted && !namesItsOwnMembers(frontend, session, request.groupId, leavingIds) && !(await mayUseGroup(frontend, access, request.groupId))) {
      return version <= 2 ? { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED } : { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] };
    }
    if (version <= 2) {
      const result = frontend.groups.leaveGroup(request.groupId, [{ memberId: request.memberId, groupInstanceId: null }]);
      const memberError = result.members[0]?.errorCode ?? ErrorCode.NONE;
      return { throttleTimeMs: 0, errorCode: result.errorCode !== ErrorCode.NONE ? result.errorCode : memberError };
    }
    const leaving = request.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId }));
    const result = frontend.groups.leaveGroup(request.groupId, leaving);
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      members: result.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: m.errorCode })),
    };
  },
});
