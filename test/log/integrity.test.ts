// Integrity on read (src/log/integrity.ts): a byte flipped in a stored batch after a clean stop is
// never returned by a read, a file slice of it fails when its bytes are read, the scrubber finds
// it where no read looks, and each is recorded, reported once and counted as held until the log
// start passes it.

import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BufferLease } from '../../src/base/buffer-pool.js';
import { decodeEnvelopeHeader, envelopeBytes, envelopeHeaderBytes } from '../../src/log/envelope.js';
import { openFileLog, type FileLog } from '../../src/log/file-log.js';
import { decodeNeutralBatch } from '../../src/log/neutral-format.js';
import type { CorruptBatch, LogConfig, StoredBatch } from '../../src/log/types.js';
import { batch, rejectsWith, tempDir, testConfig } from './helpers.js';

interface Written {
  dir: string;
  remove(): void;
  /** The envelopes of the first segment: position and offsets. */
  envelopes: Array<{ position: number; baseOffset: number; lastOffset: number; bytes: number }>;
  segmentFile: string;
}

/** Writes `count` batches of 4 records (payloads of about `valueBytes` each), closes the log, and lists the first segment's envelopes. */
async function written(count: number, config: LogConfig, valueBytes = 40): Promise<Written> {
  const { path: dir, remove } = tempDir('quartet-integrity-');
  const log = await openFileLog(dir, config);
  for (let i = 0; i < count; i++) await log.append(batch(`b${i}`.padEnd(valueBytes, 'x'), 4));
  await log.close();
  const segmentFile = join(dir, readdirSync(dir).filter((n) => n.endsWith('.log')).sort()[0]!);
  const fd = openSync(segmentFile, 'r');
  const envelopes: Written['envelopes'] = [];
  try {
    const head = Buffer.alloc(envelopeHeaderBytes);
    for (let position = 0; readSync(fd, head, 0, envelopeHeaderBytes, position) === envelopeHeaderBytes; ) {
      const h = decodeEnvelopeHeader(head);
      assert.ok(typeof h !== 'string');
      envelopes.push({ position, baseOffset: h.baseOffset, lastOffset: h.baseOffset + h.recordCount - 1, bytes: envelopeBytes(h) });
      position += envelopeBytes(h);
    }
  } finally {
    closeSync(fd);
  }
  return { dir, remove, envelopes, segmentFile };
}

/** Flips one byte of the file at `position` (xor 0xff). */
function flip(file: string, position: number): void {
  const fd = openSync(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, position);
    b[0] = b[0]! ^ 0xff;
    writeSync(fd, b, 0, 1, position);
  } finally {
    closeSync(fd);
  }
}

async function reopened(w: Written, config: LogConfig): Promise<{ log: FileLog; found: CorruptBatch[] }> {
  const found: CorruptBatch[] = [];
  const log = await openFileLog(w.dir, config, { onCorruptBatch: (b) => found.push(b) });
  return { log, found };
}

function values(batches: StoredBatch[]): string[] {
  return batches.flatMap((b) => decodeNeutralBatch(b).map((r) => r.value!.toString()));
}

const config = testConfig({ segmentBytes: 64 * 1024 });

