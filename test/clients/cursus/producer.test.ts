// CursusProducer and single PUBLISH against the fake peer, asserting the CRQ2 fields and the CBV2
// bytes the fake receives: the golden idempotent batch, batching by count and linger, per-partition
// batches chosen by the client (FNV-1a of the key), idempotent sequences across batches and
// partitions, retries that resend the same bytes, refused batches that give their numbers back.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { decodeBatch } from '../../../src/protocols/cursus/codec/index.js';
import { CursusClient, CursusError, CursusProducer, fnv1a64, partitionForKey, type CursusClientOptions } from '../../../src/clients/cursus/index.js';
import { vectorsDir } from '../../vectors/cursus/build.js';
import { FakeCursusBroker } from './fake-broker.js';

let fake: FakeCursusBroker;
const clients: CursusClient[] = [];

function client(options: CursusClientOptions = {}): CursusClient {
  const c = new CursusClient({ addr: fake.addr, compression: ['none'], requestTimeoutMs: 2_000, reconnect: { attemptsMax: 3, backoffMinMs: 5, backoffMaxMs: 20 }, ...options });
  clients.push(c);
  return c;
}

function published(): Array<{ partition: number; start: number; end: number; idempotent: boolean; acks: string; records: Array<{ payload: string; seq?: number; partition: number; key?: string }> }> {
  return fake.of('PUBLISH').map((r) => ({
    partition: r.batch!.partition,
    start: r.batch!.batchStart,
    end: r.batch!.batchEnd,
    idempotent: r.batch!.idempotent,
    acks: r.batch!.acks,
    records: r.batch!.records.map((x) => ({ payload: x.payload.toString(), partition: x.partition, ...(x.seqNum !== undefined ? { seq: x.seqNum } : {}), ...(x.key !== undefined ? { key: x.key.toString() } : {}) })),
  }));
}

