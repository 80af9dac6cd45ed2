// Consumers that poll and never read their replies hold at most the broker's memory budget
// (core/memory-budget.ts) together, plus one batch each that found it spent, while a consumer
// that reads still gets every message. Measured on the budget's own counters, not RSS (the RSS
// figures are bench/slow-consumers.ts's).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandCode, PollingKind } from '../../../src/protocols/iggy/codec/index.js';
import { eventually, sendRequest, sid, startIggy, type IggyTestClient } from './harness.js';

const budgetBytes = 8 * 1024 * 1024;
const messagesPerBatch = 64;
const messageBytes = 4096;
const batches = 96;
const nonReaders = 8;
const pollsEach = 8;
/** A stored batch, with room for its header and frames. */
const batchBytesMax = messagesPerBatch * (messageBytes + 64) + 256;

describe('iggy consumers that do not read', () => {
  it('hold at most the memory budget while a reading consumer gets every message', async (t) => {
    const h = await startIggy(t, { broker: { memoryBudgetBytes: budgetBytes } });
    const budget = h.broker.memoryBudget;
    await h.broker.createTopic('default', 'slow', { partitions: 1 });
    const root = await h.root();
    for (let b = 0; b < batches; b++) {
      const payloads = Array.from({ length: messagesPerBatch }, (_, i) => Buffer.alloc(messageBytes, (b + i) & 0xff));
      await root.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('slow'), payloads));
    }
    const total = batches * messagesPerBatch;
    const poll = (c: IggyTestClient, offset: number) =>
      c.frame(CommandCode.pollMessages, { consumer: { kind: 1, id: sid(1) }, streamId: sid('default'), topicId: sid('slow'), partitionId: 0, strategy: { kind: PollingKind.offset, value: BigInt(offset) }, count: 100_000, autoCommit: false });

    // Each asks for everything, several times over, and reads nothing.
    const stuck: IggyTestClient[] = [];
    for (let k = 0; k < nonReaders; k++) {
      const c = await h.root();
      c.socket.pause();
      for (let p = 0; p < pollsEach; p++) c.write(poll(c, 0));
      stuck.push(c);
    }
    // The first ones take the budget and keep it: their replies wait in their sockets.
    await eventually(() => budget.heldBytes >= budgetBytes / 2, 'the non-reading consumers to hold the budget');

    // A consumer that reads makes progress all the same, one batch at a time at worst.
    const reader = await h.root();
    let offset = 0;
    while (offset < total) {
      const polled = await reader.ok(CommandCode.pollMessages, { consumer: { kind: 1, id: sid(2) }, streamId: sid('default'), topicId: sid('slow'), partitionId: 0, strategy: { kind: PollingKind.offset, value: BigInt(offset) }, count: 100_000, autoCommit: false });
      assert.ok(polled.messagesCount > 0, `the reader got nothing at offset ${offset}`);
      offset += polled.messagesCount;
    }
    assert.equal(offset, total);

    const bound = budgetBytes + (nonReaders + 1) * batchBytesMax;
    assert.ok(budget.peakHeldBytes <= bound, `held at most ${budget.peakHeldBytes} bytes, bound ${bound}`);
    assert.ok(budget.peakHeldBytes < nonReaders * batches * messagesPerBatch * messageBytes / 4, 'far less than the replies asked for');

    // Gone, they give everything back.
    for (const c of stuck) c.destroy();
    await eventually(() => budget.heldBytes === 0 && budget.openReservations === 0, 'every reservation to be released');
  });
});
