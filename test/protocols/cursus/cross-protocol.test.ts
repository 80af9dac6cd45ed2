// One log for every protocol: the whole server (startServer, as `npm start` runs it) with the
// Kafka and Cursus listeners on one broker. A topic created through Cursus is a Kafka topic with
// its partitions and retention; a topic created by a Kafka client is a Cursus topic (defaults,
// revision 1) with its partitions; a Kafka deletion takes the Cursus definition with it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { silentLogger } from '../../../src/base/logger.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer, type QuartetServer } from '../../../src/server/server.js';
import { CursusWireClient, assertError, okFields } from './wire-client.js';

describe('cursus ↔ kafka', { timeout: 60_000 }, () => {
  let server: QuartetServer;
  let dir: string;
  let admin: Admin;
  let cursus: CursusWireClient;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-cursus-cross-'));
    const { config } = loadConfig({
      flags: { 'data-dir': join(dir, 'data'), 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'kafka-enabled': true, 'cursus-addr': '127.0.0.1:0', 'iggy-enabled': false },
      env: { QUARTET_ROOT_PASSWORD: 'root-password' },
      cwd: dir,
    });
    server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
    await server.ready;
    const kafka = new Kafka({ clientId: 'cursus-cross', brokers: [`127.0.0.1:${server.listenerAddresses().get('kafka')!.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
    admin = kafka.admin();
    await admin.connect();
    cursus = await CursusWireClient.connect(server.listenerAddresses().get('cursus')!.port);
    await cursus.negotiate([1]);
  });
  after(async () => {
    cursus?.destroy();
    await admin?.disconnect();
    await server?.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('a topic created through Cursus is a Kafka topic, with its partitions and retention', async () => {
    okFields((await cursus.request('CREATE', { topic: 'from-cursus', partitions: '3', retention_hours: '24' }))[0]!);
    const metadata = await admin.fetchTopicMetadata({ topics: ['from-cursus'] });
    assert.equal(metadata.topics[0]!.partitions.length, 3);
    const configs = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: 'from-cursus', configNames: ['retention.ms'] }] });
    assert.equal(configs.resources[0]!.configEntries.find((e) => e.configName === 'retention.ms')?.configValue, String(24 * 3_600_000));
  });

  it('a topic created by a Kafka client is a Cursus topic; a Kafka deletion takes its definition', async () => {
    await admin.createTopics({ topics: [{ topic: 'from-kafka', numPartitions: 4 }] });
    const fields = okFields((await cursus.request('METADATA', { topic: 'from-kafka' }))[0]!);
    assert.equal(fields.get('partitions'), '4');
    assert.equal(fields.get('revision'), '1');
    assert.ok(okFields((await cursus.request('LIST'))[0]!).get('topics')!.split(',').includes('from-kafka'));
    assert.equal(okFields((await cursus.request('CREATE', { topic: 'from-kafka', partitions: '6', auth_policy: 'deny_read' }))[0]!).get('revision'), '2');
    assert.equal((await admin.fetchTopicMetadata({ topics: ['from-kafka'] })).topics[0]!.partitions.length, 6);
    await admin.deleteTopics({ topics: ['from-kafka'] });
    assertError(await cursus.request('METADATA', { topic: 'from-kafka' }), 'topic_not_found');
    await admin.createTopics({ topics: [{ topic: 'from-kafka', numPartitions: 1 }] });
    const again = okFields((await cursus.request('METADATA', { topic: 'from-kafka' }))[0]!);
    assert.equal(again.get('revision'), '1');
    assert.equal(again.get('auth_policy'), 'open', 'the old definition went with the deleted topic');
  });
});
