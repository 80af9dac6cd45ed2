// ListGroups (key 16), v0-4: every group this node coordinates. v4 (KIP-518) filters by state,
// case-insensitively; an empty filter means all. The group state is answered from v4.
//
// Kafka lists every group in its group metadata cache, and a simple consumer's (or an admin's)
// offset commit creates an Empty group there (GroupCoordinator.handleCommitOffsets). Our
// coordinator only holds groups that had members, so groups known only by committed offsets are
// added here as Empty with no protocol type, as Kafka would list them. A SASL user sees only the
// groups it may use (../access.ts, mayUseGroup), as Kafka lists only groups the user may describe.

import type { Broker } from '../../../core/broker.js';
import { kafkaAccessOf, mayUseGroup } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaOffsetScope } from './offset-commit.js';
import { defineHandler } from './types.js';

/** Group ids that have committed offsets (Kafka's Empty groups created by commits alone). */
export async function groupsWithOffsets(broker: Broker): Promise<Set<string>> {
  return new Set(await broker.offsets.listGroups(kafkaOffsetScope));
}

export const listGroupsHandler = defineHandler({
  apiKey: ApiKey.ListGroups,
  minVersion: 0,
  maxVersion: 4,
  async handle(request, { frontend, session, version }) {
    const statesFilter = version >= 4 ? request.statesFilter : [];
    const listed = frontend.groups.listGroups(statesFilter);
    if (listed.errorCode !== ErrorCode.NONE) return { throttleTimeMs: 0, errorCode: listed.errorCode, groups: [] };
    const groups = listed.groups.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.groupState as string }));
    const wantsEmpty = statesFilter.length === 0 || statesFilter.some((s) => s.toLowerCase() === 'empty');
    if (wantsEmpty) {
      try {
        const known = new Set(frontend.groups.listGroups().groups.map((g) => g.groupId));
        for (const groupId of await groupsWithOffsets(frontend.broker)) {
          if (!known.has(groupId)) groups.push({ groupId, protocolType: '', groupState: 'Empty' });
        }
      } catch (error) {
        session.logger.warn('listing groups with committed offsets failed', { error });
        return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] };
      }
    }
    const access = kafkaAccessOf(frontend, session);
    if (!access.restricted) return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, groups };
    const visible = [];
    for (const g of groups) if (await mayUseGroup(frontend, access, g.groupId)) visible.push(g);
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, groups: visible };
  },
});
