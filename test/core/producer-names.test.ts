import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError } from '../../src/base/errors.js';
import { silentLogger } from '../../src/base/logger.js';
import { SqliteMetadataStore } from '../../src/core/metadata-store.js';
import { ProducerNames, producerNameBytesMax, producerNameUseRefreshMs } from '../../src/core/producer-names.js';
import { ProducerStateManager } from '../../src/core/producer-state.js';
import { tempDir } from './helpers.js';

const day = 24 * 3600 * 1000;

async function open(dir: string, clock: ManualClock, cachedMax?: number) {
  const store = SqliteMetadataStore.openInDataDir(dir);
  const producers = await ProducerStateManager.open(store, { clock, logger: silentLogger });
  const names = new ProducerNames(store, producers, clock, { idleExpiryMs: 7 * day, ...(cachedMax !== undefined ? { cachedMax } : {}) });
  return { store, producers, names };
}

test('a name maps to one core producer; a higher epoch bumps its core epoch and fences the lower ones', async (t) => {
  const clock = new ManualClock();
  const { store, producers, names } = await open(tempDir(t), clock);
  t.after(() => store.close());
  const first = await names.resolve('cursus', 'p-1', 1_700_000_000_000_000);
  assert.equal(first.kind, 'current');
  assert.deepEqual(await names.resolve('cursus', 'p-1', 1_700_000_000_000_000), first, 'the same epoch maps the same way');
  assert.notDeepEqual(await names.resolve('cursus', 'p-2', 0), first, 'another name is another producer');
  assert.notDeepEqual(await names.resolve('other', 'p-1', 0), first, 'and so is the same name in another scope');

  const bumped = await names.resolve('cursus', 'p-1', 1_700_000_000_000_500);
  assert.ok(first.kind === 'current' && bumped.kind === 'current');
  assert.equal(bumped.producerId, first.producerId);
  assert.equal(bumped.producerEpoch, first.producerEpoch + 1);
  assert.equal(producers.currentEpoch(bumped.producerId), bumped.producerEpoch, 'the producer state knows the new epoch: the old one is fenced there too');
  assert.deepEqual(await names.resolve('cursus', 'p-1', 1_700_000_000_000_000), { kind: 'stale', currentEpoch: 1_700_000_000_000_500 });
});

test('concurrent first uses of a name allocate one producer', async (t) => {
  const clock = new ManualClock();
  const { store, names } = await open(tempDir(t), clock);
  t.after(() => store.close());
  const all = await Promise.all([names.resolve('cursus', 'racer', 5), names.resolve('cursus', 'racer', 5), names.resolve('cursus', 'racer', 5)]);
  assert.deepEqual(all[1], all[0]);
  assert.deepEqual(all[2], all[0]);
});

test('the mapping survives a reopen, also when the name fell out of the memory cache', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const before = await open(dir, clock, 1);
  const a = await before.names.resolve('cursus', 'a', 10);
  const a11 = await before.names.resolve('cursus', 'a', 11);
  await before.names.resolve('cursus', 'b', 1); // evicts 'a' from a cache of one
  assert.deepEqual(await before.names.resolve('cursus', 'a', 11), a11, 'read back from the store');
  await before.store.close();

  const after = await open(dir, clock);
  t.after(() => after.store.close());
  assert.deepEqual(await after.names.resolve('cursus', 'a', 11), a11);
  assert.deepEqual(await after.names.resolve('cursus', 'a', 10), { kind: 'stale', currentEpoch: 11 });
  assert.ok(a.kind === 'current' && a11.kind === 'current' && a11.producerEpoch === a.producerEpoch + 1);
});

test('names unused for the idle expiry are forgotten; use keeps them', async (t) => {
  const clock = new ManualClock();
  const { store, names } = await open(tempDir(t), clock);
  t.after(() => store.close());
  const idle = await names.resolve('cursus', 'idle', 0);
  const busy = await names.resolve('cursus', 'busy', 0);
  for (let d = 0; d < 8; d++) {
    clock.advance(day);
    await names.resolve('cursus', 'busy', 0);
  }
  assert.ok(8 * day > producerNameUseRefreshMs);
  assert.equal(await names.expireIdle(), 1);
  assert.deepEqual(await names.resolve('cursus', 'busy', 0), busy);
  const again = await names.resolve('cursus', 'idle', 0);
  assert.ok(idle.kind === 'current' && again.kind === 'current');
  assert.notEqual(again.producerId, idle.producerId, 'a forgotten name starts over with a new producer');
});

test('bad names and epochs are refused', async (t) => {
  const clock = new ManualClock();
  const { store, names } = await open(tempDir(t), clock);
  t.after(() => store.close());
  const invalid = (err: unknown) => isQuartetError(err) && err.code === 'invalid_request';
  await assert.rejects(names.resolve('cursus', '', 0), invalid);
  await assert.rejects(names.resolve('cursus', 'x'.repeat(producerNameBytesMax + 1), 0), invalid);
  await assert.rejects(names.resolve('cursus', 'x', 2 ** 53), invalid);
});
