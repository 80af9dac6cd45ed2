// The options Iggy stored for a topic are looked after whether or not the Iggy listener is open
// (src/protocols/iggy/topic-options-table.ts, run by the server on every broker it opens): a
// Kafka CreatePartitions made while the Iggy listener is off spreads an Iggy max_topic_size over the
// new count, and a topic deleted then takes its stored options with it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { Broker } from '../../../src/core/broker.js';
import { silentLogger } from '../../../src/base/logger.js';
import { CommandCode, option } from '../../../src/protocols/iggy/codec/index.js';
import { admitTopicOptions, topicOptionsProtocol } from '../../../src/protocols/iggy/topic-options.js';
import { IggyTopicOptionsTable } from '../../../src/protocols/iggy/topic-options-table.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer, type QuartetServer } from '../../../src/server/server.js';
import { testScryptCost } from '../../core/helpers.js';
import { IggyTestClient, sid } from './harness.js';
import { builtinFormats } from '../../../src/server/listeners.js';
import { platformaticKafkaPeer } from '../../peers/platformatic-kafka.js';

const peer = await platformaticKafkaPeer();

const mib = 1024 * 1024;

it('a Kafka CreatePartitions while the Iggy listener is off spreads max_topic_size; a Kafka delete drops the stored options', { timeout: 60_000, skip: peer.skip }, async (t) => {
  const { Admin } = peer.kafka!;
  const dir = mkdtempSync(join(tmpdir(), 'quartet-iggy-options-off-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const start = async (iggyEnabled: boolean): Promise<QuartetServer> => {
    const { config } = loadConfig({
      flags: { 'data-dir': join(dir, 'data'), 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'kafka-enabled': true, 'iggy-addr': '127.0.0.1:0', 'iggy-enabled': iggyEnabled, 'cursus-enabled': false },
      env: { QUARTET_ROOT_PASSWORD: 'root-password' },
      cwd: dir,
    });
    const server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
    await server.ready;
    return server;
  };
  const connectRoot = async (server: QuartetServer): Promise<IggyTestClient> => {
    const iggy = await IggyTestClient.connect(server.listenerAddresses().get('iggy')!.port);
    assert.ok('value' in (await iggy.login('root', 'root-password')));
    return iggy;
  };
  const sized = [option('segment_size', { kind: 'uint64', value: BigInt(mib) }), option('max_topic_size', { kind: 'uint64', value: 64n * BigInt(mib) })];

  // With Iggy: two topics holding 64 MiB each over 2 partitions.
  let server = await start(true);
  let iggy = await connectRoot(server);
  for (const name of ['grown', 'dropped']) await iggy.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name, options: sized });
  iggy.destroy();
  await server.stop('Iggy off next');

  // Without Iggy: Kafka grows one topic to 4 partitions and deletes the other.
  server = await start(false);
  assert.equal(server.listenerAddresses().get('iggy'), undefined, 'no Iggy listener');
  const admin = new Admin({ clientId: 'iggy-options-off', bootstrapBrokers: [`127.0.0.1:${server.listenerAddresses().get('kafka')!.port}`] });
  try {
    await admin.createPartitions({ topics: [{ name: 'grown', count: 4 }] });
    const dropped = server.broker()!.catalog.requireTopic({ topic: 'dropped' });
    await admin.deleteTopics({ topics: ['dropped'] });
    assert.equal(server.broker()!.catalog.requireTopic({ topic: 'grown' }).config['retention.bytes'], 16 * mib, '64 MiB over 4 partitions');
    const stored = (await server.broker()!.topicOptions.list(topicOptionsProtocol)).map((e) => String(e.topicInternalId));
    assert.ok(!stored.includes(String(dropped.internalId)), `the deleted topic's options went with it (stored: ${stored.join(', ')})`);
  } finally {
    await admin.close();
    await server.stop('Iggy on again');
  }

  // With Iggy again: the topic still holds 64 MiB in all, as Iggy set it.
  server = await start(true);
  try {
    iggy = await connectRoot(server);
    const topic = await iggy.ok(CommandCode.getTopic, { streamId: sid('default'), topicId: sid('grown') });
    assert.equal(topic?.partitionsCount, 4);
    assert.equal(topic?.maxTopicSize, 64n * BigInt(mib));
    assert.ok(topic?.explicitOptions.some((o) => o.key === 'max_topic_size'), 'still set through Iggy');
    iggy.destroy();
  } finally {
    await server.stop('test done');
  }
});

it('a table whose load failed loads again at the next watch, listening once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-iggy-options-load-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const broker = await Broker.open({ formats: builtinFormats(), dataDir: dir, memory: true, maintenanceIntervalMs: 0, scryptCost: testScryptCost, rootUser: { username: 'iggy', password: 'iggy-password' } });
  t.after(() => broker.close());
  const ns = await broker.createNamespace('shop');
  // As an Iggy CreateTopic stores it: the options, and 64 MiB spread over 2 partitions in the core config.
  const topic = await broker.createTopic(ns.id, 'sized', { partitions: 2, config: { 'retention.bytes': 32 * mib } });
  const sized = [option('segment_size', { kind: 'uint64', value: BigInt(mib) }), option('max_topic_size', { kind: 'uint64', value: 64n * BigInt(mib) })];
  await new IggyTopicOptionsTable(broker).save(topic, admitTopicOptions(sized, 2));

  const table = new IggyTopicOptionsTable(broker);
  const list = broker.topicOptions.list.bind(broker.topicOptions);
  let failures = 1;
  broker.topicOptions.list = (protocol) => (failures-- > 0 ? Promise.reject(new Error('disk error')) : list(protocol));
  await assert.rejects(table.watch(), /disk error/);
  await table.watch();
  assert.equal(table.viewOf(topic).values.max_topic_size, 64n * BigInt(mib), 'loaded on the second watch');
  await broker.addPartitions(topic, 4);
  assert.equal(broker.catalog.requireTopic(topic).config['retention.bytes'], 16 * mib, '64 MiB over 4 partitions');
  assert.equal((broker as unknown as { topicListeners: Set<unknown> }).topicListeners.size, 1, 'one listener for the table');
});
