// The Cursus part of each topic's definition that the core topic config does not hold (revision,
// lifecycle epoch, idempotent, event sourcing, aggregate replay, partitioner, auth policy and ACLs,
// replication factor, min_in_sync_replicas), kept in the core topic options store under protocol
// `cursus` (the metadata store's topic_options table), one table per broker. Partitions, cleanup
// policy and retention live in the core topic (partition count, cleanup.policy, retention.ms,
// retention.bytes) and are read from it, so a change made by any protocol shows.
//
// It is looked after whether or not the Cursus listener is open (src/server/listeners.ts
// builtinBrokerWatchers): the definition of a deleted topic goes with it, so a topic created again
// under the same name starts at revision 1. A topic Cursus never stored has the defaults.

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { ProtocolTopicTable, protocolTopicTableOf } from '../../core/protocol-topic-table.js';

export const cursusTopicOptionsProtocol = 'cursus';

export type CursusPartitioner = 'hash_key' | 'round_robin';
export type CursusAuthPolicy = 'open' | 'deny_write' | 'deny_read' | 'acl';

export const partitioners: readonly CursusPartitioner[] = ['hash_key', 'round_robin'];
export const authPolicies: readonly CursusAuthPolicy[] = ['open', 'deny_write', 'deny_read', 'acl'];

/** What Cursus stores for a topic (JSON as it is). */
export interface StoredCursusTopic {
  readonly revision: number;
  readonly lifecycleEpoch: number;
  readonly idempotent: boolean;
  readonly eventSourcing: boolean;
  readonly aggregateReplay: boolean;
  readonly partitioner: CursusPartitioner;
  readonly authPolicy: CursusAuthPolicy;
  readonly readAcl: readonly string[];
  readonly writeAcl: readonly string[];
  readonly replicationFactor: number;
  /** null: the broker's fallback applies. */
  readonly minInSyncReplicas: number | null;
}

/** A topic's definition before anything was stored (made by Kafka or Iggy, or new). */
export const defaultStoredTopic: StoredCursusTopic = Object.freeze({
  revision: 1,
  lifecycleEpoch: 0,
  idempotent: false,
  eventSourcing: false,
  aggregateReplay: false,
  partitioner: 'hash_key',
  authPolicy: 'open',
  readAcl: [],
  writeAcl: [],
  replicationFactor: 1,
  minInSyncReplicas: null,
});

const isCount = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const isNames = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0);

/** The stored value, or null when it is not one this version wrote (it is then dropped). */
export function deserializeStoredTopic(raw: unknown): StoredCursusTopic | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const ok =
    isCount(r.revision, 1) &&
    isCount(r.lifecycleEpoch, 0) &&
    typeof r.idempotent === 'boolean' &&
    typeof r.eventSourcing === 'boolean' &&
    typeof r.aggregateReplay === 'boolean' &&
    partitioners.includes(r.partitioner as CursusPartitioner) &&
    authPolicies.includes(r.authPolicy as CursusAuthPolicy) &&
    isNames(r.readAcl) &&
    isNames(r.writeAcl) &&
    isCount(r.replicationFactor, 1) &&
    (r.minInSyncReplicas === null || isCount(r.minInSyncReplicas, 1));
  if (!ok) return null;
  return {
    revision: r.revision as number,
    lifecycleEpoch: r.lifecycleEpoch as number,
    idempotent: r.idempotent as boolean,
    eventSourcing: r.eventSourcing as boolean,
    aggregateReplay: r.aggregateReplay as boolean,
    partitioner: r.partitioner as CursusPartitioner,
    authPolicy: r.authPolicy as CursusAuthPolicy,
    readAcl: r.readAcl as string[],
    writeAcl: r.writeAcl as string[],
    replicationFactor: r.replicationFactor as number,
    minInSyncReplicas: r.minInSyncReplicas as number | null,
  };
}

export class CursusTopicTable extends ProtocolTopicTable<StoredCursusTopic> {
  constructor(broker: Broker) {
    super(broker, { protocol: cursusTopicOptionsProtocol, deserialize: deserializeStoredTopic });
  }

  /** What Cursus stored for the topic, else the defaults. */
  storedOf(topic: Topic): StoredCursusTopic {
    return this.get(topic) ?? defaultStoredTopic;
  }
}

/** The broker's table (made on first use; `watch()` it before reading). */
export function cursusTopicTableOf(broker: Broker): CursusTopicTable {
  return protocolTopicTableOf(broker, cursusTopicOptionsProtocol, () => new CursusTopicTable(broker));
}

/** The server's broker watcher: drops the Cursus definitions of deleted topics whatever listeners are open. */
export function watchCursusTopics(broker: Broker): Promise<void> {
  return cursusTopicTableOf(broker).watch();
}
