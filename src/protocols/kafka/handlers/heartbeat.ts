// Heartbeat (key 12), v0-4: keeps a member's session alive and tells it about rebalances
// (REBALANCE_IN_PROGRESS while the group prepares one). v3+ carries group.instance.id.
// The checks are the coordinator's (GroupCoordinator.handleHeartbeat in apache/kafka).

import { ApiKey } from '../codec/api-keys.js';
import { defineHandler } from './types.js';

export const heartbeatHandler = defineHandler({
  apiKey: ApiKey.Heartbeat,
  minVersion: 0,
  maxVersion: 4,
  handle(request, { frontend, version }) {
    const errorCode = frontend.groups.heartbeat({
      groupId: request.groupId,
      generationId: request.generationId,
      memberId: request.memberId,
      groupInstanceId: version >= 3 ? request.groupInstanceId : null,
    });
    return { throttleTimeMs: 0, errorCode };
  },
});
