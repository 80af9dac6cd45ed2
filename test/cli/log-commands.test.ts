import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { logPathKind, showBytes } from '../../src/cli/log-commands.js';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { Broker } from '../../src/core/broker.js';
import { encodeNeutralBatch } from '../../src/log/index.js';

const root = mkdtempSync(join(tmpdir(), 'quartet-log-cli-'));
after(() => rmSync(root, { recursive: true, force: true }));
const dataDir = join(root, 'data');
let ordersId = 0;

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), readStdin: async () => '', env: {}, cwd: root };
  const code = await main(argv, io);
  return { code, out, err };
}

before(async () => {
  const broker = await Broker.open({ dataDir, rootUser: null });
  try {
    const orders = await broker.createTopic('default', 'orders', { partitions: 2 });
    ordersId = orders.internalId;
    await broker.createNamespace('shop');
    await broker.createTopic('shop', 'events', { partitions: 1 });
    await broker.append(orders, 1, encodeNeutralBatch([{ key: 'k1', value: 'hello', headers: [{ key: 'h', value: 'v' }] }, { key: null, value: Buffer.from([0, 1, 255]) }], { timestamp: 1_700_000_000_000 }));
    await broker.append({ namespace: 'shop', topic: 'events' }, 0, encodeNeutralBatch([{ value: 'e1' }]));
  } finally {
    await broker.close();
  }
  mkdirSync(join(root, 'not-data', 'src'), { recursive: true });
});

describe('log verify: what a path may be', () => {
  test('the layout is recognised: data, topic and partition directories; anything else is none', () => {
    assert.equal(logPathKind(dataDir), 'data');
    assert.equal(logPathKind(join(dataDir, 'logs', String(ordersId))), 'topic');
    assert.equal(logPathKind(join(dataDir, 'logs', String(ordersId), '0')), 'partition');
    assert.equal(logPathKind(join(root, 'not-data')), null);
    assert.equal(logPathKind(join(dataDir, 'logs')), null);
  });

  test('a directory that is not a data, topic or partition directory is refused with exit 2', async () => {
    for (const dir of [join(root, 'not-data'), join(dataDir, 'logs'), join(dataDir, 'meta')]) {
      const r = await run(['log', 'verify', dir]);
      assert.equal(r.code, 2, dir);
      assert.match(r.err, /is not a data directory, topic directory/);
      assert.equal(r.out, '');
    }
    const dump = await run(['log', 'dump', join(root, 'not-data')]);
    assert.equal(dump.code, 2);
  });

  test('a data directory verifies every partition; a topic directory its own', async () => {
    assert.match((await run(['log', 'verify', dataDir])).out, /verified 3 partition\(s\).* 2 batch\(es\), 3 record\(s\), 0 problem\(s\)/);
    const topic = await run(['log', 'verify', join(dataDir, 'logs', String(ordersId))]);
    assert.equal(topic.code, 0);
    assert.match(topic.out, /verified 2 partition\(s\).* 1 batch\(es\), 2 record\(s\)/);
  });

  test('--topic takes a Kafka name or namespace/topic, with --partition', async () => {
    assert.match((await run(['log', 'verify', dataDir, '--topic', 'orders'])).out, /verified 2 partition\(s\).* 2 record\(s\)/);
    assert.match((await run(['log', 'verify', '--data-dir', dataDir, '--topic', 'orders', '--partition', '0'])).out, /verified 1 partition\(s\).* 0 record\(s\)/);
    assert.match((await run(['log', 'verify', dataDir, '--topic', 'shop.events'])).out, /verified 1 partition\(s\).* 1 record\(s\)/);
    assert.match((await run(['log', 'verify', dataDir, '--topic', 'shop/events'])).out, /1 record\(s\)/);
    const missing = await run(['log', 'verify', dataDir, '--topic', 'nope']);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /no topic nope/);
    const badPartition = await run(['log', 'verify', dataDir, '--topic', 'orders', '--partition', '2']);
    assert.equal(badPartition.code, 2);
    assert.match(badPartition.err, /has 2 partition\(s\)/);
  });
});

describe('log dump', () => {
  test('--records prints keys, headers and values, as text or hex', async () => {
    const r = await run(['log', 'dump', dataDir, '--topic', 'orders', '--partition', '1', '--records']);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trim().split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /^offsets 0\.\.1 format=neutral records=2/);
    assert.equal(lines[1], '  record offset=0 ts=2023-11-14T22:13:20.000Z key="k1" headers={"h"="v"} value="hello"');
    assert.equal(lines[2], '  record offset=1 ts=2023-11-14T22:13:20.000Z key=null headers={} value=0x0001ff');
  });

  test('--records --json gives each record with text or hex bytes', async () => {
    const r = await run(['log', 'dump', dataDir, '--topic', 'orders', '--partition', '1', '--records', '--json']);
    const batch = JSON.parse(r.out.trim()) as { records: Array<Record<string, unknown>>; payload?: unknown };
    assert.equal(batch.payload, undefined);
    assert.deepEqual(batch.records[0], { offset: 0, timestamp: 1_700_000_000_000, key: { text: 'k1' }, headers: [{ key: 'h', value: { text: 'v' } }], value: { text: 'hello' } });
    assert.deepEqual(batch.records[1]!.value, { hex: '0001ff' });
  });

  test('a topic of several partitions needs --partition', async () => {
    const r = await run(['log', 'dump', dataDir, '--topic', 'orders']);
    assert.equal(r.code, 2);
    assert.match(r.err, /add --partition N/);
  });

  test('showBytes: printable UTF-8 quoted, anything else hex', () => {
    assert.equal(showBytes(Buffer.from('héllo')), '"héllo"');
    assert.equal(showBytes(Buffer.from([0xc3])), '0xc3');
    assert.equal(showBytes(Buffer.from('a\u0001')), '0x6101');
    assert.equal(showBytes(null), 'null');
  });
});
