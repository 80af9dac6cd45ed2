// A Kafka front-end around an in-memory Broker for the administration and SASL handler tests.
// `call` encodes the request as a client would at the given version and decodes it (so fields the
// version lacks take their defaults, as the connection hands them over), runs the handler, then
// round-trips the answer through the response codec at that version (an answer the version
// cannot carry fails the test).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker, type BrokerOptions } from '../../../../src/core/broker.js';
import { ManualClock } from '../../../../src/base/clock.js';
import { silentLogger } from '../../../../src/base/logger.js';
import type { TopicConfigValues } from '../../../../src/core/topic-config.js';
import { askHandler } from './call-handler.js';
import type { RequestInputOf, ResponseOf, SchemaApiKey } from '../../../../src/protocols/kafka/codec/messages/index.js';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { KafkaBrokerFrontend } from '../../../../src/protocols/kafka/frontend.js';
import type { KafkaHandler, KafkaSession, KafkaSettings } from '../../../../src/protocols/kafka/handlers/types.js';
import { builtinFormats } from '../../../../src/server/listeners.js';

/** Cheap scrypt for tests (the core's test helpers use the same). */
export const testScryptCost = { N: 1024, r: 8, p: 1 };

export interface AdminHarness {
  broker: Broker;
  frontend: KafkaBrokerFrontend;
  session: KafkaSession;
  /** A fresh, unauthenticated connection session. */
  newSession(): KafkaSession;
  call<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, request: RequestInputOf<K>, session?: KafkaSession): Promise<ResponseOf<K>>;
}

export async function adminHarness(
  t: { after(fn: () => Promise<void> | void): void },
  options: { topics?: Record<string, number>; topicDefaults?: Partial<TopicConfigValues>; settings?: Partial<KafkaSettings>; users?: Record<string, string>; broker?: Partial<BrokerOptions> } = {},
): Promise<AdminHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-kafka-admin-'));
  const clock = new ManualClock(1_700_000_000_000);
  const broker = await Broker.open({
    formats: builtinFormats(),
    dataDir,
    memory: true,
    clock,
    maintenanceIntervalMs: 0,
    scryptCost: testScryptCost,
    rootUser: { username: 'root', password: 'root-pw' },
    nodeId: 1,
    ...(options.topicDefaults ? { topicDefaults: options.topicDefaults } : {}),
    ...options.broker,
  });
  const frontend = new KafkaBrokerFrontend({
    broker,
    logger: silentLogger,
    clock,
    scheduler: new ManualScheduler(clock),
    clusterId: 'test-cluster-id',
    persistGroups: false,
    advertisedAddr: { host: '127.0.0.1', port: 19092 },
    ...(options.settings ? { settings: options.settings } : {}),
  });
  t.after(async () => {
    await frontend.close();
    await broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  for (const [name, partitions] of Object.entries(options.topics ?? {})) await broker.createTopic('default', name, { partitions });
  for (const [username, password] of Object.entries(options.users ?? {})) await broker.users.create({ username, password });
  const newSession = (): KafkaSession => ({ remote: '127.0.0.1:50123', clientId: null, principal: null, sasl: null, logger: silentLogger });
  const session = newSession();
  let correlationId = 0;

  async function call<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, input: RequestInputOf<K>, on: KafkaSession = session): Promise<ResponseOf<K>> {
    return askHandler(handler, version, input, { frontend, session: on, correlationId: ++correlationId });
  }

  return { broker, frontend, session, newSession, call };
}
