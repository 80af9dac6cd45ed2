// Felix publishing over real QUIC: JSON publish / publish_batch with every ack mode, binary
// batches (unacked, acked, keyed) and their acks, error acks that keep the stream, publish-only
// unidirectional streams, stream not found, idempotent producers and their refusals; what lands
// in the log read back through the core read service in the Felix format and decoded by the
// format codec (keys included).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BatchFormat, type NeutralRecord } from '../../../src/base/batch.js';
import { fnv1a64Mod } from '../../../src/base/hash.js';
import { recordsOf } from '../../../src/core/transcode.js';
import { retopicBatch } from '../../../src/protocols/cursus/codec/cursus-format.js';
import { eventBatchesOf } from '../../../src/protocols/felix/event-streams.js';
import { recordListOf } from '../../../src/protocols/felix/handlers/publish.js';
import { builtinFormats } from '../../../src/server/listeners.js';
import { Feature, encodeFrameHeader, encodeMessage, encodePublishBatch, encodePublishBatchFrame, felixAppendRequest, felixBatchFormatCodec } from '../../../src/protocols/felix/codec/index.js';
import { startFelix, type FelixHarness, type TestClient, type TestStream } from './harness.js';

/** Every record of a partition, decoded from the stored Felix batches. */
async function records(h: FelixHarness, topic: string, partition = 0, namespace = 'default'): Promise<NeutralRecord[]> {
  const t = h.broker.catalog.requireTopic({ namespace, topic });
  const reader = h.broker.reads.open(t, partition);
  const end = reader.position().highWatermark;
  const read = await reader.readRecords({ from: 0, end, recordsMax: 10_000, bytesMax: 1 << 24, format: BatchFormat.neutral, isolation: 'read_uncommitted', decode: true });
  return read.decoded ?? [];
}

