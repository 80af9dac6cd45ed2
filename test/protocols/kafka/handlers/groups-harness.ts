// A Kafka front-end around an in-memory Broker with a manual clock and scheduler, for the group
// and committed-offset handler tests. `call` takes a request as a client would write it, encodes
// and decodes it at the given version (so fields a version lacks take their defaults, exactly as
// the connection hands them over), runs the handler, and round-trips the answer through the
// response codec at the same version (so an answer the version cannot carry fails the test).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../../../src/core/broker.js';
import { ManualClock } from '../../../../src/base/clock.js';
import { silentLogger, type Logger } from '../../../../src/base/logger.js';
import { askHandler } from './call-handler.js';
import type { RequestInputOf, ResponseOf, SchemaApiKey } from '../../../../src/protocols/kafka/codec/messages/index.js';
import type { GroupCoordinatorConfig } from '../../../../src/protocols/kafka/coordinator/group-coordinator.js';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { KafkaBrokerFrontend } from '../../../../src/protocols/kafka/frontend.js';
import { joinGroupHandler } from '../../../../src/protocols/kafka/handlers/join-group.js';
import { syncGroupHandler } from '../../../../src/protocols/kafka/handlers/sync-group.js';
import type { KafkaHandler, KafkaSession } from '../../../../src/protocols/kafka/handlers/types.js';
import { builtinFormats } from '../../../../src/server/listeners.js';

export const initialRebalanceDelayMs = 300;

export interface GroupsHarness {
  broker: Broker;
  frontend: KafkaBrokerFrontend;
  clock: ManualClock;
  scheduler: ManualScheduler;
  session: KafkaSession;
  call<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, request: RequestInputOf<K>, clientId?: string | null): Promise<ResponseOf<K>>;
}

export async function groupsHarness(
  t: { after(fn: () => Promise<void> | void): void },
  options: { topics?: Record<string, number>; groupConfig?: Partial<GroupCoordinatorConfig>; remote?: string; brokerLogger?: Logger } = {},
): Promise<GroupsHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-kafka-groups-'));
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const broker = await Broker.open({ formats: builtinFormats(), dataDir, memory: true, clock, maintenanceIntervalMs: 0, ...(options.brokerLogger ? { logger: options.brokerLogger } : {}) });
  const frontend = new KafkaBrokerFrontend({
    broker,
    logger: silentLogger,
    clock,
    scheduler,
    clusterId: 'test-cluster',
    persistGroups: false,
    advertisedAddr: { host: '127.0.0.1', port: 19092 },
    groupConfig: { initialRebalanceDelayMs, ...options.groupConfig },
  });
  t.after(async () => {
    await frontend.close();
    await broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  for (const [name, partitions] of Object.entries(options.topics ?? {})) await broker.createTopic('default', name, { partitions });
  const session: KafkaSession = { remote: options.remote ?? '127.0.0.1:50123', clientId: null, principal: null, sasl: null, logger: silentLogger };
  let correlationId = 0;

  async function call<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, input: RequestInputOf<K>, clientId: string | null = 'test-client'): Promise<ResponseOf<K>> {
    return askHandler(handler, version, input, { frontend, session, correlationId: ++correlationId, clientId });
  }

  return { broker, frontend, clock, scheduler, session, call };
}

/** Resolves with the value if the promise has settled by the next macrotask, else 'pending'. */
export async function peek<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

export const sessionTimeoutMs = 10_000;
export const rebalanceTimeoutMs = 30_000;

/** Consumer-protocol bytes are opaque to the broker: any bytes do. */
export const subscription = Buffer.from('subscription');

export interface FormedGroup {
  generationId: number;
  leaderId: string;
  memberIds: string[];
}

/**
 * Brings `count` members into a Stable group through the JoinGroup and SyncGroup handlers (v3:
 * no MEMBER_ID_REQUIRED round); member i gets the assignment `assignment-i`.
 */
export async function formGroup(h: GroupsHarness, groupId: string, count: number): Promise<FormedGroup> {
  const joins = Array.from({ length: count }, () =>
    h.call(joinGroupHandler, 3, { groupId, sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] }),
  );
  const joined = await settle(h, Promise.all(joins));
  for (const j of joined) if (j.errorCode !== 0) throw new Error(`join failed with ${j.errorCode}`);
  const memberIds = joined.map((j) => j.memberId);
  const { generationId, leader: leaderId } = joined[0]!;
  const assignments = memberIds.map((memberId, i) => ({ memberId, assignment: Buffer.from(`assignment-${i}`) }));
  const syncs = memberIds.map((memberId) =>
    h.call(syncGroupHandler, 3, { groupId, generationId, memberId, assignments: memberId === leaderId ? assignments : [] }),
  );
  const synced = await Promise.all(syncs);
  for (const s of synced) if (s.errorCode !== 0) throw new Error(`sync failed with ${s.errorCode}`);
  return { generationId, leaderId, memberIds };
}

/**
 * Advances the manual clock in initial-rebalance-delay steps until `promise` settles: a new group
 * waits one delay per batch of arriving members (InitialDelayedJoin), so the step count varies.
 */
export async function settle<T>(h: GroupsHarness, promise: Promise<T>, stepMs = initialRebalanceDelayMs, stepsMax = 200): Promise<T> {
  for (let i = 0; i < stepsMax; i++) {
    const state = await peek(promise);
    if (state !== 'pending') return state;
    h.scheduler.advance(stepMs);
  }
  throw new Error(`still pending after ${stepsMax} steps of ${stepMs} ms`);
}
