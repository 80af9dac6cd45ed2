// The SDK's pooled SendMessages buffers: a batch buffer goes back to the buffer pool only once the
// server has answered (it has then read every byte), and never after a timeout or a lost
// connection, when the bytes may still be queued on the socket.

import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { CommandCode } from '../../../src/protocols/iggy/codec/index.js';
import { IggyClient, IggyError, IggyTimeoutError } from '../../../src/clients/iggy/index.js';
import { bufferPoolStats } from '../../../src/base/buffer-pool.js';
import { useFakeServer, type FakeIggyServer, type FakeRequest } from './fake-server.js';

const fake = useFakeServer({ reconnect: false });
let server: FakeIggyServer;
let client: IggyClient;
beforeEach(() => ({ server, client } = fake));

/** 100 messages of 1 KiB: a ~105 KB batch, above the pool's 64 KiB floor. */
const messages = Array.from({ length: 100 }, (_, i) => Buffer.alloc(1024, i));
const send = (timeoutMs?: number) =>
  client.sendMessages({ streamId: 1, topicId: 1, partitioning: { partitionId: 0 }, messages }, timeoutMs !== undefined ? { timeoutMs } : undefined);
const isSend = (r: FakeRequest) => r.code === CommandCode.sendMessages;

describe('SendMessages batch buffers', () => {
  test('an answered send returns its buffer to the pool, and the next send reuses it', async () => {
    const before = bufferPoolStats().freeBytes;
    await send();
    const afterFirst = bufferPoolStats();
    assert.ok(afterFirst.freeBytes >= before + 100 * 1072, `pool grew by the batch (${before} -> ${afterFirst.freeBytes})`);
    await send();
    assert.deepEqual(bufferPoolStats(), afterFirst, 'the second send took the pooled buffer and gave it back');
    const stored = server.partitions.get(0)!;
    assert.equal(stored.length, 200);
    assert.deepEqual(stored[150]!.input.payload, messages[50], 'the reused buffer carried the second batch intact');
  });

  test('a send refused with a server status still returns its buffer (the server read it all)', async () => {
    let duringSend = -1;
    server.handler = (r) => {
      if (!isSend(r)) return undefined;
      duringSend = bufferPoolStats().freeBuffers;
      return { status: 1009 };
    };
    const before = bufferPoolStats().freeBuffers;
    await assert.rejects(send(), IggyError);
    assert.equal(duringSend, before - 1, 'the send held a pooled buffer');
    assert.equal(bufferPoolStats().freeBuffers, before, 'and gave it back');
  });

  test('a send that times out keeps its buffer out of the pool (it may still be on the socket)', async () => {
    // Empty the pool first, so any buffer in it afterwards came back from the timed-out send.
    await send();
    server.handler = (r) => (isSend(r) ? { hold: true } : undefined);
    const pooled = bufferPoolStats();
    const pending = send(50);
    // The send took the one pooled buffer.
    assert.equal(bufferPoolStats().freeBuffers, pooled.freeBuffers - 1);
    await assert.rejects(pending, IggyTimeoutError);
    assert.equal(bufferPoolStats().freeBuffers, pooled.freeBuffers - 1, 'not returned after the timeout');
  });

  test('a send whose messages cannot be encoded rejects, sends nothing and leaves the pool whole', async () => {
    await send(); // a pooled buffer of the batch's size is free
    const pooled = bufferPoolStats();
    const requests = server.requests.length;
    const now = BigInt(Date.now()) * 1000n;
    // 100 KiB of messages whose timestamps lie more than u32 µs apart: the encoder refuses them
    // once it has taken the batch buffer.
    const bad = messages.map((payload, i) => ({ payload, timestampMicros: i === 0 ? now : now + (1n << 33n) }));
    await assert.rejects(client.sendMessages({ streamId: 1, topicId: 1, partitioning: { partitionId: 0 }, messages: bad }), RangeError);
    await assert.rejects(client.sendMessages({ streamId: 1, topicId: 1, partitioning: { partitionId: 0 }, messages: [] }), RangeError);
    // Metadata the request encoder refuses (a key or a name over 255 bytes): refused before the
    // batch takes a pooled buffer.
    await assert.rejects(client.sendMessages({ streamId: 1, topicId: 1, partitioning: { key: 'k'.repeat(256) }, messages }));
    await assert.rejects(client.sendMessages({ streamId: 's'.repeat(256), topicId: 1, partitioning: { partitionId: 0 }, messages }));
    assert.deepEqual(bufferPoolStats(), pooled, 'the buffer went back');
    assert.equal(server.requests.length, requests, 'nothing reached the server');
  });
});
