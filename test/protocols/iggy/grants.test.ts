// Iggy grants go with the stream or topic they name even while the Iggy listener is off: the
// server watches its broker (src/protocols/iggy/grants.ts), so a Kafka client that deletes a topic
// and creates another, which takes the freed id, does not hand the old grant to the new topic.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { silentLogger } from '../../../src/base/logger.js';
import { permissionsOf } from '../../../src/protocols/iggy/permissions.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer } from '../../../src/server/server.js';

it('a server with the Iggy listener off still drops the grants of a topic deleted by another protocol', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-iggy-grants-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { config } = loadConfig({
    flags: { 'data-dir': join(dir, 'data'), 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'kafka-enabled': true, 'iggy-enabled': false, 'cursus-enabled': false },
    env: { QUARTET_ROOT_PASSWORD: 'root-password' },
    cwd: dir,
  });
  const server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
  t.after(() => server.stop('test done'));
  await server.ready;
  assert.equal(server.listenerAddresses().get('iggy'), undefined, 'no Iggy listener');
  const broker = server.broker()!;
  const ns = await broker.createNamespace('shop');
  const orders = await broker.createTopic(ns.id, 'orders', { partitions: 1 });
  const topicGrant = { topicId: orders.id, manageTopic: false, readTopic: true, pollMessages: true, sendMessages: true };
  const streamGrant = { streamId: ns.id, manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false, topics: [topicGrant] };
  const global = { manageServers: false, readServers: false, manageUsers: false, readUsers: false, manageStreams: false, readStreams: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false };
  const user = await broker.users.create({ username: 'scoped', password: 'password-1', status: 'active' });
  await broker.users.setPermissions(user.id, { global, streams: [streamGrant] });

  // As a Kafka DeleteTopics and CreateTopics of `shop.orders` / `shop.refunds` would.
  await broker.deleteTopic({ namespace: ns.id, topic: 'orders' });
  const refunds = await broker.createTopic(ns.id, 'refunds', { partitions: 1 });
  assert.equal(refunds.id, orders.id, 'the freed id is handed out again');
  const after = permissionsOf(broker.users.get('scoped')!);
  assert.deepEqual(after?.streams.map((s) => [s.streamId, s.topics.map((x) => x.topicId)]), [[ns.id, []]]);
});
