// A Kafka front-end around a Broker opened with the Kafka marker encoder/reader (as the server
// opens it), with manual clocks and schedulers, for the transaction handler tests. `call` encodes
// the request at the given version and decodes it again (fields a version lacks take their
// defaults, as the connection hands them over), runs the handler, and round-trips the answer
// through the response codec at the same version.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../../../src/core/broker.js';
import { ManualClock } from '../../../../src/base/clock.js';
import { silentLogger } from '../../../../src/base/logger.js';
import { ManualScheduler as CoreScheduler } from '../../../../src/core/scheduler.js';
import type { StoredBatch } from '../../../../src/log/types.js';
import { appendRequestFromBatch } from '../../../../src/protocols/kafka/codec/kafka-format.js';
import { askHandler } from './call-handler.js';
import type { RequestInputOf, ResponseOf, SchemaApiKey } from '../../../../src/protocols/kafka/codec/messages/index.js';
import { batchRecords, buildRecordBatch, validateRecordBatch } from '../../../../src/protocols/kafka/codec/record-batch.js';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { KafkaBrokerFrontend } from '../../../../src/protocols/kafka/frontend.js';
import { initProducerIdHandler } from '../../../../src/protocols/kafka/handlers/init-producer-id.js';
import type { KafkaHandler, KafkaSession } from '../../../../src/protocols/kafka/handlers/types.js';
import { kafkaBrokerTransactionOptions, kafkaTransactionScope } from '../../../../src/protocols/kafka/transactions.js';
import { builtinFormats } from '../../../../src/server/listeners.js';

export interface TxnHarness {
  broker: Broker;
  frontend: KafkaBrokerFrontend;
  /** The connection state every call runs with (tests may authenticate it: ../access.test.ts). */
  session: KafkaSession;
  clock: ManualClock;
  /** The core coordinator's timers (transaction timeouts, marker retries). */
  coreScheduler: CoreScheduler;
  /** The group coordinator's timers. */
  groupScheduler: ManualScheduler;
  call<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, request: RequestInputOf<K>): Promise<ResponseOf<K>>;
  /** InitProducerId v4 for a transactional id; throws unless it succeeds. */
  initTxn(transactionalId: string, timeoutMs?: number): Promise<{ transactionalId: string; producerId: number; producerEpoch: number }>;
  /** Appends a transactional Kafka batch of `values` through the broker (as Produce does). */
  produceTxn(topic: string, partition: number, id: { transactionalId: string; producerId: number; producerEpoch: number }, baseSequence: number, values: string[]): Promise<number>;
  /** Every batch of a partition. */
  readAll(topic: string, partition: number): Promise<StoredBatch[]>;
  /** The record values of a partition's data batches (control batches skipped). */
  values(topic: string, partition: number): Promise<string[]>;
}

export async function txnHarness(
  t: { after(fn: () => Promise<void> | void): void },
  options: { topics?: Record<string, number>; dataDir?: string; memory?: boolean } = {},
): Promise<TxnHarness> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'quartet-kafka-txn-'));
  const clock = new ManualClock(1_700_000_000_000);
  const coreScheduler = new CoreScheduler(clock);
  const groupScheduler = new ManualScheduler(clock);
  const broker = await Broker.open({
    formats: builtinFormats(),
    dataDir,
    memory: options.memory ?? true,
    clock,
    scheduler: coreScheduler,
    maintenanceIntervalMs: 0,
    transactions: kafkaBrokerTransactionOptions,
  });
  const frontend = new KafkaBrokerFrontend({
    broker,
    logger: silentLogger,
    clock,
    scheduler: groupScheduler,
    clusterId: 'test-cluster',
    persistGroups: false,
    advertisedAddr: { host: '127.0.0.1', port: 19092 },
    groupConfig: { initialRebalanceDelayMs: 0 },
  });
  t.after(async () => {
    await frontend.close();
    await broker.close();
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  });
  for (const [name, partitions] of Object.entries(options.topics ?? {})) await broker.createTopic('default', name, { partitions });
  const session: KafkaSession = { remote: '127.0.0.1:50123', clientId: 'test-client', principal: null, sasl: null, logger: silentLogger };
  let correlationId = 0;

  async function call<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, input: RequestInputOf<K>): Promise<ResponseOf<K>> {
    return askHandler(handler, version, input, { frontend, session, correlationId: ++correlationId });
  }

  async function initTxn(transactionalId: string, timeoutMs = 60_000) {
    const r = await call(initProducerIdHandler, 4, { transactionalId, transactionTimeoutMs: timeoutMs, producerId: -1, producerEpoch: -1 });
    if (r.errorCode !== 0) throw new Error(`InitProducerId failed with ${r.errorCode}`);
    return { transactionalId, producerId: r.producerId, producerEpoch: r.producerEpoch };
  }

  async function produceTxn(topic: string, partition: number, id: { transactionalId: string; producerId: number; producerEpoch: number }, baseSequence: number, values: string[]): Promise<number> {
    const batch = buildRecordBatch(
      values.map((v) => ({ timestamp: clock.now(), key: null, value: Buffer.from(v) })),
      { transactional: true, producerId: id.producerId, producerEpoch: id.producerEpoch, baseSequence },
    );
    const built = appendRequestFromBatch(batch);
    if (!built.ok) throw new Error(built.reason);
    const result = await broker.append({ namespace: 'default', topic }, partition, built.request, { transaction: { scope: kafkaTransactionScope, transactionalId: id.transactionalId } });
    return result.baseOffset;
  }

  function readAll(topic: string, partition: number): Promise<StoredBatch[]> {
    return broker.read({ namespace: 'default', topic }, partition, 0, { maxBytes: 1 << 20 });
  }

  async function values(topic: string, partition: number): Promise<string[]> {
    const out: string[] = [];
    for (const b of await readAll(topic, partition)) {
      const v = validateRecordBatch(b.payload);
      if (!v.ok) throw new Error(v.reason);
      if (v.header.isControl) continue;
      const recs = batchRecords(b.payload, v.header);
      if (!recs.ok) throw new Error(recs.reason);
      for (const r of recs.value) out.push(r.value?.toString() ?? '');
    }
    return out;
  }

  return { broker, frontend, session, clock, coreScheduler, groupScheduler, call, initTxn, produceTxn, readAll, values };
}
