// The first cross-protocol reads: the whole server (startServer) with the Kafka and Iggy
// listeners on one broker. Messages sent through Iggy to stream `default` / topic `orders` are
// consumed by KafkaJS from Kafka topic `orders` (the "key" user header becomes the Kafka key);
// records produced by KafkaJS are polled through Iggy, transcoded into Iggy batches. A topic of
// another stream is the Kafka topic `<stream>.<topic>` (escaped; docs/mapping.md).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Kafka, logLevel, type EachMessagePayload } from 'kafkajs';
import { silentLogger } from '../../../src/base/logger.js';
import { kafkaTopicNameFor } from '../../../src/protocols/mapping.js';
import { CommandCode, ConsumerKind, PollingKind, encodeUserHeaders, option, u64Max, parsePolledBatches, polledBuffers, userHeader, type ParsedBatch } from '../../../src/protocols/iggy/codec/index.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer, type QuartetServer } from '../../../src/server/server.js';
import { IggyTestClient, batchOf, sid } from './harness.js';
import { platformaticKafkaPeer, type AlterConfig } from '../../peers/platformatic-kafka.js';

const peer = await platformaticKafkaPeer();

describe('iggy ↔ kafka', { timeout: 60_000 }, () => {
  let server: QuartetServer;
  let dir: string;
  let kafkaPort = 0;
  let iggyPort = 0;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-iggy-cross-'));
    const { config } = loadConfig({
      flags: { 'data-dir': join(dir, 'data'), 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'kafka-enabled': true, 'iggy-addr': '127.0.0.1:0', 'iggy-enabled': true, 'iggy-advertised-addr': 'iggy.example:18090', 'cursus-enabled': false },
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

  /** A root Iggy connection, for a test that needs the Kafka listener too (null: skipped without it). */
  async function rootBesideKafka(t: TestContext): Promise<IggyTestClient | null> {
    if (kafkaPort === 0) {
      t.skip('the Kafka listener is not registered in this build');
      return null;
    }
    const iggy = await IggyTestClient.connect(iggyPort);
    t.after(() => iggy.destroy());
    assert.ok('value' in (await iggy.login('root', 'root-password')));
    return iggy;
  }

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
    const batches = parsePolledBatches(Buffer.concat(polledBuffers(polled))) as ParsedBatch[];
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

  it('reports --iggy-advertised-addr as this node in the Iggy cluster metadata', async (t) => {
    const iggy = await IggyTestClient.connect(iggyPort);
    t.after(() => iggy.destroy());
    assert.ok('value' in (await iggy.login('root', 'root-password')));
    const meta = await iggy.ok(CommandCode.getClusterMetadata, {});
    assert.deepEqual(meta.nodes.map((n) => [n.ip, n.tcpPort]), [['iggy.example', 18090]]);
  });

  it('Kafka lists and fetches non-default stream topics under the mapped name', async (t) => {
    const iggy = await rootBesideKafka(t);
    if (iggy === null) return;
    await iggy.ok(CommandCode.createStream, { name: 'shop', options: [] });
    await iggy.ok(CommandCode.createTopic, { streamId: sid('shop'), partitionsCount: 1, name: 'eu orders', options: [] });
    // A default-namespace topic Kafka cannot name is simply not listed.
    await iggy.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'not kafka', options: [] });
    const batch = batchOf(['s1', 's2'], BigInt(Date.now()) * 1000n);
    await iggy.ok(CommandCode.sendMessages, { streamId: sid('shop'), topicId: sid('eu orders'), partitioning: { kind: 'partitionId', partitionId: 0 }, messagesCount: 2, batch });
    const mapped = kafkaTopicNameFor('shop', 'eu orders')!;
    assert.equal(mapped, 'shop.eu_20orders');

    const kafka = new Kafka({ clientId: 'iggy-cross-mapped', brokers: [`127.0.0.1:${kafkaPort}`], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const listed = await admin.listTopics();
      assert.ok(listed.includes(mapped), `listed: ${listed.join(', ')}`);
      assert.ok(!listed.includes('not kafka'));
      const md = await admin.fetchTopicMetadata({ topics: [mapped] });
      assert.deepEqual(md.topics.map((x) => [x.name, x.partitions.length]), [[mapped, 1]]);
      assert.deepEqual(await admin.fetchTopicOffsets(mapped), [{ partition: 0, offset: '2', high: '2', low: '0' }]);
    } finally {
      await admin.disconnect();
    }

    const consumer = kafka.consumer({ groupId: 'iggy-cross-mapped', sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 200 });
    await consumer.connect();
    const received: EachMessagePayload[] = [];
    try {
      await consumer.subscribe({ topic: mapped, fromBeginning: true });
      await new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async (p) => {
            received.push(p);
            if (received.length === 2) resolve();
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    assert.deepEqual(received.map((r) => [r.topic, r.message.offset, r.message.value?.toString()]), [
      [mapped, '0', 's1'],
      [mapped, '1', 's2'],
    ]);

    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic: mapped, acks: -1, messages: [{ value: 'from kafka' }] });
    await producer.disconnect();
    const polled = await iggy.ok(CommandCode.pollMessages, { consumer: { kind: ConsumerKind.consumer, id: sid(1) }, streamId: sid('shop'), topicId: sid('eu orders'), partitionId: 0, strategy: { kind: PollingKind.offset, value: 2n }, count: 10, autoCommit: false });
    const batches = parsePolledBatches(Buffer.concat(polledBuffers(polled))) as ParsedBatch[];
    assert.deepEqual(batches.flatMap((b) => b.frames.map((f) => f.payload.toString())), ['from kafka']);
    // Kafka did not create a default-namespace topic next to the stream's.
    assert.equal(server.broker()!.catalog.getTopic({ namespace: 'default', topic: mapped }), null);
  });

  it('a Kafka CreatePartitions rebalances the Iggy groups of the topic and re-spreads its max_topic_size', async (t) => {
    const iggy = await rootBesideKafka(t);
    if (iggy === null) return;
    const ref = { streamId: sid('default'), topicId: sid('grown-by-kafka') };
    const options = [option('segment_size', { kind: 'uint64', value: 1024n * 1024n }), option('max_topic_size', { kind: 'uint64', value: 64n * 1024n * 1024n })];
    await iggy.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'grown-by-kafka', options });
    const retentionBytes = () => server.broker()!.catalog.requireTopic({ topic: 'grown-by-kafka' }).config['retention.bytes'];
    assert.equal(retentionBytes(), 32 * 1024 * 1024);
    await iggy.ok(CommandCode.createConsumerGroup, { ...ref, name: 'readers' });
    const group = { ...ref, groupId: sid('readers') };
    await iggy.ok(CommandCode.joinConsumerGroup, group);
    const before = await iggy.ok(CommandCode.syncConsumerGroup, group);
    assert.deepEqual(before?.partitions, [0, 1]);

    const admin = new Kafka({ clientId: 'iggy-cross-grow', brokers: [`127.0.0.1:${kafkaPort}`], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.createPartitions({ topicPartitions: [{ topic: 'grown-by-kafka', count: 4 }] });
    } finally {
      await admin.disconnect();
    }
    const after = await iggy.ok(CommandCode.syncConsumerGroup, group);
    assert.deepEqual(after?.partitions, [0, 1, 2, 3], 'the only member owns the new partitions at once');
    assert.ok(after!.generation > before!.generation);
    assert.equal(retentionBytes(), 16 * 1024 * 1024, 'the topic still holds 64 MiB in all');
  });

  it('the Iggy options of a topic follow what Kafka IncrementalAlterConfigs and CreatePartitions change', { skip: peer.skip }, async (t) => {
    const { Admin, ConfigResourceTypes, IncrementalAlterConfigOperationTypes } = peer.kafka!;
    const iggy = await rootBesideKafka(t);
    if (iggy === null) return;
    const mib = 1024 * 1024;
    const ref = { streamId: sid('default'), topicId: sid('altered-by-kafka') };
    const options = [
      option('segment_size', { kind: 'uint64', value: BigInt(mib) }),
      option('max_topic_size', { kind: 'uint64', value: 64n * BigInt(mib) }),
      option('message_expiry', { kind: 'uint64', value: 3_600_000_000n }),
    ];
    await iggy.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'altered-by-kafka', options });
    const core = () => server.broker()!.catalog.requireTopic({ topic: 'altered-by-kafka' }).config;

    const admin = new Admin({ clientId: 'iggy-cross-alter', bootstrapBrokers: [`127.0.0.1:${kafkaPort}`] });
    t.after(() => admin.close());
    const { SET, DELETE } = IncrementalAlterConfigOperationTypes;
    const alter = (configs: AlterConfig[]) =>
      admin.incrementalAlterConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: 'altered-by-kafka', configs }] });
    await alter([
      { name: 'retention.ms', configOperation: SET, value: '120000' },
      { name: 'retention.bytes', configOperation: DELETE },
      { name: 'preallocate', configOperation: SET, value: 'true' },
    ]);
    let topic = await iggy.ok(CommandCode.getTopic, ref);
    assert.equal(topic?.messageExpiry, 120_000_000n);
    assert.equal(topic?.maxTopicSize, u64Max, 'retention.bytes back to the default: unlimited');
    const entry = (key: string) => [...(topic?.explicitOptions ?? []), ...(topic?.derivedOptions ?? [])].find((o) => o.key === key);
    // Set by Kafka: explicit; deleted by Kafka (the broker default): derived.
    assert.deepEqual(topic?.explicitOptions.map((o) => o.key), ['message_expiry', 'preallocate_segments', 'segment_size']);
    assert.deepEqual(entry('preallocate_segments')?.value, Buffer.from([1]), 'preallocate=true');
    assert.equal(entry('segment_size')?.value.readBigUInt64LE(), BigInt(mib), 'not touched by Kafka');

    // A key no option maps to leaves the options alone; an Iggy update shows what it sent, exactly.
    await alter([{ name: 'max.message.bytes', configOperation: SET, value: '2000000' }]);
    await iggy.ok(CommandCode.updateTopic, { ...ref, name: 'altered-by-kafka', options: [option('message_expiry', { kind: 'uint64', value: 1_500n }), option('max_topic_size', { kind: 'uint64', value: 8n * BigInt(mib) })] });
    topic = await iggy.ok(CommandCode.getTopic, ref);
    assert.equal(topic?.messageExpiry, 1_500n);
    assert.equal(topic?.maxTopicSize, 8n * BigInt(mib));
    assert.equal(core()['retention.ms'], 2);
    assert.equal(core()['retention.bytes'], 4 * mib);

    // Kafka may set a segment size above Iggy's cap: the Iggy view shows it, and an Iggy update that
    // does not touch the cap (a compression change) is not refused for it.
    await alter([{ name: 'segment.bytes', configOperation: SET, value: String(16 * mib) }]);
    await iggy.ok(CommandCode.updateTopic, { ...ref, name: 'altered-by-kafka', options: [option('compression_algorithm', { kind: 'string', value: 'gzip' })] });
    assert.equal((await iggy.ok(CommandCode.getTopic, ref))?.explicitOptions.find((o) => o.key === 'segment_size')?.value.readBigUInt64LE(), 16n * BigInt(mib));

    // A retention.bytes Kafka set is per partition, and stays so when Kafka adds partitions (an Iggy
    // update of another option in between does not make it Iggy's own).
    await alter([{ name: 'retention.bytes', configOperation: SET, value: String(mib) }]);
    await iggy.ok(CommandCode.updateTopic, { ...ref, name: 'altered-by-kafka', options: [option('compression_algorithm', { kind: 'string', value: 'none' })] });
    await admin.createPartitions({ topics: [{ name: 'altered-by-kafka', count: 4 }] });
    assert.equal(core()['retention.bytes'], mib);
    assert.equal((await iggy.ok(CommandCode.getTopic, ref))?.maxTopicSize, 4n * BigInt(mib));
  });

  it('an Iggy update of a Kafka-made topic keeps the options it did not set following the core config', { skip: peer.skip }, async (t) => {
    const { Admin } = peer.kafka!;
    const iggy = await rootBesideKafka(t);
    if (iggy === null) return;
    const mib = 1024 * 1024;
    const admin = new Admin({ clientId: 'iggy-cross-kafka-made', bootstrapBrokers: [`127.0.0.1:${kafkaPort}`] });
    t.after(() => admin.close());
    const configs = [
      { name: 'retention.bytes', value: String(4 * mib) },
      { name: 'segment.bytes', value: String(mib) },
    ];
    await admin.createTopics({ topics: ['kafka-made-sized'], partitions: 2, replicas: 1, configs });
    const ref = { streamId: sid('default'), topicId: sid('kafka-made-sized') };
    assert.equal((await iggy.ok(CommandCode.getTopic, ref))?.maxTopicSize, 8n * BigInt(mib));
    await iggy.ok(CommandCode.updateTopic, { ...ref, name: 'kafka-made-sized', options: [option('message_expiry', { kind: 'uint64', value: 3_600_000_000n })] });
    await admin.createPartitions({ topics: [{ name: 'kafka-made-sized', count: 4 }] });
    const topic = await iggy.ok(CommandCode.getTopic, ref);
    assert.equal(topic?.maxTopicSize, 16n * BigInt(mib), '4 MiB per partition over 4');
    assert.equal(topic?.messageExpiry, 3_600_000_000n);
  });
  it('Iggy polls see what KafkaJS transactions committed, not what they aborted', async (t) => {
    const iggy = await rootBesideKafka(t);
    if (iggy === null) return;
    const kafka = new Kafka({ clientId: 'iggy-cross-txn', brokers: [`127.0.0.1:${kafkaPort}`], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'txn-to-iggy', numPartitions: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer({ transactionalId: 'iggy-cross-txn', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    t.after(() => producer.disconnect());
    const aborted = await producer.transaction();
    await aborted.send({ topic: 'txn-to-iggy', messages: [{ value: 'aborted-1' }, { value: 'aborted-2' }] });
    await aborted.abort();
    const committed = await producer.transaction();
    await committed.send({ topic: 'txn-to-iggy', messages: [{ value: 'committed' }] });
    await committed.commit();
    const open = await producer.transaction();
    await open.send({ topic: 'txn-to-iggy', messages: [{ value: 'not yet' }] });

    const pollAll = async () => {
      const polled = await iggy.ok(CommandCode.pollMessages, { consumer: { kind: ConsumerKind.consumer, id: sid(7) }, streamId: sid('default'), topicId: sid('txn-to-iggy'), partitionId: 0, strategy: { kind: PollingKind.first, value: 0n }, count: 100, autoCommit: false });
      const batches = polled.batches.length === 0 ? [] : (parsePolledBatches(Buffer.concat(polledBuffers(polled))) as ParsedBatch[]);
      return batches.flatMap((b) => b.frames.map((f) => f.payload.toString()));
    };
    assert.deepEqual(await pollAll(), ['committed']);
    await open.commit();
    assert.deepEqual(await pollAll(), ['committed', 'not yet']);
  });
});
