// CreateAcls (key 30), v0-3. Grammar: codec/messages/acls.ts.
//
// Each creation becomes grant flags of a Quartet user (../acls.ts has the mapping and what is
// refused: DENY, hosts other than `*`, patterns and operations Quartet cannot express, unknown
// principals), one result per creation in request order: INVALID_REQUEST (42) with the reason
// for a refused binding. The changed users' grants are stored at the end (core users store);
// a failed write fails every creation that needed it. Kafka needs ALTER on the cluster; in
// Quartet creating ACLs changes users, so manage_users (else CLUSTER_AUTHORIZATION_FAILED, 31),
// and a restricted user may grant only rights it holds itself (core/access.ts rightNotHeld).

import { grantsOf, rightNotHeld, type Grants } from '../../../core/access.js';
import type { User } from '../../../core/users.js';
import { kafkaAccessOf } from '../access.js';
import { emptyGrants, impliesDescribe, meaningOf, principalUser, setFlags, type AclMeaning } from '../acls.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaCodeOf } from '../errors.js';
import { defineHandler } from './types.js';

type Result = { errorCode: number; errorMessage: string | null };
const ok: Result = { errorCode: 0, errorMessage: null };

export const createAclsHandler = defineHandler({
  apiKey: ApiKey.CreateAcls,
  minVersion: 0,
  maxVersion: 3,
  async handle(request, { frontend, session }) {
    const access = kafkaAccessOf(frontend, session);
    if (!access.cluster('alterUsers')) return { throttleTimeMs: 0, results: request.creations.map(() => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.' })) };
    const granter = access.restricted ? frontend.broker.users.get(session.principalUserId ?? -1) : null;
    const edited = new Map<number, { user: User; grants: Grants; added: Grants }>();
    const results: Result[] = [];
    const pendingDescribes: Array<{ index: number; user: User; meaning: Extract<AclMeaning, { kind: 'implied' }> }> = [];
    const userIndexes = new Map<number, number[]>();
    for (const [index, creation] of request.creations.entries()) {
      const user = principalUser(frontend, creation.principal);
      const meaning = meaningOf(frontend, { ...creation, patternType: creation.resourcePatternType });
      if (typeof user === 'string') results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: user });
      else if (meaning.kind === 'refused') results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: meaning.message });
      else {
        results.push(ok);
        if (meaning.kind === 'implied') pendingDescribes.push({ index, user, meaning });
        if (meaning.kind !== 'grant') continue;
        const entry = edited.get(user.id) ?? { user, grants: structuredClone(grantsOf(user) ?? emptyGrants()), added: emptyGrants() };
        setFlags(entry.grants, meaning.scope, meaning.flags, true);
        setFlags(entry.added, meaning.scope, meaning.flags, true);
        edited.set(user.id, entry);
        userIndexes.set(user.id, [...(userIndexes.get(user.id) ?? []), index]);
      }
    }
    // DESCRIBE stands only where READ, WRITE or DESCRIBE_CONFIGS (now) imply it.
    for (const d of pendingDescribes) {
      const grants = edited.get(d.user.id)?.grants ?? grantsOf(d.user) ?? emptyGrants();
      if (!impliesDescribe(d.user, grants, d.meaning.scope)) {
        results[d.index] = { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Quartet has no DESCRIBE-only grant: create READ, WRITE or DESCRIBE_CONFIGS on this pattern, which imply DESCRIBE' };
      }
    }
    for (const { user, grants, added } of edited.values()) {
      const fail = (r: Result) => {
        for (const i of userIndexes.get(user.id) ?? []) results[i] = r;
      };
      const notHeld = !access.restricted ? null : granter === null ? 'every right' : rightNotHeld(granter, added);
      if (notHeld !== null) {
        fail({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: `A user may grant only rights it holds; not held: ${notHeld}` });
        continue;
      }
      try {
        await frontend.broker.users.setPermissions(user.id, grants);
        frontend.logger.info('granted rights through Kafka ACLs', { user: user.username });
      } catch (err) {
        fail({ errorCode: kafkaCodeOf(err), errorMessage: err instanceof Error ? err.message : String(err) });
      }
    }
    return { throttleTimeMs: 0, results };
  },
  errorResponse(request, errorCode) {
    return { throttleTimeMs: 0, results: request.creations.map(() => ({ errorCode, errorMessage: null })) };
  },
});
