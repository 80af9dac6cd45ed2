// One log for Felix and Kafka: the whole server (startServer, as `npm start` runs it) with the
// Kafka and Felix listeners. Records a Felix client publishes (keyed and not) reach a KafkaJS
// consumer with their keys; records a KafkaJS producer sends reach a Felix subscriber, offsets
// included (also from stored batches larger than an event batch); the listener's metrics are in /metrics; and after a restart on the same data directory a Felix subscriber from earliest gets
// every record again.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { silentLogger } from '../../../src/base/logger.js';
import { encodePublishBatch, recordPayloads } from '../../../src/protocols/felix/codec/index.js';
import { connectFelixQuic } from '../../../src/protocols/felix/quic.js';
import { selfSignedLocalhost } from '../../../src/protocols/felix/self-signed.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer, type QuartetServer } from '../../../src/server/server.js';
import { TestClient, type FrameReader } from './harness.js';

const name = { tenantId: 'default', namespace: 'default' };

async function eventsUntil(r: FrameReader, count: number): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  while (out.length < count) {
    const got = await r.next();
    if (got.kind !== 'frame' || got.frame.kind !== 'event_batch') throw new Error('expected an event batch');
    const b = got.frame.batch;
    recordPayloads(b.records).forEach((p, i) => out.push([Number(b.baseOffset ?? -1n) + i, p.toString()]));
  }
  return out;
}

describe('felix ↔ kafka, and a restart', { timeout: 90_000 }, () => {
  let dir: string;
  let server: QuartetServer;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  const tls = selfSignedLocalhost();

  async function start(): Promise<void> {
    const { config } = loadConfig({
      flags: {
        'data-dir': join(dir, 'data'),
        'http-addr': '127.0.0.1:0',
        'kafka-addr': '127.0.0.1:0',
        'felix-addr': '127.0.0.1:0',
        'felix-tls-cert': join(dir, 'cert.pem'),
        'felix-tls-key': join(dir, 'key.pem'),
        'iggy-enabled': false,
        'cursus-enabled': false,
      },
      env: { QUARTET_ROOT_PASSWORD: 'root-password' },
      cwd: dir,
    });
    server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
    await server.ready;
    kafka = new Kafka({ clientId: 'felix-cross', brokers: [`127.0.0.1:${server.listenerAddresses().get('kafka')!.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
  }

  async function felix(): Promise<TestClient> {
    const port = server.listenerAddresses().get('felix')!.port;
    return new TestClient(await connectFelixQuic({ host: '127.0.0.1', port, ca: tls.cert, logger: silentLogger }));
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-felix-cross-'));
    writeFileSync(join(dir, 'cert.pem'), tls.cert);
    writeFileSync(join(dir, 'key.pem'), tls.key);
    await start();
    admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'cross', numPartitions: 1 }] });
    producer = kafka.producer();
    await producer.connect();
  });
  after(async () => {
    await producer?.disconnect().catch(() => {});
    await admin?.disconnect().catch(() => {});
    await server?.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('Felix records reach a Kafka consumer with their keys, and Kafka records a Felix subscriber', async () => {
    const c = await felix();
    const s = await c.authed('default', 'x', 0x00ff);
    s.write(encodePublishBatch({ acked: { requestId: 1n, ackMode: 'per_batch' }, key: Buffer.from('k-felix'), ...name, stream: 'cross', payloads: [Buffer.from('f1'), Buffer.from('f2')] }));
    assert.equal((await s.reader.next()).kind, 'frame');
    s.send({ type: 'publish', ...name, stream: 'cross', payload: Buffer.from('f3'), requestId: 2n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 2n });
    await producer.send({ topic: 'cross', messages: [{ key: 'k-kafka', value: 'k1' }, { value: 'k2' }] });

    const consumer = kafka.consumer({ groupId: 'felix-cross-group' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'cross', fromBeginning: true });
    const seen: Array<[string | null, string]> = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Kafka saw ${JSON.stringify(seen)}`)), 20_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push([message.key?.toString() ?? null, message.value!.toString()]);
          if (seen.length === 5) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();
    assert.deepEqual(seen, [
      ['k-felix', 'f1'],
      ['k-felix', 'f2'],
      [null, 'f3'],
      ['k-kafka', 'k1'],
      [null, 'k2'],
    ]);

    const sub = await c.authed('default', 'x', 0x00ff);
    sub.send({ type: 'subscribe', ...name, stream: 'cross', start: 'earliest' });
    assert.equal((await sub.reader.message()).type, 'subscribed');
    const events = await c.eventStream(0);
    assert.equal((await events.message()).type, 'event_stream_hello');
    assert.deepEqual(await eventsUntil(events, 5), [
      [0, 'f1'],
      [1, 'f2'],
      [2, 'f3'],
      [3, 'k1'],
      [4, 'k2'],
    ]);
    await c.close();
    const metrics = await (await fetch(`http://127.0.0.1:${server.httpAddress()!.port}/metrics`)).text();
    assert.match(metrics, /quartet_listener_connections_total\{listener="felix"\} [1-9]/);
    assert.match(metrics, /quartet_listener_requests_total\{listener="felix",operation="publish_binary"\} 1/);
  });

  it('a Kafka batch of more records than an event batch holds reaches a Felix subscriber whole', async () => {
    await admin.createTopics({ topics: [{ topic: 'wide', numPartitions: 1 }] });
    // Three produce requests of 200 records: each one stored batch, three event batches and more.
    for (let b = 0; b < 3; b++) await producer.send({ topic: 'wide', messages: Array.from({ length: 200 }, (_, i) => ({ value: `w${b * 200 + i}` })) });
    const c = await felix();
    const sub = await c.authed('default', 'x', 0x00ff);
    sub.send({ type: 'subscribe', ...name, stream: 'wide', start: 'earliest' });
    assert.equal((await sub.reader.message()).type, 'subscribed');
    const events = await c.eventStream(0);
    assert.equal((await events.message()).type, 'event_stream_hello');
    assert.deepEqual(
      await eventsUntil(events, 600),
      Array.from({ length: 600 }, (_, i) => [i, `w${i}`]),
    );
    await c.close();
  });

  it('after a restart, a subscriber from earliest gets every record again', async () => {
    await producer.disconnect();
    await admin.disconnect();
    await server.stop('restart');
    await start();
    admin = kafka.admin();
    await admin.connect();
    producer = kafka.producer();
    await producer.connect();
    const c = await felix();
    const sub = await c.authed('default', 'x', 0x00ff);
    sub.send({ type: 'subscribe', ...name, stream: 'cross', start: 'earliest' });
    const reply = await sub.reader.message();
    assert.deepEqual(reply.type === 'subscribed' ? [reply.startOffset, reply.liveOffset] : reply, [0n, 5n]);
    const events = await c.eventStream(0);
    assert.equal((await events.message()).type, 'event_stream_hello');
    assert.deepEqual((await eventsUntil(events, 5)).map(([, v]) => v), ['f1', 'f2', 'f3', 'k1', 'k2']);
    await c.close();
  });
});
