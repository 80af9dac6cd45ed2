// SyncGroup (key 14), v0-5. Followers wait here until the leader's SyncGroup brings the
// assignment (or the group moves on and the coordinator answers with an error).
//
// apache/kafka KafkaApis.handleSyncGroupRequest: from v5 (KIP-559) the protocol type and name are
// mandatory; a v5 request with either null is answered INCONSISTENT_GROUP_PROTOCOL before the
// coordinator sees it (SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent). v3+ carries
// group.instance.id. The response's protocol type and name exist from v5.

import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { defineHandler } from './types.js';

export const syncGroupHandler = defineHandler({
  apiKey: ApiKey.SyncGroup,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, { frontend, version }) {
    if (version >= 5 && (request.protocolType === null || request.protocolName === null)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
    }
    const result = await frontend.groups.syncGroup({
      groupId: request.groupId,
      generationId: request.generationId,
      memberId: request.memberId,
      groupInstanceId: version >= 3 ? request.groupInstanceId : null,
      protocolType: version >= 5 ? request.protocolType : null,
      protocolName: version >= 5 ? request.protocolName : null,
      assignments: request.assignments.map((a) => ({ memberId: a.memberId, assignment: a.assignment })),
    });
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      protocolType: result.protocolType,
      protocolName: result.protocolName,
      assignment: result.assignment,
    };
  },
});
