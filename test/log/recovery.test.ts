// Recovery properties: random appends, then damage the active segment as a crash would (a torn
// tail) or as bad media would (a flipped byte), reopen, and check that every batch before the
// damage is intact, nothing after it survives, verify is clean and appends continue.

import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { cleanShutdownFileName, openFileLog } from '../../src/log/file-log.js';
import { encodeNeutralBatch, decodeNeutralBatch } from '../../src/log/neutral-format.js';
import type { PartitionLog } from '../../src/log/types.js';
import { dumpPartitionDir, verifyPartitionDir } from '../../src/log/verify.js';
import { batch, rejectsWith, tempDir, testConfig } from './helpers.js';

const root = tempDir('quartet-recovery-');
after(() => root.remove());
let counter = 0;

async function allValues(log: PartitionLog): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  let offset = log.stats().logStartOffset;
  for (;;) {
    const got = await log.read(offset, { maxBytes: 1 << 20 });
    if (got.length === 0) return out;
    for (const b of got) for (const r of decodeNeutralBatch(b)) out.push([r.offset, r.value!.toString('hex')]);
    offset = got.at(-1)!.lastOffset + 1;
  }
}

describe('recovery', () => {
  it('keeps exactly the batches before a torn or corrupt tail (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ count: fc.integer({ min: 1, max: 4 }), bytes: fc.integer({ min: 0, max: 700 }), seed: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 25 }),
        fc.constantFrom('truncate' as const, 'flip' as const),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        fc.integer({ min: 1, max: 255 }),
        fc.boolean(),
        async (batches, damage, where, xor, clean) => {
          const dir = join(root.path, `r${counter++}`);
          const config = testConfig({ segmentBytes: 4096, indexIntervalBytes: 300 });
          const log = await openFileLog(dir, config);
          for (const b of batches) {
            const records = Array.from({ length: b.count }, (_, i) => ({ value: Buffer.alloc(b.bytes, (b.seed + i) & 0xff) }));
            await log.append(encodeNeutralBatch(records, { timestamp: 1_000 }));
          }
          const before = await allValues(log);
          await log.close();
          // An unclean stop unless the property says the damage happened after a clean one.
          if (!clean) rmSync(join(dir, cleanShutdownFileName));
          const headers = [];
          for await (const h of dumpPartitionDir(dir)) headers.push(h);
          const active = readdirSync(dir).filter((n) => n.endsWith('.log')).sort().at(-1)!;
          const activePath = join(dir, active);
          const size = readFileSync(activePath).length;
          if (size === 0) return;
          const position = Math.floor(where * size);
          if (damage === 'truncate') {
            truncateSync(activePath, position);
          } else {
            const bytes = readFileSync(activePath);
            bytes[position]! ^= xor;
            writeFileSync(activePath, bytes);
          }
          // After a clean close only the data past the last index entry is re-validated: damage
          // before it is for verify to report, not recovery. Only check the unclean case fully.
          const survivors = headers.filter((h) => h.file !== activePath || h.position + 64 + h.payloadLength <= position);
          const lastOffsetKept = survivors.at(-1)?.lastOffset ?? -1;
          const reopened = await openFileLog(dir, config);
          try {
            if (!clean || damage === 'truncate') {
              const expected = before.filter(([offset]) => offset <= lastOffsetKept);
              assert.deepEqual(await allValues(reopened), expected);
              assert.equal(reopened.stats().nextOffset, lastOffsetKept + 1);
              assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
            }
            const next = reopened.stats().nextOffset;
            assert.equal((await reopened.append(encodeNeutralBatch([{ value: 'after' }]))).baseOffset, next);
          } finally {
            await reopened.destroy();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('recovery of overlapping segments', () => {
  // What a roll that failed after creating `<base>.log` leaves if the file could not be removed
  // (or the process died first): an empty segment starting below data the old segment then took.
  for (const clean of [true, false]) {
    it(`removes an empty segment that starts below its predecessor's end (${clean ? 'clean' : 'unclean'} stop)`, async () => {
      const dir = join(root.path, `o${counter++}`);
      const config = testConfig({ segmentBytes: 1024 });
      const log = await openFileLog(dir, config);
      await log.append(batch('x'.repeat(700)));
      await log.append(batch('small'));
      await log.append(batch('more', 2));
      const before = await allValues(log);
      await log.close();
      if (!clean) rmSync(join(dir, cleanShutdownFileName));
      writeFileSync(join(dir, '00000000000000000001.log'), Buffer.alloc(0));
      const reopened = await openFileLog(dir, config);
      try {
        assert.deepEqual(await allValues(reopened), before, 'the empty segment hid acknowledged data');
        assert.deepEqual(reopened.stats(), { ...reopened.stats(), logStartOffset: 0, nextOffset: 4, segmentCount: 1 });
        assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('00000000000000000001')), []);
        assert.equal((await reopened.append(batch('next'))).baseOffset, 4, 'offsets are not reused');
      } finally {
        await reopened.close();
      }
      assert.deepEqual((await verifyPartitionDir(dir)).problems, []);
    });
  }

  it('refuses to open segments that overlap with data in both', async () => {
    const config = testConfig({ segmentBytes: 1024 });
    // A segment at base 1 holding offset 1, written by another log.
    const other = join(root.path, `o${counter++}`);
    const donor = await openFileLog(other, config);
    await donor.append(batch('a'));
    await donor.truncateAll();
    await donor.append(batch('b'));
    await donor.close();
    const dir = join(root.path, `o${counter++}`);
    const log = await openFileLog(dir, config);
    for (let i = 0; i < 3; i++) await log.append(batch(`v${i}`));
    await log.close();
    copyFileSync(join(other, '00000000000000000001.log'), join(dir, '00000000000000000001.log'));
    await rejectsWith(openFileLog(dir, config), 'storage_error');
  });
});
