// Felix end to end against the whole server (startServer, as `npm start` runs it) over real QUIC
// on UDP, with the self-signed certificate the server writes to its data directory: every client
// request type of the v0.5.0 wire (auth both ways, JSON and binary publishes, idempotent
// publishes, subscribe, stream_shards, caches with a watch, counters, groups with dead letters),
// then a restart on the same data directory: the stream's records, the cache's values, the
// counters and the group's acks, claims lapsed and dead letters are all still there.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../../src/base/logger.js';
import { encodePublishBatch, recordPayloads, type FelixMessage } from '../../../src/protocols/felix/codec/index.js';
import { selfSignedCertificateFile } from '../../../src/protocols/felix/listener.js';
import { connectFelixQuic } from '../../../src/protocols/felix/quic.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer, type QuartetServer } from '../../../src/server/server.js';
import { TestClient, type FrameReader, type TestStream } from './harness.js';

const stream = { tenantId: 'default', namespace: 'default', stream: 'e2e' };
const cache = { tenantId: 'default', namespace: 'default', cache: 'e2e' };
const group = { ...stream, shard: 0, group: 'g' };

async function payloads(r: FrameReader, count: number): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  while (out.length < count) {
    const got = await r.next();
    if (got.kind !== 'frame' || got.frame.kind !== 'event_batch') throw new Error(`expected an event batch, got ${JSON.stringify(got.kind)}`);
    const b = got.frame.batch;
    recordPayloads(b.records).forEach((p, i) => out.push([Number(b.baseOffset ?? -1n) + i, p.toString()]));
  }
  return out;
}

