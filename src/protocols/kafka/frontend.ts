// The Kafka front-end's shared state, one per listener: the broker, settings, the group
// coordinator (persisted in the broker's group store under scope 'kafka'), fetch long-poll
// waiters, the cluster id and the advertised address. Connections (connection.ts) hold a
// reference to it and hand it to every handler as `context.frontend`.

import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Broker } from '../../core/broker.js';
import { systemClock, type Clock } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';
import assert from 'node:assert/strict';
import { BatchFormat } from '../../base/batch.js';
import { GroupCoordinator, type GroupCoordinatorConfig, type GroupSnapshot } from './coordinator/group-coordinator.js';
import { systemScheduler, type Scheduler } from '../../core/scheduler.js';
import { AppendWaiters, appendWaitersMaxDefault } from '../../core/append-waiters.js';
import { kafkaHandlers } from './handlers/index.js';
import { kafkaTransactionHooks } from './transactions.js';
import type { LiveGroupMember } from '../../core/groups/directory.js';
import { KafkaError } from './coordinator/kafka-errors.js';
import { QuartetError } from '../../base/errors.js';
import type { KafkaFrontend, KafkaHandler, KafkaSettings, KafkaTransactionHooks } from './handlers/types.js';

/** The group store scope of Kafka classic groups. */
export const kafkaGroupScope = 'kafka';
/** File (in the data directory) holding the Kafka cluster id. */
export const clusterIdFileName = 'kafka-cluster-id';

export const defaultKafkaSettings: Readonly<KafkaSettings> = Object.freeze({
  autoCreateTopics: true,
  defaultPartitions: 1,
  // Kafka's socket.request.max.bytes default (100 MiB).
  requestBytesMax: 100 * 1024 * 1024,
  inFlightRequestsMax: 64,
  saslRequired: false,
  saslMechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'],
  // Kafka has no cap on max_wait_ms; clients send 500 ms (librdkafka, kafkajs 5 s at most).
  fetchWaitMsMax: 30_000,
  fetchWaitersMax: appendWaitersMaxDefault,
  // Kafka's fetch.max.bytes default (55 MiB... the broker's is 50 MiB).
  fetchResponseBytesMax: 50 * 1024 * 1024,
  // Well under the clients' request timeouts (30 s in librdkafka and KafkaJS).
  purgeWaitMsMax: 10_000,
});

export interface KafkaFrontendOptions {
  broker: Broker;
  logger: Logger;
  settings?: Partial<KafkaSettings>;
  /** Configured advertised address; null derives it from the bound one. */
  advertisedAddr?: { host: string; port: number } | null;
  /** The handler registry (default: handlers/index.ts). Tests pass their own. */
  handlers?: readonly KafkaHandler[];
  clock?: Clock;
  scheduler?: Scheduler;
  groupConfig?: Partial<GroupCoordinatorConfig>;
  /** Fixed cluster id (tests); by default read from or written to the data directory. */
  clusterId?: string;
  /** Keep group state in memory only (tests with a memory broker need not persist). */
  persistGroups?: boolean;
}


export class KafkaBrokerFrontend implements KafkaFrontend {
  readonly broker: Broker;
  readonly groups: GroupCoordinator;
  readonly logger: Logger;
  readonly settings: KafkaSettings;
  readonly fetchWaiters: AppendWaiters;
  readonly handlers: ReadonlyMap<number, KafkaHandler>;
  readonly clock: Clock;
  /** The transaction coordinator's view for Produce, Fetch and ListOffsets (read_committed). */
  transactions: KafkaTransactionHooks;
  private cluster: string;
  private bound: { host: string; port: number } | null = null;
  private readonly configuredAdvertised: { host: string; port: number } | null;
  private readonly persistGroups: boolean;
  private unregisterLiveGroups: (() => void) | null = null;
  /** Per group, the chain of pending saves: saves of one group land in order. */
  private readonly groupSaves = new Map<string, Promise<void>>();

  /** This broker's node id: the core's (replication.ts), not the front-end's own. */
  get nodeId(): number {
    return this.broker.replication.nodeId;
  }

  constructor(options: KafkaFrontendOptions) {
    // Kafka batches are read by other protocols and compacted: the broker must know their format.
    assert.ok(options.broker.formats.has(BatchFormat.kafka), 'the broker was built without the Kafka batch format (BrokerOptions.formats: builtinFormats() of src/server/listeners.ts)');
    this.broker = options.broker;
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.settings = { ...defaultKafkaSettings, defaultPartitions: options.broker.defaultPartitions, ...options.settings };
    this.fetchWaiters = new AppendWaiters(this.settings.fetchWaitersMax ?? appendWaitersMaxDefault);
    this.configuredAdvertised = options.advertisedAddr ?? null;
    this.cluster = options.clusterId ?? '';
    this.persistGroups = options.persistGroups ?? true;
    this.transactions = kafkaTransactionHooks(options.broker);
    const map = new Map<number, KafkaHandler>();
    for (const h of options.handlers ?? kafkaHandlers) {
      if (map.has(h.apiKey)) throw new Error(`two Kafka handlers for API key ${h.apiKey}`);
      map.set(h.apiKey, h);
    }
    this.handlers = map;
    this.groups = new GroupCoordinator({
      clock: options.clock ?? systemClock,
      scheduler: options.scheduler ?? systemScheduler,
      logger: options.logger.child({ component: 'kafka-groups' }),
      events: options.broker.groupEvents,
      ...(options.groupConfig ? { config: options.groupConfig } : {}),
      persist: (groupId, snapshot) => this.persistGroup(groupId, snapshot),
    });
  }

