// STREAM at the handler level: push rounds on a manual scheduler, keepalives, batches woken by
// appends, and every CLOSE reason, over a real broker and a sink that records frames.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeBatch, decodeStreamControl, isStreamControl, type StreamClose } from '../../../src/protocols/cursus/codec/index.js';
import type { CursusReply } from '../../../src/protocols/cursus/handler.js';
import { dataFixture, eventually, failure, handle, RecordingSink, request, type DataFixture, type SentFrame } from './data-harness.js';

const settings = { streamPushIntervalMs: 100, streamKeepaliveMs: 300 };

async function stream(fx: DataFixture, fields: Record<string, string> = {}): Promise<{ sink: RecordingSink; done: Promise<void> }> {
  const reply: CursusReply = await handle(fx, request('STREAM', { topic: 'orders', partition: '0', member: 'm-1', group: 'g1', ...fields }));
  assert.equal(reply.kind, 'stream');
  const sink = new RecordingSink();
  const done = reply.kind === 'stream' ? reply.run(sink) : Promise.resolve();
  return { sink, done };
}

function publish(fx: DataFixture, ...messages: string[]): Promise<unknown> {
  return messages.reduce<Promise<unknown>>((p, message) => p.then(() => handle(fx, request('PUBLISH', { topic: 'orders', producerId: 'p', message, partition: '0' }))), Promise.resolve());
}

function kind(frame: SentFrame): 'keepalive' | 'control' | 'batch' {
  if (frame.payload.length === 0) return 'keepalive';
  return isStreamControl(frame.payload) ? 'control' : 'batch';
}

function batchPayloads(frame: SentFrame): string[] {
  const b = decodeBatch(frame.payload);
  assert.ok(b.ok, b.ok ? '' : b.reason);
  return b.value.records.map((r) => r.payload.toString());
}

function close(frame: SentFrame): StreamClose {
  assert.equal(frame.end, true, 'CLOSE is the frame with END');
  const c = decodeStreamControl(frame.payload);
  assert.ok(c.ok);
  return c.value;
}

/** Lets the stream finish its round and pause on the scheduler. */
function paused(fx: DataFixture): Promise<void> {
  return eventually(() => fx.scheduler.pendingCount === 1, 'the stream to pause');
}

describe('STREAM', () => {
  it('opens with a frame, pushes what is appended, and keeps alive when nothing is new', async (t) => {
    const fx = await dataFixture(t, { settings });
    await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'a', 'b');
    const { sink } = await stream(fx);
    assert.deepEqual(batchPayloads(await sink.frame(0)), ['a', 'b'], 'from the log start without a committed offset');
    await paused(fx);
    await publish(fx, 'c');
    assert.deepEqual(batchPayloads(await sink.frame(1)), ['c'], 'an append wakes the stream');
    await paused(fx);
    fx.scheduler.advance(100);
    await paused(fx);
    fx.scheduler.advance(100);
    await paused(fx);
    assert.equal(sink.frames.length, 2, 'no keepalive before the keepalive interval');
    fx.scheduler.advance(100);
    assert.equal(kind(await sink.frame(2)), 'keepalive');
    assert.equal(sink.frames[2]!.end, false);
    assert.ok(sink.frames.every((f) => !f.end));
  });

  it('a backlog larger than the batch goes out batch after batch without waiting for the interval', async (t) => {
    const fx = await dataFixture(t, { settings });
    await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'a', 'b', 'c', 'd', 'e');
    const { sink } = await stream(fx, { batch: '2' });
    assert.deepEqual(batchPayloads(await sink.frame(0)), ['a', 'b']);
    assert.deepEqual(batchPayloads(await sink.frame(1)), ['c', 'd']);
    assert.deepEqual(batchPayloads(await sink.frame(2)), ['e']);
    await paused(fx);
    assert.equal(sink.frames.length, 3, 'caught up: the stream waits for the next round');
  });

  it('starts at the committed offset, opens with a keepalive when nothing is there, and never commits', async (t) => {
    const fx = await dataFixture(t, { settings, committedOffset: (group) => (group === 'g1' ? 2 : null) });
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'a', 'b');
    const { sink } = await stream(fx);
    assert.equal(kind(await sink.frame(0)), 'keepalive');
    await paused(fx);
    await publish(fx, 'c');
    assert.deepEqual(batchPayloads(await sink.frame(1)), ['c']);
    assert.equal(await fx.broker.offsets.fetch('cursus', 'g1', topic.internalId, 0), null);
  });

  it('a newer STREAM of the same topic, partition and group removes the older one', async (t) => {
    const fx = await dataFixture(t, { settings });
    await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'a');
    const first = await stream(fx);
    await first.sink.frame(0);
    const other = await stream(fx, { group: 'g2' });
    await other.sink.frame(0);
    const second = await stream(fx);
    await first.done;
    assert.deepEqual(close(first.sink.frames.at(-1)!), { reason: 'removed', offset: 1 });
    assert.deepEqual(batchPayloads(await second.sink.frame(0)), ['a']);
    assert.equal(fx.data.streams.size, 2, 'the other group keeps its stream');
    await fx.data.close();
    await Promise.all([second.done, other.done]);
    assert.deepEqual(close(second.sink.frames.at(-1)!), { reason: 'stopped', offset: 1 });
    assert.equal(close(other.sink.frames.at(-1)!).reason, 'stopped');
    assert.equal(fx.data.streams.size, 0);
  });

  it('closes with offset_out_of_range once its offset is older than the retained log', async (t) => {
    const fx = await dataFixture(t, { settings, committedOffset: () => 1 });
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'a', 'b', 'c');
    await fx.broker.partition(topic, 0).deleteRecordsBefore(2);
    const { sink, done } = await stream(fx);
    await done;
    assert.equal(sink.frames.length, 1);
    assert.deepEqual(close(sink.frames[0]!), { reason: 'offset_out_of_range', offset: 1, range: { requested: 1, earliest: 2, latest: 3 } });
  });

  it('a lost connection ends the stream without a CLOSE', async (t) => {
    const fx = await dataFixture(t, { settings });
    await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    const { sink, done } = await stream(fx);
    await sink.frame(0);
    await paused(fx);
    sink.disconnect();
    await done;
    assert.deepEqual(sink.frames.map(kind), ['keepalive']);
    assert.equal(fx.data.streams.size, 0);
    assert.equal(fx.scheduler.pendingCount, 0, 'its timer is cancelled');
  });

  it('a stream whose topic goes away closes with error', async (t) => {
    const fx = await dataFixture(t, { settings });
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    const { sink, done } = await stream(fx);
    await sink.frame(0);
    await paused(fx);
    await fx.broker.deleteTopic(topic);
    fx.scheduler.advance(100);
    await done;
    assert.equal(close(sink.frames.at(-1)!).reason, 'error');
  });

  it('is refused before any frame when the request is wrong', async (t) => {
    const fx = await dataFixture(t, { settings });
    await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    for (const [fields, code] of [
      [{ partition: '0', member: 'm' }, 'missing_topic'],
      [{ topic: 'orders', member: 'm' }, 'missing_partition'],
      [{ topic: 'orders', partition: '0' }, 'missing_member'],
      [{ topic: 'orders', partition: '3', member: 'm' }, 'partition_not_found'],
      [{ topic: 'nope', partition: '0', member: 'm' }, 'topic_not_found'],
      [{ topic: 'orders', partition: '0', member: 'm', isolation: 'x' }, 'invalid_isolation'],
    ] as const) {
      assert.equal((await failure(fx, request('STREAM', fields))).code, code);
    }
  });
});
