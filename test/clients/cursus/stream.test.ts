// STREAM through CursusClient.stream(): batches, keepalives (empty payloads, also under
// compression) and the closing STREAM_CONTROL line (the golden vector) as events; stop(); the idle
// timeout; a refused stream; many frames through a small buffer.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Status, encodeBatch, encodeErrorPayload, cursusError, type CursusRecord } from '../../../src/protocols/cursus/codec/index.js';
import { CursusClient, CursusError, CursusTimeoutError, type CursusClientOptions, type StreamEvent } from '../../../src/clients/cursus/index.js';
import { vectorsDir } from '../../vectors/cursus/build.js';
import { FakeCursusBroker, gate, step, type FakeRequest } from './fake-broker.js';

let fake: FakeCursusBroker;
const clients: CursusClient[] = [];

function client(options: CursusClientOptions = {}): CursusClient {
  const c = new CursusClient({ addr: fake.addr, compression: ['lz4'], requestTimeoutMs: 2_000, reconnect: false, ...options });
  clients.push(c);
  return c;
}

function batchOf(topic: string, partition: number, offsets: number[]): Buffer {
  const records: CursusRecord[] = offsets.map((offset) => ({ topic, partition, offset, payload: Buffer.from(`m${offset}`) }));
  return Buffer.concat(encodeBatch({ idempotent: false, topic, partition, acks: '1', batchStart: 0, batchEnd: 0, records }));
}

function describeEvent(e: StreamEvent): string {
  if (e.type === 'batch') return `batch ${e.batch.records.map((r) => r.offset).join(',')}`;
  if (e.type === 'keepalive') return 'keepalive';
  return `close ${e.close.reason} ${e.close.offset}`;
}

const goldenClose = Buffer.from(readFileSync(path.join(vectorsDir, 'stream_close.hex'), 'utf8').trim(), 'hex').subarray(32);

before(async () => {
  fake = await FakeCursusBroker.start();
});
after(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

describe('STREAM', () => {
  test('batches, keepalives and the CLOSE line arrive as events; the stream ends with the close', async () => {
    fake.handler = (req) =>
      req.command === 'STREAM'
        ? { stream: [step(batchOf('orders', 0, [40, 41])), step(Buffer.alloc(0)), step(Buffer.alloc(0)), step(batchOf('orders', 0, [42])), step(goldenClose, true)] }
        : undefined;
    const c = client();
    const s = c.stream({ topic: 'orders', partition: 0, member: 'm-1', group: 'g', isolation: 'read_uncommitted', batch: 64 });
    const seen: string[] = [];
    for await (const e of s) seen.push(describeEvent(e));
    assert.deepEqual(seen, ['batch 40,41', 'keepalive', 'keepalive', 'batch 42', 'close stopped 42']);
    assert.deepEqual(await s.ended, { reason: 'stopped', offset: 42 });
    const req = fake.of('STREAM')[0]!;
    assert.deepEqual(Object.fromEntries(req.fields), { batch: '64', group: 'g', isolation: 'read_uncommitted', member: 'm-1', partition: '0', topic: 'orders' });
    // Every frame, the empty keepalives included, carried the negotiated lz4 id.
    assert.equal(req.compression, 3);
  });

  test('an offset_out_of_range close carries the range', async () => {
    fake.handler = () => ({ stream: [step(Buffer.from('STREAM_CONTROL type=CLOSE reason=offset_out_of_range offset=3 requested=3 earliest=10 latest=20'), true)] });
    const s = client().stream({ topic: 'orders', partition: 0, member: 'm' });
    const events: StreamEvent[] = [];
    for await (const e of s) events.push(e);
    assert.deepEqual(events, [{ type: 'close', close: { reason: 'offset_out_of_range', offset: 3, range: { requested: 3, earliest: 10, latest: 20 } } }]);
  });

  test('stop() closes the stream\'s connection and ends the iteration without an error', async () => {
    const forever = gate();
    let streamReq: FakeRequest | null = null;
    fake.handler = (req) => {
      streamReq = req;
      return { stream: [step(batchOf('orders', 0, [1])), { wait: forever.wait }] };
    };
    const s = client().stream({ topic: 'orders', partition: 0, member: 'm' });
    const seen: string[] = [];
    for await (const e of s) {
      seen.push(describeEvent(e));
      s.stop();
    }
    assert.deepEqual(seen, ['batch 1']);
    assert.equal(await s.ended, null);
    const socket = (streamReq as FakeRequest | null)!.conn.socket;
    const deadline = Date.now() + 2_000;
    while (!socket.destroyed && socket.readable && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.ok(socket.destroyed || !socket.readable, 'the broker sees the stream\'s connection close');
    forever.open();
  });

  test('no frame within the idle timeout (not even a keepalive) fails the stream', async () => {
    const forever = gate();
    fake.handler = () => ({ stream: [step(Buffer.alloc(0)), { wait: forever.wait }] });
    const s = client().stream({ topic: 'orders', partition: 0, member: 'm' }, { idleTimeoutMs: 100 });
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const e of s) seen.push(describeEvent(e));
      })(),
      CursusTimeoutError,
    );
    assert.deepEqual(seen, ['keepalive']);
    forever.open();
  });

  test('a refused stream (one ERROR frame with END) throws its CursusError', async () => {
    fake.handler = () => ({ stream: [step(encodeErrorPayload(cursusError('topic_not_found', [['topic', 'nope']])), true, Status.error)] });
    const s = client().stream({ topic: 'nope', partition: 0, member: 'm' });
    await assert.rejects(
      (async () => {
        for await (const _ of s) assert.fail('no event');
      })(),
      (e: unknown) => e instanceof CursusError && e.code === 'topic_not_found' && e.class === 'not_found',
    );
  });

  test('many frames through a buffer of two arrive complete and in order', async () => {
    const steps = Array.from({ length: 50 }, (_, i) => step(batchOf('orders', 0, [i])));
    fake.handler = () => ({ stream: [...steps, step(Buffer.from('STREAM_CONTROL type=CLOSE reason=removed offset=50'), true)] });
    const s = client().stream({ topic: 'orders', partition: 0, member: 'm' }, { bufferedFramesMax: 2 });
    const offsets: number[] = [];
    for await (const e of s) {
      if (e.type === 'batch') offsets.push(e.batch.records[0]!.offset);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.deepEqual(offsets, Array.from({ length: 50 }, (_, i) => i));
    assert.equal((await s.ended)?.reason, 'removed');
  });
});
