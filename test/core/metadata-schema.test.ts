import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { metadataMigrations, metadataSchemaVersion } from '../../src/core/metadata-schema.js';
import { metadataDbPath, SqliteMetadataStore } from '../../src/core/metadata-store.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers.js';

/** A database as schema version `version` left it, with `seed` run over it. */
function oldLayout(dir: string, version: number, seed: (db: Database.Database) => void): void {
  mkdirSync(join(dir, 'meta'), { recursive: true });
  const db = new Database(metadataDbPath(dir));
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT');
  for (const m of metadataMigrations.filter((x) => x.version <= version)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, 0);
  }
  seed(db);
  db.close();
}

test('versions count up from 1 without gaps', () => {
  assert.deepEqual(metadataMigrations.map((m) => m.version), Array.from({ length: metadataSchemaVersion }, (_, i) => i + 1));
});

test('a version-2 store: Iggy topic options and group id counters move out of the group store at open', async (t) => {
  const dir = tempDir(t);
  const options = { explicit: ['message_expiry'], values: { message_expiry: '3600000000n', max_topic_size: '0n' } };
  oldLayout(dir, 2, (db) => {
    const put = db.prepare('INSERT INTO groups (scope, group_id, state, updated_at) VALUES (?, ?, ?, ?)');
    put.run('iggy.topic-options', '7', JSON.stringify(options), 11);
    put.run('iggy.topic-options', '9', JSON.stringify({ explicit: [], values: {} }), 12);
    put.run('iggy', '7/next', JSON.stringify({ topicInternalId: 7, nextGroupId: 3 }), 13);
    put.run('iggy', '9/next', JSON.stringify({ topicInternalId: 9, nextGroupId: 1 }), 14);
    put.run('iggy', '7/0', JSON.stringify({ topicInternalId: 7, id: 0, name: 'workers' }), 15);
    put.run('iggy', '7/2', JSON.stringify({ topicInternalId: 7, id: 2, name: 'auditors' }), 16);
    put.run('kafka', 'orders-app', JSON.stringify({ generationId: 4 }), 17);
  });

  const store = SqliteMetadataStore.openInDataDir(dir);
  assert.equal(store.schemaVersion(), metadataSchemaVersion);
  assert.deepEqual(await store.listTopicOptions('iggy'), [
    { protocol: 'iggy', topicInternalId: 7, options, updatedAt: 11 },
    { protocol: 'iggy', topicInternalId: 9, options: { explicit: [], values: {} }, updatedAt: 12 },
  ]);
  assert.deepEqual(await store.listGroupIdCounters('iggy'), [
    { scope: 'iggy', topicInternalId: 7, nextId: 3 },
    { scope: 'iggy', topicInternalId: 9, nextId: 1 },
  ]);
  // The groups themselves stay in the group store; the rows that moved are gone from it.
  assert.deepEqual((await store.listGroups('iggy')).map((g) => g.groupId), ['7/0', '7/2']);
  assert.deepEqual(await store.listGroups('iggy.topic-options'), []);
  assert.deepEqual((await store.listGroups('kafka')).map((g) => [g.groupId, g.state]), [['orders-app', { generationId: 4 }]]);
  await store.close();

  // Opening again migrates nothing twice.
  const again = SqliteMetadataStore.openInDataDir(dir);
  assert.equal((await again.listTopicOptions('iggy')).length, 2);
  assert.equal((await again.listGroupIdCounters('iggy')).length, 2);
  await again.close();
});

test('topic options and group id counters: put replaces, list by protocol, delete reports', async (t) => {
  const store = SqliteMetadataStore.openInDataDir(tempDir(t));
  await store.putTopicOptions({ protocol: 'iggy', topicInternalId: 2, options: { a: 1 }, updatedAt: 1 });
  await store.putTopicOptions({ protocol: 'iggy', topicInternalId: 2, options: { a: 2 }, updatedAt: 2 });
  await store.putTopicOptions({ protocol: 'felix', topicInternalId: 2, options: { b: 1 }, updatedAt: 3 });
  assert.deepEqual(await store.listTopicOptions('iggy'), [{ protocol: 'iggy', topicInternalId: 2, options: { a: 2 }, updatedAt: 2 }]);
  assert.equal(await store.deleteTopicOptions('iggy', 2), true);
  assert.equal(await store.deleteTopicOptions('iggy', 2), false);
  assert.equal((await store.listTopicOptions('felix')).length, 1);
  await store.putGroupIdCounter({ scope: 'iggy', topicInternalId: 4, nextId: 1 });
  await store.putGroupIdCounter({ scope: 'iggy', topicInternalId: 4, nextId: 5 });
  assert.deepEqual(await store.listGroupIdCounters('iggy'), [{ scope: 'iggy', topicInternalId: 4, nextId: 5 }]);
  assert.equal(await store.deleteGroupIdCounter('iggy', 4), true);
  assert.deepEqual(await store.listGroupIdCounters('iggy'), []);
  await store.close();
});
