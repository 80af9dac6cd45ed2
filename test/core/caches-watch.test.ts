// Cache watches (src/core/caches/watch.ts): a key or a prefix, live changes in log order, the
// retained snapshot, a resume from an offset (replayed from the log), a resnapshot once compaction
// collapsed that history, the lagged end of a consumer that falls behind, expiries and other
// writers' records seen live, and the end of a watch whose cache is deleted.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeNeutralBatch } from '../../src/log/index.js';
import type { CacheChange, CacheWatch } from '../../src/core/caches/index.js';
import { code, openBroker, openCaches, smallSegments } from './caches-helpers.js';

const v = (s: string): Buffer => Buffer.from(s);

/** The next `n` changes (fewer if the watch ends); fails after `deadlineMs` without one. */
async function take(watch: CacheWatch, n: number, deadlineMs = 5_000): Promise<CacheChange[]> {
  const out: CacheChange[] = [];
  for (let i = 0; i < n; i++) {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no change ${i + 1} of ${n} within ${deadlineMs} ms`)), deadlineMs);
    });
    const next = await Promise.race([watch.next(), deadline]).finally(() => clearTimeout(timer));
    if (next.done === true) break;
    out.push(next.value);
  }
  return out;
}

const brief = (changes: CacheChange[]): Array<[string, string | null, number]> => changes.map((c) => [c.key, c.value?.toString() ?? null, c.offset]);

test('a key watch gets that key\'s changes, live, in order, deletes as null', async (t) => {
  const { caches } = await openCaches(t);
  const watch = await caches.watch('default', 'c', { key: 'a' });
  assert.deepEqual([watch.resumeOffset, watch.resnapshot, watch.retainedCount], [0, false, null]);
  await caches.put('default', 'c', 'a', v('1'));
  await caches.put('default', 'c', 'b', v('other'));
  await caches.put('default', 'c', 'a', v('2'));
  await caches.delete('default', 'c', 'a');
  assert.deepEqual(brief(await take(watch, 3)), [['a', '1', 0], ['a', '2', 2], ['a', null, 3]]);
  assert.equal(caches.watchCount, 1);
  watch.close();
  assert.deepEqual(await watch.next(), { done: true, value: undefined });
  assert.deepEqual(watch.endedBy, { kind: 'closed' });
  assert.equal(caches.watchCount, 0);
});

test('a prefix watch gets the keys under it; an empty prefix gets every key', async (t) => {
  const { caches, clock } = await openCaches(t);
  const users = await caches.watch('default', 'c', { prefix: 'user/' });
  const all = await caches.watch('default', 'c', { prefix: '' });
  await caches.put('default', 'c', 'user/1', v('ann'), { ttlMs: 500 });
  await caches.put('default', 'c', 'group/1', v('ops'));
  await caches.put('default', 'c', 'user/2', v('bob'));
  const seen = await take(users, 2);
  assert.deepEqual(brief(seen), [['user/1', 'ann', 0], ['user/2', 'bob', 2]]);
  assert.deepEqual(seen.map((c) => c.expiresAtMillis), [clock.now() + 500, 0]);
  assert.deepEqual(brief(await take(all, 3)).map(([k]) => k), ['user/1', 'group/1', 'user/2']);
});

test('retained: the current matching entries first (retainedCount), then live changes', async (t) => {
  const { caches } = await openCaches(t);
  await caches.put('default', 'c', 'user/1', v('old'));
  await caches.put('default', 'c', 'user/2', v('bob'));
  await caches.put('default', 'c', 'user/1', v('ann'));
  await caches.put('default', 'c', 'group/1', v('ops'));
  await caches.put('default', 'c', 'user/3', v('gone'));
  await caches.delete('default', 'c', 'user/3');
  const watch = await caches.watch('default', 'c', { prefix: 'user/', retained: true });
  assert.deepEqual([watch.retainedCount, watch.resumeOffset, watch.resnapshot], [2, 6, false]);
  await caches.put('default', 'c', 'user/4', v('dan'));
  assert.deepEqual(brief(await take(watch, 3)), [['user/2', 'bob', 1], ['user/1', 'ann', 2], ['user/4', 'dan', 6]]);
  const empty = await caches.watch('default', 'c', { key: 'nobody', retained: true });
  assert.equal(empty.retainedCount, 0, 'joining an empty key is an answer');
});

test('fromOffset: the changes since that offset are replayed from the log, then live', async (t) => {
  const { caches } = await openCaches(t);
  for (const [k, value] of [['a', '1'], ['b', '1'], ['a', '2'], ['b', '2']] as const) await caches.put('default', 'c', k, v(value));
  const watch = await caches.watch('default', 'c', { key: 'a', fromOffset: 1 });
  assert.deepEqual([watch.resumeOffset, watch.resnapshot, watch.retainedCount], [4, false, null]);
  await caches.put('default', 'c', 'a', v('3'));
  assert.deepEqual(brief(await take(watch, 2)), [['a', '2', 2], ['a', '3', 4]]);
  const atEnd = await caches.watch('default', 'c', { prefix: '', fromOffset: 5 });
  assert.equal(atEnd.resumeOffset, 5, 'the end itself is a valid resume point');
});

test('watch requests that are refused', async (t) => {
  const { caches } = await openCaches(t, { limits: { watchesMax: 2 } });
  await caches.put('default', 'c', 'a', v('1'));
  await assert.rejects(caches.watch('default', 'c', { fromOffset: 2, key: 'a' }), code('offset_out_of_range'));
  assert.equal(await caches.shardEnd('default', 'c', 0), 1, 'what a refusal names as available');
  assert.equal(await caches.shardEnd('default', 'none', 0), null);
  await assert.rejects(caches.watch('default', 'c', { key: 'a', fromOffset: 0, retained: true }), code('invalid_request'));
  await assert.rejects(caches.watch('default', 'c', { key: 'a', prefix: 'a' }), code('invalid_request'));
  await assert.rejects(caches.watch('default', 'c', {}), code('invalid_request'));
  await assert.rejects(caches.watch('default', 'c', { prefix: '', shard: 1 }), code('unknown_partition'));
  await assert.rejects(caches.watch('default', 'c', { key: 'a', fromOffset: -1 }), code('invalid_request'));
  await caches.watch('default', 'c', { key: 'a' });
  await caches.watch('default', 'c', { key: 'b' });
  await assert.rejects(caches.watch('default', 'c', { key: 'c' }), code('resource_exhausted'));
});

test('resnapshot: a resume into history compaction collapsed starts with the current values', async (t) => {
  const { broker, caches } = await openCaches(t, { topicConfig: smallSegments });
  for (let i = 0; i < 40; i++) await caches.put('default', 'c', `k${i % 2}`, v(`value-${i}`));
  const before = await caches.watch('default', 'c', { prefix: '', fromOffset: 3 });
  assert.equal(before.resnapshot, false, 'nothing compacted yet');
  before.close();
  await broker.runMaintenance();
  const watch = await caches.watch('default', 'c', { prefix: '', fromOffset: 3 });
  assert.deepEqual([watch.resnapshot, watch.resumeOffset, watch.retainedCount], [true, 40, null]);
  await caches.put('default', 'c', 'k0', v('live'));
  assert.deepEqual(brief(await take(watch, 3)), [['k0', 'value-38', 38], ['k1', 'value-39', 39], ['k0', 'live', 40]]);
  // The active segment is never compacted: a resume inside it still replays.
  const recent = await caches.watch('default', 'c', { key: 'k1', fromOffset: 39 });
  assert.equal(recent.resnapshot, false);
  assert.deepEqual(brief(await take(recent, 1)), [['k1', 'value-39', 39]]);
});

test('lagged: a consumer that falls behind gets what was queued, then lagged{resumeFrom}; resuming there is gapless', async (t) => {
  const { broker, caches } = await openCaches(t);
  const watch = await caches.watch('default', 'c', { prefix: '', queueEventsMax: 2 });
  for (let i = 0; i < 5; i++) await caches.put('default', 'c', `k${i}`, v(String(i)));
  assert.deepEqual(watch.endedBy, { kind: 'lagged', resumeFrom: 2 });
  assert.equal(caches.watchCount, 0, 'a lagged watch is no longer fed');
  assert.match(broker.metrics.render(), /^quartet_cache_watch_lagged_total 1$/m);
  assert.deepEqual(brief(await take(watch, 10)), [['k0', '0', 0], ['k1', '1', 1]]);
  const again = await caches.watch('default', 'c', { prefix: '', fromOffset: 2 });
  assert.deepEqual(brief(await take(again, 3)).map(([k]) => k), ['k2', 'k3', 'k4']);
});

test('lagged during a replay: the replayed part is delivered, resumeFrom is where the replay stopped', async (t) => {
  const { caches } = await openCaches(t);
  for (let i = 0; i < 4; i++) await caches.put('default', 'c', `k${i}`, v(String(i)));
  const watch = await caches.watch('default', 'c', { prefix: '', fromOffset: 0, queueEventsMax: 1 });
  assert.deepEqual(brief(await take(watch, 1)), [['k0', '0', 0]], 'the first replay chunk is read');
  await caches.put('default', 'c', 'live1', v('x'));
  await caches.put('default', 'c', 'live2', v('y'));
  const rest = await take(watch, 10);
  assert.deepEqual(brief(rest).map(([k]) => k), ['k1', 'k2', 'k3'], 'the replay read before the lag is delivered, the live queue is not');
  assert.deepEqual(watch.endedBy, { kind: 'lagged', resumeFrom: 4 });
});

test('expiry: the sweep\'s tombstone reaches watchers as a delete', async (t) => {
  const { caches, clock } = await openCaches(t);
  const watch = await caches.watch('default', 'c', { key: 'session' });
  await caches.put('default', 'c', 'session', v('token'), { ttlMs: 1000 });
  clock.advance(1000);
  assert.equal(await caches.sweepExpired(), 1);
  const [put, expired] = await take(watch, 2);
  assert.equal(put!.expiresAtMillis, clock.now());
  assert.deepEqual([expired!.value, expired!.offset, expired!.expiresAtMillis], [null, 1, 0]);
});

test('records another writer appends to the cache topic reach watchers without a cache call', async (t) => {
  const { broker, caches } = await openCaches(t);
  const watch = await caches.watch('default', 'c', { prefix: '' });
  await broker.append({ topic: '__cache.c' }, 0, encodeNeutralBatch([{ key: 'x', value: 'external' }]));
  assert.deepEqual(brief(await take(watch, 1)), [['x', 'external', 0]]);
});

test('a watch ends when its cache\'s topic is deleted, and when the broker closes', async (t) => {
  const { broker, caches } = await openCaches(t);
  const watch = await caches.watch('default', 'c', { prefix: '' });
  const other = await caches.watch('default', 'd', { prefix: '' });
  await broker.deleteTopic({ topic: '__cache.c' });
  assert.deepEqual(await take(watch, 1), []);
  assert.deepEqual(watch.endedBy, { kind: 'cache_gone' });
  await broker.close();
  assert.deepEqual(await take(other, 1), []);
  assert.deepEqual(other.endedBy, { kind: 'closed' });
  await assert.rejects(caches.get('default', 'd', 'k'), code('shutting_down'));
});

test('a watch resumes by offset after a restart: the index and the replay come from the log', async (t) => {
  const { broker, caches, clock, dataDir, defer } = await openCaches(t);
  const first = await caches.watch('default', 'c', { prefix: 'job/' });
  await caches.put('default', 'c', 'job/1', v('queued'));
  const [seen] = await take(first, 1);
  await caches.put('default', 'c', 'job/1', v('running'));
  await caches.put('default', 'c', 'job/2', v('queued'));
  await broker.close();
  assert.deepEqual(first.endedBy, { kind: 'closed' });

  const reopened = await openBroker(dataDir, clock);
  defer(() => reopened.close());
  const resumed = await reopened.caches.watch('default', 'c', { prefix: 'job/', fromOffset: seen!.offset + 1 });
  assert.deepEqual([resumed.resumeOffset, resumed.resnapshot], [3, false]);
  assert.deepEqual(brief(await take(resumed, 2)), [['job/1', 'running', 1], ['job/2', 'queued', 2]]);
});
