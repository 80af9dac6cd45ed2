import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError } from '../../src/base/errors.js';
import { SqliteMetadataStore } from '../../src/core/metadata-store.js';
import { OffsetStore } from '../../src/core/offsets.js';
import { memoryStore, tempDir } from './helpers.js';

test('offsets: commit many, fetch, durable across a reopen', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock(5_000);
  let store = SqliteMetadataStore.openInDataDir(dir);
  let offsets = new OffsetStore(store, clock);
  await offsets.commit('kafka', 'g1', [
    { topicInternalId: 1, partition: 0, offset: 10, metadata: 'm0', leaderEpoch: 3 },
    { topicInternalId: 1, partition: 1, offset: 20 },
    { topicInternalId: 2, partition: 0, offset: 30 },
  ]);
  clock.advance(10);
  await offsets.commit('kafka', 'g1', [{ topicInternalId: 1, partition: 1, offset: 21 }]);
  await offsets.commit('iggy', 'g1', [{ topicInternalId: 1, partition: 0, offset: 99 }]);
  await store.close();

  store = SqliteMetadataStore.openInDataDir(dir);
  offsets = new OffsetStore(store, clock);
  assert.deepEqual(await offsets.fetch('kafka', 'g1', 1, 0), {
    scope: 'kafka', group: 'g1', topicInternalId: 1, partition: 0, offset: 10, leaderEpoch: 3, metadata: 'm0', commitTime: 5_000,
  });
  const p1 = await offsets.fetch('kafka', 'g1', 1, 1);
  assert.equal(p1?.offset, 21);
  assert.equal(p1?.commitTime, 5_010);
  assert.equal(p1?.leaderEpoch, -1);
  assert.equal((await offsets.fetch('iggy', 'g1', 1, 0))?.offset, 99, 'scopes are separate');
  assert.deepEqual((await offsets.fetchGroup('kafka', 'g1')).map((o) => [o.topicInternalId, o.partition, o.offset]), [[1, 0, 10], [1, 1, 21], [2, 0, 30]]);
  assert.deepEqual((await offsets.fetchGroup('kafka', 'g1', 2)).map((o) => o.offset), [30]);
  assert.deepEqual(await offsets.listGroups('kafka'), ['g1']);
  await store.close();
});

test('offsets: delete for a group and for a topic', async () => {
  const offsets = new OffsetStore(memoryStore(), new ManualClock());
  await offsets.commit('kafka', 'a', [{ topicInternalId: 1, partition: 0, offset: 1 }, { topicInternalId: 2, partition: 0, offset: 2 }]);
  await offsets.commit('kafka', 'b', [{ topicInternalId: 1, partition: 0, offset: 3 }]);
  await offsets.commit('iggy', 'a', [{ topicInternalId: 1, partition: 0, offset: 4 }]);
  assert.equal(await offsets.deleteTopic(1), 3);
  assert.deepEqual((await offsets.fetchGroup('kafka', 'a')).map((o) => o.offset), [2]);
  assert.equal(await offsets.deleteGroup('kafka', 'a'), 1);
  assert.deepEqual(await offsets.listGroups('kafka'), []);
  assert.equal(await offsets.fetch('kafka', 'b', 1, 0), null);
});

test('offsets: bad commits are refused before anything is written', async () => {
  const offsets = new OffsetStore(memoryStore(), new ManualClock());
  const invalid = (err: unknown) => isQuartetError(err) && err.code === 'invalid_request';
  await assert.rejects(offsets.commit('kafka', 'g', [{ topicInternalId: 1, partition: 0, offset: 1 }, { topicInternalId: 1, partition: 1, offset: 2 ** 60 }]), invalid);
  await assert.rejects(offsets.commit('kafka', 'g', [{ topicInternalId: 1, partition: 0, offset: 1.5 }]), invalid);
  await assert.rejects(offsets.commit('kafka', 'g', [{ topicInternalId: 1, partition: 0, offset: 1, metadata: 'x'.repeat(5000) }]), invalid);
  await assert.rejects(offsets.commit('', 'g', []), invalid);
  assert.equal(await offsets.fetch('kafka', 'g', 1, 0), null);
  // A negative offset is stored as given (Kafka's -1/-2 markers; clients read them as none).
  await offsets.commit('kafka', 'g', [{ topicInternalId: 1, partition: 0, offset: -2 }]);
  assert.equal((await offsets.fetch('kafka', 'g', 1, 0))?.offset, -2);
});
