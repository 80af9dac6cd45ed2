// CursusConsumer against the fake peer: join -> sync -> fetch -> consume -> handler -> commit with
// member and generation; resume from the committed offset; heartbeats on their own connection;
// rebalances from HEARTBEAT (GEN_MISMATCH), from a commit (NOT_OWNER, redelivery) and
// member_not_found; auto_offset_reset earliest, latest and error with the broker's figures;
// isolation and long-poll fields; BATCH_COMMIT; control records; STREAM mode with keepalives,
// CLOSE and offset_out_of_range; leave on close.

import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { encodeBatch, type CursusRecord } from '../../../src/protocols/cursus/codec/index.js';
import { CursusClient, CursusConsumer, CursusError, type ConsumedBatch, type CursusClientOptions, type CursusConsumerOptions } from '../../../src/clients/cursus/index.js';
import { FakeCursusBroker, gate, step, type FakeRequest } from './fake-broker.js';

let fake: FakeCursusBroker;
const clients: CursusClient[] = [];
const consumers: CursusConsumer[] = [];

function client(options: CursusClientOptions = {}): CursusClient {
  const c = new CursusClient({ addr: fake.addr, compression: ['none'], requestTimeoutMs: 2_000, reconnect: { attemptsMax: 3, backoffMinMs: 5, backoffMaxMs: 20 }, ...options });
  clients.push(c);
  return c;
}

function consumer(options: Partial<CursusConsumerOptions> = {}): CursusConsumer {
  const c = new CursusConsumer(client(), { topic: 't', group: 'g', member: 'worker', waitMs: 20, heartbeatIntervalMs: 20, retryBackoffMs: 5, ...options });
  consumers.push(c);
  return c;
}

/** Runs the consumer until `done(seen)` holds (bounded), then closes it; returns what it saw. */
async function consumeUntil(c: CursusConsumer, done: (seen: ConsumedBatch[]) => boolean, deadlineMs = 5_000): Promise<ConsumedBatch[]> {
  const seen: ConsumedBatch[] = [];
  let finish!: () => void;
  const reached = new Promise<void>((resolve) => (finish = resolve));
  const running = c.run((b) => {
    seen.push(b);
    if (done(seen)) finish();
  });
  const timer = setTimeout(finish, deadlineMs);
  await Promise.race([reached, running]);
  clearTimeout(timer);
  await c.close();
  await running;
  assert.ok(done(seen), `condition not reached within ${deadlineMs} ms: ${JSON.stringify(seen.map(offsetsOf))}`);
  return seen;
}

function offsetsOf(b: ConsumedBatch): string {
  return `P${b.partition}:${b.records.map((r) => r.offset).join(',')}`;
}

const total = (seen: ConsumedBatch[]): number => seen.reduce((n, b) => n + b.records.length, 0);

