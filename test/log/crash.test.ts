// Kill -9 in the middle of appends: every acknowledged append must be in the log after reopening,
// in order and byte for byte, under fsyncPolicy 'always' (fsynced before the ack) and 'interval'
// (written to the page cache before the ack, synchronously on the event loop: a killed process
// loses nothing the kernel has; only a machine crash could). Set LOG_CRASH_SEED to replay a run.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { openFileLog } from '../../src/log/file-log.js';
import { defaultLogConfig, type FsyncPolicy, type StoredBatch } from '../../src/log/types.js';
import { verifyPartitionDir } from '../../src/log/verify.js';
import { batch, tempDir } from './helpers.js';

const root = tempDir('quartet-crash-');
after(() => root.remove());
const fixture = new URL('./fixtures/crash-appender.ts', import.meta.url).pathname;
const rounds = 5;
/** Upper bound on one child's run before the test gives up on it. */
const roundMsMax = 15_000;

interface Ack {
  baseOffset: number;
  lastOffset: number;
  hash: string;
}

/** Runs the appender until `acksBeforeKill` acks arrive, kills it, and returns every ack it printed. */
function runUntilKilled(dir: string, seed: number, acksBeforeKill: number, policy: FsyncPolicy): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, dir, String(seed), policy], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acks: Ack[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), roundMsMax);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [kind, base, last, hash] = line.split(' ');
      if (kind !== 'ack') return;
      acks.push({ baseOffset: Number(base), lastOffset: Number(last), hash: hash! });
      if (acks.length === acksBeforeKill) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`appender exited without being killed (signal ${signal})`));
      else resolve(acks);
    });
  });
}

describe('crash', () => {
  for (const policy of ['always', 'interval'] as const) {
    it(`keeps every acknowledged append across kill -9 under ${policy} (${rounds} rounds)`, async (t) => {
      const seed = Number(process.env['LOG_CRASH_SEED'] ?? Date.now() % 1_000_000);
      t.diagnostic(`seed ${seed} (LOG_CRASH_SEED=${seed} to replay)`);
      let state = seed;
      const next = (n: number): number => {
        state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
        return state % n;
      };
      const dir = join(root.path, `partition-${policy}`);
      const config = { ...defaultLogConfig, fsyncPolicy: policy, segmentBytes: 64 * 1024, indexIntervalBytes: 1024 };
      const acked = new Map<number, Ack>();
      for (let round = 0; round < rounds; round++) {
        const acks = await runUntilKilled(dir, seed + round, 5 + next(150), policy);
        for (const ack of acks) acked.set(ack.baseOffset, ack);
        const log = await openFileLog(dir, config);
        const stored = new Map<number, StoredBatch>();
        let offset = 0;
        for (;;) {
          const got = await log.read(offset, { maxBytes: 1 << 20 });
          if (got.length === 0) break;
          for (const b of got) stored.set(b.baseOffset, b);
          offset = got.at(-1)!.lastOffset + 1;
        }
        for (const ack of acked.values()) {
          const b = stored.get(ack.baseOffset);
          assert.ok(b, `round ${round}: acknowledged batch at ${ack.baseOffset} is missing (seed ${seed})`);
          assert.equal(b.lastOffset, ack.lastOffset);
          assert.equal(createHash('sha256').update(b.payload).digest('hex'), ack.hash, `round ${round}: batch ${ack.baseOffset} differs`);
        }
        assert.equal(offset, log.stats().nextOffset, 'reads reach the end with no holes');
        const appended = await log.append(batch(`after-crash-${round}`));
        assert.equal(appended.baseOffset, offset);
        acked.set(appended.baseOffset, { baseOffset: appended.baseOffset, lastOffset: appended.lastOffset, hash: createHash('sha256').update((await log.read(offset, { maxBytes: 1 }))[0]!.payload).digest('hex') });
        await log.close();
        assert.deepEqual((await verifyPartitionDir(dir)).problems, [], `round ${round} (seed ${seed})`);
      }
    });
  }
});
