import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { metadataDbPath, metadataSchemaVersion, SqliteMetadataStore } from '../../src/core/metadata-store.js';
import { isQuartetError } from '../../src/base/errors.js';
import { tempDir } from './helpers.js';

test('the store lives at <dataDir>/meta/quartet.db in WAL mode with a versioned schema', async (t) => {
  const dir = tempDir(t);
  const store = SqliteMetadataStore.openInDataDir(dir);
  assert.ok(existsSync(metadataDbPath(dir)));
  assert.equal(store.schemaVersion(), metadataSchemaVersion);
  await store.close();
  const db = new Database(metadataDbPath(dir), { readonly: true });
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as Array<{ version: number; name: string }>;
  assert.deepEqual(rows.map((r) => r.version), Array.from({ length: metadataSchemaVersion }, (_, i) => i + 1));
  db.close();
  // Reopening does not re-run migrations.
  const again = SqliteMetadataStore.openInDataDir(dir);
  assert.equal(again.schemaVersion(), metadataSchemaVersion);
  await again.close();
});

test('a database from a newer schema is refused', async (t) => {
  const dir = tempDir(t);
  const store = SqliteMetadataStore.openInDataDir(dir);
  await store.close();
  const db = new Database(metadataDbPath(dir));
  db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(metadataSchemaVersion + 1, 'future', 0);
  db.close();
  assert.throws(() => SqliteMetadataStore.openInDataDir(dir), (err: unknown) => isQuartetError(err) && err.code === 'storage_error' && /newer/.test(err.message));
});

test('counters advance durably and start where asked', async (t) => {
  const dir = tempDir(t);
  const store = SqliteMetadataStore.openInDataDir(dir);
  assert.equal(await store.peekId('x', 5), 5);
  assert.equal(await store.nextId('x', 5), 5);
  assert.equal(await store.nextId('x', 5), 6);
  assert.equal(await store.nextId('y'), 0);
  await store.close();
  const reopened = SqliteMetadataStore.openInDataDir(dir);
  assert.equal(await reopened.nextId('x', 5), 7);
  await reopened.close();
});

test('records round-trip; commitOffsets is atomic', async () => {
  const store = SqliteMetadataStore.open({ path: ':memory:' });
  await store.putNamespace({ id: 0, name: 'default', createdAt: 1 });
  const uuid = Buffer.alloc(16, 7);
  await store.putTopic({ internalId: 1, namespaceId: 0, id: 0, name: 't', uuid, partitions: 2, config: { 'retention.ms': 5 }, createdAt: 2 });
  assert.deepEqual(await store.listTopics(), [{ internalId: 1, namespaceId: 0, id: 0, name: 't', uuid, partitions: 2, config: { 'retention.ms': 5 }, createdAt: 2 }]);
  const good = { scope: 'kafka', group: 'g', topicInternalId: 1, partition: 0, offset: 10, leaderEpoch: -1, metadata: '', commitTime: 3 };
  await store.commitOffsets([good]);
  // The second record violates NOT NULL: the whole commit must roll back, including the first.
  const bad = [{ ...good, offset: 11 }, { ...good, partition: 1, metadata: null as unknown as string }];
  await assert.rejects(store.commitOffsets(bad), (err: unknown) => isQuartetError(err) && err.code === 'storage_error');
  assert.equal((await store.fetchOffset('kafka', 'g', 1, 0))?.offset, 10);
  assert.equal(await store.fetchOffset('kafka', 'g', 1, 1), null);
  await store.close();
  await assert.rejects(store.listTopics(), (err: unknown) => isQuartetError(err) && err.code === 'shutting_down');
});
