// IggyConsumer against the fake server: rotation over partitions, offset tracking, strategies,
// commits, consumer-group join / poll / leave.

import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { CommandCode, encodeReply } from '../../../src/protocols/iggy/codec/index.js';
import { IggyClient, IggyConsumer, IggyProducer, headerValue, type IggyMessage } from '../../../src/clients/iggy/index.js';
import { useFakeServer, type FakeIggyServer } from './fake-server.js';

const fake = useFakeServer({}, async (c) => {
  const p = new IggyProducer(c, { streamId: 1, topicId: 1 });
  await p.send([{ payload: 'p0-a', headers: { k: 'v' } }, 'p0-b', 'p0-c'], { partitionId: 0 });
  await p.send(['p2-a', 'p2-b'], { partitionId: 2 });
});
let server: FakeIggyServer;
let client: IggyClient;
beforeEach(() => ({ server, client } = fake));

async function take(consumer: IggyConsumer, n: number): Promise<IggyMessage[]> {
  const out: IggyMessage[] = [];
  for await (const m of consumer) {
    out.push(m);
    if (out.length === n) break;
  }
  return out;
}

describe('single consumer', () => {
  test('polls every partition in rotation and continues from the last offset', async () => {
    const c = new IggyConsumer(client, { streamId: 1, topicId: 1, consumer: 'c1', strategy: 'first', batchSize: 2, pollIntervalMs: 5 });
    const got = await take(c, 5);
    assert.deepEqual(got.map((m) => `${m.partitionId}:${m.offset}:${m.payload}`), ['0:0:p0-a', '0:1:p0-b', '2:0:p2-a', '2:1:p2-b', '0:2:p0-c']);
    assert.equal(headerValue(got[0]!, 'k')?.value, 'v');
    assert.equal(got[0]!.timestamp, 5n);
    const polls = server.requests.filter((r) => r.code === CommandCode.pollMessages).map((r) => (r.decoded as { request: { strategy: { kind: number; value: bigint } } }).request.strategy);
    assert.deepEqual(polls[0], { kind: 3, value: 0n }); // first
    assert.ok(polls.some((s) => s.kind === 1 && s.value === 2n), 'continues with strategy offset');
  });

  test("strategy 'last' and an explicit offset", async () => {
    const last = new IggyConsumer(client, { streamId: 1, topicId: 1, consumer: 'c2', partitions: [0], strategy: 'last', batchSize: 1 });
    assert.deepEqual((await take(last, 1)).map((m) => m.offset), [2n]);
    const fromOffset = new IggyConsumer(client, { streamId: 1, topicId: 1, consumer: 'c3', partitions: [0], strategy: { offset: 1 } });
    assert.deepEqual((await take(fromOffset, 2)).map((m) => m.offset), [1n, 2n]);
  });

  test("autoCommit 'poll' sets the poll flag; 'after' stores the last offset after the batch; commit() stores one", async () => {
    const auto = new IggyConsumer(client, { streamId: 1, topicId: 1, consumer: 'c4', partitions: [2] });
    await take(auto, 2);
    const pollReq = server.requests.find((r) => r.code === CommandCode.pollMessages)!;
    assert.equal((pollReq.decoded as { request: { autoCommit: boolean } }).request.autoCommit, true);

    server.requests.length = 0;
    const afterBatch = new IggyConsumer(client, { streamId: 1, topicId: 1, consumer: 'c5', partitions: [2], autoCommit: 'after', batchSize: 1, pollIntervalMs: 5 });
    await take(afterBatch, 2);
    const stored = server.requests.filter((r) => r.code === CommandCode.storeConsumerOffset).map((r) => (r.decoded as { request: { offset: bigint } }).request.offset);
    assert.deepEqual(stored, [0n]); // the second batch was not finished when the loop was left

    const manual = new IggyConsumer(client, { streamId: 1, topicId: 1, consumer: 'c6', partitions: [0], autoCommit: false });
    const [m] = await take(manual, 1);
    await manual.commit(m!);
    assert.equal(server.offsets.get(`1:${JSON.stringify({ kind: 'string', value: 'c6' })}:0`), 0n);
  });

  test('close() ends a waiting iteration', async () => {
    const c = new IggyConsumer(client, { streamId: 1, topicId: 1, consumer: 'c7', partitions: [1], pollIntervalMs: 60_000 });
    const it = c[Symbol.asyncIterator]();
    const next = it.next();
    await new Promise((r) => setTimeout(r, 20));
    await c.close();
    assert.deepEqual(await next, { value: undefined, done: true });
  });
});

