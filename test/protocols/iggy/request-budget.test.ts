// Large Iggy request frames share the broker's request byte budget (src/base/request-bytes.ts):
// with a 1 MiB budget, logged-in connections that each hold most of a 400 KiB SendMessages frame
// hold at most the budget together; the next such frame waits with its socket paused, a small
// request on another connection is still answered, and once a held frame is handled the waiter
// goes on and its messages are stored whole. Connections closed while holding give their bytes back.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Socket } from 'node:net';
import { CommandCode, ConsumerKind, PollingKind, parsePolledBatches, polledBuffers, type ParsedBatch } from '../../../src/protocols/iggy/codec/index.js';
import type { IggyConnection } from '../../../src/protocols/iggy/connection.js';
import { eventually, sendRequest, sid, startIggy, type IggyTestClient } from './harness.js';

const budgetBytes = 1024 * 1024;
const payloadBytes = 400 * 1024;

for (const readInto of [true, false]) {
  describe(`Iggy request frames and the broker request budget (${readInto ? 'reads in place' : "'data' events"})`, () => {
    it('hold at most the budget; a frame that does not fit waits with its socket paused and then goes through whole', async (t) => {
      const h = await startIggy(t, { broker: { requestBytesMax: budgetBytes }, readInto });
      const budget = h.broker.requestBytes;
      await h.broker.createTopic('default', 'big', { partitions: 1 });
      const serverSide = (c: IggyTestClient): Socket =>
        [...h.frontend.sessions.values()].map((s) => (s as IggyConnection).socket).find((s) => s.remotePort === c.socket.localPort)!;
      const sendFrame = (c: IggyTestClient, fill: string): Buffer =>
        Buffer.concat(c.frame(CommandCode.sendMessages, sendRequest(sid('default'), sid('big'), [Buffer.alloc(payloadBytes, fill)])));

      // Two connections each send all of a large SendMessages but its last byte: both are held.
      const holders = [await h.root(), await h.root()];
      const held = holders.map((c, i) => sendFrame(c, String(i)));
      for (const [i, c] of holders.entries()) {
        c.socket.write(held[i]!.subarray(0, held[i]!.length - 1));
        await eventually(() => budget.heldBytes === held.slice(0, i + 1).reduce((n, f) => n + f.length, 0), `frame ${i} to be held`);
      }

      // A third does not fit: it waits, its socket paused, and the budget holds no more.
      const waiter = await h.root();
      const waited = sendFrame(waiter, 'w');
      waiter.socket.write(waited.subarray(0, waited.length - 1));
      await eventually(() => budget.waiting === 1, 'the third frame to wait');
      assert.ok(budget.heldBytes <= budgetBytes, `held ${budget.heldBytes} of ${budgetBytes}`);
      assert.equal(serverSide(waiter).isPaused(), true, 'the waiting connection is not read');

      // Small requests on another connection are answered meanwhile.
      const small = await h.root();
      await small.ok(CommandCode.ping, {});

      // The first holder's frame completes and is handled: the waiter gets its bytes and goes on.
      holders[0]!.socket.write(held[0]!.subarray(held[0]!.length - 1));
      const first = await holders[0]!.next();
      assert.ok(first.kind === 'reply' && first.header.status === 0, 'the first send is stored');
      await eventually(() => budget.waiting === 0 && !serverSide(waiter).isPaused(), 'the waiter to be granted and read again');
      waiter.socket.write(waited.subarray(waited.length - 1));
      const second = await waiter.next();
      assert.ok(second.kind === 'reply' && second.header.status === 0, 'the waiting send is stored');
      await eventually(() => budget.heldBytes === held[1]!.length, 'the handled frames to give their bytes back');
      assert.ok(budget.peakHeldBytes <= budgetBytes, `peak ${budget.peakHeldBytes} of ${budgetBytes}`);

      // The connection still holding a frame closes: its bytes come back.
      holders[1]!.destroy();
      await eventually(() => budget.heldBytes === 0, 'the closed holder to give its bytes back');

      // Both messages that went through are stored whole, in order.
      const polled = await small.ok(CommandCode.pollMessages, {
        consumer: { kind: ConsumerKind.consumer, id: sid(1) }, streamId: sid('default'), topicId: sid('big'), partitionId: 0,
        strategy: { kind: PollingKind.offset, value: 0n } as never, count: 10, autoCommit: false,
      });
      const batches = parsePolledBatches(Buffer.concat(polledBuffers(polled))) as ParsedBatch[];
      const payloads = batches.flatMap((b) => b.frames.map((f) => f.payload));
      assert.equal(payloads.length, 2);
      assert.ok(payloads[0]!.equals(Buffer.alloc(payloadBytes, '0')), 'the first payload whole');
      assert.ok(payloads[1]!.equals(Buffer.alloc(payloadBytes, 'w')), 'the waited payload whole');
    });
  });
}
