import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError } from '../../src/base/errors.js';
import { SqliteMetadataStore } from '../../src/core/metadata-store.js';
import { TopicOptionsStore, topicOptionsBytesMax } from '../../src/core/topic-options.js';
import { tempDir } from './helpers.js';

test('topic options: saved per (protocol, topic), survive a reopen, deleted per topic', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock(5);
  let store = SqliteMetadataStore.openInDataDir(dir);
  let options = new TopicOptionsStore(store, clock);
  await options.save('iggy', 3, { explicit: ['segment_size'], values: { segment_size: '1048576n' } });
  await options.save('iggy', 1, { explicit: [] });
  await options.save('felix', 3, { visibility: 30 });
  await store.close();

  store = SqliteMetadataStore.openInDataDir(dir);
  options = new TopicOptionsStore(store, clock);
  assert.deepEqual(await options.list('iggy'), [
    { topicInternalId: 1, options: { explicit: [] }, updatedAt: 5 },
    { topicInternalId: 3, options: { explicit: ['segment_size'], values: { segment_size: '1048576n' } }, updatedAt: 5 },
  ]);
  assert.equal(await options.delete('iggy', 3), true);
  assert.deepEqual((await options.list('iggy')).map((o) => o.topicInternalId), [1]);
  assert.deepEqual((await options.list('felix')).map((o) => o.options), [{ visibility: 30 }]);
  await assert.rejects(options.save('iggy', 1, { big: 'x'.repeat(topicOptionsBytesMax) }), (err: unknown) => isQuartetError(err) && err.code === 'resource_exhausted');
  await assert.rejects(options.save('', 1, {}), (err: unknown) => isQuartetError(err) && err.code === 'invalid_request');
  await store.close();
});