describe('consumer group', () => {
  test('joins (creating the group when missing), syncs its assignment, polls next from its partitions by id, leaves on close', async () => {
    let created = false;
    server.handler = (r) => {
      if (r.code === CommandCode.joinConsumerGroup && !created) return { rejected: 5000 };
      if (r.code === CommandCode.createConsumerGroup) {
        created = true;
        return { reply: [Buffer.from('00000000' + '01000000' + '03000000' + '00000000' + '02' + Buffer.from('g1').toString('hex'), 'hex')] };
      }
      return undefined;
    };
    const c = new IggyConsumer(client, { streamId: 1, topicId: 1, group: 'g1', batchSize: 10 });
    const got = await take(c, 3);
    assert.deepEqual(got.map((m) => m.payload.toString()), ['p0-a', 'p0-b', 'p0-c']);
    const codes = server.codes().filter((x) => x >= 600);
    assert.deepEqual(codes, [CommandCode.joinConsumerGroup, CommandCode.createConsumerGroup, CommandCode.joinConsumerGroup, CommandCode.syncConsumerGroup, CommandCode.leaveConsumerGroup]);
    const poll = server.requests.find((r) => r.code === CommandCode.pollMessages)!.decoded as { request: { partitionId: number | null; consumer: { kind: number }; strategy: { kind: number } } };
    // The partition is named, as the reference server wants for group polls.
    assert.equal(poll.request.partitionId, 0);
    assert.equal(poll.request.consumer.kind, 2);
    assert.equal(poll.request.strategy.kind, 5);
    assert.equal(server.groupMembers.size, 0);
  });

  test('re-joins after a reconnect', async () => {
    const c = new IggyConsumer(client, { streamId: 1, topicId: 1, group: 'g2', batchSize: 1, pollIntervalMs: 5 });
    const it = c[Symbol.asyncIterator]();
    assert.equal((await it.next()).value?.payload.toString(), 'p0-a');
    const reconnected = new Promise((r) => client.once('connect', r));
    server.dropAll();
    await reconnected;
    const second = await it.next();
    assert.equal(second.done, false);
    assert.equal(server.codes().filter((x) => x === CommandCode.joinConsumerGroup).length, 2);
    assert.ok(server.codes().filter((x) => x === CommandCode.syncConsumerGroup).length >= 2, 'the assignment is fetched again on the new session');
    await it.return?.();
  });

  test('joins again when a poll is refused with 5006 (not a member) or names a group gone missing (5003), and goes on', async () => {
    let polls = 0;
    server.handler = (r) => {
      if (r.code !== CommandCode.pollMessages) return undefined;
      polls++;
      if (polls === 1) return { status: 5006 };
      if (polls === 2) return { status: 5003 };
      return undefined;
    };
    const c = new IggyConsumer(client, { streamId: 1, topicId: 1, group: 'g4', batchSize: 1, pollIntervalMs: 5 });
    const got = await take(c, 1);
    assert.equal(got[0]!.payload.toString(), 'p0-a');
    assert.equal(server.codes().filter((x) => x === CommandCode.joinConsumerGroup).length, 3, 'joined, then again after each refusal');
  });

  test("autoCommit 'after': a commit refused because the partition moved (5009) is dropped, and the loop syncs again", async () => {
    let refused = 0;
    let syncs = 0;
    server.handler = (r) => {
      if (r.code === CommandCode.syncConsumerGroup) syncs++;
      if (r.code === CommandCode.storeConsumerOffset && refused === 0) {
        refused++;
        return { status: 5009 };
      }
      return undefined;
    };
    const c = new IggyConsumer(client, { streamId: 1, topicId: 1, group: 'g5', batchSize: 1, pollIntervalMs: 5, autoCommit: 'after' });
    const got = await take(c, 3);
    // Its offset was not stored, so the group reads p0-a again (at-least-once), then goes on.
    assert.deepEqual(got.map((m) => m.payload.toString()), ['p0-a', 'p0-a', 'p0-b']);
    assert.equal(refused, 1);
    assert.ok(syncs >= 2, 'synced again after the refused commit');
    assert.ok(server.codes().filter((x) => x === CommandCode.storeConsumerOffset).length >= 2, 'later commits still sent');
  });

  test('syncs again when a poll is refused with 5009 (partition not owned), or answered with partition u32::MAX', async () => {
    // First assignment: partition 1, which the server then refuses (5009); the next sync gives 0.
    let syncs = 0;
    let resync = false;
    server.handler = (r) => {
      if (r.code === CommandCode.syncConsumerGroup) {
        syncs++;
        return { reply: encodeReply(CommandCode.syncConsumerGroup, { generation: BigInt(syncs), partitions: syncs === 1 ? [1] : [0] }) };
      }
      if (r.code === CommandCode.pollMessages && !resync && syncs === 2) {
        resync = true;
        return { reply: encodeReply(CommandCode.pollMessages, { partitionId: 0xffff_ffff, currentOffset: 0n, messagesCount: 0, batches: [] }) };
      }
      return undefined;
    };
    const c = new IggyConsumer(client, { streamId: 1, topicId: 1, group: 'g3', batchSize: 10, pollIntervalMs: 5 });
    const got = await take(c, 1);
    assert.equal(got[0]!.payload.toString(), 'p0-a');
    const polls = server.requests.filter((r) => r.code === CommandCode.pollMessages).map((r) => (r.decoded as { request: { partitionId: number } }).request.partitionId);
    assert.deepEqual(polls, [1, 0, 0], 'refused on 1; the re-sync answer on 0; then served');
    assert.equal(syncs, 3);
  });
});
