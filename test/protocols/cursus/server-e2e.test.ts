// The whole server as `npm start` runs it, over the Cursus wire: every command area through one
// connection (topics, PUBLISH and CONSUME, groups and offsets, a transaction, the event store),
// records crossing to and from a Kafka client, and what survives a restart on the same data
// directory (topic revisions, committed offsets, transactions, event streams and snapshots).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { silentLogger } from '../../../src/base/logger.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer, type QuartetServer } from '../../../src/server/server.js';
import { decodeBatch, encodeBatch } from '../../../src/protocols/cursus/codec/batch.js';
import { Compression } from '../../../src/protocols/cursus/codec/compression.js';
import { CursusWireClient, errorOf, jsonOf, okFields, type WireFrame } from './wire-client.js';

async function start(dataDir: string): Promise<QuartetServer> {
  const { config } = loadConfig({
    flags: { 'data-dir': dataDir, 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'cursus-addr': '127.0.0.1:0', 'iggy-enabled': false },
    env: { QUARTET_ROOT_PASSWORD: 'root-password' },
    cwd: dataDir,
  });
  const server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
  await server.ready;
  return server;
}

async function connect(server: QuartetServer): Promise<CursusWireClient> {
  const client = await CursusWireClient.connect(server.listenerAddresses().get('cursus')!.port);
  await client.negotiate([Compression.lz4]);
  return client;
}

function records(frame: WireFrame): Array<{ offset: number; payload: string; key: string | undefined }> {
  const b = decodeBatch(frame.payload);
  assert.ok(b.ok, b.ok ? '' : b.reason);
  return b.value.records.map((r) => ({ offset: r.offset, payload: r.payload.toString(), key: r.key?.toString() }));
}

const ok = async (c: CursusWireClient, command: string, fields: Record<string, string | Buffer> = {}): Promise<Map<string, string>> => okFields((await c.request(command, fields))[0]!);

