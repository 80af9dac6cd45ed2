// The first cross-protocol reads: the whole server (startServer) with the Kafka and Iggy
// listeners on one broker. Messages sent through Iggy to stream `default` / topic `orders` are
// consumed by KafkaJS from Kafka topic `orders` (the "key" user header becomes the Kafka key);
// records produced by KafkaJS are polled through Iggy, transcoded into Iggy batches.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type EachMessagePayload } from 'kafkajs';
import { silentLogger } from '../../../src/core/logger.js';
import { kafkaTopicNameFor } from '../../../src/protocols/mapping.js';
import { CommandCode, ConsumerKind, PollingKind, encodeUserHeaders, parsePolledBatches, userHeader, type ParsedBatch } from '../../../src/protocols/iggy/codec/index.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer, type QuartetServer } from '../../../src/server/server.js';
import { IggyTestClient, batchOf, sid } from './harness.js';

describe('iggy ↔ kafka', { timeout: 60_000 }, () => {
  let server: QuartetServer;
  let dir: string;
  let kafkaPort = 0;
  let iggyPort = 0;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-iggy-cross-'));
    const { config } = loadConfig({
      flags: { 'data-dir': join(dir, 'data'), 'http-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'kafka-enabled': true, 'iggy-addr': '127.0.0.1:0', 'iggy-enabled': true },
      env: { QUARTET_ROOT_PASSWORD: 'root-password' },
      cwd: dir,
    });
    server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
    await server.ready;
    kafkaPort = server.listenerAddresses().get('kafka')?.port ?? 0;
    iggyPort = server.listenerAddresses().get('iggy')?.port ?? 0;
  });
  after(async () => {
    await server?.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('Kafka consumers read what Iggy sent; Iggy polls what Kafka produced', async (t) => {
    if (kafkaPort === 0) {
      t.skip('the Kafka listener is not registered in this build');
      return;
    }
    assert.ok(iggyPort > 0, 'the Iggy listener is up');
    const iggy = await IggyTestClient.connect(iggyPort);
    t.after(() => iggy.destroy());
    assert.ok('value' in (await iggy.login('root', 'root-password')));
    await iggy.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'orders', options: [] });
    const keyed = encodeUserHeaders([userHeader('key', { kind: 'string', value: 'customer-7' }), userHeader('region', { kind: 'string', value: 'eu' })]);
    const batch = batchOf(['first', 'second', 'third'], BigInt(Date.now()) * 1000n, keyed);
    await iggy.ok(CommandCode.sendMessages, { streamId: sid('default'), topicId: sid('orders'), partitioning: { kind: 'partitionId', partitionId: 0 }, messagesCount: 3, batch });

    const kafka = new Kafka({ clientId: 'iggy-cross', brokers: [`127.0.0.1:${kafkaPort}`], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
    const consumer = kafka.consumer({ groupId: 'iggy-cross', sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 200 });
    await consumer.connect();
    const received: EachMessagePayload[] = [];
    try {
      await consumer.subscribe({ topic: 'orders', fromBeginning: true });
      await new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async (p) => {
            received.push(p);
            if (received.length === 3) resolve();
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    assert.deepEqual(received.map((r) => [r.message.offset, r.message.key?.toString(), r.message.value?.toString(), r.message.headers?.region?.toString()]), [
      ['0', 'customer-7', 'first', 'eu'],
      ['1', 'customer-7', 'second', 'eu'],
      ['2', 'customer-7', 'third', 'eu'],
    ]);

    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic: 'orders', acks: -1, messages: [{ key: 'k1', value: 'from kafka 1', headers: { h: 'v' } }, { value: 'from kafka 2' }] });
    await producer.disconnect();

    const polled = await iggy.ok(CommandCode.pollMessages, { consumer: { kind: ConsumerKind.consumer, id: sid(1) }, streamId: sid('default'), topicId: sid('orders'), partitionId: 0, strategy: { kind: PollingKind.offset, value: 2n }, count: 10, autoCommit: false });
    assert.equal(polled.messagesCount, 3);
    const batches = parsePolledBatches(Buffer.concat(polled.batches)) as ParsedBatch[];
    assert.ok(Array.isArray(batches), 'transcoded batches verify (frame and batch checksums)');
    const payloads = batches.flatMap((b) => b.frames.map((f) => f.payload.toString()));
    assert.deepEqual(payloads, ['third', 'from kafka 1', 'from kafka 2']);
    const offsets = batches.flatMap((b) => b.frames.map((f) => Number(b.header.baseOffset) + f.offsetDelta));
    assert.deepEqual(offsets, [2, 3, 4]);
    // The Kafka key travels as the "key" user header (iggy-format.ts mapping).
    const keyHeader = batches[1]!.frames[0]!.userHeaders;
    assert.ok(keyHeader.includes(Buffer.from('k1')), 'the Kafka key is an Iggy "key" header');
  });

  it('names a non-default stream topic for Kafka as <stream>.<topic> (escaped)', () => {
    assert.equal(kafkaTopicNameFor('default', 'orders'), 'orders');
    assert.equal(kafkaTopicNameFor('shop', 'eu orders'), 'shop.eu_20orders');
  });

  it('Kafka lists and fetches non-default stream topics under the mapped name', { skip: 'waits for the Kafka front-end to list and resolve non-default namespaces through src/protocols/mapping.ts (see docs/mapping.md)' }, () => {});
});