before(async () => {
  fake = await FakeCursusBroker.start();
});
after(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

describe('PUBLISH of one message', () => {
  test('carries topic, message, acks, producerId, partition, key and the idempotence fields as CRQ2', async () => {
    const c = client();
    fake.model.addTopic('orders', 2);
    const ack = await c.publish('orders', 'hello world=1', { acks: 'all', producerId: 'p1', partition: 1, key: 'k', seqNum: 1, epoch: 0, idempotent: true });
    assert.deepEqual(ack, { lastOffset: 0, producerId: 'p1', producerEpoch: 0, seqStart: 1, seqEnd: 1 });
    assert.deepEqual(Object.fromEntries(fake.of('PUBLISH')[0]!.fields), {
      acks: 'all',
      epoch: '0',
      isIdempotent: 'true',
      key: 'k',
      message: 'hello world=1',
      partition: '1',
      producerId: 'p1',
      seqNum: '1',
      topic: 'orders',
    });
  });

  test('acks must be 0, 1, -1 or all', async () => {
    await assert.rejects(client().publish('orders', 'x', { acks: '2' as never }), RangeError);
  });
});

describe('CursusProducer', () => {
  test('an idempotent producer writes the golden CBV2 batch: flag, acks all, partition -1, seq 1..2', async () => {
    fake.model.addTopic('orders', 1);
    let t = 1_700_000_000_000;
    const p = new CursusProducer(client(), { topic: 'orders', idempotent: true, producerId: 'p1', partitioning: 'broker', clock: () => t++ });
    const receipts = await Promise.all([p.send('hello', { key: 'k1' }), p.send('world', { key: 'k2' })]);
    const golden = Buffer.from(readFileSync(path.join(vectorsDir, 'batch_publish_idempotent.hex'), 'utf8').trim(), 'hex');
    assert.deepEqual(fake.of('PUBLISH')[0]!.payload, golden);
    assert.deepEqual(
      receipts.map((r) => [r.partition, r.offset]),
      [
        [null, 0],
        [null, 1],
      ],
    );
    assert.equal(receipts[1]!.ack?.seqEnd, 2);
  });

  test('records sent in one turn go out as one batch; batchRecordsMax splits them, in order', async () => {
    fake.model.addTopic('t', 1);
    const c = client();
    const one = new CursusProducer(c, { topic: 't', acks: 1 });
    await Promise.all(['a', 'b', 'c'].map((v) => one.send(v, { partition: 0 })));
    assert.deepEqual(published().map((b) => b.records.map((r) => r.payload)), [['a', 'b', 'c']]);
    fake.requests.length = 0;
    const split = new CursusProducer(c, { topic: 't', acks: 1, batchRecordsMax: 2 });
    const receipts = await Promise.all(['d', 'e', 'f', 'g', 'h'].map((v) => split.send(v, { partition: 0 })));
    assert.deepEqual(published().map((b) => b.records.map((r) => r.payload)), [['d', 'e'], ['f', 'g'], ['h']]);
    assert.deepEqual(
      receipts.map((r) => r.offset),
      [3, 4, 5, 6, 7],
    );
  });

  test('lingerMs gathers records sent over several turns into one batch', async () => {
    fake.model.addTopic('t', 1);
    const p = new CursusProducer(client(), { topic: 't', lingerMs: 200 });
    const sends = [p.send('a', { partition: 0 })];
    await new Promise((resolve) => setImmediate(resolve));
    sends.push(p.send('b', { partition: 0 }));
    await new Promise((resolve) => setImmediate(resolve));
    sends.push(p.send('c', { partition: 0 }));
    await p.flush();
    await Promise.all(sends);
    assert.deepEqual(published().map((b) => b.records.map((r) => r.payload)), [['a', 'b', 'c']]);
  });

  test('client partitioning: keys go to FNV-1a 64 mod partitions (from METADATA), one batch per partition', async () => {
    fake.model.addTopic('keyed', 3);
    fake.handler = (req) =>
      req.command === 'METADATA'
        ? {
            ok: [
              ['topic', 'keyed'], ['partitions', '3'], ['leaders', ',,'], ['epochs', '0,0,0'], ['revision', '1'], ['replication_factor', '1'], ['idempotent', 'false'],
              ['event_sourcing', 'false'], ['cleanup_policy', 'delete'], ['partitioner', 'hash_key'], ['auth_policy', 'open'], ['read_acl', ''], ['write_acl', ''],
              ['retention_hours', '0'], ['retention_bytes', '0'], ['lifecycle_epoch', '1'],
            ],
          }
        : undefined;
    // FNV-1a 64 reference values: "" is the offset basis; "a" is 0xaf63dc4c8601ec8c.
    assert.equal(fnv1a64(Buffer.alloc(0)), 0xcbf29ce484222325n);
    assert.equal(fnv1a64(Buffer.from('a')), 0xaf63dc4c8601ec8cn);
    const p = new CursusProducer(client(), { topic: 'keyed', partitioning: 'client' });
    const keys = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
    const receipts = await Promise.all(keys.map((k) => p.send(`v-${k}`, { key: k })));
    assert.deepEqual(
      receipts.map((r) => r.partition),
      keys.map((k) => partitionForKey(k, 3)),
    );
    const batches = published();
    assert.equal(new Set(batches.map((b) => b.partition)).size, batches.length, 'one batch per partition');
    for (const b of batches) for (const r of b.records) assert.equal(partitionForKey(r.key!, 3), b.partition);
    assert.equal(fake.of('METADATA').length, 1, 'the layout is cached');
  });

  test('idempotent sequences are per partition, start at 1 and run on across batches', async () => {
    fake.model.addTopic('seq', 2);
    const p = new CursusProducer(client(), { topic: 'seq', idempotent: true, producerId: 'p9', epoch: 4, batchRecordsMax: 2 });
    await Promise.all([...['a', 'b', 'c', 'd', 'e'].map((v) => p.send(v, { partition: 0 })), ...['x', 'y'].map((v) => p.send(v, { partition: 1 }))]);
    const batches = published();
    const byPartition = (n: number): Array<[number, number, number[]]> => batches.filter((b) => b.partition === n).map((b) => [b.start, b.end, b.records.map((r) => r.seq!)]);
    assert.deepEqual(byPartition(0), [
      [1, 2, [1, 2]],
      [3, 4, [3, 4]],
      [5, 5, [5]],
    ]);
    assert.deepEqual(byPartition(1), [[1, 2, [1, 2]]]);
    assert.ok(batches.every((b) => b.idempotent && b.acks === 'all'));
    assert.ok(fake.of('PUBLISH').every((r) => r.batch!.records.every((x) => x.producerId === 'p9' && x.producerEpoch === 4)));
    assert.throws(() => new CursusProducer(clients[0]!, { topic: 'seq', idempotent: true, acks: 1 }), /acks=all/);
  });

  test('a batch whose connection dropped is sent again with the same bytes', async () => {
    fake.model.addTopic('r', 1);
    let first = true;
    fake.handler = (req) => {
      if (req.command !== 'PUBLISH' || !first) return undefined;
      first = false;
      return { close: true };
    };
    const p = new CursusProducer(client(), { topic: 'r', idempotent: true, producerId: 'p1', retryBackoffMs: 5 });
    const receipt = await p.send('once', { partition: 0 });
    const [a, b] = fake.of('PUBLISH');
    assert.deepEqual(a!.payload, b!.payload);
    assert.equal(receipt.offset, 0);
    assert.equal(fake.model.log('r', 0).length, 1);
  });

  test('a batch refused outright fails its sends and gives its sequence numbers back', async () => {
    fake.model.addTopic('r', 1);
    let refuse = true;
    fake.handler = (req) => {
      if (req.command !== 'PUBLISH' || !refuse) return undefined;
      refuse = false;
      return { error: 'NOT_AUTHORIZED_FOR_TOPIC', fields: [['topic', 'r'], ['operation', 'write']] };
    };
    const p = new CursusProducer(client(), { topic: 'r', idempotent: true, producerId: 'p1' });
    const err = await p.send('no', { partition: 0 }).catch((e: unknown) => e);
    assert.ok(err instanceof CursusError && err.class === 'authorization');
    await p.send('yes', { partition: 0 });
    assert.deepEqual(
      published().map((b) => [b.start, b.end]),
      [
        [1, 1],
        [1, 1],
      ],
    );
  });

  test('acks 0: receipts without an offset, and no reply awaited', async () => {
    fake.model.addTopic('z', 1);
    const p = new CursusProducer(client(), { topic: 'z', acks: 0 });
    const r = await p.send('fire', { partition: 0 });
    assert.deepEqual(r, { partition: 0, offset: null, ack: null });
    await p.close();
    await assert.rejects(p.send('late'), /closed/);
  });

  test('the batch the fake received decodes with the codec and carries timestamps from the clock', async () => {
    fake.model.addTopic('ts', 1);
    const p = new CursusProducer(client(), { topic: 'ts', clock: () => 42 });
    await p.send('x', { partition: 0 });
    const b = decodeBatch(fake.of('PUBLISH')[0]!.payload);
    assert.ok(b.ok);
    assert.equal(b.value.records[0]!.timestamp, 42);
    assert.equal(b.value.acks, '1');
  });
});
