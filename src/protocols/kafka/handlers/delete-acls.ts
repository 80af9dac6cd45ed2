// DeleteAcls (key 31), v0-3. Grammar: codec/messages/acls.ts.
//
// Each filter matches the bindings that stand for the users' grants (./describe-acls.ts), and the
// grant flags behind every matching binding are cleared (../acls.ts). One filter result per filter,
// listing the bindings it removed; a filter with UNKNOWN elements → INVALID_REQUEST. A right that
// another grant still implies (e.g. READ on a topic under a stream-wide READ) stays in effect, as
// the wider binding still shows. Needs manage_users (Kafka: ALTER on the cluster), else
// CLUSTER_AUTHORIZATION_FAILED (31) per filter.

import { grantsOf, type Grants } from '../../../core/access.js';
import type { User } from '../../../core/users.js';
import { kafkaAccessOf } from '../access.js';
import { filterMatches, filterProblem, grantOfBinding, setFlags, type AclBinding } from '../acls.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { kafkaCodeOf } from '../errors.js';
import { allBindings } from './describe-acls.js';
import { defineHandler } from './types.js';

type Matching = AclBinding & { errorCode: number; errorMessage: string | null };

export const deleteAclsHandler = defineHandler({
  apiKey: ApiKey.DeleteAcls,
  minVersion: 0,
  maxVersion: 3,
  async handle(request, { frontend, session }) {
    const access = kafkaAccessOf(frontend, session);
    if (!access.cluster('alterUsers')) {
      return { throttleTimeMs: 0, filterResults: request.filters.map(() => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.', matchingAcls: [] })) };
    }
    const bindings = allBindings(frontend);
    const edited = new Map<number, { user: User; grants: Grants; matched: Matching[] }>();
    const filterResults = request.filters.map((filter) => {
      const problem = filterProblem(filter);
      if (problem !== null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: problem, matchingAcls: [] as Matching[] };
      const matchingAcls: Matching[] = [];
      for (const b of bindings.filter((x) => filterMatches(filter, x))) {
        const user = frontend.broker.users.get(b.principal.slice('User:'.length));
        const grant = grantOfBinding(frontend, b);
        if (user === null || grant === null) continue;
        const entry = edited.get(user.id) ?? { user, grants: structuredClone(grantsOf(user)!), matched: [] };
        setFlags(entry.grants, grant.scope, grant.flags, false);
        const m: Matching = { ...b, errorCode: 0, errorMessage: null };
        entry.matched.push(m);
        edited.set(user.id, entry);
        matchingAcls.push(m);
      }
      return { errorCode: 0, errorMessage: null, matchingAcls };
    });
    for (const { user, grants, matched } of edited.values()) {
      try {
        await frontend.broker.users.setPermissions(user.id, grants);
        frontend.logger.info('removed rights through Kafka ACLs', { user: user.username, bindings: matched.length });
      } catch (err) {
        for (const m of matched) Object.assign(m, { errorCode: kafkaCodeOf(err), errorMessage: err instanceof Error ? err.message : String(err) });
      }
    }
    return { throttleTimeMs: 0, filterResults };
  },
  errorResponse(request, errorCode) {
    return { throttleTimeMs: 0, filterResults: request.filters.map(() => ({ errorCode, errorMessage: null, matchingAcls: [] })) };
  },
});
