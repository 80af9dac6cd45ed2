// The metadata store's schema: the SQLite migrations, in order. Plain SQL, no database handle,
// so that a test can build a store as an older release left it (metadata-store.ts applies them).

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Append-only: a released migration never changes; a schema change is a new entry. Each one runs
 * in a transaction together with its row in schema_migrations.
 */
export const metadataMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
      CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;
      CREATE TABLE namespaces (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL) STRICT;
      CREATE TABLE topics (
        internal_id INTEGER PRIMARY KEY,
        namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
        id INTEGER NOT NULL, name TEXT NOT NULL, uuid BLOB NOT NULL,
        partitions INTEGER NOT NULL, config TEXT NOT NULL, created_at INTEGER NOT NULL,
        UNIQUE (namespace_id, id), UNIQUE (namespace_id, name)) STRICT;
      CREATE TABLE users (
        id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE, status TEXT NOT NULL,
        password_hash TEXT NOT NULL, scram TEXT NOT NULL, permissions TEXT NOT NULL,
        created_at INTEGER NOT NULL) STRICT;
      CREATE TABLE tokens (
        token_hash TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name TEXT NOT NULL, expires_at INTEGER, created_at INTEGER NOT NULL,
        UNIQUE (user_id, name)) STRICT;
      CREATE TABLE offsets (
        scope TEXT NOT NULL, group_id TEXT NOT NULL, topic_internal_id INTEGER NOT NULL,
        partition INTEGER NOT NULL, offset INTEGER NOT NULL, leader_epoch INTEGER NOT NULL,
        metadata TEXT NOT NULL, commit_time INTEGER NOT NULL,
        PRIMARY KEY (scope, group_id, topic_internal_id, partition)) STRICT;
      CREATE INDEX offsets_by_topic ON offsets (topic_internal_id);
      CREATE TABLE groups (
        scope TEXT NOT NULL, group_id TEXT NOT NULL, state TEXT NOT NULL, updated_at INTEGER NOT NULL,
        PRIMARY KEY (scope, group_id)) STRICT;
      CREATE TABLE producer_snapshots (
        partition_key TEXT PRIMARY KEY, next_offset INTEGER NOT NULL, entries TEXT NOT NULL,
        taken_at INTEGER NOT NULL) STRICT;
    `,
  },
  {
    version: 2,
    name: 'transactions',
    sql: `
      CREATE TABLE transactions (
        scope TEXT NOT NULL, transactional_id TEXT NOT NULL, state TEXT NOT NULL, updated_at INTEGER NOT NULL,
        PRIMARY KEY (scope, transactional_id)) STRICT;
      CREATE TABLE txn_checkpoints (
        partition_key TEXT PRIMARY KEY, next_offset INTEGER NOT NULL, state TEXT NOT NULL,
        taken_at INTEGER NOT NULL) STRICT;
    `,
  },
  {
    // Per-topic protocol options (Iggy's today) and per-topic group id counters (Iggy's consumer
    // group ids) had ridden the group store as scope 'iggy.topic-options' and keys
    // '<topic internal id>/next' of scope 'iggy'; their rows move to tables of their own.
    version: 3,
    name: 'topic options and group id counters',
    sql: `
      CREATE TABLE topic_options (
        protocol TEXT NOT NULL, topic_internal_id INTEGER NOT NULL, options TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (protocol, topic_internal_id)) STRICT;
      INSERT INTO topic_options (protocol, topic_internal_id, options, updated_at)
        SELECT 'iggy', CAST(group_id AS INTEGER), state, updated_at FROM groups
        WHERE scope = 'iggy.topic-options' AND group_id <> '' AND group_id NOT GLOB '*[^0-9]*';
      DELETE FROM groups WHERE scope = 'iggy.topic-options';
      CREATE TABLE group_id_counters (
        scope TEXT NOT NULL, topic_internal_id INTEGER NOT NULL, next_id INTEGER NOT NULL,
        PRIMARY KEY (scope, topic_internal_id)) STRICT;
      INSERT INTO group_id_counters (scope, topic_internal_id, next_id)
        SELECT 'iggy', json_extract(state, '$.topicInternalId'), json_extract(state, '$.nextGroupId') FROM groups
        WHERE scope = 'iggy' AND json_type(state, '$.topicInternalId') = 'integer' AND json_type(state, '$.nextGroupId') = 'integer'
        ON CONFLICT (scope, topic_internal_id) DO UPDATE SET next_id = max(next_id, excluded.next_id);
      DELETE FROM groups WHERE scope = 'iggy' AND json_type(state, '$.nextGroupId') IS NOT NULL;
    `,
  },
  {
    // Producers a protocol names by strings (Cursus producerId) and the core producer each maps to
    // (producer-names.ts).
    version: 4,
    name: 'producer names',
    sql: `
      CREATE TABLE producer_names (
        scope TEXT NOT NULL, name TEXT NOT NULL, producer_id INTEGER NOT NULL,
        producer_epoch INTEGER NOT NULL, epoch INTEGER NOT NULL, used_at INTEGER NOT NULL,
        PRIMARY KEY (scope, name)) STRICT;
      CREATE INDEX producer_names_by_use ON producer_names (used_at);
    `,
  },
  {
    // Snapshots of event-sourced aggregates (event-streams.ts): one per (topic, partition, key).
    version: 5,
    name: 'event snapshots',
    sql: `
      CREATE TABLE event_snapshots (
        topic_internal_id INTEGER NOT NULL, partition INTEGER NOT NULL, stream_key BLOB NOT NULL,
        version INTEGER NOT NULL, payload BLOB NOT NULL, updated_at INTEGER NOT NULL,
        PRIMARY KEY (topic_internal_id, partition, stream_key)) STRICT;
    `,
  },
  {
    // Client quotas (client-quotas.ts): one row per quota entity, its values as JSON.
    version: 6,
    name: 'client quotas',
    sql: `
      CREATE TABLE client_quotas (entity TEXT PRIMARY KEY, quotas TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;
    `,
  },
];

export const metadataSchemaVersion = metadataMigrations[metadataMigrations.length - 1]!.version;
