// `quartet topic|group|user|token|acl` run in-process against a whole broker started in
// this process (every listener on 127.0.0.1 port 0), through its HTTP admin API.

import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { closest, levenshtein } from '../../src/cli/suggest.js';
import { globalGrants } from '../../src/core/access.js';
import type { Broker } from '../../src/core/broker.js';
import { encodeNeutralBatch } from '../../src/log/index.js';
import { quartetVersion } from '../../src/base/version.js';
import { startBroker, type StartedBroker } from '../conformance/helpers.js';

interface Run {
  code: number;
  out: string;
  err: string;
}

let started: StartedBroker;
let broker: Broker;
let url: string;

async function run(argv: string[], env: Record<string, string> = {}, stdin = ''): Promise<Run> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    readStdin: async () => stdin,
    env: { QUARTET_BROKER: url, QUARTET_USER: 'root', QUARTET_PASSWORD: 'root-password', ...env },
    cwd: process.cwd(),
  };
  const code = await main(argv, io);
  return { code, out, err };
}

async function ok(argv: string[], env: Record<string, string> = {}, stdin = ''): Promise<string> {
  const r = await run(argv, env, stdin);
  assert.equal(r.code, 0, `quartet ${argv.join(' ')} exited ${r.code}: ${r.err}`);
  return r.out;
}

async function json<T>(argv: string[], env: Record<string, string> = {}): Promise<T> {
  return JSON.parse(await ok([...argv, '--json'], env)) as T;
}

const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');

