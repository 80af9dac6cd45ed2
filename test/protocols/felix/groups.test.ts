// Felix consumer groups and stream_shards over real QUIC: polls with attempts, a long poll woken
// by a publish, ack and nack, a claim that lapses after the visibility timeout, dead letters after
// the delivery limit (listed, redriven, discarded), the errors of a settle without a claim; and
// after a restart on the same data directory the group's acks and dead letters are still there.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Feature, type FelixMessage } from '../../../src/protocols/felix/codec/index.js';
import { startFelix, type FelixHarness, type TestClient, type TestStream } from './harness.js';

const scope = { tenantId: 'default', namespace: 'default', stream: 'jobs', shard: 0, group: 'workers' };

function records(m: FelixMessage): Array<[number, string, number]> {
  if (m.type !== 'group_records') throw new Error(`expected group_records, got ${m.type === 'error' ? m.message : m.type}`);
  return m.records.map((r) => [Number(r.offset), r.payload.toString(), r.attempts]);
}

describe('felix groups', () => {
  let h: FelixHarness;
  let client: TestClient;
  let s: TestStream;
  let id = 1n;
  // Long enough that a loaded machine answers every poll's records within it; short enough that lapses are quick.
  const settings = { groupVisibilityTimeoutMs: 1_500, groupDeliveryAttemptsMax: 2 };

  after(async () => {
    await h.stop();
    rmSync(h.dataDir, { recursive: true, force: true });
  });
  before(async () => {
    h = await startFelix(null, { keepDataDir: true, settings });
    await h.broker.createTopic('default', 'jobs', { partitions: 1 });
    client = await h.connect();
    s = await client.authed('default', 'x', 0x00ff);
    s.send({ type: 'publish_batch', tenantId: 'default', namespace: 'default', stream: 'jobs', payloads: ['j0', 'j1', 'j2'].map((p) => Buffer.from(p)), requestId: id++ });
    assert.equal((await s.reader.message()).type, 'publish_ok');
  });

  const poll = async (maxRecords: number, waitMs = 0n): Promise<Array<[number, string, number]>> => {
    s.send({ type: 'group_poll', ...scope, maxRecords, waitMs, requestId: id++ });
    return records(await s.reader.message());
  };
  const settle = async (type: 'group_ack' | 'group_nack' | 'group_discard' | 'group_redrive', offset: number): Promise<FelixMessage> => {
    const requestId = id++;
    s.send({ type, ...scope, offset: BigInt(offset), requestId });
    return s.reader.message();
  };

  it('advertises the group features and answers stream_shards', async () => {
    const f = h.listener.frontend.server.features;
    for (const bit of [Feature.consumerGroup, Feature.groupDeadLetters, Feature.streamShards, Feature.idempotentProducer]) assert.ok((f & bit) !== 0, `feature ${bit}`);
    s.send({ type: 'stream_shards', tenantId: 'default', namespace: 'default', stream: 'jobs', requestId: 500n });
    assert.deepEqual(await s.reader.message(), { type: 'stream_shards_view', shards: 1, requestId: 500n });
    s.send({ type: 'stream_shards', tenantId: 'default', namespace: 'default', stream: 'nope', requestId: 501n });
    assert.deepEqual(await s.reader.message(), { type: 'stream_shards_view', shards: 0, requestId: 501n });
  });

  it('polls claim records with their attempts; ack settles, nack gives back at once', async () => {
    assert.deepEqual(await poll(2), [
      [0, 'j0', 1],
      [1, 'j1', 1],
    ]);
    assert.deepEqual(await settle('group_ack', 0), { type: 'cache_ok', requestId: id - 1n });
    assert.deepEqual(await settle('group_nack', 1), { type: 'cache_ok', requestId: id - 1n });
    assert.deepEqual(await poll(10), [
      [1, 'j1', 2],
      [2, 'j2', 1],
    ]);
    assert.deepEqual(await settle('group_ack', 0), { type: 'error', message: 'no claim on offset 0' });
    assert.deepEqual(await settle('group_ack', 2), { type: 'cache_ok', requestId: id - 1n });
  });

  it('a record whose claim lapses comes back; past the delivery limit it is a dead letter', async () => {
    // Offset 1 was delivered twice (the limit): once its claim lapses, it is dead-lettered.
    const deadline = Date.now() + 15_000;
    let listed: bigint[] = [];
    while (Date.now() < deadline) {
      s.send({ type: 'group_dead_letters', ...scope, requestId: id++ });
      const m = await s.reader.message();
      listed = m.type === 'group_dead_letter_list' ? m.offsets : [];
      if (listed.length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(listed, [1n]);
    assert.deepEqual(await settle('group_redrive', 1), { type: 'cache_ok', requestId: id - 1n });
    assert.deepEqual(await poll(10), [[1, 'j1', 1]], 'redriven: attempts from zero');
    assert.deepEqual(await settle('group_ack', 1), { type: 'cache_ok', requestId: id - 1n });
    assert.deepEqual(await settle('group_discard', 7), { type: 'error', message: 'no dead letter at offset 7' });
  });

  it('a long poll is answered by a publish', async () => {
    const other = await client.authed();
    s.send({ type: 'group_poll', ...scope, maxRecords: 5, waitMs: 10_000n, requestId: 900n });
    other.send({ type: 'publish', tenantId: 'default', namespace: 'default', stream: 'jobs', payload: Buffer.from('j3'), requestId: 901n });
    assert.equal((await other.reader.message()).type, 'publish_ok');
    const got = records(await s.reader.message(8_000));
    assert.deepEqual(got, [[3, 'j3', 1]]);
    assert.deepEqual(await settle('group_ack', 3), { type: 'cache_ok', requestId: id - 1n });
  });

  it('keeps the group state over a restart: acked records are not delivered again, dead letters stay', async () => {
    // Offset 4, polled and never acked, lapses twice into the dead letters before the restart.
    s.send({ type: 'publish', tenantId: 'default', namespace: 'default', stream: 'jobs', payload: Buffer.from('j4'), requestId: id++ });
    assert.equal((await s.reader.message()).type, 'publish_ok');
    const deadline = Date.now() + 20_000;
    for (;;) {
      s.send({ type: 'group_dead_letters', ...scope, requestId: id++ });
      const m = await s.reader.message();
      if (m.type === 'group_dead_letter_list' && m.offsets.length === 1) break;
      if (Date.now() > deadline) throw new Error('offset 4 was not dead-lettered');
      await poll(10);
      await new Promise((r) => setTimeout(r, 100));
    }
    const dataDir = h.dataDir;
    await h.stop();
    h = await startFelix(null, { dataDir, settings });
    client = await h.connect();
    s = await client.authed();
    assert.deepEqual(await poll(10), [], 'nothing left to deliver');
    s.send({ type: 'group_dead_letters', ...scope, requestId: id++ });
    assert.deepEqual(await s.reader.message(), { type: 'group_dead_letter_list', offsets: [4n], requestId: id - 1n });
  });
});
