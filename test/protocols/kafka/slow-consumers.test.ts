// Kafka connections that pipeline large Fetches and never read the responses hold at most the
// broker's memory budget (core/memory-budget.ts) together, plus one batch each that found it
// spent, while a connection that reads still fetches every record. Measured on the budget's own
// counters, not RSS (the RSS figures are bench/slow-consumers.ts's).

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Broker } from '../../../src/core/broker.js';
import { silentLogger } from '../../../src/base/logger.js';
import { ApiKey } from '../../../src/protocols/kafka/codec/api-keys.js';
import { ErrorCode } from '../../../src/protocols/kafka/codec/errors.js';
import type { RequestInputOf } from '../../../src/protocols/kafka/codec/messages/index.js';
import { KafkaConnection } from '../../../src/protocols/kafka/connection.js';
import { KafkaBrokerFrontend } from '../../../src/protocols/kafka/frontend.js';
import { builtinFormats } from '../../../src/server/listeners.js';
import { RawKafkaClient } from './raw-client.js';
import { batchOf, recordsOf } from './handlers/data-harness.js';

const budgetBytes = 8 * 1024 * 1024;
const recordsPerBatch = 256;
const recordBytes = 1000;
const batches = 96;
const nonReaders = 8;
const fetchesEach = 8;
/** A stored batch, with room for its header and record framing. */
const batchBytesMax = recordsPerBatch * (recordBytes + 32) + 128;
const waitMs = 10_000;


function fetchBody(offset: number): RequestInputOf<typeof ApiKey.Fetch> {
  return {
    replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 100 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: 'slow', partitions: [{ partition: 0, fetchOffset: offset, partitionMaxBytes: 100 << 20, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
    forgottenTopicsData: [], rackId: '',
  };
}

async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('Kafka connections that do not read', () => {
  it('hold at most the memory budget while a reading connection fetches every record', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quartet-kafka-slow-'));
    const broker = await Broker.open({ formats: builtinFormats(), dataDir, maintenanceIntervalMs: 0, memoryBudgetBytes: budgetBytes });
    const frontend = new KafkaBrokerFrontend({ broker, logger: silentLogger, clusterId: 'c', persistGroups: false, settings: {} });
    const server = createServer((socket) => void new KafkaConnection(frontend, socket, { remote: 'test', logger: silentLogger, beginRequest: () => () => undefined }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const sockets: Socket[] = [];
    const client = async (): Promise<RawKafkaClient> => {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      sockets.push(socket);
      await once(socket, 'connect');
      return new RawKafkaClient(socket, 'slow-test');
    };
    t.after(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await frontend.close();
      await broker.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const budget = broker.memoryBudget;
    await broker.createTopic('default', 'slow', { partitions: 1 });
    const producer = await client();
    for (let b = 0; b < batches; b++) {
      const records = batchOf(Array.from({ length: recordsPerBatch }, (_, i) => ({ key: null, value: `${b}:${i}`.padEnd(recordBytes, 'x') })));
      producer.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'slow', partitionData: [{ index: 0, records }] }] });
      assert.equal((await producer.response(ApiKey.Produce, 9)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    }
    const total = batches * recordsPerBatch;

    // Each pipelines Fetches of everything (100 MiB each) and reads nothing.
    for (let k = 0; k < nonReaders; k++) {
      const c = await client();
      c.socket.pause();
      for (let f = 0; f < fetchesEach; f++) c.send(ApiKey.Fetch, 12, fetchBody(0));
    }
    await until(() => budget.heldBytes >= budgetBytes / 2, 'the non-reading connections to hold the budget');

    // A connection that reads makes progress all the same, one batch at a time at worst.
    const reader = await client();
    let offset = 0;
    while (offset < total) {
      reader.send(ApiKey.Fetch, 12, fetchBody(offset));
      const partition = (await reader.response(ApiKey.Fetch, 12)).responses[0]!.partitions[0]!;
      assert.equal(partition.errorCode, ErrorCode.NONE);
      const records = recordsOf(partition.records).filter((r) => r.offset >= offset);
      assert.ok(records.length > 0, `the reader got nothing at offset ${offset}`);
      offset = records[records.length - 1]!.offset + 1;
    }
    assert.equal(offset, total);

    const bound = budgetBytes + (nonReaders + 1) * batchBytesMax;
    assert.ok(budget.peakHeldBytes <= bound, `held at most ${budget.peakHeldBytes} bytes, bound ${bound}`);

    // Gone, they give everything back.
    for (const s of sockets) s.destroy();
    await until(() => budget.heldBytes === 0 && budget.openReservations === 0, 'every reservation to be released');
  });
});
