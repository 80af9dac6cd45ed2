// DeleteGroups (key 42), v0-2: deletes Empty groups and their committed offsets
// (GroupCoordinator.handleDeleteGroups). A group with members answers NON_EMPTY_GROUP; an unknown
// group GROUP_ID_NOT_FOUND. A group known only by its committed offsets is an Empty group in
// Kafka (see list-groups.ts), so deleting it drops the offsets and answers NONE.
// Authorization (../access.ts, mayUseGroup): Kafka groups have no Iggy grant, so deleting one takes
// what using it takes: a SASL user that may not read (poll_messages) one of the topics the group
// involves (committed offsets, members' subscriptions) gets GROUP_AUTHORIZATION_FAILED (30) and the
// group stays.

import { kafkaAccessOf, mayUseGroup } from '../access.js';
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
    const access = kafkaAccessOf(frontend, session);
    const results = [];
    for (const groupId of request.groupsNames) {
      if (access.restricted && !(await mayUseGroup(frontend, access, groupId))) {
        results.push({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
        continue;
      }
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
