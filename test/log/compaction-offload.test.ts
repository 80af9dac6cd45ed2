import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { WorkerPool } from '../../src/base/worker-pool.js';
import { openFileLog } from '../../src/log/file-log.js';
import { BatchFormat, type PartitionLog } from '../../src/log/types.js';
import { appendRequestFromBatch } from '../../src/protocols/kafka/codec/kafka-format.js';
import { buildRecordBatch } from '../../src/protocols/kafka/codec/record-batch.js';
import { builtinFormats } from '../../src/server/listeners.js';
import { tempDir, testConfig } from './helpers.js';

/** Kafka's codec, counting the decodes of this (the log's) thread; a worker loads its own by URL. */
const formats = builtinFormats();
const kafka = formats.get(BatchFormat.kafka)!;
let mainDecodes = 0;
formats.register({ ...kafka, decode: (batch) => (mainDecodes++, kafka.decode(batch)) }, formats.source(BatchFormat.kafka));

/**
 * Batch j: key `a<j>` (never written again) and key `k` (written by every batch), each with 256 KiB
 * of zeros in zstd: a few hundred bytes stored, 512 KiB decoded. Compaction rewrites every batch
 * but the last without its `k`.
 */
function inflatingBatch(j: number): Buffer {
  const value = Buffer.alloc(256 * 1024);
  return buildRecordBatch([{ timestamp: 1_000 + j, key: Buffer.from(`a${j}`), value }, { timestamp: 1_000 + j, key: Buffer.from('k'), value }], { compression: 4 });
}

async function payloads(log: PartitionLog): Promise<Buffer[]> {
  return (await log.read(0, { maxBytes: 1 << 30 })).map((b) => Buffer.from(b.payload));
}

describe('compaction of batches that decode to many bytes', { timeout: 60_000 }, () => {
  const root = tempDir();
  const pool = new WorkerPool({ threads: 1, queueMax: 8 });
  after(async () => {
    await pool.close();
    root.remove();
  });

  async function compacted(name: string, offload: boolean): Promise<{ payloads: Buffer[]; recordsRemoved: number; decodes: number }> {
    const config = testConfig({ segmentBytes: 2048, cleanupPolicy: 'compact' });
    const log = await openFileLog(join(root.path, name), config, { formats, ...(offload ? { offload: { pool, bytesMin: 64 * 1024 } } : {}) });
    try {
      for (let j = 0; j < 24; j++) {
        const built = appendRequestFromBatch(inflatingBatch(j));
        assert.ok(built.ok);
        await log.append(built.request);
      }
      mainDecodes = 0;
      const { recordsRemoved } = await log.compact(10_000);
      return { payloads: await payloads(log), recordsRemoved, decodes: mainDecodes };
    } finally {
      await log.close();
    }
  }

  it('runs on the worker pool, with the same result byte for byte as inline', async () => {
    const inline = await compacted('inline', false);
    const offloaded = await compacted('offloaded', true);
    assert.ok(inline.recordsRemoved > 0, 'compaction removed superseded records');
    assert.ok(inline.decodes > 0, 'inline, the log thread decodes the batches');
    assert.equal(offloaded.decodes, 0, 'no batch decoded on the log thread');
    assert.equal(offloaded.recordsRemoved, inline.recordsRemoved);
    assert.deepEqual(offloaded.payloads, inline.payloads);
  });
});
