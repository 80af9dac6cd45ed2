// Kafka's client quota entities as the core's (core/client-quotas.ts): a list of
// (entity_type, entity_name) with types `user` and `client-id`, a null name being the default
// for that type. Shared by DescribeClientQuotas and AlterClientQuotas.

import type { QuotaEntity } from '../../core/client-quotas.js';

export const EntityType = { USER: 'user', CLIENT_ID: 'client-id', IP: 'ip' } as const;

/** The core entity, or why the parts are refused (Kafka: INVALID_REQUEST). */
export function quotaEntityOf(parts: ReadonlyArray<{ entityType: string; entityName: string | null }>): QuotaEntity | string {
  if (parts.length === 0) return 'Invalid empty client quota entity';
  const entity: QuotaEntity = {};
  for (const p of parts) {
    if (p.entityType === EntityType.IP) return 'Quartet has no per-IP quotas (connection_creation_rate)';
    if (p.entityType !== EntityType.USER && p.entityType !== EntityType.CLIENT_ID) return `Unhandled client quota entity type: ${p.entityType}`;
    const field = p.entityType === EntityType.USER ? 'user' : 'clientId';
    if (entity[field] !== undefined) return `Duplicate entity type: ${p.entityType}`;
    entity[field] = p.entityName;
  }
  return entity;
}

/** The Kafka parts of a core entity: user first, then client-id. */
export function entityParts(e: QuotaEntity): Array<{ entityType: string; entityName: string | null }> {
  const parts: Array<{ entityType: string; entityName: string | null }> = [];
  if (e.user !== undefined) parts.push({ entityType: EntityType.USER, entityName: e.user });
  if (e.clientId !== undefined) parts.push({ entityType: EntityType.CLIENT_ID, entityName: e.clientId });
  return parts;
}
