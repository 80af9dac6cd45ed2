import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiveGroupDirectory, type LiveGroupSource } from '../../../src/core/groups/directory.js';

const member = (memberId: string) => ({ memberId, clientId: null, clientHost: null, partitions: null });

test('members come from the source registered for the scope; none without one', () => {
  const directory = new LiveGroupDirectory();
  assert.deepEqual(directory.membersOf('kafka', 'g'), []);
  const source: LiveGroupSource = { membersOf: (id) => (id === 'g' ? [member('m1')] : null) };
  const unregister = directory.register('kafka', source);
  assert.deepEqual(directory.membersOf('kafka', 'g'), [member('m1')]);
  assert.deepEqual(directory.membersOf('kafka', 'other'), [], 'a group the coordinator does not know has no members');
  assert.deepEqual(directory.membersOf('iggy', 'g'), [], 'scopes are apart');
  assert.equal(directory.source('kafka'), source);
  unregister();
  assert.equal(directory.source('kafka'), null);
  assert.deepEqual(directory.membersOf('kafka', 'g'), []);
});

test('a stale unregister does not remove the source that replaced it (a listener restarted)', () => {
  const directory = new LiveGroupDirectory();
  const first = directory.register('iggy', { membersOf: () => [member('old')] });
  directory.register('iggy', { membersOf: () => [member('new')] });
  first();
  assert.deepEqual(directory.membersOf('iggy', 'g'), [member('new')]);
});
