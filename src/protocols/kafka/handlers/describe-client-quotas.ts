// DescribeClientQuotas (key 48), v0-1. Grammar: codec/messages/client-quotas.ts.
//
// The quota entities of the core store (core/client-quotas.ts) that match every component, as
// Kafka's ClientQuotaControlManager.describeClientQuotas: match type EXACT (0, the named entity;
// a null name is the default), DEFAULT (1) or ANY (2) for an entity type; with `strict`, entities
// with types beyond the components' are left out. An unknown entity or match type, or a type
// named twice → INVALID_REQUEST at the top level. Kafka needs DESCRIBE_CONFIGS on the cluster:
// read_servers (../access.ts), else CLUSTER_AUTHORIZATION_FAILED (31).

import type { QuotaEntity } from '../../../core/client-quotas.js';
import { kafkaAccessOf } from '../access.js';
import { EntityType, entityParts } from '../client-quota-entities.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { DescribeClientQuotasRequest } from '../codec/messages/client-quotas.js';
import { defineHandler } from './types.js';

const MatchType = { EXACT: 0, DEFAULT: 1, ANY: 2 } as const;
type Component = DescribeClientQuotasRequest['components'][number];

function fieldOf(entityType: string): 'user' | 'clientId' | null {
  return entityType === EntityType.USER ? 'user' : entityType === EntityType.CLIENT_ID ? 'clientId' : null;
}

function componentsProblem(components: readonly Component[]): string | null {
  const seen = new Set<string>();
  for (const c of components) {
    if (fieldOf(c.entityType) === null) return `Custom entity type '${c.entityType}' not supported`;
    if (seen.has(c.entityType)) return `Entity type ${c.entityType} cannot appear more than once in the filter.`;
    seen.add(c.entityType);
    if (c.matchType !== MatchType.EXACT && c.matchType !== MatchType.DEFAULT && c.matchType !== MatchType.ANY) return `Unknown match type ${c.matchType}`;
  }
  return null;
}

function matches(entity: QuotaEntity, components: readonly Component[], strict: boolean): boolean {
  for (const c of components) {
    const value = entity[fieldOf(c.entityType)!];
    if (value === undefined) return false;
    if (c.matchType === MatchType.EXACT && value !== c.match) return false;
    if (c.matchType === MatchType.DEFAULT && value !== null) return false;
  }
  if (!strict) return true;
  const named = new Set(components.map((c) => fieldOf(c.entityType)));
  return (['user', 'clientId'] as const).every((k) => entity[k] === undefined || named.has(k));
}

export const describeClientQuotasHandler = defineHandler({
  apiKey: ApiKey.DescribeClientQuotas,
  minVersion: 0,
  maxVersion: 1,
  handle(request, { frontend, session }) {
    if (!kafkaAccessOf(frontend, session).cluster('describeConfigs')) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.', entries: null };
    }
    const problem = componentsProblem(request.components);
    if (problem !== null) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: problem, entries: null };
    const entries = frontend.broker.clientQuotas
      .list()
      .filter((q) => matches(q.entity, request.components, request.strict))
      .map((q) => ({ entity: entityParts(q.entity), values: Object.entries(q.values).map(([key, value]) => ({ key, value: value! })) }));
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, entries };
  },
  errorResponse(_request, errorCode) {
    return { throttleTimeMs: 0, errorCode, errorMessage: null, entries: null };
  },
});
