// The cache service against a model, from seeds: random puts (some with TTLs), deletes, counter
// adds, clock steps, expiry sweeps, compaction passes and restarts, each answer checked against a
// plain map, and a watch of every key (resumed by offset after each restart) folded into a view
// that must equal the model. A failure names its seed; run that seed again to reproduce it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Broker } from '../../src/core/broker.js';
import type { CacheChange, CacheWatch } from '../../src/core/caches/index.js';
import { openBroker, openCaches, smallSegments } from './caches-helpers.js';
import { mulberry32 } from '../fixtures/seeded-random.js';

const seeds = [1, 2, 3];
const opsPerSeed = 250;
const keys = ['a', 'b', 'c', 'p/1', 'p/2', 'p/3'];

interface Held {
  value: string;
  expiresAt: number;
}

function visible(map: Map<string, Held>, now: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, e] of [...map].sort(([a], [b]) => a.localeCompare(b))) if (e.expiresAt === 0 || e.expiresAt > now) out[k] = e.value;
  return out;
}

/** Folds a watch's changes into `view` until it has seen the shard's last offset; fails after a deadline. */
async function follow(watch: CacheWatch, view: Map<string, Held>, seen: { last: number }, end: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (seen.last < end - 1) {
    assert.ok(Date.now() < deadline, `the watch stopped at ${seen.last}, the log ends at ${end}`);
    const next = await watch.next();
    assert.ok(next.done !== true, `the watch ended (${JSON.stringify(watch.endedBy)}) at ${seen.last}, the log ends at ${end}`);
    seen.last = Math.max(seen.last, fold(view, next));
  }
}

/** Applies one change to `view`; returns its offset. */
function fold(view: Map<string, Held>, next: IteratorResult<CacheChange, undefined>): number {
  assert.ok(next.done !== true, 'a snapshot change');
  const c = next.value;
  if (c.value === null) view.delete(c.key);
  else view.set(c.key, { value: c.value.toString(), expiresAt: c.expiresAtMillis });
  return c.offset;
}

for (const seed of seeds) {
  test(`the cache service matches a model (seed ${seed})`, async (t) => {
    const rnd = mulberry32(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;
    const fixture = await openCaches(t, { topicConfig: smallSegments });
    const { clock, dataDir, defer } = fixture;
    let broker: Broker = fixture.broker;
    const model = new Map<string, Held>();
    const counters = new Map<string, bigint>();
    const view = new Map<string, Held>();
    const seen = { last: -1 };
    let watch = await broker.caches.watch('default', 'm', { prefix: '' });
    const end = (): number => broker.partition({ topic: '__cache.m' }, 0).stats().highWatermark;
    let restarts = 0;
    const stats = { resumes: 0, resnapshots: 0 };

    for (let step = 0; step < opsPerSeed; step++) {
      const caches = broker.caches;
      const now = clock.now();
      const key = pick(keys);
      const roll = rnd();
      const at = `seed ${seed} step ${step}`;
      if (roll < 0.35) {
        const value = `v${step}`;
        const ttlMs = rnd() < 0.4 ? 1 + Math.floor(rnd() * 100) : undefined;
        await caches.put('default', 'm', key, Buffer.from(value), ttlMs === undefined ? {} : { ttlMs });
        model.set(key, { value, expiresAt: ttlMs === undefined ? 0 : now + ttlMs });
      } else if (roll < 0.5) {
        const expected = visible(model, now)[key] ?? null;
        const removed = await caches.delete('default', 'm', key);
        assert.equal(removed?.toString() ?? null, expected, `${at}: delete ${key}`);
        model.delete(key);
      } else if (roll < 0.65) {
        const got = await caches.get('default', 'm', key);
        assert.equal(got?.toString() ?? null, visible(model, now)[key] ?? null, `${at}: get ${key}`);
      } else if (roll < 0.75) {
        const delta = BigInt(Math.floor(rnd() * 11) - 5);
        const expected = (counters.get(key) ?? 0n) + delta;
        assert.equal(await caches.counterAdd('default', 'm', key, delta), expected, `${at}: add ${key}`);
        counters.set(key, expected);
      } else if (roll < 0.87) {
        clock.advance(Math.floor(rnd() * 60));
      } else if (roll < 0.93) {
        await caches.sweepExpired();
      } else if (roll < 0.96) {
        await broker.runMaintenance();
      } else {
        if (rnd() < 0.4 && restarts < 3) {
          restarts++;
          await broker.close();
          assert.deepEqual(watch.endedBy, { kind: 'closed' }, `${at}: the watch ends with the broker`);
          broker = await openBroker(dataDir, clock);
          const reopened = broker;
          defer(() => reopened.close());
        } else {
          watch.close();
        }
        // Resume where the view is, or from an older checkpoint (a replay, or a resnapshot once compacted).
        const from = rnd() < 0.5 ? seen.last + 1 : Math.floor(rnd() * (seen.last + 2));
        watch = await broker.caches.watch('default', 'm', { prefix: '', fromOffset: from });
        stats.resumes++;
        if (watch.resnapshot) {
          // Compacted history comes as the current values: the view starts again from them.
          stats.resnapshots++;
          view.clear();
          for (let i = 0; i < watch.snapshotCount; i++) fold(view, await watch.next());
          seen.last = watch.resumeOffset - 1;
        } else {
          seen.last = from - 1;
        }
      }
      if (end() > 0) await follow(watch, view, seen, end());
      const nowAfter = clock.now();
      assert.deepEqual(visible(view, nowAfter), visible(model, nowAfter), `${at}: the watch's view`);
    }
    t.diagnostic(`seed ${seed}: ${restarts} restarts, ${stats.resumes} resumes, ${stats.resnapshots} resnapshots`);
    for (const key of keys) {
      assert.equal(await broker.caches.counterGet('default', 'm', key), counters.get(key) ?? null, `seed ${seed}: counter ${key}`);
      assert.equal((await broker.caches.get('default', 'm', key))?.toString() ?? null, visible(model, clock.now())[key] ?? null, `seed ${seed}: final ${key}`);
    }
  });
}