async function waitForRecords(h: FelixHarness, topic: string, count: number, partition = 0): Promise<NeutralRecord[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const r = await records(h, topic, partition);
    if (r.length >= count || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function values(rs: NeutralRecord[]): string[] {
  return rs.map((r) => r.value!.toString());
}

async function ack(s: TestStream): Promise<{ requestId: bigint; error: string | null }> {
  const r = await s.reader.next();
  if (r.kind !== 'frame' || r.frame.kind !== 'publish_ack') throw new Error(`expected a binary ack, got ${JSON.stringify(r.kind === 'frame' ? r.frame.kind : r)}`);
  return { requestId: r.frame.ack.requestId, error: r.frame.ack.error };
}

const name = { tenantId: 'default', namespace: 'default' };

describe('felix publish', () => {
  let h: FelixHarness;
  let client: TestClient;

  after(() => h.stop());
  before(async () => {
    h = await startFelix(null);
    await h.broker.createTopic('default', 'json', { partitions: 1 });
    await h.broker.createTopic('default', 'bin', { partitions: 1 });
    await h.broker.createTopic('default', 'keyed', { partitions: 4 });
    await h.broker.createTopic('default', 'idem', { partitions: 1 });
    await h.broker.createNamespace('acme.billing');
    await h.broker.createTopic('acme.billing', 'invoices', { partitions: 1 });
    client = await h.connect();
  });

  it('JSON publish and publish_batch: publish_ok per request id, nothing for ack none, the records in order', async () => {
    const s = await client.authed();
    s.send({ type: 'publish', ...name, stream: 'json', payload: Buffer.from('a'), requestId: 1n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 1n });
    s.send({ type: 'publish_batch', ...name, stream: 'json', payloads: [Buffer.from('b'), Buffer.from('c')], requestId: 2n, ack: 'per_batch' });
    s.send({ type: 'publish', ...name, stream: 'json', payload: Buffer.from('d'), ack: 'none' });
    s.send({ type: 'publish', ...name, stream: 'json', payload: Buffer.from('e'), requestId: 3n, ack: 'per_message' });
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 2n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 3n }, 'no answer to the ack:none publish in between');
    assert.deepEqual(values(await records(h, 'json')), ['a', 'b', 'c', 'd', 'e']);
  });

  it('refuses an acked JSON publish without request_id and keeps the stream', async () => {
    const s = await client.authed();
    s.send({ type: 'publish', ...name, stream: 'json', payload: Buffer.from('x') });
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'missing request_id for acked publish' });
    s.send({ type: 'publish', ...name, stream: 'json', payload: Buffer.from('f'), requestId: 4n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 4n });
  });

  it('answers a publish to a missing stream with publish_error "stream not found"', async () => {
    const s = await client.authed();
    s.send({ type: 'publish', ...name, stream: 'nope', payload: Buffer.from('x'), requestId: 5n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_error', requestId: 5n, message: 'stream not found: tenant=default namespace=default stream=nope' });
  });

  it('publishes to another tenant and namespace (catalog namespace acme.billing)', async () => {
    const s = await client.authed('acme');
    s.send({ type: 'publish', tenantId: 'acme', namespace: 'billing', stream: 'invoices', payload: Buffer.from('inv-1'), requestId: 6n });
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 6n });
    const t = h.broker.catalog.requireTopic({ namespace: 'acme.billing', topic: 'invoices' });
    assert.equal(h.broker.reads.open(t, 0).position().highWatermark, 1);
  });

  it('binary batches: unacked, acked (ok ack), a malformed acked body answered with an error ack, the stream kept', async () => {
    const s = await client.authed('default', 'x', 0x00ff);
    s.write(encodePublishBatch({ acked: null, key: null, ...name, stream: 'bin', payloads: [Buffer.from('u1'), Buffer.from('u2')] }));
    s.write(encodePublishBatch({ acked: { requestId: 7n, ackMode: 'per_batch' }, key: null, ...name, stream: 'bin', payloads: [Buffer.from('a1')] }));
    assert.deepEqual(await ack(s), { requestId: 7n, error: null });
    const bad = encodePublishBatchFrame({ acked: { requestId: 8n, ackMode: 'per_message' }, key: null, ...name, stream: 'bin', payloads: [Buffer.from('zz')] });
    const truncated = bad.subarray(0, bad.length - 1);
    truncated.writeUInt32BE(truncated.length - 12, 8);
    s.write(truncated);
    assert.deepEqual(await ack(s), { requestId: 8n, error: 'malformed publish batch' });
    s.write(encodePublishBatch({ acked: { requestId: 9n, ackMode: 'per_batch' }, key: null, ...name, stream: 'nope', payloads: [Buffer.from('q')] }));
    assert.deepEqual(await ack(s), { requestId: 9n, error: 'stream not found: tenant=default namespace=default stream=nope' });
    const shortPrefix = Buffer.from([0, 0, 0]);
    s.write([encodeFrameHeader(0x0009, shortPrefix.length), shortPrefix]);
    assert.deepEqual(await s.reader.message(), { type: 'error', message: 'malformed acked publish prefix' });
    s.write(encodePublishBatch({ acked: { requestId: 10n, ackMode: 'per_batch' }, key: null, ...name, stream: 'bin', payloads: [Buffer.from('a2')] }));
    assert.deepEqual(await ack(s), { requestId: 10n, error: null });
    assert.deepEqual(values(await records(h, 'bin')), ['u1', 'u2', 'a1', 'a2']);
  });

  it('ends the stream on a malformed unacked binary batch', async () => {
    const s = await client.authed();
    const frame = encodePublishBatchFrame({ acked: null, key: null, ...name, stream: 'bin', payloads: [Buffer.from('zz')] });
    frame.writeUInt32BE(99, frame.length - 6);
    s.write(frame);
    await s.reader.end();
  });

  it('keyed batches go to shard FNV-1a 64(key) mod shards and keep the key on every record; unkeyed to shard 0', async () => {
    const s = await client.authed('default', 'x', 0x00ff);
    const keys = ['user-1', 'user-2', 'user-3', 'user-4', 'user-5'];
    let id = 100n;
    for (const k of keys) {
      s.write(encodePublishBatch({ acked: { requestId: id, ackMode: 'per_batch' }, key: Buffer.from(k), ...name, stream: 'keyed', payloads: [Buffer.from(`${k}-a`), Buffer.from(`${k}-b`)] }));
      assert.deepEqual(await ack(s), { requestId: id++, error: null });
    }
    s.send({ type: 'publish', ...name, stream: 'keyed', payload: Buffer.from('json-keyed'), key: Buffer.from('user-9'), requestId: id });
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: id });
    const byShard = await Promise.all([0, 1, 2, 3].map((p) => records(h, 'keyed', p)));
    for (const k of [...keys, 'user-9']) {
      const shard = fnv1a64Mod(Buffer.from(k), 4);
      const mine = byShard[shard]!.filter((r) => r.key?.toString() === k);
      assert.ok(mine.length >= 1, `records of ${k} on shard ${shard}`);
      for (const r of mine) assert.ok(r.value!.toString().startsWith(k === 'user-9' ? 'json' : k));
    }
  });

  it('a publish-only unidirectional stream: auth then publishes, never answered', async () => {
    const before = (await records(h, 'json')).length;
    const uni = client.quic.openUni();
    for (const c of encodeMessage({ type: 'auth', tenantId: 'default', token: 'x' })) uni.write(c);
    for (const c of encodeMessage({ type: 'publish', ...name, stream: 'json', payload: Buffer.from('uni-1'), ack: 'none' })) uni.write(c);
    uni.write(Buffer.concat(encodePublishBatch({ acked: null, key: null, ...name, stream: 'json', payloads: [Buffer.from('uni-2')] })));
    uni.end();
    const rs = await waitForRecords(h, 'json', before + 2);
    assert.deepEqual(values(rs).slice(before), ['uni-1', 'uni-2']);
  });

  it('idempotent producers: producer_init, in-order sequences, a retry answered without appending, and the refusals', async () => {
    const s = await client.authed('default', 'x', 0x00ff);
    assert.ok((h.listener.frontend.server.features & Feature.idempotentProducer) !== 0, 'advertised');
    s.send({ type: 'producer_init', requestId: 1n });
    const init = await s.reader.message();
    assert.equal(init.type, 'producer_init_ok');
    const producerId = init.type === 'producer_init_ok' ? init.producerId : 0n;
    const pub = (requestId: bigint, sequence: bigint, payload: string): void =>
      s.send({ type: 'publish_idempotent', ...name, stream: 'idem', payloads: [Buffer.from(payload)], requestId, producerId, sequence });
    pub(2n, 0n, 'i0');
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 2n });
    pub(3n, 1n, 'i1');
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 3n });
    pub(4n, 1n, 'i1-again');
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 4n }, 'a retry is acknowledged');
    pub(5n, 5n, 'gap');
    const gap = await s.reader.message();
    assert.equal(gap.type, 'publish_refused');
    assert.deepEqual(gap.type === 'publish_refused' ? gap.reason : null, { kind: 'sequence_gap', expected: 2n });
    for (let i = 2n; i < 9n; i++) {
      pub(10n + i, i, `i${i}`);
      assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 10n + i });
    }
    pub(30n, 0n, 'old');
    assert.deepEqual(await s.reader.message(), { type: 'publish_ok', requestId: 30n }, 'the first batch is still one of the last 64 (idempotent.test.ts: older ones)');
    s.send({ type: 'publish_idempotent', ...name, stream: 'idem', payloads: [Buffer.from('x')], requestId: 31n, producerId: 1n << 40n, sequence: 0n });
    const unknown = await s.reader.message();
    assert.deepEqual(unknown.type === 'publish_refused' ? unknown.reason : unknown, { kind: 'unknown_producer' });
    assert.deepEqual(values(await records(h, 'idem')), ['i0', 'i1', 'i2', 'i3', 'i4', 'i5', 'i6', 'i7', 'i8']);
  });
});

