// DescribeAcls (key 29), v0-3. Grammar: codec/messages/acls.ts.
//
// The bindings that stand for every user's grants (../acls.ts; root is not listed: it may do
// everything), those the filter matches (Kafka's AclBindingFilter.matches), grouped by resource
// pattern. A filter with UNKNOWN elements → INVALID_REQUEST. Kafka needs DESCRIBE on the cluster;
// in Quartet ACLs are users' grants, so reading them needs read_users (../access.ts), else
// CLUSTER_AUTHORIZATION_FAILED (31) at the top level.

import { grantsOf } from '../../../core/access.js';
import { kafkaAccessOf } from '../access.js';
import { bindingsOf, filterMatches, filterProblem, type AclBinding } from '../acls.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { defineHandler, type KafkaFrontend } from './types.js';

/** Every user's bindings (root excepted). */
export function allBindings(frontend: KafkaFrontend): AclBinding[] {
  const out: AclBinding[] = [];
  for (const user of frontend.broker.users.list()) {
    const grants = user.root ? null : grantsOf(user);
    if (grants !== null) out.push(...bindingsOf(frontend, user, grants));
  }
  return out;
}

export const describeAclsHandler = defineHandler({
  apiKey: ApiKey.DescribeAcls,
  minVersion: 0,
  maxVersion: 3,
  handle(request, { frontend, session }) {
    if (!kafkaAccessOf(frontend, session).cluster('describeUsers')) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.', resources: [] };
    }
    const problem = filterProblem(request);
    if (problem !== null) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: problem, resources: [] };
    const resources = new Map<string, { resourceType: number; resourceName: string; patternType: number; acls: Array<{ principal: string; host: string; operation: number; permissionType: number }> }>();
    for (const b of allBindings(frontend).filter((b) => filterMatches(request, b))) {
      const key = `${b.resourceType}|${b.patternType}|${b.resourceName}`;
      let r = resources.get(key);
      if (r === undefined) {
        r = { resourceType: b.resourceType, resourceName: b.resourceName, patternType: b.patternType, acls: [] };
        resources.set(key, r);
      }
      r.acls.push({ principal: b.principal, host: b.host, operation: b.operation, permissionType: b.permissionType });
    }
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, resources: [...resources.values()] };
  },
  errorResponse(_request, errorCode) {
    return { throttleTimeMs: 0, errorCode, errorMessage: null, resources: [] };
  },
});
