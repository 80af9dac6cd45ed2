import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Transcoder } from '../../src/core/offload.js';
import { recordsOf, wholeBatchAs } from '../../src/core/transcode.js';
import { BatchFormat, type NeutralRecord, type StoredBatch } from '../../src/log/types.js';
import { createFormatRegistry } from '../../src/log/formats.js';
import { builtinFormats } from '../../src/server/listeners.js';

const formats = builtinFormats();

function records(count: number, base: number): NeutralRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    offset: base + i,
    timestamp: 1_700_000_000_000 + i,
    key: i % 3 === 0 ? null : Buffer.from(`key-${i}`),
    value: Buffer.alloc(100 + (i % 50), i & 0xff),
    headers: i % 2 === 0 ? [{ key: 'h', value: Buffer.from(`v${i}`) }] : [],
  }));
}

/** A stored batch of `format` holding `count` records from `base`, its payload a view of a larger buffer (as a pooled read). */
function stored(format: BatchFormat, count: number, base: number): StoredBatch {
  const template: StoredBatch = { format, flags: 0, baseOffset: base, lastOffset: base + count - 1, recordCount: count, firstTimestamp: 0, maxTimestamp: 0, producerId: -1, producerEpoch: -1, baseSequence: -1, payload: Buffer.alloc(0) };
  const request = formats.get(format)!.encode(records(count, base), base, template);
  const shared = Buffer.alloc(request.payload.length + 64);
  request.payload.copy(shared, 32);
  return { ...template, firstTimestamp: request.firstTimestamp, maxTimestamp: request.maxTimestamp, payload: shared.subarray(32, 32 + request.payload.length) };
}

describe('Transcoder', { timeout: 30_000 }, () => {
  const pooled = new Transcoder(formats, { threads: 1, offloadBytesMin: 0, queueMax: 8 });
  after(() => pooled.close());

  it('transcodes an Iggy batch for a Kafka reader on a worker, byte for byte as inline', async () => {
    const batch = stored(BatchFormat.iggy, 500, 1000);
    const inline = wholeBatchAs(formats, BatchFormat.kafka, batch, 1000, Infinity) as Buffer;
    const offloaded = pooled.wholeBatchAs(BatchFormat.kafka, batch, 1000, Infinity);
    assert.ok(offloaded instanceof Promise, 'a worker transcodes it');
    assert.deepEqual(await offloaded, inline);
  });

  it('transcodes part of a large Iggy batch (decodeRange) as inline', async () => {
    const batch = stored(BatchFormat.iggy, 6000, 0);
    for (const [from, budget] of [[0, 64 * 1024], [4321, 1_000_000], [5999, 1]] as const) {
      const inline = wholeBatchAs(formats, BatchFormat.kafka, batch, from, budget) as Buffer;
      assert.deepEqual(await pooled.wholeBatchAs(BatchFormat.kafka, batch, from, budget), inline, `from ${from}`);
    }
  });

  it('cuts and transcodes a Kafka batch for an Iggy reader as inline', async () => {
    const batch = stored(BatchFormat.kafka, 300, 50);
    for (const [from, to, count] of [[50, 350, 1000], [120, 200, 1000], [60, 350, 7]] as const) {
      const inline = recordsOf(formats, BatchFormat.iggy, batch, from, to, count);
      const offloaded = pooled.recordsOf(BatchFormat.iggy, batch, from, to, count);
      assert.ok(offloaded instanceof Promise);
      assert.deepEqual(await offloaded, inline, `[${from}, ${to}) x ${count}`);
    }
  });

  it('keeps inline what is small, in the reader format, or of a codec without a module URL', () => {
    const small = new Transcoder(formats, { threads: 1, offloadBytesMin: 1 << 20, queueMax: 8 });
    after(() => small.close());
    assert.ok(Buffer.isBuffer(small.wholeBatchAs(BatchFormat.kafka, stored(BatchFormat.iggy, 10, 0), 0, Infinity)));
    assert.ok(Buffer.isBuffer(pooled.wholeBatchAs(BatchFormat.kafka, stored(BatchFormat.kafka, 10, 0), 0, Infinity)));
    const unsourced = createFormatRegistry().register(formats.get(BatchFormat.kafka)!).register(formats.get(BatchFormat.iggy)!);
    const plain = new Transcoder(unsourced, { threads: 1, offloadBytesMin: 0, queueMax: 8 });
    after(() => plain.close());
    assert.ok(Buffer.isBuffer(plain.wholeBatchAs(BatchFormat.kafka, stored(BatchFormat.iggy, 10, 0), 0, Infinity)));
  });

  it('fails the read of a batch that does not decode with a clear error', async () => {
    const batch = stored(BatchFormat.iggy, 20, 0);
    const corrupt = { ...batch, payload: Buffer.from(batch.payload.subarray(0, 40)) };
    await assert.rejects(Promise.resolve(pooled.wholeBatchAs(BatchFormat.kafka, corrupt, 0, Infinity)), /wholeBatchTask failed on a worker thread/);
  });
});
