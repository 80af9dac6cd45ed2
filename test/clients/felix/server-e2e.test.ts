// The Felix SDK end to end against the whole server (startServer, as `npm start` runs it) over
// real QUIC on UDP, trusting the self-signed certificate the server writes to its data directory:
// publishes (binary acked, keyed, idempotent), a subscription, stream_shards, caches with a
// watch, counters and a queue group through the SDK's public API; then the server restarts on the
// same data directory and a new client finds the stream's records, the cache's values, the
// counters and the group's position (acked records are not delivered again) as they were.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../../src/base/logger.js';
import { FelixClient, type CacheChange, type EventBatch, type FelixSubscription } from '../../../src/clients/felix/index.js';
import { selfSignedCertificateFile } from '../../../src/protocols/felix/listener.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer, type QuartetServer } from '../../../src/server/server.js';

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function collect(sub: FelixSubscription): Array<[bigint | null, string]> {
  const seen: Array<[bigint | null, string]> = [];
  sub.on('batch', (b: EventBatch) => b.payloads.forEach((p, i) => seen.push([b.baseOffset === null ? null : b.baseOffset + BigInt(i), p.toString()])));
  return seen;
}

describe('the Felix SDK against the server, and a restart', { timeout: 120_000 }, () => {
  let dir: string;
  let server: QuartetServer;
  let client: FelixClient;

  async function start(): Promise<void> {
    const { config } = loadConfig({
      flags: { 'data-dir': join(dir, 'data'), 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'kafka-enabled': false, 'iggy-enabled': false, 'cursus-enabled': false },
      env: { QUARTET_ROOT_PASSWORD: 'root-password' },
      cwd: dir,
    });
    server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
    await server.ready;
    const ca = readFileSync(join(dir, 'data', selfSignedCertificateFile), 'utf8');
    client = new FelixClient({ addr: `127.0.0.1:${server.listenerAddresses().get('felix')!.port}`, ca, tenantId: 'default', token: 'any', requestTimeoutMs: 15_000 });
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-felix-sdk-e2e-'));
    await start();
    await server.broker()!.createTopic('default', 'orders', { partitions: 2 });
  });
  after(async () => {
    await client?.close();
    await server?.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes, subscribes, counts shards', async () => {
    const publisher = client.publisher('orders');
    const sent = await Promise.all(['o0', 'o1', 'o2'].map((p) => publisher.send(p)));
    assert.ok(sent.every((r) => r.acked && r.encoding === 'binary'));
    await publisher.sendBatch(['o3', 'o4'], { ack: 'per_batch' });
    const idem = client.idempotentPublisher('orders');
    const receipts = [await idem.send('i0'), await idem.sendBatch(['i1', 'i2'])];
    assert.deepEqual(receipts.map((r) => r.sequence), [0n, 1n]);
    // Key `x` goes to shard 1 of 2 (FNV-1a 64 mod 2); everything else is shard 0.
    await client.publisher('orders', { key: 'x' }).send('keyed');
    assert.equal(await client.streamShards('orders'), 2);
    const sub = await client.subscribe('orders', { start: 'earliest' });
    const seen = collect(sub);
    await until(() => seen.length >= 8, 'eight events');
    assert.deepEqual(seen.map(([o]) => o), Array.from({ length: 8 }, (_, i) => BigInt(i)));
    assert.deepEqual(new Set(seen.map(([, p]) => p)), new Set(['o0', 'o1', 'o2', 'o3', 'o4', 'i0', 'i1', 'i2']));
    const shard1 = await client.subscribe('orders', { shard: 1, start: 'earliest' });
    const seen1 = collect(shard1);
    await until(() => seen1.length >= 1, 'the keyed event');
    assert.deepEqual(seen1, [[0n, 'keyed']]);
    await Promise.all([sub.close(), shard1.close()]);
  });

  it('caches with a watch, and counters', async () => {
    const cache = client.cache('profiles');
    const watch = await cache.watch({ prefix: 'u/' });
    const changes: CacheChange[] = [];
    watch.on('change', (c: CacheChange) => changes.push(c));
    await cache.put('u/1', 'alice');
    await cache.put('u/2', 'bob', { ttlMs: 3_600_000 });
    await cache.put('u/3', 'carol');
    assert.equal((await cache.delete('u/3'))?.toString(), 'carol');
    assert.equal((await cache.get('u/1'))?.toString(), 'alice');
    await until(() => changes.length >= 4, 'four changes');
    assert.deepEqual(changes.map((c) => [c.key, c.value?.toString() ?? null]), [
      ['u/1', 'alice'],
      ['u/2', 'bob'],
      ['u/3', 'carol'],
      ['u/3', null],
    ]);
    await watch.close();
    assert.equal(await cache.addCounter('visits', 40), 40n);
    assert.equal(await cache.addCounter('visits', 2), 42n);
  });

  it('a queue group acks, nacks and redelivers', async () => {
    const group = client.groupConsumer('orders', 'billing');
    const first = await group.poll({ maxRecords: 2 });
    assert.deepEqual(first.map((r) => [r.offset, r.attempts]), [
      [0n, 1],
      [1n, 1],
    ]);
    await group.ack(0n);
    await group.nack(1n);
    const again = await group.poll({ maxRecords: 1 });
    assert.deepEqual(again.map((r) => [r.offset, r.attempts]), [[1n, 2]]);
    await group.ack(1n);
    assert.deepEqual(await group.deadLetters(), []);
    await group.close();
  });

  it('after a restart the records, values, counters and the group position are there', async () => {
    await client.close();
    await server.stop('restart');
    await start();
    const cache = client.cache('profiles');
    assert.equal((await cache.get('u/1'))?.toString(), 'alice');
    assert.equal((await cache.get('u/2'))?.toString(), 'bob');
    assert.equal(await cache.get('u/3'), null);
    assert.equal(await cache.getCounter('visits'), 42n);
    const group = client.groupConsumer('orders', 'billing');
    assert.deepEqual((await group.poll({ maxRecords: 1 })).map((r) => r.offset), [2n], 'acked records are not delivered again');
    await group.close();
    const sub = await client.subscribe('orders', { start: 'earliest' });
    const seen = collect(sub);
    await until(() => seen.length >= 8, 'eight events after the restart');
    assert.equal(seen.length, 8);
    await sub.close();
  });
});