describe('integrity on read', () => {
  it('never returns a batch whose payload byte flipped: reads stop before it, or fail with corrupt_batch at it; reported once', async () => {
    const w = await written(12, config);
    try {
      const bad = w.envelopes[6]!;
      flip(w.segmentFile, bad.position + envelopeHeaderBytes + Math.floor((bad.bytes - envelopeHeaderBytes) / 2));
      const { log, found } = await reopened(w, config);
      try {
        // From the start: the six batches before it, and nothing of it.
        const before = await log.read(0, { maxBytes: 1 << 20 });
        assert.deepEqual(before.map((b) => b.baseOffset), w.envelopes.slice(0, 6).map((e) => e.baseOffset));
        assert.ok(!values(before).some((v) => v.startsWith('b6')));
        // At it: corrupt_batch, however asked.
        await rejectsWith(log.read(bad.baseOffset, { maxBytes: 1 << 20 }), 'corrupt_batch');
        await rejectsWith(log.read(bad.lastOffset, { maxBytes: 1 }), 'corrupt_batch');
        assert.equal(found.length, 1, 'reported once');
        assert.deepEqual({ ...found[0]!, file: '' }, { file: '', position: bad.position, baseOffset: bad.baseOffset, lastOffset: bad.lastOffset, problem: 'payload checksum mismatch', foundBy: 'read' });
        assert.deepEqual(log.corruptBatches().map((b) => b.position), [bad.position]);
        // Past it: read as usual.
        assert.equal((await log.read(bad.lastOffset + 1, { maxBytes: 1 }))[0]!.baseOffset, w.envelopes[7]!.baseOffset);
        // Header-only readers (start-up replays) pass over it.
        assert.equal((await log.read(bad.baseOffset, { maxBytes: 1, verify: false }))[0]!.baseOffset, bad.baseOffset);
        // Once the log start passes it, the log no longer holds it.
        await log.deleteRecordsBefore(bad.lastOffset + 1);
        assert.deepEqual(log.corruptBatches(), []);
      } finally {
        await log.close();
      }
    } finally {
      w.remove();
    }
  });

  it('a flipped byte in a header is caught by the header checksum; the batches up to the next indexed one are lost with it', async () => {
    const w = await written(40, config);
    try {
      const bad = w.envelopes[10]!;
      // The first timestamp: a field no structural check looks at.
      flip(w.segmentFile, bad.position + 35);
      const { log, found } = await reopened(w, config);
      try {
        await rejectsWith(log.read(bad.baseOffset, { maxBytes: 1 << 20 }), 'corrupt_batch');
        assert.equal(found.length, 1);
        assert.equal(found[0]!.problem, 'header checksum mismatch');
        assert.equal(found[0]!.baseOffset, null, 'a header that fails its checksum is not believed');
        assert.ok(found[0]!.lastOffset >= bad.lastOffset);
        // From the offset after the lost stretch on, reads go on.
        const after = await log.read(found[0]!.lastOffset + 1, { maxBytes: 1 });
        assert.equal(after[0]!.baseOffset, found[0]!.lastOffset + 1);
      } finally {
        await log.close();
      }
    } finally {
      w.remove();
    }
  });

  it('a file slice carries its checksum: wholePayload of a corrupt one fails with corrupt_batch and records it', async () => {
    const big = testConfig({ segmentBytes: 1 << 20, maxBatchBytes: 1 << 20 });
    const w = await written(3, big, 2_000);
    try {
      const bad = w.envelopes[1]!;
      flip(w.segmentFile, bad.position + bad.bytes - 10);
      const { log, found } = await reopened(w, big);
      const lease = new BufferLease();
      try {
        const sliced = await log.read(bad.baseOffset, { maxBytes: 1_024, lease, fileSlicesMin: 1_024 });
        const slice = sliced[0]!;
        assert.ok(slice.file !== undefined, 'returned as a file slice (its bytes not read)');
        assert.ok(slice.file.payloadCrc !== undefined);
        assert.equal(found.length, 0, 'nothing read, nothing found yet');
        await rejectsWith(log.wholePayload(slice, lease), 'corrupt_batch');
        assert.equal(found.length, 1);
        // Known now: not even a slice of it is returned again.
        await rejectsWith(log.read(bad.baseOffset, { maxBytes: 1_024, lease, fileSlicesMin: 1_024 }), 'corrupt_batch');
        assert.deepEqual(await log.checkBatch(slice), found[0]);
      } finally {
        lease.release();
        await log.close();
      }
    } finally {
      w.remove();
    }
  });
});

