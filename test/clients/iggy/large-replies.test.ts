// Large replies through a plain TCP connection: the SDK reads the rest of a large frame straight
// into the frame's own buffer (the framer's direct reads), so these check that replies of
// several MiB, pipelined back to back, arrive whole and in order.

import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { IggyClient } from '../../../src/clients/iggy/index.js';
import { nativeStatus, recycledBufferStats } from '../../../src/base/native.js';
import { useFakeServer, type FakeIggyServer } from './fake-server.js';

const fake = useFakeServer({ reconnect: false });
let server: FakeIggyServer;
let client: IggyClient;
beforeEach(() => ({ server, client } = fake));

const payload = (i: number): Buffer => {
  const b = Buffer.alloc(1000 + (i % 7), i & 0xff);
  b.writeUInt32LE(i, 0);
  return b;
};

describe('large poll replies', () => {
  test('pipelined polls of ~1 MB each come back whole, in order, with every payload intact', async () => {
    for (let b = 0; b < 4; b++) {
      await client.sendMessages({ streamId: 1, topicId: 1, partitioning: { partitionId: 0 }, messages: Array.from({ length: 1000 }, (_, i) => payload(b * 1000 + i)) });
    }
    assert.equal(server.partitions.get(0)!.length, 4000);
    const before = recycledBufferStats();
    // Four polls in flight at once: their ~1 MB replies follow each other on the socket.
    const polls = await Promise.all(
      [0, 1000, 2000, 3000].map((offset) =>
        client.pollMessages({ streamId: 1, topicId: 1, partitionId: 0, consumer: { consumer: 1 }, strategy: { offset: BigInt(offset) }, count: 1000 }),
      ),
    );
    polls.forEach((poll, k) => {
      assert.equal(poll.messages.length, 1000);
      poll.messages.forEach((m, i) => {
        const n = k * 1000 + i;
        assert.equal(m.offset, BigInt(n));
        assert.deepEqual(m.payload, payload(n), `payload of offset ${n}`);
      });
    });
    // With the addon, each ~1 MB reply was assembled in recycled memory (src/base/native.ts recycledBuffer).
    if (nativeStatus.loaded) {
      const after = recycledBufferStats()!;
      assert.ok(after.fresh + after.reused - (before!.fresh + before!.reused) >= 4, 'the replies were read into recycled buffers');
    }
    // And the connection is in step afterwards.
    await client.ping();
  });
});
