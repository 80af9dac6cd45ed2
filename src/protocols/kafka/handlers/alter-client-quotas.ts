// AlterClientQuotas (key 49), v0-1. Grammar: codec/messages/client-quotas.ts.
//
// Sets or removes quota values of user / client-id entities in the core's quota store
// (core/client-quotas.ts), enforced on Produce and Fetch (../quotas.ts). Per entry, as Kafka's
// ClientQuotaControlManager: an empty entity, an unknown or repeated entity type, a key that is
// not producer_byte_rate, consumer_byte_rate or request_percentage, a key twice, or a value that
// is not positive (or not an integer for the byte rates) → INVALID_REQUEST (42) with the reason;
// nothing of that entry is applied. Quartet has no `ip` entities (connection_creation_rate) and
// no controller_mutation_rate. validate_only checks and changes nothing. Kafka needs ALTER_CONFIGS
// on the cluster: manage_servers (../access.ts), else CLUSTER_AUTHORIZATION_FAILED (31) per entry.

import { isQuotaKey, quotaValueProblem, type QuotaKey } from '../../../core/client-quotas.js';
import { kafkaAccessOf } from '../access.js';
import { quotaEntityOf } from '../client-quota-entities.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { AlterClientQuotasRequest } from '../codec/messages/client-quotas.js';
import { kafkaCodeOf } from '../errors.js';
import { defineHandler } from './types.js';

type Ops = AlterClientQuotasRequest['entries'][number]['ops'];

/** The changes the ops make, or why they are refused. */
function changesOf(ops: Ops): Array<{ key: QuotaKey; value: number | null }> | string {
  const seen = new Set<string>();
  const changes: Array<{ key: QuotaKey; value: number | null }> = [];
  for (const op of ops) {
    if (seen.has(op.key)) return `Duplicate quota key: ${op.key}`;
    seen.add(op.key);
    if (!isQuotaKey(op.key)) return `Invalid configuration key ${op.key}`;
    if (!op.remove) {
      const problem = quotaValueProblem(op.key, op.value);
      if (problem !== null) return problem;
    }
    changes.push({ key: op.key, value: op.remove ? null : op.value });
  }
  return changes;
}

export const alterClientQuotasHandler = defineHandler({
  apiKey: ApiKey.AlterClientQuotas,
  minVersion: 0,
  maxVersion: 1,
  async handle(request, { frontend, session }) {
    const allowed = kafkaAccessOf(frontend, session).cluster('alterConfigs');
    const entries = [];
    for (const entry of request.entries) {
      const answer = (errorCode: number, errorMessage: string | null) => ({ errorCode, errorMessage, entity: entry.entity });
      if (!allowed) {
        entries.push(answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Authorization failed.'));
        continue;
      }
      const entity = quotaEntityOf(entry.entity);
      const changes = changesOf(entry.ops);
      if (typeof entity === 'string' || typeof changes === 'string') {
        entries.push(answer(ErrorCode.INVALID_REQUEST, typeof entity === 'string' ? entity : (changes as string)));
        continue;
      }
      if (request.validateOnly || changes.length === 0) {
        entries.push(answer(0, null));
        continue;
      }
      try {
        await frontend.broker.clientQuotas.alter(entity, changes);
        frontend.logger.info('altered client quotas', { entity, changes });
        entries.push(answer(0, null));
      } catch (err) {
        entries.push(answer(kafkaCodeOf(err), err instanceof Error ? err.message : String(err)));
      }
    }
    return { throttleTimeMs: 0, entries };
  },
  errorResponse(request, errorCode) {
    return { throttleTimeMs: 0, entries: request.entries.map((e) => ({ errorCode, errorMessage: null, entity: e.entity })) };
  },
});
