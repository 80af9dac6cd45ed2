// PollMessages `last` against an oracle on random logs: the newest `count` messages a reader sees
// (the tail of reading the whole partition with offset polls), over logs that mix neutral, Kafka
// (compressed or not) and Iggy batches, Iggy sends, transactions committed, aborted and left
// open, Kafka-style compaction and DeleteRecords; under a byte cap, a run of consecutive messages.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandCode, ConsumerKind, PollingKind, iggyFormatCodec, parsePolledBatches, polledBuffers, type ParsedBatch } from '../../../../src/protocols/iggy/codec/index.js';
import { BatchFlags, BatchFormat, encodeNeutralBatch, type StoredBatch } from '../../../../src/log/index.js';
import { appendRequestFromBatch } from '../../../../src/protocols/kafka/codec/kafka-format.js';
import { buildRecordBatch } from '../../../../src/protocols/kafka/codec/record-batch.js';
import { sendRequest, sid, startIggy, type IggyHarness, type IggyTestClient } from '../harness.js';

/** A seeded generator of numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

/** Appends `batches` random batches to topic `m` (partition 0, compacted), then compacts it and maybe deletes its oldest records. */
async function randomLog(h: IggyHarness, c: IggyTestClient, seed: number, o: { batches: number; large: boolean }) {
  const r = random(seed);
  await h.broker.createTopic('default', 'm', { partitions: 1, config: { 'cleanup.policy': 'compact', 'segment.bytes': o.large ? 256 * 1024 : 4096, 'max.message.bytes': 8 << 20 } });
  const tx = h.broker.transactions;
  const producers = [];
  for (const name of ['A', 'B']) {
    const { producerId, epoch } = await tx.initProducerId({ scope: 'kafka', transactionalId: `${name}${seed}`, transactionTimeoutMs: 60_000 });
    producers.push({ id: { scope: 'kafka', transactionalId: `${name}${seed}`, producerId, producerEpoch: epoch }, sequence: 0, open: false });
  }
  const key = () => `k${Math.floor(r() * 8)}`;
  const size = () => (!o.large || r() < 0.3 ? 5 + Math.floor(r() * 200) : r() < 0.7 ? 400 + Math.floor(r() * 3000) : 30_000 + Math.floor(r() * 60_000));
  for (let i = 0; i < o.batches; i++) {
    const kind = r();
    const n = 1 + Math.floor(r() * 6);
    const value = () => Buffer.alloc(size(), 97 + (i % 26));
    if (kind < 0.15) {
      await h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch([...Array(n)].map(() => ({ key: key(), value: value() })), { timestamp: Date.now() }));
    } else if (kind < 0.3) {
      const records = [...Array(n)].map((_, d) => ({ offsetDelta: d, timestamp: Date.now(), key: Buffer.from(key()), value: value(), headers: [] }));
      const request = appendRequestFromBatch(buildRecordBatch(records, { compression: r() < 0.5 ? 1 : 0 }));
      assert.ok(request.ok);
      await h.broker.append({ topic: 'm' }, 0, request.request);
    } else if (kind < 0.45) {
      // An Iggy batch as a transcoding writes it (keys in headers, so compaction thins it).
      const records = [...Array(n)].map((_, d) => ({ offset: d, timestamp: Date.now(), key: Buffer.from(key()), value: value(), headers: [] }));
      const template: StoredBatch = { format: BatchFormat.neutral, flags: 0, baseOffset: 0, lastOffset: n - 1, recordCount: n, firstTimestamp: Date.now(), maxTimestamp: Date.now(), producerId: -1, producerEpoch: -1, baseSequence: -1, payload: Buffer.alloc(0) };
      await h.broker.append({ topic: 'm' }, 0, iggyFormatCodec.encode(records, 0, template));
    } else if (kind < 0.6) {
      await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('m'), [...Array(n * 3)].map(() => value())));
    } else {
      const p = producers[Math.floor(r() * 2)]!;
      if (!p.open) {
        await tx.addPartitions(p.id, [{ topic: { topic: 'm' }, partition: 0 }]);
        p.open = true;
      }
      const records = [...Array(n)].map(() => ({ key: key(), value: value() }));
      await h.broker.append({ topic: 'm' }, 0, encodeNeutralBatch(records, { timestamp: Date.now(), producerId: p.id.producerId, producerEpoch: p.id.producerEpoch, baseSequence: p.sequence, flags: BatchFlags.transactional }), { transaction: p.id });
      p.sequence += n;
      if (r() < 0.4) {
        await tx.endTxn(p.id, r() < 0.5);
        p.open = false;
      }
    }
  }
  await h.broker.runMaintenance();
  const log = h.broker.partition({ topic: 'm' }, 0);
  await log.deleteRecordsBefore(Math.floor(log.stats().highWatermark * 0.3 * r()));
  return log;
}

const offsetRef = { consumer: { kind: ConsumerKind.consumer, id: sid(7) }, streamId: sid('default'), topicId: sid('m'), partitionId: 0 };

describe('iggy `last` polls against an oracle', () => {
  // [seed, pollBytesMax, large messages]: caps from one message to none.
  for (const [seed, pollBytesMax, large] of [
    [11, 128 * 1024 * 1024, false],
    [12, 128 * 1024 * 1024, true],
    [31, 2000, false],
    [33, 100_000, true],
  ] as const) {
    it(`seed ${seed}, pollBytesMax ${pollBytesMax}${large ? ', messages up to 90 kB' : ''}`, async (t) => {
      const h = await startIggy(t, { settings: { pollBytesMax } });
      const c = await h.root();
      const log = await randomLog(h, c, seed, { batches: 80, large });
      const poll = async (strategy: { kind: number; value: bigint }, count: number) => {
        const reply = await c.ok(CommandCode.pollMessages, { ...offsetRef, strategy: strategy as never, count, autoCommit: false });
        const batches = reply.batches.length === 0 ? [] : (parsePolledBatches(Buffer.concat(polledBuffers(reply))) as ParsedBatch[]);
        const offsets = batches.flatMap((b) => b.frames.map((f) => Number(b.header.baseOffset) + f.offsetDelta));
        assert.equal(reply.messagesCount, offsets.length, 'messagesCount');
        return offsets;
      };
      // The oracle: every message a reader sees, read with offset polls.
      const all: number[] = [];
      for (let from = log.stats().logStartOffset; ; ) {
        const got = await poll({ kind: PollingKind.offset, value: BigInt(from) }, 100_000);
        if (got.length === 0) break;
        all.push(...got);
        from = got.at(-1)! + 1;
      }
      assert.ok(all.length > 20, `the log holds ${all.length} messages`);
      assert.ok(all.at(-1)! - all[0]! + 1 > all.length, 'offsets without a message lie between them');
      let capped = 0;
      for (let n = 1; n <= all.length + 2; n++) {
        const got = await poll({ kind: PollingKind.last, value: 0n }, n);
        const first = all.indexOf(got[0]!);
        assert.ok(got.length > 0 && first >= 0, `last ${n}: ${JSON.stringify(got)}`);
        assert.deepEqual(got, all.slice(first, first + got.length), `last ${n}: a run of consecutive messages`);
        if (got.length < Math.min(n, all.length)) capped++;
        else assert.deepEqual(got, all.slice(-Math.min(n, all.length)), `last ${n}: the newest`);
      }
      // Without a cap nothing is cut; with one, some replies are.
      assert.equal(capped > 0, pollBytesMax < 1024 * 1024, `${capped} of ${all.length + 2} replies cut by the cap`);
    });
  }
});
