// IggyProducer against the fake server: batching by count, bytes and linger; partitioning by
// key (XXH32 % partitions, as the server hashes a messages key), round robin and partition id;
// receipts; retry after a dropped connection.

import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { CommandCode, parseBatch } from '../../../src/protocols/iggy/codec/index.js';
import { IggyClient, IggyProducer, partitionForKey, RoundRobin } from '../../../src/clients/iggy/index.js';
import { useFakeServer, type FakeIggyServer, type FakeRequest } from './fake-server.js';

const fake = useFakeServer({ reconnect: { attemptsMax: 5, backoffMinMs: 5, backoffMaxMs: 10 } });
let server: FakeIggyServer;
let client: IggyClient;
beforeEach(() => ({ server, client } = fake));

function sends(): Array<{ partition: number; count: number }> {
  return server.requests
    .filter((r): r is FakeRequest & { decoded: { code: 101 } } => r.code === CommandCode.sendMessages)
    .map((r) => {
      const d = r.decoded as unknown as { request: { partitioning: { kind: string; partitionId: number }; messagesCount: number } };
      return { partition: d.request.partitioning.partitionId, count: d.request.messagesCount };
    });
}

describe('partitioning', () => {
  test('partitionForKey is XXH32(key, seed 0) % partitions', () => {
    // XXH32("hello world", 0) = 0xCEBB6622 (the xxHash reference value).
    assert.equal(partitionForKey('hello world', 1_000_000_007), 0xcebb6622 % 1_000_000_007);
    assert.equal(partitionForKey(Buffer.from('hello world'), 3), 0xcebb6622 % 3);
    assert.equal(partitionForKey('', 7), 0x02cc5d05 % 7);
  });

  test('round robin cycles through the partitions', () => {
    const rr = new RoundRobin();
    assert.deepEqual([...Array(7)].map(() => rr.pick(3)), [0, 1, 2, 0, 1, 2, 0]);
    assert.equal(rr.pick(2), 1);
  });

  test('send() with a key, a partition id, or balanced round robin per send', async () => {
    const p = new IggyProducer(client, { streamId: 1, topicId: 1 });
    const keyed = await p.send('k', { key: 'user-42' });
    assert.equal(keyed.partitionId, partitionForKey('user-42', 3));
    assert.equal((await p.send('x', { partitionId: 2 })).partitionId, 2);
    const balanced = [await p.send('a'), await p.send('b'), await p.send('c'), await p.send('d')];
    assert.deepEqual(balanced.map((r) => r.partitionId), [0, 1, 2, 0]);
    assert.deepEqual(server.codes().filter((c) => c === CommandCode.getTopic).length, 1, 'partition count is cached');
    const fixed = new IggyProducer(client, { streamId: 1, topicId: 1, partitioning: { partitionId: 1 } });
    assert.equal((await fixed.send('y')).partitionId, 1);
  });

  test('a send the server cannot route (20: the topic lost partitions) makes the next send look the partition count up again', async () => {
    const p = new IggyProducer(client, { streamId: 1, topicId: 1, retries: 0 });
    assert.deepEqual([(await p.send('a')).partitionId, (await p.send('b')).partitionId], [0, 1]);
    const before = server.partitionsCount;
    server.partitionsCount = 1;
    try {
      await assert.rejects(p.send('c'), (e: unknown) => (e as { code?: number }).code === 20);
      assert.equal((await p.send('d')).partitionId, 0, 'round robin over the one partition left');
      assert.equal(server.codes().filter((c) => c === CommandCode.getTopic).length, 2);
    } finally {
      server.partitionsCount = before;
    }
  });
});

