import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createLogger } from '../../src/base/logger.js';
import { Broker } from '../../src/core/broker.js';

const root = mkdtempSync(join(tmpdir(), 'quartet-events-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('topic, namespace, user and token changes are logged once by the core, whichever protocol asks, and no secret is', async () => {
  const lines: string[] = [];
  const broker = await Broker.open({ dataDir: root, rootUser: { username: 'root', password: 'root-password-1' }, logger: createLogger('info', (l) => lines.push(l)), scryptCost: { N: 1024, r: 8, p: 1 } });
  let secret = '';
  try {
    await broker.createNamespace('shop');
    const topic = await broker.createTopic('shop', 'events', { partitions: 2 });
    await broker.deleteTopic(topic);
    await broker.users.create({ username: 'alice', password: 'alice-password' });
    secret = (await broker.users.createToken('alice', 'ci', null)).token;
    await broker.users.deleteToken('alice', 'ci');
    await broker.users.delete('alice');
    await broker.deleteNamespace('shop');
  } finally {
    await broker.close();
  }
  const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => /^(created|deleted) (namespace|topic|user|token)$/.test(String(l.msg)));
  assert.deepEqual(
    events.map((e) => [e.msg, e.namespace ?? e.user]),
    [
      ['created user', 'root'],
      ['created namespace', 'shop'],
      ['created topic', 'shop'],
      ['deleted topic', 'shop'],
      ['created user', 'alice'],
      ['created token', 'alice'],
      ['deleted token', 'alice'],
      ['deleted user', 'alice'],
      ['deleted namespace', 'shop'],
    ],
  );
  assert.equal(events[2]!.topic, 'events');
  assert.equal(events[2]!.partitions, 2);
  assert.equal(events[5]!.token, 'ci');
  assert.ok(lines.every((l) => !l.includes(secret) && !l.includes('alice-password') && !l.includes('root-password-1')), 'no password or token secret in the log');
});
