import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/base/clock.js';
import { GroupStore } from '../../../src/core/groups/store.js';
import { SqliteMetadataStore } from '../../../src/core/metadata-store.js';
import { tempDir } from '../helpers.js';

test('groups: save, load, list, delete; opaque state survives a reopen', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock(42);
  let store = SqliteMetadataStore.openInDataDir(dir);
  let groups = new GroupStore(store, clock);
  const state = { generation: 3, protocol: 'range', members: [{ id: 'm-1', assignment: [0, 1] }], leader: null };
  await groups.save('kafka', 'orders-app', state);
  await groups.save('kafka', 'billing', { generation: 1 });
  await groups.save('iggy', 'orders-app', { members: 2 });
  await groups.save('kafka', 'billing', { generation: 2 });
  await store.close();

  store = SqliteMetadataStore.openInDataDir(dir);
  groups = new GroupStore(store, clock);
  assert.deepEqual(await groups.load('kafka', 'orders-app'), { scope: 'kafka', groupId: 'orders-app', state, updatedAt: 42 });
  assert.deepEqual((await groups.list('kafka')).map((g) => [g.groupId, g.state]), [['billing', { generation: 2 }], ['orders-app', state]]);
  assert.equal(await groups.delete('kafka', 'billing'), true);
  assert.equal(await groups.delete('kafka', 'billing'), false);
  assert.equal(await groups.load('kafka', 'billing'), null);
  assert.equal((await groups.list('iggy')).length, 1);
  await store.close();
});

test('groups: per-topic next group ids are kept per scope and dropped with their topic', async (t) => {
  const dir = tempDir(t);
  let store = SqliteMetadataStore.openInDataDir(dir);
  let groups = new GroupStore(store, new ManualClock(0));
  await groups.saveNextGroupId('iggy', 4, 1);
  await groups.saveNextGroupId('iggy', 4, 2);
  await groups.saveNextGroupId('iggy', 6, 9);
  await groups.saveNextGroupId('cursus', 4, 7);
  await store.close();

  store = SqliteMetadataStore.openInDataDir(dir);
  groups = new GroupStore(store, new ManualClock(0));
  assert.deepEqual([...(await groups.nextGroupIds('iggy'))], [[4, 2], [6, 9]]);
  assert.equal(await groups.deleteNextGroupId('iggy', 4), true);
  assert.equal(await groups.deleteNextGroupId('iggy', 4), false);
  assert.deepEqual([...(await groups.nextGroupIds('iggy'))], [[6, 9]]);
  assert.deepEqual([...(await groups.nextGroupIds('cursus'))], [[4, 7]]);
  await assert.rejects(groups.saveNextGroupId('iggy', 6, -1), /invalid next group id/);
  await store.close();
});
