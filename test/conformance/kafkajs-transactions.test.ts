// KafkaJS 2.2.4 transactions against Quartet (InitProducerId v1, AddPartitionsToTxn v1,
// AddOffsetsToTxn v1, TxnOffsetCommit v1, EndTxn v1, Fetch v11 read_committed):
// - a transaction with sendOffsets is committed and another is aborted; a readCommitted consumer
//   sees exactly the committed records, and the offsets sent in the transaction are committed;
// - restart: a transaction is aborted, the broker restarts on the same data directory, and a
//   readCommitted consumer still never sees the aborted records (the markers are read back from
//   the Kafka log).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { startBroker, type StartedBroker } from './helpers.js';

/** Idle time after the expected count is reached, to catch any extra record. */
const idleMs = 1_000;

function client(bootstrap: string): Kafka {
  return new Kafka({ clientId: 'quartet-conformance', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
}

/** A readCommitted consumer (KafkaJS's default isolation) reading `topic` from the beginning: [partition, value] in order. */
async function readCommitted(kafka: Kafka, topic: string, groupId: string, expected: number): Promise<Array<[number, string]>> {
  const consumer: Consumer = kafka.consumer({ groupId, readUncommitted: false, sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 100 });
  await consumer.connect();
  const got: Array<[number, string]> = [];
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let reached!: () => void;
    const done = new Promise<void>((resolve) => (reached = resolve));
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        got.push([partition, message.value!.toString()]);
        if (got.length >= expected) reached();
      },
    });
    await done;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
  } finally {
    await consumer.disconnect();
  }
  return got;
}

function byPartition(records: Array<[number, string]>, partitions: number): string[][] {
  return Array.from({ length: partitions }, (_, p) => records.filter((r) => r[0] === p).map((r) => r[1]));
}

describe('KafkaJS transactions', { timeout: 44_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('commits a transaction with sendOffsets, aborts another; readCommitted sees exactly the committed records', async () => {
    const broker = b.broker!;
    await broker.createTopic('default', 'kjs-out', { partitions: 2 });
    const input = await broker.createTopic('default', 'kjs-in', { partitions: 1 });
    const kafka = client(b.bootstrap);
    const producer = kafka.producer({ transactionalId: 'kjs-txn', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const committed = await producer.transaction();
      await committed.send({ topic: 'kjs-out', messages: [0, 1, 2, 3].map((i) => ({ partition: i % 2, value: `c-${i}` })) });
      await committed.sendOffsets({ consumerGroupId: 'kjs-group', topics: [{ topic: 'kjs-in', partitions: [{ partition: 0, offset: '3' }] }] });
      await committed.commit();

      const aborted = await producer.transaction();
      await aborted.send({ topic: 'kjs-out', messages: [0, 1, 2].map((i) => ({ partition: i % 2, value: `a-${i}` })) });
      await aborted.sendOffsets({ consumerGroupId: 'kjs-group', topics: [{ topic: 'kjs-in', partitions: [{ partition: 0, offset: '9' }] }] });
      await aborted.abort();

      const last = await producer.transaction();
      await last.send({ topic: 'kjs-out', messages: [{ partition: 1, value: 'c-4' }] });
      await last.commit();
    } finally {
      await producer.disconnect();
    }

    // Partition 0: c-0 c-2 COMMIT a-0 a-2 ABORT; partition 1: c-1 c-3 COMMIT a-1 ABORT c-4 COMMIT.
    assert.equal(broker.partition({ topic: 'kjs-out' }, 0).stats().highWatermark, 6, 'the aborted records are in the log');
    assert.equal(broker.partition({ topic: 'kjs-out' }, 1).stats().highWatermark, 7);
    const got = await readCommitted(kafka, 'kjs-out', 'kjs-reader', 5);
    assert.deepEqual(byPartition(got, 2), [['c-0', 'c-2'], ['c-1', 'c-3', 'c-4']]);
    const offset = await broker.offsets.fetch('kafka', 'kjs-group', input.internalId, 0);
    assert.equal(offset?.offset, 3, 'the committed transaction\'s offset, not the aborted one\'s');
  });

  it('after a restart on the same data directory, readCommitted still never sees an aborted transaction', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quartet-kjs-restart-'));
    const flags = { 'data-dir': join(dataDir, 'data') };
    let first: StartedBroker | null = await startBroker({ flags });
    let second: StartedBroker | null = null;
    try {
      await first.broker!.createTopic('default', 'kjs-restart', { partitions: 1 });
      const kafka = client(first.bootstrap);
      const producer = kafka.producer({ transactionalId: 'kjs-restart-txn', idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      try {
        const before1 = await producer.transaction();
        await before1.send({ topic: 'kjs-restart', messages: [{ value: 'kept-0' }] });
        await before1.commit();
        const gone = await producer.transaction();
        await gone.send({ topic: 'kjs-restart', messages: [{ value: 'gone-0' }, { value: 'gone-1' }] });
        await gone.abort();
      } finally {
        await producer.disconnect();
      }
      await first.stop();
      first = null;

      second = await startBroker({ flags });
      const restarted = client(second.bootstrap);
      const producer2 = restarted.producer({ transactionalId: 'kjs-restart-txn', idempotent: true, maxInFlightRequests: 1 });
      await producer2.connect();
      try {
        const after1 = await producer2.transaction();
        await after1.send({ topic: 'kjs-restart', messages: [{ value: 'kept-1' }] });
        await after1.commit();
      } finally {
        await producer2.disconnect();
      }
      // kept-0 COMMIT gone-0 gone-1 ABORT kept-1 COMMIT: the aborted records are still in the log.
      assert.equal(second.broker!.partition({ topic: 'kjs-restart' }, 0).stats().highWatermark, 7);
      const got = await readCommitted(restarted, 'kjs-restart', 'kjs-restart-reader', 2);
      assert.deepEqual(got, [[0, 'kept-0'], [0, 'kept-1']]);
    } finally {
      await first?.stop();
      await second?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
