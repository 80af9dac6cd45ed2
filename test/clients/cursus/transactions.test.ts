// CursusTransactionalProducer against the fake peer: init, begin, TXN_PUBLISH with per-partition
// sequences from 1 per epoch, offsets sent with a consumer's membership, commit and abort, an
// uncertain END_TXN retried with the same epoch, automatic reinitialization after a completed
// epoch and on producer_reinitialization_required, status, run().

import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { CursusClient, CursusError, CursusTransactionalProducer, type CursusClientOptions } from '../../../src/clients/cursus/index.js';
import { FakeCursusBroker } from './fake-broker.js';

let fake: FakeCursusBroker;
const clients: CursusClient[] = [];

function client(options: CursusClientOptions = {}): CursusClient {
  const c = new CursusClient({ addr: fake.addr, compression: ['none'], requestTimeoutMs: 2_000, reconnect: { attemptsMax: 3, backoffMinMs: 5, backoffMaxMs: 20 }, ...options });
  clients.push(c);
  return c;
}

function txn(id = 'tx-1'): CursusTransactionalProducer {
  return new CursusTransactionalProducer(client(), { transactionalId: id, retryBackoffMs: 5 });
}

before(async () => {
  fake = await FakeCursusBroker.start();
});
after(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.model.addTopic('out', 2);
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

describe('transactions', () => {
  test('init, begin, publish with per-partition sequences, send offsets, commit: the records appear only then', async () => {
    const t = txn();
    await t.begin();
    assert.equal(t.state, 'open');
    const sent = [await t.send('out', 'a', { partition: 0 }), await t.send('out', 'b', { partition: 0 }), await t.send('out', 'c', { partition: 1 })];
    assert.deepEqual(
      sent.map((s) => [s.partition, s.seqNum]),
      [
        [0, 1],
        [0, 2],
        [1, 1],
      ],
    );
    fake.model.groups.set('g', { topic: 'in', generation: 3, members: new Map([['m-1', [0]]]), offsets: new Map() });
    assert.equal(await t.sendOffsets({ topic: 'in', group: 'g', member: 'm-1', generation: 3 }, new Map([[0, 42]])), 1);
    assert.equal(fake.model.log('out', 0).length, 0, 'nothing visible before the commit');
    const done = await t.commit();
    assert.deepEqual(done, { transactionalId: 'tx-1', state: 'committed', messages: 3, offsets: 1 });
    assert.equal(t.state, 'completed');
    assert.deepEqual(fake.model.log('out', 0).map((r) => r.payload.toString()), ['a', 'b']);
    assert.equal(fake.model.committed('g', 0), 42);
    assert.deepEqual(fake.commands(), ['INIT_PRODUCER_ID', 'BEGIN_TXN', 'TXN_PUBLISH', 'TXN_PUBLISH', 'TXN_PUBLISH', 'SEND_OFFSETS_TO_TXN', 'END_TXN']);
    const session = t.producer!;
    for (const r of fake.requests.slice(1)) {
      assert.equal(r.fields.get('transactional_id'), 'tx-1');
      assert.equal(r.fields.get('producerId'), session.producerId);
      assert.equal(r.fields.get('epoch'), String(session.epoch));
    }
    assert.equal(fake.of('SEND_OFFSETS_TO_TXN')[0]!.fields.get('offsets'), 'P0:42');
    assert.equal(fake.of('END_TXN')[0]!.fields.get('result'), 'commit');
    const status = await t.status();
    assert.deepEqual([status.state, status.messages, status.offsets], ['committed', 3, 1]);
  });

  test('the next transaction re-initializes first: a higher epoch, sequences from 1 again', async () => {
    const t = txn();
    await t.begin();
    await t.send('out', 'a', { partition: 0 });
    await t.commit();
    const firstEpoch = t.producer!.epoch;
    fake.requests.length = 0;
    await t.begin();
    const s = await t.send('out', 'b', { partition: 0 });
    await t.abort();
    assert.deepEqual(fake.commands(), ['INIT_PRODUCER_ID', 'BEGIN_TXN', 'TXN_PUBLISH', 'END_TXN']);
    assert.equal(t.producer!.epoch, firstEpoch + 1);
    assert.equal(s.seqNum, 1);
    assert.equal(fake.of('END_TXN')[0]!.fields.get('result'), 'abort');
    assert.deepEqual(fake.model.log('out', 0).map((r) => r.payload.toString()), ['a'], 'the aborted record never appears');
  });

  test('producer_reinitialization_required from BEGIN_TXN: init again, then begin with the new epoch', async () => {
    const t = txn();
    await t.init();
    let refused = false;
    fake.handler = (req) => {
      if (req.command !== 'BEGIN_TXN' || refused) return undefined;
      refused = true;
      return { error: 'producer_reinitialization_required', fields: [['transactional_id', 'tx-1'], ['epoch', req.fields.get('epoch')!]] };
    };
    await t.begin();
    assert.deepEqual(fake.commands(), ['INIT_PRODUCER_ID', 'BEGIN_TXN', 'INIT_PRODUCER_ID', 'BEGIN_TXN']);
    const [first, second] = fake.of('BEGIN_TXN');
    assert.equal(Number(second!.fields.get('epoch')), Number(first!.fields.get('epoch')) + 1);
  });

  test('an END_TXN whose connection dropped is retried with the same producerId and epoch', async () => {
    const t = txn();
    await t.begin();
    await t.send('out', 'a', { partition: 1 });
    let dropped = false;
    fake.handler = (req) => {
      if (req.command !== 'END_TXN' || dropped) return undefined;
      dropped = true;
      return { close: true };
    };
    const done = await t.commit();
    assert.equal(done.state, 'committed');
    const ends = fake.of('END_TXN');
    assert.equal(ends.length, 2);
    assert.deepEqual(Object.fromEntries(ends[0]!.fields), Object.fromEntries(ends[1]!.fields));
    assert.notEqual(ends[0]!.conn, ends[1]!.conn);
  });

  test('a fenced END_TXN is not retried', async () => {
    const t = txn();
    await t.begin();
    fake.handler = (req) => (req.command === 'END_TXN' ? { error: 'producer_fenced', fields: [['transactional_id', 'tx-1']] } : undefined);
    const err = await t.commit().catch((e: unknown) => e);
    assert.ok(err instanceof CursusError && err.class === 'fencing');
    assert.equal(fake.of('END_TXN').length, 1);
  });

  test('run() commits what the work published, and aborts when it throws', async () => {
    const t = txn();
    await t.run(async (x) => {
      await x.send('out', 'kept', { partition: 0 });
    });
    await assert.rejects(
      t.run(async (x) => {
        await x.send('out', 'dropped', { partition: 0 });
        throw new Error('processing failed');
      }),
      /processing failed/,
    );
    assert.deepEqual(fake.model.log('out', 0).map((r) => r.payload.toString()), ['kept']);
    assert.deepEqual(
      fake.of('END_TXN').map((r) => r.fields.get('result')),
      ['commit', 'abort'],
    );
  });

  test('send outside a transaction is refused before anything is sent', async () => {
    const t = txn();
    await assert.rejects(t.send('out', 'x'), /not open/);
    assert.deepEqual(fake.commands(), []);
  });
});
