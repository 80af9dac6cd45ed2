// confluent-kafka-python 1.7 (librdkafka 2.0.2, Debian's python3-confluent-kafka, run with
// /usr/bin/python3) against the topic rules Produce applies: records refused in a batch,
// compression.type and message.timestamp.type set by the AdminClient at
// creation and honoured (the stored batches are zstd whatever the producer sent; the consumer
// sees LogAppendTime), and the timestamp window. The client side is
// python/confluent_produce_rules.py; this file starts the broker and checks its JSON report and
// the stored batches. librdkafka 2.0.2 sends Produce v7, which has no record_errors: it fails
// every record of a refused batch with the batch's error (librdkafka 2.4+ reads record_errors on
// v8+ and fails the others with _INVALID_DIFFERENT_RECORD, -138; platformatic.test.ts shows the
// record_errors reaching a v9 client). How librdkafka splits the records into batches depends on
// timing, so the checks hold for any split.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readBatchHeader } from '../../src/protocols/kafka/codec/record-batch.js';
import { confluentKafkaClient, debianPython, repoRoot, run, startBroker, type StartedBroker } from './helpers.js';

const client = confluentKafkaClient();

const INVALID_RECORD = 87;
const INVALID_TIMESTAMP = 32;
/** librdkafka's RD_KAFKA_RESP_ERR__INVALID_DIFFERENT_RECORD: another record of the batch was refused. */
const INVALID_DIFFERENT_RECORD = -138;

describe('confluent-kafka-python produce rules', { skip: client.skip, timeout: 60_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('fails the batches holding bad records, recompresses to the topic codec, stamps LogAppendTime, refuses old timestamps', async () => {
    const { stdout } = await run(debianPython, [join(repoRoot, 'test/conformance/python/confluent_produce_rules.py'), b.bootstrap], { timeoutMs: 50_000 });
    const report = JSON.parse(stdout.trim().split('\n').pop()!) as {
      create: Record<string, string>;
      compact: [number, string | null][];
      zstd: [number, string | null][];
      window: [number, string | null][];
      zstd_read: [string, boolean, boolean][];
    };
    assert.deepEqual(report.create, { 'ck-compact': 'ok', 'ck-window': 'ok', 'ck-zstd': 'ok' });
    // The records without a key fail with INVALID_RECORD, and so does every record sent in their
    // batch; the others are delivered, and only they are stored.
    const compact = report.compact.map(([code]) => code);
    assert.equal(compact[3], INVALID_RECORD);
    assert.equal(compact[7], INVALID_RECORD);
    assert.ok(compact.every((code) => code === 0 || code === INVALID_RECORD || code === INVALID_DIFFERENT_RECORD), JSON.stringify(report.compact));
    assert.equal(b.broker!.partition({ topic: 'ck-compact' }, 0).stats().nextOffset, compact.filter((code) => code === 0).length, 'nothing of a refused batch stored');
    assert.deepEqual(report.zstd.map(([code]) => code), [0, 0, 0, 0, 0]);
    assert.equal(report.window[1]![0], INVALID_TIMESTAMP, 'an hour old, the window is a minute');
    assert.ok([0, INVALID_TIMESTAMP, INVALID_DIFFERENT_RECORD].includes(report.window[0]![0]));
    assert.deepEqual(report.zstd_read, [0, 1, 2, 3, 4].map((i) => [`z${i}`, true, true]));
    const broker = b.broker!;
    const stored = await broker.read({ topic: 'ck-zstd' }, 0, 0, { maxBytes: 1 << 20 });
    assert.ok(stored.length > 0);
    for (const batch of stored) {
      const h = readBatchHeader(batch.payload);
      assert.equal(h.compression, 4, 'stored as zstd, the topic codec, though sent as gzip');
      assert.equal(h.timestampType, 1);
    }
  });
});
