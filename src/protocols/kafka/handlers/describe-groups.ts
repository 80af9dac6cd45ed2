// DescribeGroups (key 15), v0-5 (v6, which answers GROUP_ID_NOT_FOUND for unknown groups, is not
// advertised). A group that does not exist is described as Dead with no error and no members
// (GroupCoordinator.handleDescribeGroup, apiVersion < 6). A group known only by its committed
// offsets is Empty, as in Kafka (see list-groups.ts). Member metadata and assignments are filled
// only while the group is Stable (GroupMetadata.summary).
//
// authorized_operations (v3+) is INT32_MIN ("not requested") unless include_authorized_operations
// is set; then every operation a group supports: READ (3), DELETE (6) and DESCRIBE (8) as a bit
// field, as Kafka answers without an authorizer: Kafka groups have no grant of their own
// (../access.ts). A group a SASL user may not use (mayUseGroup: it involves a topic the user may
// not read) → GROUP_AUTHORIZATION_FAILED (30), nothing of it described.

import { kafkaAccessOf, mayUseGroup } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { groupsWithOffsets } from './list-groups.js';
import { defineHandler } from './types.js';

export const authorizedOperationsOmitted = -2147483648;
export const groupAuthorizedOperations = (1 << 3) | (1 << 6) | (1 << 8);

export const describeGroupsHandler = defineHandler({
  apiKey: ApiKey.DescribeGroups,
  minVersion: 0,
  maxVersion: 5,
  errorResponse(request, errorCode) {
    return { throttleTimeMs: 0, groups: request.groups.map((groupId) => ({ errorCode, groupId, groupState: '', protocolType: '', protocolData: '', members: [] })) };
  },
  async handle(request, { frontend, session, version }) {
    const access = kafkaAccessOf(frontend, session);
    let offsetGroups: Set<string> | null = null;
    const groups = [];
    for (const groupId of request.groups) {
      if (access.restricted && !(await mayUseGroup(frontend, access, groupId))) {
        groups.push({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, groupId, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: authorizedOperationsOmitted });
        continue;
      }
      const described = frontend.groups.describeGroup(groupId);
      let groupState: string = described.groupState;
      if (described.errorCode === ErrorCode.NONE && described.groupState === 'Dead') {
        try {
          offsetGroups ??= await groupsWithOffsets(frontend.broker);
          if (offsetGroups.has(groupId)) groupState = 'Empty';
        } catch (error) {
          session.logger.warn('listing groups with committed offsets failed', { error });
        }
      }
      const authorized = version >= 3 && request.includeAuthorizedOperations && described.errorCode === ErrorCode.NONE;
      groups.push({
        errorCode: described.errorCode,
        groupId,
        groupState,
        protocolType: described.protocolType,
        protocolData: described.protocolData,
        members: described.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: m.memberMetadata,
          memberAssignment: m.memberAssignment,
        })),
        authorizedOperations: authorized ? groupAuthorizedOperations : authorizedOperationsOmitted,
      });
    }
    return { throttleTimeMs: 0, groups };
  },
});
