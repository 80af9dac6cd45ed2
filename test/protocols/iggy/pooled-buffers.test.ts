// Large SendMessages requests are assembled in pooled buffers and PollMessages reads go into
// pooled buffers (src/base/buffer-pool.ts). A buffer handed back too early would be reused by the
// next large request or read while the log or the socket still used it: these tests send and poll
// many large batches at once over several connections and check every byte that comes back.
// Polls of whole stored batches send them from the segment files instead (file-replies.ts); polls
// that start inside a batch read it and send a slice of its bytes: both paths run here.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IggyClient } from '../../../src/clients/iggy/index.js';
import { bufferPoolStats } from '../../../src/base/buffer-pool.js';
import { defaultDirectWriteGate } from '../../../src/log/direct-write.js';
import { nativeStatus } from '../../../src/base/native.js';
import { fileReplyStats } from '../../../src/protocols/file-replies.js';
import { rootPassword, rootUsername, startIggyBroker, type IggyBroker } from '../../clients/iggy/broker.js';

// Loopback peers get file slices only when asked (file-replies.ts canSendFiles): these tests ask.
process.env['QUARTET_SENDFILE'] = '1';

const messagesPerBatch = 40;
const messageBytes = 8_000;
const batchesPerProducer = 6;
const producers = 3;

/** Message `i` of batch `b` of producer `p`: bytes that tell where they belong. */
function payload(p: number, b: number, i: number): Buffer {
  const buf = Buffer.alloc(messageBytes, (p * 31 + b * 7 + i) & 0xff);
  buf.write(`p${p} b${b} i${i};`, 0, 'latin1');
  return buf;
}

describe('iggy pooled request and read buffers', () => {
  let broker: IggyBroker;
  const clients: IggyClient[] = [];
  const client = async (): Promise<IggyClient> => {
    const c = new IggyClient({ addr: broker.addr, credentials: { username: rootUsername, password: rootPassword }, pingIntervalMs: 0, requestTimeoutMs: 20_000 });
    await c.connect();
    clients.push(c);
    return c;
  };

  before(async () => {
    broker = await startIggyBroker();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await broker.stop();
  });

  const roundTrip = async (stream: string): Promise<void> => {
    const admin = await client();
    await admin.createStream(stream);
    await admin.createTopic({ streamId: stream, name: 't', partitionsCount: producers });
    const senders = await Promise.all(Array.from({ length: producers }, () => client()));
    // Each producer pipelines its batches to its own partition: several ~320 KB requests in flight per connection.
    await Promise.all(
      senders.map((c, p) =>
        Promise.all(
          Array.from({ length: batchesPerProducer }, (_, b) =>
            c.sendMessages({ streamId: stream, topicId: 't', partitioning: { partitionId: p }, messages: Array.from({ length: messagesPerBatch }, (_, i) => payload(p, b, i)) }),
          ),
        ),
      ),
    );
    assert.ok(bufferPoolStats().freeBuffers > 0, 'request buffers went back to the pool');

    // Two readers per partition poll everything at once, in pieces that start inside batches.
    const readers = await Promise.all(Array.from({ length: producers * 2 }, () => client()));
    await Promise.all(
      readers.map(async (c, r) => {
        const p = r % producers;
        const step = r < producers ? messagesPerBatch * 3 : 55;
        let offset = 0;
        const total = messagesPerBatch * batchesPerProducer;
        while (offset < total) {
          const polled = await c.pollMessages({ streamId: stream, topicId: 't', partitionId: p, strategy: { offset: BigInt(offset) }, count: step });
          assert.ok(polled.messages.length > 0, `reader ${r} got nothing at offset ${offset}`);
          for (const m of polled.messages) {
            assert.equal(m.offset, BigInt(offset));
            const b = Math.floor(offset / messagesPerBatch);
            assert.ok(m.payload.equals(payload(p, b, offset % messagesPerBatch)), `reader ${r}: wrong bytes at offset ${offset}`);
            offset++;
          }
        }
      }),
    );
  };

  it('stores and returns every byte of large batches sent and polled concurrently', async () => {
    const before = fileReplyStats.slices;
    await roundTrip('direct');
    // Whole stored batches went out as file slices (sendfile), those cut by a poll's window as bytes.
    if (nativeStatus.loaded) assert.ok(fileReplyStats.slices > before, 'polls of whole batches were sent from the segment files');
  });

  it('does the same when appends wait for thread-pool writes across event-loop turns', async () => {
    defaultDirectWriteGate.closeFor(60_000);
    await roundTrip('pooled-writes');
  });
});