/** The header row has `headers`, and every row's second column starts where its header does. */
function assertAligned(table: string, headers: string[]): void {
  const [head, ...rows] = lines(table);
  assert.ok(head !== undefined && rows.length > 0);
  const starts = [...head.matchAll(/\S+/g)].map((m) => [m[0], m.index] as const);
  assert.deepEqual(starts.map(([h]) => h), headers);
  const second = starts[1]![1];
  for (const row of rows) {
    assert.equal(row.slice(second - 2, second), '  ', `two spaces before column 2 in "${row}"`);
    assert.notEqual(row[second], ' ', `column 2 starts under its header in "${row}"`);
  }
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

before(async () => {
  started = await startBroker({ kafka: true, flags: { 'iggy-enabled': true } });
  broker = started.broker!;
  url = `http://127.0.0.1:${started.server!.httpAddress()!.port}`;
  await broker.users.create({ username: 'reader', password: 'reader-password', permissions: globalGrants(['read_topics']) });
});
after(() => started?.stop());

describe('quartet topic', () => {
  test('create, list (a table with headers), describe, alter-config, purge, delete', async () => {
    const created = await ok(['topic', 'create', 'orders', '-p', '3', '-c', 'retention.ms=3600000', '-c', 'cleanup.policy=compact']);
    assert.match(created, /^TOPIC\s+PARTITIONS\s+STATUS\n/);
    assert.match(created, /orders\s+3\s+created/);
    await ok(['topic', 'create', 'shop/eu orders']);
    const topic = broker.catalog.requireTopic({ topic: 'orders' });
    assert.deepEqual(topic.config, { 'retention.ms': 3_600_000, 'cleanup.policy': 'compact' });
    await broker.append(topic, 2, encodeNeutralBatch([{ value: 'a' }, { value: 'b' }]));

    const list = await ok(['topic', 'list']);
    assertAligned(list, ['NAMESPACE', 'NAME', 'PARTITIONS', 'MESSAGES', 'SIZE', 'KAFKA', 'IGGY', 'CURSUS']);
    assert.match(list, /\nshop\s+eu orders\s+1\s+0\s+0 B\s+shop\.eu_20orders\s+shop\/eu orders\s+-\n/);
    const listed = await json<Array<{ name: string; messages: number; names: { kafka: string | null } }>>(['topic', 'list']);
    assert.deepEqual(listed.map((t) => [t.name, t.messages, t.names.kafka]), [
      ['orders', 2, 'orders'],
      ['eu orders', 0, 'shop.eu_20orders'],
    ]);

    const described = await ok(['topic', 'describe', 'orders']);
    assert.match(described, /^SUMMARY\n/);
    assert.match(described, /kafka name\s+orders\n/);
    assert.match(described, /\nPARTITIONS\nPARTITION\s+START-OFFSET\s+END-OFFSET\s+MESSAGES\s+SIZE\s+SEGMENTS\n/);
    assert.match(described, /\n\s+2\s+0\s+2\s+2\s+/);
    assert.match(described, /\nretention\.ms\s+3600000\s+topic\n/);
    const detail = await json<{ partitionDetails: Array<{ endOffset: number }> }>(['topic', 'describe', 'orders']);
    assert.deepEqual(detail.partitionDetails.map((p) => p.endOffset), [0, 0, 2]);
    assert.equal((await json<{ name: string }>(['topic', 'describe', 'eu orders', '--namespace', 'shop'])).name, 'eu orders');

    const altered = await ok(['topic', 'alter-config', 'orders', '--set', 'retention.ms=60000', '--delete', 'cleanup.policy']);
    assert.match(altered, /^KEY\s+VALUE\s+SOURCE\n/);
    assert.match(altered, /retention\.ms\s+60000\s+topic/);
    assert.match(altered, /cleanup\.policy\s+delete\s+default/);
    assert.deepEqual(broker.catalog.requireTopic({ topic: 'orders' }).config, { 'retention.ms': 60_000 });

    await ok(['topic', 'purge', 'orders']);
    assert.equal((await json<{ messages: number }>(['topic', 'describe', 'orders'])).messages, 0);
    const deleted = await ok(['topic', 'delete', 'orders', 'shop/eu orders']);
    assert.match(deleted, /orders\s+deleted\n/);
    assert.equal(broker.catalog.listTopics().length, 0);
  });

  test('failures: a missing topic exits 1, missing rights 4, an unreachable broker 3', async () => {
    const missing = await run(['topic', 'describe', 'ghost']);
    assert.equal(missing.code, 1);
    assert.equal(missing.err, "quartet: topic 'default/ghost' does not exist (unknown_topic)\n");
    const partly = await run(['topic', 'delete', 'ghost', '--json']);
    assert.equal(partly.code, 1);
    assert.match((JSON.parse(partly.out) as Array<{ error: { message: string } }>)[0]!.error.message, /does not exist/);
    const denied = await run(['topic', 'create', 'nope'], { QUARTET_USER: 'reader', QUARTET_PASSWORD: 'reader-password' });
    assert.equal(denied.code, 4);
    assert.match(denied.err, /may not create topics/);
    const badLogin = await run(['topic', 'list'], { QUARTET_PASSWORD: 'wrong' });
    assert.equal(badLogin.code, 4);
    const port = await closedPort();
    const down = await run(['topic', 'list', '--broker', `http://127.0.0.1:${port}`]);
    assert.equal(down.code, 3);
    assert.match(down.err, /cannot reach the broker at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  });
});

describe('quartet group', () => {
  test('list and describe with lag; reset-offsets is a dry run until --execute; delete', async () => {
    await ok(['topic', 'create', 'payments', '-p', '2']);
    const topic = broker.catalog.requireTopic({ topic: 'payments' });
    await broker.append(topic, 0, encodeNeutralBatch([{ value: '1' }, { value: '2' }, { value: '3' }], { timestamp: 5_000 }));
    await broker.append(topic, 1, encodeNeutralBatch([{ value: '4' }], { timestamp: 9_000 }));
    await broker.offsets.commit('kafka', 'ledger', [{ topicInternalId: topic.internalId, partition: 0, offset: 1 }]);

    const list = await ok(['group', 'list']);
    assert.match(list, /^PROTOCOL\s+GROUP\s+STATE\s+MEMBERS\s+LAG\s+TOPICS\n/);
    assert.match(list, /\nkafka\s+ledger\s+empty\s+0\s+2\s+default\/payments\n/);
    const described = await ok(['group', 'describe', 'ledger']);
    assert.match(described, /total lag\s+2\n/);
    assert.match(described, /\nOFFSETS\nTOPIC\s+PARTITION\s+COMMITTED\s+END-OFFSET\s+LAG\npayments\s+0\s+1\s+3\s+2\n/);

    const dry = await run(['group', 'reset-offsets', 'ledger', '--to-earliest', '--topic', 'payments']);
    assert.equal(dry.code, 0, dry.err);
    assert.match(dry.out, /^TOPIC\s+PARTITION\s+CURRENT\s+NEW\npayments\s+0\s+1\s+0\npayments\s+1\s+-\s+0\n$/);
    assert.match(dry.err, /dry run, nothing changed; add --execute/);
    assert.equal((await broker.offsets.fetch('kafka', 'ledger', topic.internalId, 0))?.offset, 1);

    const at = new Date(9_000).toISOString();
    const applied = await json<{ dryRun: boolean; offsets: Array<{ partition: number; offset: number }> }>(['group', 'reset-offsets', 'ledger', '--to-datetime', at, '--topic', 'payments', '--execute']);
    assert.equal(applied.dryRun, false);
    assert.deepEqual(applied.offsets.map((o) => [o.partition, o.offset]), [[0, 3], [1, 0]]);
    assert.equal((await broker.offsets.fetch('kafka', 'ledger', topic.internalId, 1))?.offset, 0);
    await ok(['group', 'reset-offsets', 'ledger', '--to-offset', '2', '--partitions', '0', '--execute']);
    assert.equal((await broker.offsets.fetch('kafka', 'ledger', topic.internalId, 0))?.offset, 2);

    const usage = await run(['group', 'reset-offsets', 'ledger', '--to-earliest', '--to-latest']);
    assert.equal(usage.code, 2);
    const unknown = await run(['group', 'describe', 'ledgr']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /no group "ledgr" \(did you mean "ledger"\?\)/);

    assert.match(await ok(['group', 'delete', 'ledger']), /ledger\s+deleted/);
    assert.deepEqual(await broker.offsets.fetchGroup('kafka', 'ledger'), []);
  });
});

describe('quartet user, token, acl (online)', () => {
  test('user create, list, permissions, password, deactivate, delete on the running broker', async () => {
    const created = await ok(['user', 'create', 'carol', '--grant', 'read_topics,poll_messages']);
    assert.match(created, /^ID\s+USERNAME\s+STATUS\s+PERMISSIONS\s+CREATED\n/);
    const password = /generated password for user 'carol': (\S+) \(shown once\)/.exec(created)?.[1];
    assert.ok(password);
    const carol = { QUARTET_USER: 'carol', QUARTET_PASSWORD: password };
    assert.ok((await json<Array<{ name: string }>>(['topic', 'list'], carol)).length > 0, 'carol may read topics at once');

    const list = await ok(['user', 'list']);
    assert.match(list, /\n\s*0\s+root\s+active\s+root \(all\)/);
    assert.match(list, /carol\s+active\s+read_topics,poll_messages\s/);
    await ok(['user', 'permissions', 'carol', 'none']);
    assert.deepEqual((await json<Array<unknown>>(['topic', 'list'], carol)), []);
    const bad = await run(['user', 'permissions', 'carol', 'read_topic']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /unknown permission "read_topic" \(did you mean "read_topics"\?\)/);

    await ok(['user', 'password', 'carol', '--new-password-stdin'], carol, 'carol-new-password\n');
    const renewed = { QUARTET_USER: 'carol', QUARTET_PASSWORD: 'carol-new-password' };
    assert.equal((await run(['acl', 'list'], renewed)).code, 0);
    assert.equal((await run(['acl', 'list'], carol)).code, 4, 'the old password no longer works');

    await ok(['user', 'deactivate', 'carol']);
    assert.equal((await run(['acl', 'list'], renewed)).code, 4);
    await ok(['user', 'activate', 'carol']);
    assert.match(await ok(['user', 'delete', 'carol']), /carol\s+deleted/);
    assert.equal(broker.users.get('carol'), null);
    // The offline path refuses next to the running broker, and says why.
    const offline = await run(['user', 'list', '--offline', '--data-dir', started.dataDir + '/data']);
    assert.equal(offline.code, 1);
    assert.match(offline.err, /leave out --offline/);
  });

  test('token create, use as QUARTET_TOKEN, list, delete; acl list', async () => {
    const created = await json<{ secret: string; token: { name: string; expiresAt: string | null } }>(['token', 'create', 'deploy', '--expires-in', '30d']);
    assert.equal(created.token.name, 'deploy');
    assert.ok(created.token.expiresAt !== null && Date.parse(created.token.expiresAt) > Date.now() + 29 * 86_400_000);
    const viaToken = { QUARTET_USER: '', QUARTET_PASSWORD: '', QUARTET_TOKEN: created.secret };
    assert.equal((await run(['topic', 'list'], viaToken)).code, 0);
    const listed = await ok(['token', 'list']);
    assert.match(listed, /^USER\s+NAME\s+CREATED\s+EXPIRES\nroot\s+deploy\s+/);
    await ok(['token', 'create', 'theirs', '--for', 'reader']);
    assert.deepEqual((await json<Array<{ user: string; name: string }>>(['token', 'list', '--for', 'reader'])).map((t) => [t.user, t.name]), [['reader', 'theirs']]);
    await ok(['token', 'delete', 'deploy']);
    assert.equal((await run(['topic', 'list'], viaToken)).code, 4);
    assert.equal((await run(['token', 'create', 'x', '--expires-in', 'soon'])).code, 2);

    const acls = await ok(['acl', 'list']);
    assert.match(acls, /^USER\s+RESOURCE\s+NAME\s+RIGHTS\nroot\s+cluster\s+\*\s+all \(root\)\nreader\s+cluster\s+\*\s+read_topics\n/);
    assert.deepEqual(await json<Array<{ user: string }>>(['acl', 'list'], { QUARTET_USER: 'reader', QUARTET_PASSWORD: 'reader-password' }), [{ user: 'reader', resource: 'cluster', name: '*', rights: ['read_topics'] }]);
  });
});

describe('usage and hints', () => {
  test('a mistyped command, subcommand or flag is one line with a did-you-mean hint, exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['tpoic', 'list'], /^quartet: unknown command "tpoic" \(did you mean "topic"\?\); see 'quartet help'\n$/],
      [['topic', 'lst'], /^quartet: unknown topic subcommand "lst" \(did you mean "list"\?\); see 'quartet help topic'\n$/],
      [['topic', 'list', '--jsn'], /^quartet: unknown option --jsn \(did you mean --json\?\); see 'quartet help topic'\n$/],
      [['group', 'reset-offsets', 'g', '--to-earlest'], /unknown option --to-earlest \(did you mean --to-earliest\?\)/],
      [['completion', 'zhs'], /unknown shell "zhs" \(did you mean "zsh"\?\)/],
      [['log', 'verfy'], /unknown log subcommand "verfy" \(did you mean "verify"\?\)/],
      [['iggy', 'pol'], /unknown iggy subcommand "pol" \(did you mean "poll"\?\)/],
      [['help', 'grup'], /unknown command "grup" \(did you mean "group"\?\)/],
      [['topic', 'list', '--broker', 'not a url'], /--broker takes a URL/],
    ];
    for (const [argv, expected] of cases) {
      const r = await run(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.err, expected);
      assert.equal(r.out, '');
    }
    const noCreds = await run(['topic', 'list'], { QUARTET_USER: '', QUARTET_PASSWORD: '' });
    assert.equal(noCreds.code, 2);
    assert.match(noCreds.err, /no credentials/);
  });

  test('levenshtein and the closeness rule', () => {
    assert.equal(levenshtein('kitten', 'sitting'), 3);
    assert.equal(levenshtein('', 'abc'), 3);
    assert.equal(closest('lsit', ['list', 'create']), 'list');
    assert.equal(closest('xyz', ['list', 'create']), null);
    assert.equal(closest('desc', ['list', 'describe']), 'describe', 'a prefix counts');
  });

  test('version --json and help for every new command', async () => {
    assert.deepEqual(JSON.parse(await ok(['version', '--json'])), { version: quartetVersion });
    for (const command of ['topic', 'group', 'user', 'token', 'acl', 'completion', 'user-offline']) {
      assert.match(await ok(['help', command]), /^Usage: quartet /, command);
    }
    assert.match(await ok(['topic', '--help']), /quartet topic alter-config/);
  });
});