describe('scrub', () => {
  it('finds corruption nobody read, within its byte budget, and goes on from where it stopped', async () => {
    const w = await written(30, config);
    try {
      const bad = w.envelopes[20]!;
      flip(w.segmentFile, bad.position + envelopeHeaderBytes + 3);
      const { log, found } = await reopened(w, config);
      try {
        let progress = await log.scrub(null, 5 * w.envelopes[0]!.bytes);
        assert.ok(progress.next !== null, 'stopped at its budget');
        assert.ok(progress.bytes >= 5 * w.envelopes[0]!.bytes && progress.bytes < 7 * w.envelopes[0]!.bytes, `${progress.bytes} bytes`);
        assert.equal(found.length, 0);
        let steps = 1;
        while (progress.next !== null && steps < 100) {
          progress = await log.scrub(progress.next, 5 * w.envelopes[0]!.bytes);
          steps++;
        }
        assert.equal(progress.next, null, 'reached the end');
        assert.equal(found.length, 1);
        assert.equal(found[0]!.foundBy, 'scrub');
        assert.equal(found[0]!.position, bad.position);
        // A read now refuses it without looking again, and nothing is reported twice.
        await rejectsWith(log.read(bad.baseOffset, { maxBytes: 1 }), 'corrupt_batch');
        await log.scrub(null, 1 << 30);
        assert.equal(found.length, 1);
      } finally {
        await log.close();
      }
    } finally {
      w.remove();
    }
  });

  it('goes on past a corrupt header at the next indexed batch', async () => {
    const w = await written(40, config);
    try {
      flip(w.segmentFile, w.envelopes[5]!.position + 40);
      const worse = w.envelopes[30]!;
      flip(w.segmentFile, worse.position + envelopeHeaderBytes + 5);
      const { log, found } = await reopened(w, config);
      try {
        const progress = await log.scrub(null, 1 << 30);
        assert.equal(progress.next, null);
        assert.deepEqual(found.map((f) => f.problem), ['header checksum mismatch', 'payload checksum mismatch']);
        assert.equal(found[1]!.baseOffset, worse.baseOffset);
      } finally {
        await log.close();
      }
    } finally {
      w.remove();
    }
  });

  it('checks batches larger than its read chunk and batches that straddle chunks', async () => {
    // Batches of about 0.7 MiB in one segment: the scrubber's 1 MiB chunks end inside batches.
    const large = testConfig({ segmentBytes: 64 << 20, maxBatchBytes: 8 << 20 });
    const w = await written(7, large, 180_000);
    const { path: dir2, remove: remove2 } = tempDir('quartet-integrity-large-');
    try {
      const bad = w.envelopes[5]!;
      flip(w.segmentFile, bad.position + bad.bytes - 10);
      const { log, found } = await reopened(w, large);
      try {
        const progress = await log.scrub(null, 1 << 30);
        assert.equal(progress.next, null);
        assert.equal(progress.bytes, w.envelopes.reduce((n, e) => n + e.bytes, 0));
        assert.deepEqual(found.map((f) => [f.position, f.problem]), [[bad.position, 'payload checksum mismatch']]);
      } finally {
        await log.close();
      }
      // A batch of 1.6 MiB, larger than a chunk, alone in its log.
      const one = await openFileLog(dir2, large);
      await one.append(batch('y'.repeat(420_000), 4));
      try {
        const progress = await one.scrub(null, 1 << 30);
        assert.equal(progress.next, null);
        assert.ok(progress.bytes > 1 << 20, `${progress.bytes} bytes`);
      } finally {
        await one.close();
      }
    } finally {
      w.remove();
      remove2();
    }
  });

  it('finds nothing in a sound log', async () => {
    const w = await written(30, config);
    try {
      const { log, found } = await reopened(w, config);
      try {
        const progress = await log.scrub(null, 1 << 30);
        assert.equal(progress.next, null);
        assert.equal(progress.bytes, w.envelopes.reduce((n, e) => n + e.bytes, 0) + (await segmentsAfterFirst(log)));
        assert.deepEqual(found, []);
        assert.equal(values(await log.read(0, { maxBytes: 1 << 20 })).length > 0, true);
      } finally {
        await log.close();
      }
    } finally {
      w.remove();
    }
  });
});

/** Bytes of every segment after the first (the scrub covers them all). */
async function segmentsAfterFirst(log: FileLog): Promise<number> {
  const total = log.stats().sizeBytes;
  const first = (log as unknown as { state: { segments: Array<{ size: number }> } }).state.segments[0]!.size;
  return Promise.resolve(total - first);
}
