// DeleteGroups (key 42), v0-2: deletes Empty groups and their committed offsets
// (GroupCoordinator.handleDeleteGroups). A group with members answers NON_EMPTY_GROUP; an unknown
// group GROUP_ID_NOT_FOUND. A group known only by its committed offsets is an Empty group in
// Kafka (see list-groups.ts), so deleting it drops the offsets and answers NONE.

import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaOffsetScope, offsetStoreFailureCode } from './offset-commit.js';
import { defineHandler } from './types.js';

export const deleteGroupsHandler = defineHandler({
  apiKey: ApiKey.DeleteGroups,
  minVersion: 0,
  maxVersion: 2,
  errorResponse(request, errorCode) {
    return { throttleTimeMs: 0, results: request.groupsNames.map((groupId) => ({ groupId, errorCode })) };
  },
  async handle(request, { frontend, session }) {
    const results = [];
    for (const groupId of request.groupsNames) {
      let errorCode: number = frontend.groups.deleteGroups([groupId])[0]!.errorCode;
      if (errorCode === ErrorCode.NONE || errorCode === ErrorCode.GROUP_ID_NOT_FOUND) {
        try {
          const removed = await frontend.broker.offsets.deleteGroup(kafkaOffsetScope, groupId);
          if (removed > 0) errorCode = ErrorCode.NONE;
        } catch (error) {
          session.logger.warn('deleting committed offsets failed', { groupId, error });
          errorCode = offsetStoreFailureCode(error);
        }
      }
      results.push({ groupId, errorCode });
    }
    return { throttleTimeMs: 0, results };
  },
});