describe('Cursus over the whole server', { timeout: 120_000 }, () => {
  let dir: string;
  let server: QuartetServer;
  let c: CursusWireClient;
  let kafka: Kafka;
  let producer: Producer;
  let consumer: Consumer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-cursus-e2e-'));
    server = await start(join(dir, 'data'));
    c = await connect(server);
    kafka = new Kafka({ clientId: 'cursus-e2e', brokers: [`127.0.0.1:${server.listenerAddresses().get('kafka')!.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
    producer = kafka.producer();
    await producer.connect();
  });
  after(async () => {
    c?.destroy();
    await consumer?.disconnect();
    await producer?.disconnect();
    await server?.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes text and CBV2 batches and consumes them, and Kafka clients read and write the same log', async () => {
    assert.equal((await ok(c, 'CREATE', { topic: 'orders', partitions: '1' })).get('revision'), '1');
    const ack = jsonOf((await c.request('PUBLISH', { topic: 'orders', producerId: 'p-1', message: 'first message=with spaces', key: 'k1' }))[0]!);
    assert.equal(ack.last_offset, 0);
    const batch = encodeBatch({ idempotent: false, topic: 'orders', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: ['b1', 'b2'].map((v) => ({ topic: 'orders', partition: 0, offset: 0, payload: Buffer.from(v) })) });
    const id = c.sendPayload('PUBLISH', batch);
    assert.equal(jsonOf((await c.replies(id))[0]!).last_offset, 2);
    await producer.send({ topic: 'orders', messages: [{ key: 'kk', value: 'from-kafka' }] });

    const consumed = records((await c.request('CONSUME', { topic: 'orders', partition: '0', offset: '0', member: 'm' }))[0]!);
    assert.deepEqual(consumed, [
      { offset: 0, payload: 'first message=with spaces', key: 'k1' },
      { offset: 1, payload: 'b1', key: undefined },
      { offset: 2, payload: 'b2', key: undefined },
      { offset: 3, payload: 'from-kafka', key: 'kk' },
    ]);

    consumer = kafka.consumer({ groupId: 'kafka-reader' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    const seen: string[] = [];
    const all = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === 4) resolve();
        },
      });
    });
    await all;
    assert.deepEqual(seen, ['first message=with spaces', 'b1', 'b2', 'from-kafka']);
  });

  it('joins a group, commits and fetches offsets that CONSUME then resumes from', async () => {
    const joined = await ok(c, 'JOIN_GROUP', { topic: 'orders', group: 'g1', member: 'worker' });
    const member = joined.get('member')!;
    assert.match(member, /^worker-\d{4}$/);
    assert.equal(joined.get('assignments'), '[0]');
    const generation = joined.get('generation')!;
    assert.equal((await ok(c, 'SYNC_GROUP', { topic: 'orders', group: 'g1', member, generation })).get('assignments'), '[0]');
    await ok(c, 'COMMIT_OFFSET', { topic: 'orders', partition: '0', group: 'g1', offset: '2', member, generation });
    assert.equal((await ok(c, 'FETCH_OFFSET', { topic: 'orders', partition: '0', group: 'g1' })).get('offset'), '2');
    const resumed = records((await c.request('CONSUME', { topic: 'orders', partition: '0', offset: '0', member, group: 'g1' }))[0]!);
    assert.deepEqual(resumed.map((r) => r.offset), [2, 3], 'the committed offset takes priority over offset=0');
  });

  it('commits a transaction that read_committed consumers then see, and runs the event store', async () => {
    await ok(c, 'CREATE', { topic: 'ledger', partitions: '1' });
    const init = await ok(c, 'INIT_PRODUCER_ID', { transactional_id: 'tx-1' });
    const session = { transactional_id: 'tx-1', producerId: init.get('producerId')!, epoch: init.get('epoch')! };
    await ok(c, 'BEGIN_TXN', session);
    await ok(c, 'TXN_PUBLISH', { ...session, topic: 'ledger', seqNum: '1', message: 'credited' });
    const hidden = records((await c.request('CONSUME', { topic: 'ledger', partition: '0', offset: '0', member: 'm' }))[0]!);
    assert.deepEqual(hidden, [], 'read_committed hides the open transaction');
    assert.equal((await ok(c, 'END_TXN', { ...session, result: 'commit' })).get('state'), 'committed');
    const visible = records((await c.request('CONSUME', { topic: 'ledger', partition: '0', offset: '0', member: 'm' }))[0]!);
    assert.deepEqual(visible.map((r) => r.payload), ['credited']);

    await ok(c, 'CREATE', { topic: 'accounts', partitions: '2', event_sourcing: 'true' });
    assert.equal((await ok(c, 'APPEND_STREAM', { topic: 'accounts', key: 'acc-1', version: '1', event_type: 'Opened', message: '{"owner":"ann"}' })).get('version'), '1');
    await ok(c, 'APPEND_STREAM', { topic: 'accounts', key: 'acc-1', version: '2', event_type: 'Deposited', message: '{"amount":5}' });
    await ok(c, 'SAVE_SNAPSHOT', { topic: 'accounts', key: 'acc-1', version: '2', message: '{"balance":5}' });
    const frames = await c.request('READ_STREAM', { topic: 'accounts', key: 'acc-1' });
    assert.equal(frames.length, 2);
    assert.equal(jsonOf(frames[0]!).count, 0, 'the snapshot at version 2 covers both events');
  });

  it('refuses DELETE and TRUNCATE of a topic with active group members or an open transaction', async () => {
    await ok(c, 'CREATE', { topic: 'busy', partitions: '1' });
    const joined = await ok(c, 'JOIN_GROUP', { topic: 'busy', group: 'busy-g', member: 'w' });
    const blocked = errorOf((await c.request('DELETE', { topic: 'busy' }))[0]!);
    assert.equal(blocked.code, 'topic_delete_blocked');
    await ok(c, 'LEAVE_GROUP', { topic: 'busy', group: 'busy-g', member: joined.get('member')! });

    const init = await ok(c, 'INIT_PRODUCER_ID', { transactional_id: 'tx-busy' });
    const session = { transactional_id: 'tx-busy', producerId: init.get('producerId')!, epoch: init.get('epoch')! };
    await ok(c, 'BEGIN_TXN', session);
    await ok(c, 'TXN_PUBLISH', { ...session, topic: 'busy', seqNum: '1', message: 'pending' });
    const revision = (await ok(c, 'METADATA', { topic: 'busy' })).get('revision')!;
    assert.equal(errorOf((await c.request('TRUNCATE', { topic: 'busy', expected_revision: revision }))[0]!).code, 'topic_delete_blocked');
    await ok(c, 'END_TXN', { ...session, result: 'abort' });
    assert.equal((await ok(c, 'DELETE', { topic: 'busy' })).get('deleted'), 'true');
  });

  it('keeps topics, offsets, transactions and event streams across a restart', async () => {
    await ok(c, 'CREATE', { topic: 'orders', partitions: '2' });
    c.destroy();
    await consumer.disconnect();
    await producer.disconnect();
    await server.stop('restart');
    server = await start(join(dir, 'data'));
    c = await connect(server);
    const meta = await ok(c, 'METADATA', { topic: 'orders' });
    assert.deepEqual([meta.get('partitions'), meta.get('revision')], ['2', '2']);
    assert.equal((await ok(c, 'FETCH_OFFSET', { topic: 'orders', partition: '0', group: 'g1' })).get('offset'), '2');
    assert.equal((await ok(c, 'TXN_STATUS', { transactional_id: 'tx-1' })).get('state'), 'committed');
    assert.equal((await ok(c, 'STREAM_VERSION', { topic: 'accounts', key: 'acc-1' })).get('version'), '2');
    assert.match((await ok(c, 'READ_SNAPSHOT', { topic: 'accounts', key: 'acc-1' })).get('snapshot')!, /"version":2/);
    const again = records((await c.request('CONSUME', { topic: 'ledger', partition: '0', offset: '0', member: 'm' }))[0]!);
    assert.deepEqual(again.map((r) => r.payload), ['credited']);
  });
});
