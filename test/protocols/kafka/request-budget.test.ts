// Large Kafka request frames share the broker's request byte budget (src/base/request-bytes.ts):
// with a 1 MiB budget, connections that each hold most of a 400 KiB Produce frame hold at most
// the budget together; the next such frame waits with its socket paused, a small request on
// another connection is still answered, and once a held frame is handled the waiter goes on and
// its records are stored whole. Connections closed while waiting or holding give everything back
// (one closed while waiting once its turn comes and its socket is read again).

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

const budgetBytes = 1024 * 1024;
const valueBytes = 400 * 1024;
const waitMs = 10_000;


async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function produceBody(value: string): RequestInputOf<typeof ApiKey.Produce> {
  return { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'big', partitionData: [{ index: 0, records: batchOf([{ key: null, value }]) }] }] };
}

describe('Kafka request frames and the broker request budget', () => {
  it('hold at most the budget; a frame that does not fit waits with its socket paused and then goes through whole', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quartet-kafka-request-budget-'));
    const broker = await Broker.open({ formats: builtinFormats(), dataDir, maintenanceIntervalMs: 0, requestBytesMax: budgetBytes });
    const frontend = new KafkaBrokerFrontend({ broker, logger: silentLogger, clusterId: 'c', persistGroups: false, settings: {} });
    const serverSockets: Socket[] = [];
    const server = createServer((socket) => {
      serverSockets.push(socket);
      void new KafkaConnection(frontend, socket, { remote: 'test', logger: silentLogger, beginRequest: () => () => undefined });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const sockets: Socket[] = [];
    const client = async (): Promise<RawKafkaClient> => {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      sockets.push(socket);
      await once(socket, 'connect');
      return new RawKafkaClient(socket, 'budget-test');
    };
    const serverSide = (c: RawKafkaClient): Socket => serverSockets.find((s) => s.remotePort === c.socket.localPort)!;
    t.after(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await frontend.close();
      await broker.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const budget = broker.requestBytes;
    await broker.createTopic('default', 'big', { partitions: 1 });

    // Two connections each send all of a large Produce but its last byte: both frames are held.
    const holders = [await client(), await client()];
    const held = holders.map((c, i) => c.frame(ApiKey.Produce, 9, produceBody(String(i).repeat(valueBytes))));
    for (const [i, c] of holders.entries()) {
      c.socket.write(held[i]!.subarray(0, held[i]!.length - 1));
      await until(() => budget.heldBytes === held.slice(0, i + 1).reduce((n, f) => n + f.length - 4, 0), `frame ${i} to be held`);
    }

    // A third does not fit: it waits, its socket paused, and the budget holds no more.
    const waiter = await client();
    const waited = waiter.frame(ApiKey.Produce, 9, produceBody('w'.repeat(valueBytes)));
    waiter.socket.write(waited.subarray(0, waited.length - 1));
    await until(() => budget.waiting === 1, 'the third frame to wait');
    assert.ok(budget.heldBytes <= budgetBytes, `held ${budget.heldBytes} of ${budgetBytes}`);
    assert.equal(serverSide(waiter).isPaused(), true, 'the waiting connection is not read');

    // A fourth queues behind it, then goes away (a socket that is not read sees its end only
    // once it is read again: when its turn comes).
    const quitter = await client();
    const quit = quitter.frame(ApiKey.Produce, 9, produceBody('q'.repeat(valueBytes)));
    quitter.socket.write(quit.subarray(0, quit.length - 1));
    await until(() => budget.waiting === 2, 'the fourth frame to wait');
    quitter.socket.destroy();

    // Small requests on another connection are answered meanwhile.
    const small = await client();
    small.socket.write(small.frame(ApiKey.ApiVersions, 3, { clientSoftwareName: 'budget-test', clientSoftwareVersion: '1' }));
    assert.equal((await small.response(ApiKey.ApiVersions, 3)).errorCode, ErrorCode.NONE);

    // The first holder's frame completes and is handled: the waiter gets its bytes and goes on.
    holders[0]!.socket.write(held[0]!.subarray(held[0]!.length - 1));
    assert.equal((await holders[0]!.response(ApiKey.Produce, 9)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    await until(() => !serverSide(waiter).isPaused(), 'the waiter to be granted and read again');
    waiter.socket.write(waited.subarray(waited.length - 1));
    assert.equal((await waiter.response(ApiKey.Produce, 9)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    // The closed fourth had its turn, found its peer gone, and gave its bytes back.
    await until(() => budget.waiting === 0 && budget.heldBytes === held[1]!.length - 4, 'the handled frames and the closed waiter to give their bytes back');
    assert.ok(budget.peakHeldBytes <= budgetBytes, `peak ${budget.peakHeldBytes} of ${budgetBytes}`);

    // The connection still holding a frame closes: its bytes come back.
    holders[1]!.socket.destroy();
    await until(() => budget.heldBytes === 0, 'the closed holder to give its bytes back');

    // Both records that went through are stored whole, in order.
    small.socket.write(
      small.frame(ApiKey.Fetch, 12, {
        replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 8 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: 'big', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 8 << 20, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
        forgottenTopicsData: [], rackId: '',
      }),
    );
    const partition = (await small.response(ApiKey.Fetch, 12)).responses[0]!.partitions[0]!;
    const values = recordsOf(partition.records).map((r) => r.value?.toString());
    assert.deepEqual(values, ['0'.repeat(valueBytes), 'w'.repeat(valueBytes)]);
  });
});