describe('felix end to end against the server, and a restart', { timeout: 120_000 }, () => {
  let dir: string;
  let server: QuartetServer;
  let client: TestClient;
  let s: TestStream;
  let id = 1n;
  let uniSeen = 0;

  async function start(): Promise<void> {
    const { config } = loadConfig({
      flags: { 'data-dir': join(dir, 'data'), 'http-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'iggy-enabled': false, 'cursus-enabled': false },
      env: { QUARTET_ROOT_PASSWORD: 'root-password' },
      cwd: dir,
    });
    server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
    await server.ready;
    const ca = readFileSync(join(dir, 'data', selfSignedCertificateFile), 'utf8');
    client = new TestClient(await connectFelixQuic({ host: '127.0.0.1', port: server.listenerAddresses().get('felix')!.port, ca, logger: silentLogger }));
    uniSeen = 0;
    s = await client.authed('default', 'x', 0x00ff);
  }

  const ask = async (m: FelixMessage): Promise<FelixMessage> => {
    s.send(m);
    return s.reader.message();
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-felix-e2e-'));
    await start();
    await server.broker()!.createTopic('default', 'e2e', { partitions: 2 });
  });
  after(async () => {
    await client?.close().catch(() => {});
    await server?.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('auth: legacy ok, and auth_ok with every flag and the single-node features', async () => {
    const legacy = client.stream();
    legacy.send({ type: 'auth', tenantId: 'default', token: 'x' });
    assert.deepEqual(await legacy.reader.message(), { type: 'ok' });
    const modern = client.stream();
    modern.send({ type: 'auth', tenantId: 'default', token: 'x', clientFlags: 0x00ff, clientFeatures: 0x03ff });
    assert.deepEqual(await modern.reader.message(), { type: 'auth_ok', serverFlags: 0x00ff, serverFeatures: 0x03fc });
  });

  it('publishes: JSON publish and publish_batch, binary acked (keyed), ack none; shards; subscribe', async () => {
    assert.deepEqual(await ask({ type: 'publish', ...stream, payload: Buffer.from('p0'), requestId: id++ }), { type: 'publish_ok', requestId: id - 1n });
    assert.deepEqual(await ask({ type: 'publish_batch', ...stream, payloads: [Buffer.from('p1'), Buffer.from('p2')], requestId: id++ }), { type: 'publish_ok', requestId: id - 1n });
    s.send({ type: 'publish', ...stream, payload: Buffer.from('p3'), ack: 'none' });
    s.write(encodePublishBatch({ acked: { requestId: id++, ackMode: 'per_batch' }, key: null, ...stream, payloads: [Buffer.from('p4'), Buffer.from('p5')] }));
    const ack = await s.reader.next();
    assert.ok(ack.kind === 'frame' && ack.frame.kind === 'publish_ack' && ack.frame.ack.error === null && ack.frame.ack.requestId === id - 1n);
    s.write(encodePublishBatch({ acked: { requestId: id++, ackMode: 'per_message' }, key: Buffer.from('x'), ...stream, payloads: [Buffer.from('keyed')] }));
    // Key `x` is shard 1 of 2 (FNV-1a 64 mod 2); the rest is shard 0.
    const keyed = await s.reader.next();
    assert.ok(keyed.kind === 'frame' && keyed.frame.kind === 'publish_ack' && keyed.frame.ack.error === null);
    assert.deepEqual(await ask({ type: 'stream_shards', ...stream, requestId: 100n }), { type: 'stream_shards_view', shards: 2, requestId: 100n });

    const sub = await client.authed('default', 'x', 0x00ff);
    sub.send({ type: 'subscribe', ...stream, start: 'earliest' });
    assert.equal((await sub.reader.message()).type, 'subscribed');
    const events = await client.eventStream(uniSeen++);
    assert.equal((await events.message()).type, 'event_stream_hello');
    assert.deepEqual(await payloads(events, 6), ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'].map((p, i) => [i, p]));
  });

  it('idempotent publishes: producer_init, a sequence, its retry answered without appending', async () => {
    const init = await ask({ type: 'producer_init', requestId: id++ });
    if (init.type !== 'producer_init_ok') return assert.fail(JSON.stringify(init));
    const pub = (sequence: bigint): Promise<FelixMessage> => ask({ type: 'publish_idempotent', ...stream, payloads: [Buffer.from('i0')], requestId: id++, producerId: init.producerId, sequence });
    assert.equal((await pub(0n)).type, 'publish_ok');
    assert.equal((await pub(0n)).type, 'publish_ok');
    const end = (await server.broker()!.reads.openSettled(server.broker()!.catalog.getTopic({ namespace: 'default', topic: 'e2e' })!, 0)).position().lastStableOffset;
    assert.equal(end, 7, 'the retry appended nothing');
  });

  it('caches, a watch and counters', async () => {
    const w = await client.authed('default', 'x', 0x00ff);
    w.send({ type: 'cache_watch', ...cache, prefix: '', retained: false });
    const started = await w.reader.message();
    assert.equal(started.type, 'cache_watch_started');
    const changes = await client.eventStream(uniSeen++);
    assert.equal((await changes.message()).type, 'event_stream_hello');
    assert.deepEqual(await ask({ type: 'cache_put', ...cache, key: 'a', value: Buffer.from('A'), requestId: 200n, ttlMs: null }), { type: 'cache_ok', requestId: 200n });
    assert.deepEqual(await ask({ type: 'cache_put', ...cache, key: 'b', value: Buffer.from('B'), requestId: 201n, ttlMs: 3_600_000n }), { type: 'cache_ok', requestId: 201n });
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'a', requestId: 202n }), { type: 'cache_value', ...cache, key: 'a', value: Buffer.from('A'), requestId: 202n });
    assert.deepEqual(await ask({ type: 'cache_delete', ...cache, key: 'b', requestId: 203n }), { type: 'cache_value', ...cache, key: 'b', value: Buffer.from('B'), requestId: 203n });
    const seen = [await changes.message(), await changes.message(), await changes.message()].map((m) => (m.type === 'cache_event' ? [m.key, m.value?.toString() ?? null] : m.type));
    assert.deepEqual(seen, [
      ['a', 'A'],
      ['b', 'B'],
      ['b', null],
    ]);
    assert.deepEqual(await ask({ type: 'counter_add', ...cache, key: 'n', delta: 40n, requestId: 204n }), { type: 'counter_value', value: 40n, requestId: 204n });
    assert.deepEqual(await ask({ type: 'counter_add', ...cache, key: 'n', delta: 2n, requestId: 205n }), { type: 'counter_value', value: 42n, requestId: 205n });
    assert.deepEqual(await ask({ type: 'counter_get', ...cache, key: 'n', requestId: 206n }), { type: 'counter_value', value: 42n, requestId: 206n });
  });

  it('groups: poll, ack, nack, dead letters (discard, redrive)', async () => {
    const poll = async (maxRecords: number): Promise<Array<[number, string]>> => {
      const m = await ask({ type: 'group_poll', ...group, maxRecords, waitMs: 0n, requestId: id++ });
      if (m.type !== 'group_records') return assert.fail(JSON.stringify(m));
      return m.records.map((r) => [Number(r.offset), r.payload.toString()]);
    };
    assert.deepEqual(await poll(2), [
      [0, 'p0'],
      [1, 'p1'],
    ]);
    assert.deepEqual(await ask({ type: 'group_ack', ...group, offset: 0n, requestId: 300n }), { type: 'cache_ok', requestId: 300n });
    assert.deepEqual(await ask({ type: 'group_nack', ...group, offset: 1n, requestId: 301n }), { type: 'cache_ok', requestId: 301n });
    assert.deepEqual(await ask({ type: 'group_dead_letters', ...group, requestId: 302n }), { type: 'group_dead_letter_list', offsets: [], requestId: 302n });
    assert.deepEqual(await ask({ type: 'group_discard', ...group, offset: 1n, requestId: 303n }), { type: 'error', message: 'no dead letter at offset 1' });
    assert.deepEqual(await ask({ type: 'group_redrive', ...group, offset: 1n, requestId: 304n }), { type: 'error', message: 'no dead letter at offset 1' });
    assert.deepEqual((await poll(1))[0], [1, 'p1']);
    assert.deepEqual(await ask({ type: 'group_ack', ...group, offset: 1n, requestId: 305n }), { type: 'cache_ok', requestId: 305n });
  });

  it('after a restart: records, cache values, counters and the group position are still there', async () => {
    await client.close();
    await server.stop('restart');
    await start();
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'a', requestId: 400n }), { type: 'cache_value', ...cache, key: 'a', value: Buffer.from('A'), requestId: 400n });
    assert.deepEqual(await ask({ type: 'cache_get', ...cache, key: 'b', requestId: 401n }), { type: 'cache_value', ...cache, key: 'b', value: null, requestId: 401n });
    assert.deepEqual(await ask({ type: 'counter_get', ...cache, key: 'n', requestId: 402n }), { type: 'counter_value', value: 42n, requestId: 402n });
    const m = await ask({ type: 'group_poll', ...group, maxRecords: 1, waitMs: 0n, requestId: 403n });
    assert.deepEqual(m.type === 'group_records' ? m.records.map((r) => [Number(r.offset), r.payload.toString()]) : m, [[2, 'p2']], 'acked records are not delivered again');
    const sub = await client.authed('default', 'x', 0x00ff);
    sub.send({ type: 'subscribe', ...stream, start: 'earliest' });
    assert.equal((await sub.reader.message()).type, 'subscribed');
    const events = await client.eventStream(uniSeen++);
    assert.equal((await events.message()).type, 'event_stream_hello');
    assert.deepEqual((await payloads(events, 7)).map(([, p]) => p), ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'i0']);
  });
});