/** Polls until `cond` holds (bounded). */
async function waitFor(cond: () => boolean, what: string, deadlineMs = 3_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

before(async () => {
  fake = await FakeCursusBroker.start();
});
after(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());
afterEach(async () => {
  for (const c of consumers.splice(0)) await c.close();
  for (const c of clients.splice(0)) await c.close();
});

describe('the CONSUME loop', () => {
  test('joins, syncs, fetches each partition, consumes, commits next offsets with member and generation, leaves on close', async () => {
    fake.model.addTopic('t', 2);
    fake.model.put('t', 0, ['a', 'b', 'c']);
    fake.model.put('t', 1, ['x', 'y']);
    const c = consumer();
    const seen: ConsumedBatch[] = [];
    const running = c.run((b) => {
      seen.push(b);
    });
    await waitFor(() => total(seen) === 5 && fake.of('HEARTBEAT').length >= 1 && fake.model.committed('g', 1) === 2, 'the records, a heartbeat and the commits');
    await c.close();
    await running;
    assert.deepEqual(seen.map(offsetsOf).sort(), ['P0:0,1,2', 'P1:0,1']);
    assert.deepEqual(seen.find((b) => b.partition === 0)!.records.map((r) => r.payload.toString()), ['a', 'b', 'c']);
    const cmds = fake.commands();
    assert.deepEqual(cmds.slice(0, 4), ['JOIN_GROUP', 'SYNC_GROUP', 'FETCH_OFFSET', 'FETCH_OFFSET']);
    assert.equal(cmds.filter((n) => n !== 'EXIT').at(-1), 'LEAVE_GROUP');
    const join = fake.of('JOIN_GROUP')[0]!;
    assert.deepEqual(Object.fromEntries(join.fields), { group: 'g', member: 'worker', topic: 't' });
    const memberId = seen[0]!.memberId;
    assert.match(memberId, /^worker-\d+$/);
    for (const commit of fake.of('COMMIT_OFFSET')) {
      assert.equal(commit.fields.get('member'), memberId);
      assert.equal(commit.fields.get('generation'), String(seen[0]!.generation));
    }
    assert.deepEqual([fake.model.committed('g', 0), fake.model.committed('g', 1)], [3, 2]);
    // Heartbeats ran on a connection of their own.
    const beats = fake.of('HEARTBEAT');
    assert.ok(beats.length >= 1, 'at least one heartbeat');
    assert.ok(beats.every((b) => b.conn !== join.conn));
    assert.equal(fake.of('LEAVE_GROUP')[0]!.fields.get('member'), memberId);
  });

  test('resumes from the broker\'s committed offset, and sends isolation, batch and wait_ms', async () => {
    fake.model.addTopic('t', 1);
    fake.model.put('t', 0, ['0', '1', '2', '3', '4']);
    // An earlier member of the group committed 3.
    fake.model.groups.set('g', { topic: 't', generation: 4, members: new Map(), offsets: new Map([[0, 3]]) });
    const c = consumer({ isolation: 'read_uncommitted', batch: 2, waitMs: 40 });
    const seen: ConsumedBatch[] = [];
    const running = c.run((b) => {
      seen.push(b);
    });
    // After the records, a round finds nothing; the next one long-polls.
    await waitFor(() => fake.of('CONSUME').some((r) => r.fields.get('wait_ms') === '40'), 'a long-poll');
    await c.close();
    await running;
    assert.deepEqual(seen.map(offsetsOf), ['P0:3,4']);
    const consumes = fake.of('CONSUME');
    assert.equal(consumes[0]!.fields.get('offset'), '3');
    assert.equal(consumes[0]!.fields.get('isolation'), 'read_uncommitted');
    assert.equal(consumes[0]!.fields.get('batch'), '2');
    assert.equal(consumes[0]!.fields.get('wait_ms'), undefined, 'no long-poll while records may be waiting');
  });

  test('a long-poll returns as soon as a record is published', async () => {
    fake.model.addTopic('t', 1);
    const c = consumer({ waitMs: 1_500 });
    const seen: ConsumedBatch[] = [];
    const running = c.run((b) => {
      seen.push(b);
    });
    await waitFor(() => fake.of('CONSUME').some((r) => r.fields.get('wait_ms') === '1500'), 'a long-poll');
    const started = Date.now();
    fake.model.put('t', 0, ['late']);
    await waitFor(() => seen.length === 1, 'the record');
    assert.ok(Date.now() - started < 1_000, 'delivered before the long-poll ran out');
    await c.close();
    await running;
  });

  test('control records are skipped and their offsets passed', async () => {
    fake.model.addTopic('t', 1);
    fake.model.put('t', 0, ['a']);
    fake.model.put('t', 0, [''], { transactionMarker: 'commit', controlBatchType: 'transaction' });
    fake.model.put('t', 0, ['b']);
    const seen = await consumeUntil(consumer(), (s) => total(s) === 2);
    assert.deepEqual(seen.flatMap((b) => b.records.map((r) => r.payload.toString())), ['a', 'b']);
    await waitFor(() => fake.model.committed('g', 0) === 3, 'commit past the marker');
  });

  test('commit: batch sends one BATCH_COMMIT per round with P<partition>:<next>', async () => {
    fake.model.addTopic('t', 2);
    fake.model.put('t', 0, ['a', 'b']);
    fake.model.put('t', 1, ['c']);
    const seen = await consumeUntil(consumer({ commit: 'batch' }), (s) => total(s) === 3);
    assert.equal(seen.length, 2);
    assert.equal(fake.of('COMMIT_OFFSET').length, 0);
    const batch = fake.of('BATCH_COMMIT')[0]!;
    assert.equal(batch.fields.get('offsets'), 'P0:2,P1:1');
    assert.equal(batch.fields.get('member'), seen[0]!.memberId);
    assert.equal(batch.fields.get('generation'), String(seen[0]!.generation));
  });
});

describe('rebalances', () => {
  test('GEN_MISMATCH from HEARTBEAT: stop, rejoin with the member ID, sync, fetch, resume', async () => {
    fake.model.addTopic('t', 1);
    fake.model.put('t', 0, ['a']);
    let fenced = false;
    fake.handler = (req) => {
      if (req.command !== 'HEARTBEAT' || fenced || fake.model.committed('g', 0) !== 1) return undefined;
      fenced = true;
      return { error: 'GEN_MISMATCH', fields: [['current', '9'], ['requested', req.fields.get('generation')!], ['group', 'g'], ['member', req.fields.get('member')!]] };
    };
    const c = consumer();
    const reasons: string[] = [];
    c.on('rebalance', (e: CursusError) => reasons.push(e.code));
    const seen: ConsumedBatch[] = [];
    const running = c.run((b) => {
      seen.push(b);
    });
    await waitFor(() => fake.of('JOIN_GROUP').length === 2 && fake.of('FETCH_OFFSET').length === 2, 'the rejoin');
    fake.model.put('t', 0, ['b']);
    await waitFor(() => total(seen) === 2, 'the record after the rejoin');
    await c.close();
    await running;
    assert.deepEqual(reasons, ['GEN_MISMATCH']);
    const [first, second] = fake.of('JOIN_GROUP');
    assert.equal(first!.fields.get('member'), 'worker');
    assert.equal(second!.fields.get('member'), seen[0]!.memberId, 'rejoins as the same member');
    assert.ok(seen[1]!.generation > seen[0]!.generation);
    assert.deepEqual(seen.map(offsetsOf), ['P0:0', 'P0:1']);
    assert.equal(fake.of('FETCH_OFFSET')[1]!.fields.get('partition'), '0');
  });

  test('NOT_OWNER on a commit: the batch is not committed, the member rejoins and gets it again', async () => {
    fake.model.addTopic('t', 1);
    fake.model.put('t', 0, ['a', 'b']);
    let refused = false;
    fake.handler = (req) => {
      if (req.command !== 'COMMIT_OFFSET' || refused) return undefined;
      refused = true;
      return { error: 'NOT_OWNER', fields: [['partition', '0'], ['member', req.fields.get('member')!], ['group', 'g'], ['generation', '7']] };
    };
    const seen = await consumeUntil(consumer(), (s) => s.length === 2);
    assert.deepEqual(seen.map(offsetsOf), ['P0:0,1', 'P0:0,1']);
    assert.equal(fake.of('JOIN_GROUP').length, 2);
    await waitFor(() => fake.model.committed('g', 0) === 2, 'the second commit');
  });

  test('member_not_found: rejoins with the requested member ID', async () => {
    fake.model.addTopic('t', 1);
    fake.model.put('t', 0, ['a']);
    let gone = false;
    fake.handler = (req) => {
      if (req.command !== 'HEARTBEAT' || gone || fake.model.committed('g', 0) !== 1) return undefined;
      gone = true;
      fake.model.groups.get('g')!.members.clear();
      return { error: 'member_not_found', fields: [['member', req.fields.get('member')!], ['group', 'g']] };
    };
    const c = consumer();
    const running = c.run(() => {});
    await waitFor(() => fake.of('JOIN_GROUP').length === 2 && fake.of('SYNC_GROUP').length === 2, 'the rejoin');
    await c.close();
    await running;
    assert.deepEqual(
      fake.of('JOIN_GROUP').map((r) => r.fields.get('member')),
      ['worker', 'worker'],
    );
  });
});

describe('failures while joining', () => {
  test('a join cut short (the connection drops at SYNC_GROUP) is done again as the member the broker named', async () => {
    fake.model.addTopic('t', 1);
    fake.model.put('t', 0, ['a']);
    let dropped = false;
    fake.handler = (req) => {
      if (req.command !== 'SYNC_GROUP' || dropped) return undefined;
      dropped = true;
      return { close: true };
    };
    const seen = await consumeUntil(consumer(), (s) => total(s) === 1);
    const joins = fake.of('JOIN_GROUP').map((r) => r.fields.get('member'));
    assert.deepEqual(joins, ['worker', seen[0]!.memberId]);
    assert.equal(fake.of('SYNC_GROUP').length, 2);
    assert.deepEqual(seen.map(offsetsOf), ['P0:0']);
  });
});

describe('auto_offset_reset', () => {
  function outOfRange(): void {
    fake.model.addTopic('t', 1);
    fake.model.put('t', 0, ['0', '1', '2', '3', '4', '5']);
    fake.model.retainFrom('t', 0, 3);
  }

  test('earliest resumes from the broker-reported earliest offset', async () => {
    outOfRange();
    const c = consumer({ autoOffsetReset: 'earliest' });
    const resets: unknown[] = [];
    c.on('reset', (r: unknown) => resets.push(r));
    const seen = await consumeUntil(c, (s) => total(s) === 3);
    assert.deepEqual(seen.map(offsetsOf), ['P0:3,4,5']);
    assert.deepEqual(resets, [{ partition: 0, policy: 'earliest', from: 0, to: 3 }]);
    assert.equal(fake.of('CONSUME')[0]!.fields.get('autoOffsetReset'), 'earliest');
  });

  test('latest resumes from the broker-reported latest offset, skipping what is retained', async () => {
    outOfRange();
    const c = consumer({ autoOffsetReset: 'latest' });
    const seen: ConsumedBatch[] = [];
    const running = c.run((b) => {
      seen.push(b);
    });
    // A fresh group with 'latest' starts at LIST_OFFSETS' latest: nothing is out of range yet.
    await waitFor(() => fake.of('CONSUME').length >= 1, 'a consume');
    assert.equal(fake.of('CONSUME')[0]!.fields.get('offset'), '6');
    assert.equal(fake.of('LIST_OFFSETS').length, 1);
    fake.model.put('t', 0, ['new']);
    await waitFor(() => total(seen) === 1, 'the new record');
    await c.close();
    await running;
    assert.deepEqual(seen.map(offsetsOf), ['P0:6']);
  });

  test('latest after OFFSET_OUT_OF_RANGE on a committed position', async () => {
    outOfRange();
    fake.handler = (req) =>
      req.command === 'FETCH_OFFSET' ? { ok: [['offset', '1']] } : undefined;
    const c = consumer({ autoOffsetReset: 'latest' });
    const resets: unknown[] = [];
    c.on('reset', (r: unknown) => resets.push(r));
    const running = c.run(() => {});
    await waitFor(() => resets.length === 1, 'the reset');
    await c.close();
    await running;
    assert.deepEqual(resets, [{ partition: 0, policy: 'latest', from: 1, to: 6 }]);
  });

  test('error fails run() with the OFFSET_OUT_OF_RANGE error instead of skipping or replaying', async () => {
    outOfRange();
    const c = consumer({ autoOffsetReset: 'error' });
    const seen: ConsumedBatch[] = [];
    const err = await c.run((b) => {
      seen.push(b);
    }).catch((e: unknown) => e);
    assert.ok(err instanceof CursusError);
    assert.equal(err.code, 'OFFSET_OUT_OF_RANGE');
    assert.deepEqual([err.numberField('earliest'), err.numberField('latest')], [3, 6]);
    assert.deepEqual(seen, []);
    assert.equal(fake.of('CONSUME')[0]!.fields.get('autoOffsetReset'), undefined);
    assert.equal(fake.of('LEAVE_GROUP').length, 1, 'leaves the group on the way out');
  });
});

describe('STREAM mode', () => {
  function batchOf(offsets: number[]): Buffer {
    const records: CursusRecord[] = offsets.map((offset) => ({ topic: 't', partition: 0, offset, payload: Buffer.from(`m${offset}`) }));
    return Buffer.concat(encodeBatch({ idempotent: false, topic: 't', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records }));
  }

  test('batches are processed and committed, keepalives pass, a CLOSE reopens the stream from the committed offset', async () => {
    fake.model.addTopic('t', 1);
    const forever = gate();
    const streams: FakeRequest[] = [];
    fake.handler = (req) => {
      if (req.command !== 'STREAM') return undefined;
      streams.push(req);
      if (streams.length === 1) return { stream: [step(batchOf([0, 1])), step(Buffer.alloc(0)), step(Buffer.from('STREAM_CONTROL type=CLOSE reason=timeout offset=2'), true)] };
      return { stream: [step(Buffer.alloc(0)), step(batchOf([1, 2])), { wait: forever.wait }] };
    };
    const seen = await consumeUntil(consumer({ mode: 'stream', isolation: 'read_uncommitted' }), (s) => total(s) === 3);
    forever.open();
    // The second stream re-sent offset 1; it was processed already and is not delivered again.
    assert.deepEqual(seen.map(offsetsOf), ['P0:0,1', 'P0:2']);
    assert.deepEqual(
      fake.of('COMMIT_OFFSET').map((r) => r.fields.get('offset')),
      ['2', '3'],
    );
    assert.equal(streams.length, 2);
    assert.deepEqual(Object.fromEntries(streams[0]!.fields), { group: 'g', isolation: 'read_uncommitted', member: seen[0]!.memberId, partition: '0', topic: 't' });
    assert.notEqual(streams[0]!.conn, streams[1]!.conn, 'each stream has its own connection');
    assert.equal(fake.of('LEAVE_GROUP').length, 1);
  });

  test('a CLOSE with offset_out_of_range applies earliest: the reset is committed and the stream reopened', async () => {
    fake.model.addTopic('t', 1);
    const forever = gate();
    let n = 0;
    fake.handler = (req) => {
      if (req.command !== 'STREAM') return undefined;
      n++;
      if (n === 1) return { stream: [step(Buffer.from('STREAM_CONTROL type=CLOSE reason=offset_out_of_range offset=0 requested=0 earliest=5 latest=9'), true)] };
      return { stream: [step(Buffer.concat(encodeBatch({ idempotent: false, topic: 't', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: [{ topic: 't', partition: 0, offset: 5, payload: Buffer.from('x') }] }))), { wait: forever.wait }] };
    };
    const seen = await consumeUntil(consumer({ mode: 'stream' }), (s) => total(s) === 1);
    forever.open();
    assert.deepEqual(seen.map(offsetsOf), ['P0:5']);
    assert.deepEqual(
      fake.of('COMMIT_OFFSET').map((r) => r.fields.get('offset')),
      ['5', '6'],
    );
  });

  test('a rebalance learned by the heartbeat closes the streams and rejoins', async () => {
    fake.model.addTopic('t', 1);
    const gates = [gate(), gate()];
    let streams = 0;
    let fenced = false;
    fake.handler = (req) => {
      if (req.command === 'STREAM') return { stream: [step(Buffer.alloc(0)), { wait: gates[streams++ === 0 ? 0 : 1]!.wait }] };
      if (req.command === 'HEARTBEAT' && !fenced) {
        fenced = true;
        return { error: 'GEN_MISMATCH', fields: [['current', '5'], ['requested', '1'], ['group', 'g'], ['member', req.fields.get('member')!]] };
      }
      return undefined;
    };
    const c = consumer({ mode: 'stream' });
    const running = c.run(() => {});
    await waitFor(() => fake.of('JOIN_GROUP').length === 2 && streams === 2, 'the rejoin and a new stream');
    const first = fake.of('STREAM')[0]!;
    await waitFor(() => first.conn.socket.destroyed || !first.conn.socket.readable, 'the first stream closed');
    await c.close();
    await running;
    for (const g of gates) g.open();
  });
});