describe('batching', () => {
  test('by count: one send of 7 with batchMessagesMax 3 goes out as 3 + 3 + 1, receipt offsets', async () => {
    const p = new IggyProducer(client, { streamId: 1, topicId: 1, batchMessagesMax: 3 });
    const r = await p.send([...Array(7)].map((_, i) => `m${i}`), { partitionId: 0 });
    assert.deepEqual(r, { partitionId: 0, firstOffset: 0n, count: 7 });
    assert.deepEqual(sends(), [
      { partition: 0, count: 3 },
      { partition: 0, count: 3 },
      { partition: 0, count: 1 },
    ]);
    assert.deepEqual(server.partitions.get(0)!.map((m) => m.input.payload.toString()), ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
  });

  test('by bytes: a batch closes before it would pass batchBytesMax', async () => {
    const p = new IggyProducer(client, { streamId: 1, topicId: 1, batchBytesMax: 2 * (48 + 100) });
    await p.send([...Array(5)].map(() => Buffer.alloc(100, 1)), { partitionId: 1 });
    assert.deepEqual(sends().map((s) => s.count), [2, 2, 1]);
  });

  test('linger: sends within lingerMs share one batch; receipts carry each send\'s first offset', async () => {
    const p = new IggyProducer(client, { streamId: 1, topicId: 1, lingerMs: 30 });
    const [a, b, c] = await Promise.all([p.send(['a1', 'a2'], { partitionId: 2 }), p.send('b', { partitionId: 2 }), p.send('c', { partitionId: 2 })]);
    assert.deepEqual(sends(), [{ partition: 2, count: 4 }]);
    assert.deepEqual([a.firstOffset, b.firstOffset, c.firstOffset], [0n, 2n, 3n]);
  });

  test('linger 0: sends in the same event-loop turn coalesce; flush() sends at once', async () => {
    const p = new IggyProducer(client, { streamId: 1, topicId: 1 });
    await Promise.all([p.send('a', { partitionId: 0 }), p.send('b', { partitionId: 0 }), p.send('c', { partitionId: 1 })]);
    assert.deepEqual(sends(), [
      { partition: 0, count: 2 },
      { partition: 1, count: 1 },
    ]);
    const slow = new IggyProducer(client, { streamId: 1, topicId: 1, lingerMs: 60_000 });
    const pending = slow.send('late', { partitionId: 0 });
    await slow.flush();
    assert.equal((await pending).firstOffset, 2n);
  });

  test('message ids, user headers and timestamps reach the batch', async () => {
    const p = new IggyProducer(client, { streamId: 1, topicId: 1 });
    await p.send({ id: 42n, payload: 'x', headers: { trace: 'abc', n: 7 }, timestampMicros: 1_000n }, { partitionId: 0 });
    await p.send('y', { partitionId: 0 });
    const [first, second] = server.partitions.get(0)!;
    assert.equal(first!.input.id, 42n);
    assert.equal(first!.input.originTimestamp, 1_000n);
    assert.ok(first!.input.userHeaders!.includes(Buffer.from('trace')));
    assert.notEqual(second!.input.id, 0n, 'a fresh id is minted');
  });

  test('a batch retried after a dropped connection is delivered once the client reconnects', async () => {
    let dropped = false;
    server.handler = (r) => {
      if (r.code === CommandCode.sendMessages && !dropped) {
        dropped = true;
        return { drop: true };
      }
      return undefined;
    };
    const p = new IggyProducer(client, { streamId: 1, topicId: 1, retryBackoffMs: 5 });
    const r = await p.send(['a', 'b'], { partitionId: 0 });
    assert.equal(r.firstOffset, 0n);
    assert.equal(server.partitions.get(0)!.length, 2);
    // The retry carries the ids of the first attempt (a server or consumer can dedupe by id).
    const attempts = server.requests
      .filter((q) => q.code === CommandCode.sendMessages)
      .map((q) => {
        const batch = parseBatch((q.decoded as unknown as { request: { batch: Buffer } }).request.batch);
        assert.ok(!('code' in batch));
        return batch.frames.map((f) => f.id);
      });
    assert.equal(attempts.length, 2);
    assert.deepEqual(attempts[1], attempts[0]);
  });

  test('a non-retriable error rejects the send', async () => {
    const p = new IggyProducer(client, { streamId: 1, topicId: 1 });
    await assert.rejects(p.send('x', { partitionId: 9 }), (e: unknown) => (e as { code?: number }).code === 20);
  });
});
