import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../src/base/logger.js';
import { MetricsRegistry } from '../../src/core/metrics.js';
import { Scrubber, type ScrubbedPartition } from '../../src/core/scrubber.js';
import type { PartitionLog, ScrubPosition, ScrubProgress } from '../../src/log/types.js';

/** A log of `size` bytes in one segment whose scrub checks up to the budget and says where it got to. */
function fakeLog(size: number, calls: Array<[string, number, number]>, name: string, fail = false): PartitionLog {
  const log = {
    isClosed: () => false,
    scrub(from: ScrubPosition | null, bytesMax: number): Promise<ScrubProgress> {
      const start = from?.offset ?? 0;
      calls.push([name, start, bytesMax]);
      if (fail) return Promise.reject(new Error('disk gone'));
      const bytes = Math.min(bytesMax, size - start);
      const end = start + bytes;
      return Promise.resolve({ next: end < size ? { offset: end } : null, bytes });
    },
  };
  return log as unknown as PartitionLog;
}

test('each step checks its budget, partition after partition, from where the last one stopped, at most one lap', async () => {
  const calls: Array<[string, number, number]> = [];
  const partitions: ScrubbedPartition[] = [
    { key: 'a', log: fakeLog(300, calls, 'a') },
    { key: 'b', log: fakeLog(200, calls, 'b') },
    { key: 'c', log: fakeLog(0, calls, 'c') },
  ];
  let steps = 0;
  const metrics = new MetricsRegistry();
  const scrubber = new Scrubber(() => partitions, 0, silentLogger, metrics, () => steps++);
  assert.equal(await scrubber.step(250), 250);
  assert.deepEqual(calls.splice(0), [['a', 0, 250]]);
  assert.equal(await scrubber.step(250), 250);
  assert.deepEqual(calls.splice(0), [['a', 250, 250], ['b', 0, 200]]);
  // c is empty; then a again from its start; one lap at most, however large the budget.
  assert.equal(await scrubber.step(10_000), 500);
  assert.deepEqual(calls.splice(0), [['c', 0, 10_000], ['a', 0, 10_000], ['b', 0, 9_700]]);
  assert.equal(steps, 3);
  assert.match(metrics.render(), /quartet_scrubbed_bytes_total 1000/);
});

test('a partition that fails is logged and passed over; a partition that went away restarts the walk at the first', async () => {
  const calls: Array<[string, number, number]> = [];
  let partitions: ScrubbedPartition[] = [
    { key: 'a', log: fakeLog(100, calls, 'a', true) },
    { key: 'b', log: fakeLog(300, calls, 'b') },
  ];
  const scrubber = new Scrubber(() => partitions, 0, silentLogger, new MetricsRegistry());
  assert.equal(await scrubber.step(200), 200);
  assert.deepEqual(calls.splice(0), [['a', 0, 200], ['b', 0, 200]]);
  partitions = [{ key: 'c', log: fakeLog(50, calls, 'c') }];
  assert.equal(await scrubber.step(200), 50);
  assert.deepEqual(calls.splice(0), [['c', 0, 200]]);
});

test('started with a rate, it takes that many bytes per tick on its own until stopped', async () => {
  const calls: Array<[string, number, number]> = [];
  let stepped!: () => void;
  const first = new Promise<void>((resolve) => (stepped = resolve));
  const scrubber = new Scrubber(() => [{ key: 'a', log: fakeLog(1_000, calls, 'a') }], 100, silentLogger, new MetricsRegistry(), () => stepped());
  scrubber.start();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([first, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('no step within 5 s')), 5_000)))]);
  clearTimeout(timer);
  await scrubber.stop();
  const seen = calls.length;
  assert.deepEqual(calls[0], ['a', 0, 100], 'a tick takes bytesPerSec x 1 s');
  // Stopped: no step after, however long one waits (the timer is gone).
  assert.equal((scrubber as unknown as { timer: unknown }).timer, null);
  assert.equal(calls.length, seen);
});