  get clusterId(): string {
    return this.cluster;
  }

  /** Loads the cluster id and the persisted groups. Call once, before accepting connections. */
  async start(): Promise<void> {
    if (this.cluster === '') this.cluster = await loadOrCreateClusterId(this.broker.dataDir);
    // Admin tools (the HTTP admin API) ask who is in a group now.
    this.unregisterLiveGroups ??= this.broker.liveGroups.register(kafkaGroupScope, {
      membersOf: (groupId) => this.liveMembers(groupId),
      deleteGroup: async (groupId) => {
        if (this.groups.deleteGroups([groupId])[0]!.errorCode === KafkaError.NON_EMPTY_GROUP) throw new QuartetError('group_not_empty', `group '${groupId}' has active members`);
        await this.groupSaves.get(groupId);
      },
    });
    if (!this.persistGroups) return;
    const stored = await this.broker.groups.list(kafkaGroupScope);
    const snapshots: GroupSnapshot[] = [];
    for (const g of stored) {
      try {
        snapshots.push(revive(g.state) as GroupSnapshot);
      } catch (error) {
        this.logger.warn('skipping an unreadable stored group', { groupId: g.groupId, error });
      }
    }
    this.groups.restore(snapshots);
    if (snapshots.length > 0) this.logger.info('restored Kafka groups', { groups: snapshots.length });
  }

  /** Records the bound address (the advertised one derives from it unless configured). */
  setBoundAddress(address: { host: string; port: number }): void {
    this.bound = address;
  }

  advertised(): { host: string; port: number } {
    if (this.configuredAdvertised) return this.configuredAdvertised;
    const b = this.bound ?? { host: '127.0.0.1', port: 9092 };
    const wildcard = b.host === '0.0.0.0' || b.host === '::' || b.host === '';
    return { host: wildcard ? '127.0.0.1' : b.host, port: b.port };
  }

  /** Stops the coordinator, wakes fetch waiters, and waits for pending group saves. */
  async close(): Promise<void> {
    this.unregisterLiveGroups?.();
    this.unregisterLiveGroups = null;
    this.fetchWaiters.close();
    this.groups.close();
    await Promise.allSettled([...this.groupSaves.values()]);
  }

  private liveMembers(groupId: string): LiveGroupMember[] | null {
    const described = this.groups.describeGroup(groupId);
    if (described.groupState === 'Dead') return null;
    return described.members.map((m) => ({ memberId: m.memberId, clientId: m.clientId, clientHost: m.clientHost, partitions: null }));
  }

  private persistGroup(groupId: string, snapshot: GroupSnapshot | null): void {
    if (!this.persistGroups) return;
    const state = snapshot === null ? null : bury(snapshot);
    const previous = this.groupSaves.get(groupId) ?? Promise.resolve();
    const next = previous
      .then(() => (state === null ? this.broker.groups.delete(kafkaGroupScope, groupId).then(() => undefined) : this.broker.groups.save(kafkaGroupScope, groupId, state)))
      .catch((error: unknown) => this.logger.error('saving a Kafka group failed', { groupId, error }));
    this.groupSaves.set(groupId, next);
    void next.then(() => {
      if (this.groupSaves.get(groupId) === next) this.groupSaves.delete(groupId);
    });
  }
}

/** The cluster id: 22 characters of URL-safe base64 (as Kafka's Uuid.toString), kept in the data directory. */
export async function loadOrCreateClusterId(dataDir: string): Promise<string> {
  const file = join(dataDir, clusterIdFileName);
  try {
    const text = (await readFile(file, 'utf8')).trim();
    if (text.length > 0) return text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = randomBytes(16).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${id}\n`);
  await rename(tmp, file);
  return id;
}

// Group snapshots hold Buffers (member metadata, assignments); the group store keeps JSON.
function bury(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return { $b64: value.toString('base64') };
  if (Array.isArray(value)) return value.map(bury);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = bury(v);
    return out;
  }
  return value;
}

function revive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revive);
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if (typeof obj.$b64 === 'string' && Object.keys(obj).length === 1) return Buffer.from(obj.$b64, 'base64');
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) out[k] = revive(v);
    return out;
  }
  return value;
}