describe('felix log format', () => {
  it('a stored Felix batch reads as Kafka, Iggy and Cursus records, keys included, and theirs as Felix', () => {
    const formats = builtinFormats();
    const request = felixAppendRequest(recordListOf([Buffer.from('p1'), Buffer.from('p2')]), Buffer.from('key-1'), 5_000);
    felixBatchFormatCodec.stamp!(request, { baseOffset: 40, appendTime: 5_000, appendMicros: 5_000_000 });
    const felixBatch = { ...request, baseOffset: 40, lastOffset: 41 };
    for (const format of [BatchFormat.kafka, BatchFormat.iggy, BatchFormat.cursus]) {
      const served = recordsOf(formats, format, felixBatch, 40, 42, 10)!;
      // A Cursus reader names its topic in the batches it serves (the transcoder leaves it empty).
      const bytes = format === BatchFormat.cursus ? Buffer.concat(retopicBatch(served.chunks[0] as Buffer, 'orders', 0)) : (served.chunks[0] as Buffer);
      const theirs = { ...felixBatch, format, payload: bytes, recordCount: 2 };
      const decoded = formats.get(format)!.decode(theirs);
      assert.deepEqual(decoded.map((r) => [r.offset, r.key?.toString(), r.value?.toString()]), [
        [40, 'key-1', 'p1'],
        [41, 'key-1', 'p2'],
      ], `as format ${format}`);
      const back = recordsOf(formats, BatchFormat.felix, theirs, 40, 42, 10)!;
      const events = eventBatchesOf(back.chunks[0] as Buffer, 40);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.baseOffset, 40n, `from format ${format}`);
      assert.deepEqual(felixBatchFormatCodec.decode({ ...felixBatch, payload: back.chunks[0] as Buffer }).map((r) => r.value!.toString()), ['p1', 'p2']);
    }
  });

  it('decodes, slices and re-encodes stored batches, keys and compaction gaps included', () => {
    const stored = (payload: Buffer, baseOffset: number, recordCount: number) => ({
      format: BatchFormat.felix,
      flags: 0,
      baseOffset,
      lastOffset: baseOffset + recordCount - 1,
      recordCount,
      firstTimestamp: 1000,
      maxTimestamp: 1000,
      producerId: -1,
      producerEpoch: -1,
      baseSequence: -1,
      payload,
    });
    const recs: NeutralRecord[] = [
      { offset: 10, timestamp: 1000, key: Buffer.from('k1'), value: Buffer.from('a'), headers: [] },
      { offset: 12, timestamp: 1000, key: null, value: Buffer.from('b'), headers: [] },
      { offset: 13, timestamp: 1000, key: Buffer.from('k2'), value: Buffer.from('c'), headers: [] },
    ];
    const req = felixBatchFormatCodec.encode(recs, 10, stored(Buffer.alloc(0), 10, 4));
    assert.equal(req.recordCount, 4);
    const batch = stored(req.payload, 10, 4);
    assert.deepEqual(felixBatchFormatCodec.decode(batch), recs);
    assert.equal(felixBatchFormatCodec.messageCount!(batch), 3, 'fewer records than offsets: compacted');
    const cut = felixBatchFormatCodec.slice!(batch, 12, 14, 10)!;
    assert.equal(cut.count, 2);
    assert.deepEqual(felixBatchFormatCodec.decode(stored(cut.chunks[0]!, 12, 2)).map((r) => [r.offset, r.value!.toString(), r.key?.toString() ?? null]), [
      [12, 'b', null],
      [13, 'c', 'k2'],
    ]);
  });
});
