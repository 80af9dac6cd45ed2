// confluent-kafka-python 1.7 (librdkafka 2.0.2, Debian's python3-confluent-kafka, run with
// /usr/bin/python3) against Quartet: two consumers of one group split a topic's partitions and,
// when one closes, the other takes every partition over; every record is read exactly once; a
// consumer positioned past the log end resets (python/confluent_reset.py).
// The client side is python/confluent_groups.py; this file starts the broker and checks its report.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot, requireClient, run, startBroker, type StartedBroker } from './helpers.js';

// Debian's module lives in the system interpreter; a `python3` earlier on PATH may lack it.
const python = '/usr/bin/python3';
const client = requireClient('python3-confluent-kafka', [python, '-c', 'import confluent_kafka'], 'apt-get install python3-confluent-kafka');

interface Report {
  split: { c1: number[]; c2: number[] };
  afterLeave: number[];
  records: Array<[string, number, number, string, string, boolean]>;
}

describe('confluent-kafka-python consumer group', { skip: client.skip, timeout: 40_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('two consumers split the partitions and rebalance when one leaves; each record once', async () => {
    const topic = 'confluent-groups';
    const partitions = 4;
    await b.broker!.createTopic('default', topic, { partitions });
    const script = join(repoRoot, 'test/conformance/python/confluent_groups.py');
    const { stdout } = await run(python, [script, b.bootstrap, topic, String(partitions), 'confluent-g'], { timeoutMs: 35_000 });
    const report = JSON.parse(stdout.trim().split('\n').pop()!) as Report;

    assert.equal(report.split.c1.length, 2, `c1 ${report.split.c1}`);
    assert.equal(report.split.c2.length, 2, `c2 ${report.split.c2}`);
    assert.deepEqual([...report.split.c1, ...report.split.c2].sort(), [0, 1, 2, 3]);
    assert.deepEqual(report.afterLeave, [0, 1, 2, 3]);

    const sent = [
      ...Array.from({ length: 40 }, (_, i) => ({ partition: i % partitions, key: `one-k${i}`, value: `one-v${i}` })),
      ...Array.from({ length: 20 }, (_, i) => ({ partition: i % partitions, key: `two-k${i}`, value: `two-v${i}` })),
    ];
    assert.equal(report.records.length, sent.length, 'each record exactly once');
    for (let p = 0; p < partitions; p++) {
      const got = report.records.filter((r) => r[1] === p).sort((x, y) => x[2] - y[2]);
      const want = sent.filter((m) => m.partition === p);
      assert.deepEqual(got.map((r) => [r[2], r[3], r[4]]), want.map((m, i) => [i, m.key, m.value]), `partition ${p}`);
    }
    // Every record was read by the consumer that owned its partition at that moment.
    for (const [name, partition, offset, , , owned] of report.records) assert.ok(owned, `${name} read ${partition}@${offset} without owning it`);
  });

  it('a consumer positioned past the log end gets OFFSET_OUT_OF_RANGE and resets to the earliest offset', async () => {
    // librdkafka refused a whole Fetch response whose error partition carried null records, and
    // fetched again in a loop without ever resetting (the records were never read).
    const topic = 'confluent-reset';
    await b.broker!.createTopic('default', topic, { partitions: 1 });
    const script = join(repoRoot, 'test/conformance/python/confluent_reset.py');
    const { stdout } = await run(python, [script, b.bootstrap, topic], { timeoutMs: 30_000 });
    const report = JSON.parse(stdout.trim().split('\n').pop()!) as { records: Array<[number, string]> };
    assert.deepEqual(report.records, [0, 1, 2, 3, 4].map((i) => [i, `v${i}`]));
  });
});
