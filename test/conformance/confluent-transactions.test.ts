// confluent-kafka-python 1.7 (librdkafka 2.0.2, Debian's python3-confluent-kafka, run with
// /usr/bin/python3) against Quartet: an idempotent producer writes N records exactly once, and a
// transactional consume-transform-produce loop commits one transaction with
// send_offsets_to_transaction, aborts one, leaves one open while a read_committed consumer reads,
// aborts it, and commits another. read_committed consumers see exactly the committed records;
// read_uncommitted sees them all; the offsets sent in the transaction are committed.
// The client side is python/confluent_transactions.py; this file starts the broker and checks.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BatchFlags } from '../../src/log/types.js';
import { batchRecords, validateRecordBatch } from '../../src/protocols/kafka/codec/record-batch.js';
import { kafkaMarkerKind } from '../../src/protocols/kafka/transactions.js';
import { repoRoot, requireClient, run, startBroker, type StartedBroker } from './helpers.js';

// Debian's module lives in the system interpreter; a `python3` earlier on PATH may lack it.
const python = '/usr/bin/python3';
const client = requireClient('python3-confluent-kafka', [python, '-c', 'import confluent_kafka'], 'apt-get install python3-confluent-kafka');

type Rec = [number, number, string];

interface Report {
  consumedInput: string[];
  committedOffset: number;
  rcOpen: Rec[];
  rcFinal: Rec[];
  ruFinal: Rec[];
}

/** Values by partition, in offset order. */
function byPartition(records: Rec[]): string[][] {
  const out: string[][] = [[], []];
  for (const [p, , v] of [...records].sort((x, y) => x[0] - y[0] || x[1] - y[1])) out[p]!.push(v);
  return out;
}

function values(prefix: string, count: number, partition: number): string[] {
  return Array.from({ length: count }, (_, i) => i).filter((i) => i % 2 === partition).map((i) => `${prefix}-${i}`);
}

describe('confluent-kafka-python idempotence and transactions', { skip: client.skip, timeout: 44_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('idempotent records exactly once; read_committed sees exactly the committed transactions; offsets commit with them', async () => {
    const broker = b.broker!;
    const idemCount = 300;
    for (const name of ['cf-idem', 'cf-out']) await broker.createTopic('default', name, { partitions: 2 });
    const input = await broker.createTopic('default', 'cf-in', { partitions: 1 });
    const script = join(repoRoot, 'test/conformance/python/confluent_transactions.py');
    const { stdout } = await run(python, [script, b.bootstrap, 'cf-idem', String(idemCount), 'cf-in', 'cf-out', 'cf-group', 'cf-txn'], { timeoutMs: 40_000 });
    const report = JSON.parse(stdout.trim().split('\n').pop()!) as Report;

    // 1. Idempotence: exactly the records sent, in order, once, in batches with a producer id.
    for (let p = 0; p < 2; p++) {
      const got: string[] = [];
      const batches = await broker.read({ topic: 'cf-idem' }, p, 0, { maxBytes: 1 << 24 });
      for (const batch of batches) {
        const v = validateRecordBatch(batch.payload);
        assert.ok(v.ok);
        assert.ok(v.header.producerId >= 0, 'an idempotent batch carries its producer id');
        assert.equal(v.header.isTransactional, false);
        const recs = batchRecords(batch.payload, v.header);
        assert.ok(recs.ok);
        got.push(...recs.value.map((r) => r.value!.toString()));
      }
      assert.deepEqual(got, values('idem', idemCount, p), `cf-idem partition ${p}`);
    }

    // 2. Transactions.
    assert.deepEqual(report.consumedInput, ['in-0', 'in-1', 'in-2', 'in-3', 'in-4']);
    assert.deepEqual(byPartition(report.rcOpen), [values('c1', 10, 0), values('c1', 10, 1)], 'read_committed with a transaction open');
    assert.deepEqual(byPartition(report.rcFinal), [0, 1].map((p) => [...values('c1', 10, p), ...values('c2', 5, p)]), 'read_committed at the end');
    assert.deepEqual(
      byPartition(report.ruFinal),
      [0, 1].map((p) => [...values('c1', 10, p), ...values('a', 10, p), ...values('open', 5, p), ...values('c2', 5, p)]),
      'read_uncommitted sees the aborted records too: they are in the log',
    );
    assert.equal(report.committedOffset, 5, 'the offset sent in the committed transaction');
    const stored = await broker.offsets.fetch('kafka', 'cf-group', input.internalId, 0);
    assert.equal(stored?.offset, 5);

    // The log of each output partition: data and Kafka markers in transaction order.
    for (let p = 0; p < 2; p++) {
      const kinds = (await broker.read({ topic: 'cf-out' }, p, 0, { maxBytes: 1 << 24 })).filter((s) => (s.flags & BatchFlags.control) !== 0).map((s) => kafkaMarkerKind(s));
      assert.deepEqual(kinds, ['commit', 'abort', 'abort', 'commit'], `cf-out partition ${p} markers`);
    }
    const described = broker.transactions.describe('kafka', 'cf-txn');
    assert.equal(described?.state, 'CompleteCommit');
  });
});
