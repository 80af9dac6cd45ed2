// The metadata store: everything the broker must remember that is not a partition log (catalog,
// committed offsets, group state and group id counters, per-topic protocol options,
// producer-state snapshots and producer names, transaction state and the partitions' transaction-index checkpoints,
// users, tokens, id counters). The schema and its migrations: metadata-schema.ts.
//
// The interface is deliberately narrow and speaks only in plain records, so that a distributed
// store (etcd, later) can implement it. Every method returns a Promise even though the embedded
// SQLite implementation is synchronous underneath: a networked store cannot be synchronous, and
// nothing on the append hot path calls the store (the catalog, users and producer state are
// served from memory; only their mutations and snapshots come here).
//
// Each method is atomic on its own. Methods that take arrays (commitOffsets,
// putProducerSnapshots, putTxnCheckpoints) apply the whole array in one transaction.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { QuartetError } from '../base/errors.js';
import { metadataMigrations as migrations, metadataSchemaVersion } from './metadata-schema.js';

export { metadataSchemaVersion };

// ---------------------------------------------------------------------------------------------
// Records

export interface NamespaceRecord {
  /** u32, unique. */
  id: number;
  name: string;
  createdAt: number;
}

export interface TopicRecord {
  /** Stable, never reused; names the topic's directory under <dataDir>/logs/. */
  internalId: number;
  namespaceId: number;
  /** u32, unique within the namespace. */
  id: number;
  name: string;
  /** 16 bytes (Kafka topic id). */
  uuid: Buffer;
  partitions: number;
  /** The explicitly set topic configuration values (see topic-config.ts). */
  config: Record<string, string | number>;
  createdAt: number;
}

export interface UserRecord {
  /** u32, unique; 0 is the root user. */
  id: number;
  username: string;
  status: 'active' | 'inactive';
  /** `scrypt$N$r$p$<salt b64>$<hash b64>` */
  passwordHash: string;
  /** SCRAM credentials per mechanism; JSON-able. */
  scram: unknown;
  /** Opaque, JSON-able: each protocol keeps its own shape. */
  permissions: unknown;
  createdAt: number;
}

export interface TokenRecord {
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  tokenHash: string;
  userId: number;
  name: string;
  /** ms since the epoch; null = never expires. */
  expiresAt: number | null;
  createdAt: number;
}

export interface OffsetRecord {
  /** The protocol scope, e.g. 'kafka' or 'iggy': groups of different protocols never collide. */
  scope: string;
  group: string;
  topicInternalId: number;
  partition: number;
  offset: number;
  /** Kafka's committed leader epoch; -1 when unknown. */
  leaderEpoch: number;
  metadata: string;
  commitTime: number;
}

export interface GroupRecord {
  scope: string;
  groupId: string;
  /** Opaque JSON-able state owned by the protocol's coordinator. */
  state: unknown;
  updatedAt: number;
}

/** A client quota entity's values (client-quotas.ts); `entity` is its canonical key. */
export interface ClientQuotaRecord {
  entity: string;
  quotas: Record<string, number>;
  updatedAt: number;
}

export interface TopicOptionsRecord {
  /** The protocol whose options these are ('iggy'): what it was told that the core config does not hold. */
  protocol: string;
  topicInternalId: number;
  /** Opaque JSON-able options, shaped by the protocol. */
  options: unknown;
  updatedAt: number;
}

export interface GroupIdCounterRecord {
  /** The protocol scope whose groups are numbered per topic ('iggy'). */
  scope: string;
  topicInternalId: number;
  /** The id the topic's next group gets: ids are never given twice. */
  nextId: number;
}

export interface ProducerSnapshotRecord {
  /** `<topic internal id>:<partition>`. */
  partitionKey: string;
  /** The log end offset the snapshot covers: replay starts here. */
  nextOffset: number;
  /** JSON-able producer entries. */
  entries: unknown;
  takenAt: number;
}

export interface ProducerNameRecord {
  /** The protocol scope ('cursus'): names of different protocols never collide. */
  scope: string;
  name: string;
  /** The core producer (producer-state.ts) the name maps to, and its epoch. */
  producerId: number;
  producerEpoch: number;
  /** The protocol's own epoch that maps to producerEpoch. */
  epoch: number;
  usedAt: number;
}

export interface TransactionRecord {
  /** The protocol scope ('kafka', 'cursus'): transactional ids of different protocols never collide. */
  scope: string;
  transactionalId: string;
  /** Opaque JSON-able state owned by the transaction coordinator (transactions.ts). */
  state: unknown;
  updatedAt: number;
}

export interface TxnCheckpointRecord {
  /** `<topic internal id>:<partition>`. */
  partitionKey: string;
  /** The log end offset the checkpoint covers: the rebuild scan starts here. */
  nextOffset: number;
  /** JSON-able open and aborted transactions of the partition (txn-index.ts). */
  state: unknown;
  takenAt: number;
}

// ---------------------------------------------------------------------------------------------
// The interface

/** The snapshot of one event-sourced aggregate (event-streams.ts). */
export interface EventSnapshotRecord {
  topicInternalId: number;
  partition: number;
  key: Buffer;
  version: number;
  payload: Buffer;
  updatedAt: number;
}

export interface MetadataStore {
  /** Returns the counter's next value and advances it (first value: `start`, default 0). */
  nextId(counter: string, start?: number): Promise<number>;
  /** The value nextId would return, without advancing. */
  peekId(counter: string, start?: number): Promise<number>;

  listNamespaces(): Promise<NamespaceRecord[]>;
  putNamespace(record: NamespaceRecord): Promise<void>;
  /** Also deletes the namespace's topics, in the same transaction. */
  deleteNamespace(id: number): Promise<void>;

  listTopics(): Promise<TopicRecord[]>;
  putTopic(record: TopicRecord): Promise<void>;
  deleteTopic(internalId: number): Promise<void>;

  listUsers(): Promise<UserRecord[]>;
  putUser(record: UserRecord): Promise<void>;
  /** Also deletes the user's tokens. */
  deleteUser(id: number): Promise<void>;
  listTokens(): Promise<TokenRecord[]>;
  putToken(record: TokenRecord): Promise<void>;
  deleteToken(tokenHash: string): Promise<void>;

  /** All records in one transaction; an existing (scope, group, topic, partition) is replaced. */
  commitOffsets(records: readonly OffsetRecord[]): Promise<void>;
  fetchOffset(scope: string, group: string, topicInternalId: number, partition: number): Promise<OffsetRecord | null>;
  listGroupOffsets(scope: string, group: string): Promise<OffsetRecord[]>;
  /** The topics a group has committed offsets for (internal ids, ascending). */
  listGroupOffsetTopics(scope: string, group: string): Promise<number[]>;
  listOffsetGroups(scope: string): Promise<string[]>;
  /** Returns the number of offsets deleted. */
  deleteGroupOffsets(scope: string, group: string): Promise<number>;
  /** Deletes these partitions' offsets of one group, in one transaction; returns how many. */
  deleteGroupPartitionOffsets(scope: string, group: string, partitions: ReadonlyArray<{ topicInternalId: number; partition: number }>): Promise<number>;
  deleteTopicOffsets(topicInternalId: number): Promise<number>;
  /** Deletes every scope's offsets of the topic's partitions >= fromPartition; returns how many. */
  deletePartitionOffsets(topicInternalId: number, fromPartition: number): Promise<number>;

  putGroup(record: GroupRecord): Promise<void>;
  getGroup(scope: string, groupId: string): Promise<GroupRecord | null>;
  listGroups(scope: string): Promise<GroupRecord[]>;
  deleteGroup(scope: string, groupId: string): Promise<boolean>;

  /** Client quotas: one row per entity, replaced whole; deleted when it holds no value. */
  listClientQuotas(): Promise<ClientQuotaRecord[]>;
  putClientQuota(record: ClientQuotaRecord): Promise<void>;
  deleteClientQuota(entity: string): Promise<boolean>;

  /** Replaces the (protocol, topic) options. */
  putTopicOptions(record: TopicOptionsRecord): Promise<void>;
  listTopicOptions(protocol: string): Promise<TopicOptionsRecord[]>;
  deleteTopicOptions(protocol: string, topicInternalId: number): Promise<boolean>;

  /** Sets the (scope, topic) counter. */
  putGroupIdCounter(record: GroupIdCounterRecord): Promise<void>;
  listGroupIdCounters(scope: string): Promise<GroupIdCounterRecord[]>;
  deleteGroupIdCounter(scope: string, topicInternalId: number): Promise<boolean>;

  /** All records in one transaction. */
  putProducerSnapshots(records: readonly ProducerSnapshotRecord[]): Promise<void>;
  listProducerSnapshots(): Promise<ProducerSnapshotRecord[]>;
  deleteProducerSnapshots(partitionKeys: readonly string[]): Promise<void>;

  /** Producers named by strings (producer-names.ts): one row per (scope, name), replaced whole. */
  getProducerName(scope: string, name: string): Promise<ProducerNameRecord | null>;
  putProducerName(record: ProducerNameRecord): Promise<void>;
  /** Deletes the names last used before `usedBefore`; returns how many went. */
  deleteProducerNamesUsedBefore(usedBefore: number): Promise<number>;

  /** Replaces the transactional id's record. */
  putTransaction(record: TransactionRecord): Promise<void>;
  listTransactions(): Promise<TransactionRecord[]>;
  deleteTransaction(scope: string, transactionalId: string): Promise<boolean>;

  /** All records in one transaction. */
  putTxnCheckpoints(records: readonly TxnCheckpointRecord[]): Promise<void>;
  listTxnCheckpoints(): Promise<TxnCheckpointRecord[]>;
  deleteTxnCheckpoints(partitionKeys: readonly string[]): Promise<void>;

  // Event-sourcing snapshots, one per (topic, partition, aggregate key).
  putEventSnapshot(record: EventSnapshotRecord): Promise<void>;
  getEventSnapshot(topicInternalId: number, partition: number, key: Buffer): Promise<EventSnapshotRecord | null>;
  /** Every snapshot of the topic (a deleted or emptied topic); returns how many were removed. */
  deleteTopicEventSnapshots(topicInternalId: number): Promise<number>;

  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// SQLite implementation

/** Where the embedded store lives, relative to the data directory. */
export function metadataDbPath(dataDir: string): string {
  return join(dataDir, 'meta', 'quartet.db');
}


export interface SqliteMetadataStoreOptions {
  /** A file path, or ':memory:' (tests). */
  path: string;
}

type Row = Record<string, unknown>;

/** Embedded store over better-sqlite3: WAL journal, synchronous=FULL, versioned schema. */
export class SqliteMetadataStore implements MetadataStore {
  private readonly db: Database.Database;
  private readonly stmts: ReturnType<typeof prepareStatements>;
  private readonly tx: ReturnType<typeof prepareTransactions>;
  private closed = false;

  private constructor(db: Database.Database) {
    this.db = db;
    this.stmts = prepareStatements(db);
    this.tx = prepareTransactions(db, this.stmts);
  }

  /** Opens (creating if needed) `<dataDir>/meta/quartet.db`. */
  static openInDataDir(dataDir: string): SqliteMetadataStore {
    mkdirSync(join(dataDir, 'meta'), { recursive: true });
    return SqliteMetadataStore.open({ path: metadataDbPath(dataDir) });
  }

  static open(options: SqliteMetadataStoreOptions): SqliteMetadataStore {
    let db: Database.Database;
    try {
      db = new Database(options.path);
      // WAL lets readers run beside the writer; FULL makes every commit durable on return
      // (NORMAL could lose the last commits on power loss, and offsets must not go back).
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      db.pragma('busy_timeout = 5000');
      migrate(db);
    } catch (err) {
      throw new QuartetError('storage_error', `cannot open metadata store ${options.path}: ${(err as Error).message}`, err);
    }
    return new SqliteMetadataStore(db);
  }

  /** The highest applied migration (tests, diagnostics). */
  schemaVersion(): number {
    return currentVersion(this.db);
  }

  // --- counters -------------------------------------------------------------------------------

  nextId(counter: string, start = 0): Promise<number> {
    return this.run(() => this.tx.nextId(counter, start));
  }

  peekId(counter: string, start = 0): Promise<number> {
    return this.run(() => {
      const row = this.stmts.getCounter.get(counter) as Row | undefined;
      return row ? Number(row.value) : start;
    });
  }

  // --- namespaces -----------------------------------------------------------------------------

  listNamespaces(): Promise<NamespaceRecord[]> {
    return this.run(() =>
      (this.stmts.listNamespaces.all() as Row[]).map((r) => ({ id: Number(r.id), name: String(r.name), createdAt: Number(r.created_at) })),
    );
  }

  putNamespace(record: NamespaceRecord): Promise<void> {
    return this.run(() => void this.stmts.putNamespace.run(record.id, record.name, record.createdAt));
  }

  deleteNamespace(id: number): Promise<void> {
    return this.run(() => this.tx.deleteNamespace(id));
  }

  // --- topics ---------------------------------------------------------------------------------

  listTopics(): Promise<TopicRecord[]> {
    return this.run(() => (this.stmts.listTopics.all() as Row[]).map(topicFromRow));
  }

  putTopic(record: TopicRecord): Promise<void> {
    return this.run(
      () =>
        void this.stmts.putTopic.run(
          record.internalId,
          record.namespaceId,
          record.id,
          record.name,
          record.uuid,
          record.partitions,
          JSON.stringify(record.config),
          record.createdAt,
        ),
    );
  }

  deleteTopic(internalId: number): Promise<void> {
    return this.run(() => void this.stmts.deleteTopic.run(internalId));
  }

  // --- users and tokens -----------------------------------------------------------------------

  listUsers(): Promise<UserRecord[]> {
    return this.run(() => (this.stmts.listUsers.all() as Row[]).map(userFromRow));
  }

  putUser(record: UserRecord): Promise<void> {
    return this.run(
      () =>
        void this.stmts.putUser.run(
          record.id,
          record.username,
          record.status,
          record.passwordHash,
          JSON.stringify(record.scram),
          JSON.stringify(record.permissions ?? null),
          record.createdAt,
        ),
    );
  }

  deleteUser(id: number): Promise<void> {
    return this.run(() => void this.stmts.deleteUser.run(id));
  }

  listTokens(): Promise<TokenRecord[]> {
    return this.run(() =>
      (this.stmts.listTokens.all() as Row[]).map((r) => ({
        tokenHash: String(r.token_hash),
        userId: Number(r.user_id),
        name: String(r.name),
        expiresAt: r.expires_at === null ? null : Number(r.expires_at),
        createdAt: Number(r.created_at),
      })),
    );
  }

  putToken(record: TokenRecord): Promise<void> {
    return this.run(() => void this.stmts.putToken.run(record.tokenHash, record.userId, record.name, record.expiresAt, record.createdAt));
  }

  deleteToken(tokenHash: string): Promise<void> {
    return this.run(() => void this.stmts.deleteToken.run(tokenHash));
  }

  // --- offsets --------------------------------------------------------------------------------

  commitOffsets(records: readonly OffsetRecord[]): Promise<void> {
    return this.run(() => this.tx.commitOffsets(records));
  }

  fetchOffset(scope: string, group: string, topicInternalId: number, partition: number): Promise<OffsetRecord | null> {
    return this.run(() => {
      const row = this.stmts.getOffset.get(scope, group, topicInternalId, partition) as Row | undefined;
      return row ? offsetFromRow(row) : null;
    });
  }

  listGroupOffsets(scope: string, group: string): Promise<OffsetRecord[]> {
    return this.run(() => (this.stmts.listGroupOffsets.all(scope, group) as Row[]).map(offsetFromRow));
  }

  listGroupOffsetTopics(scope: string, group: string): Promise<number[]> {
    return this.run(() => (this.stmts.listGroupOffsetTopics.all(scope, group) as Row[]).map((r) => Number(r.topic_internal_id)));
  }

  listOffsetGroups(scope: string): Promise<string[]> {
    return this.run(() => (this.stmts.listOffsetGroups.all(scope) as Row[]).map((r) => String(r.group_id)));
  }

  deleteGroupOffsets(scope: string, group: string): Promise<number> {
    return this.run(() => this.stmts.deleteGroupOffsets.run(scope, group).changes);
  }

  deleteGroupPartitionOffsets(scope: string, group: string, partitions: ReadonlyArray<{ topicInternalId: number; partition: number }>): Promise<number> {
    return this.run(() => this.tx.deleteGroupPartitionOffsets(scope, group, partitions));
  }

  deleteTopicOffsets(topicInternalId: number): Promise<number> {
    return this.run(() => this.stmts.deleteTopicOffsets.run(topicInternalId).changes);
  }

  deletePartitionOffsets(topicInternalId: number, fromPartition: number): Promise<number> {
    return this.run(() => this.stmts.deletePartitionOffsets.run(topicInternalId, fromPartition).changes);
  }

  // --- groups ---------------------------------------------------------------------------------

  putGroup(record: GroupRecord): Promise<void> {
    return this.run(() => void this.stmts.putGroup.run(record.scope, record.groupId, JSON.stringify(record.state ?? null), record.updatedAt));
  }

  getGroup(scope: string, groupId: string): Promise<GroupRecord | null> {
    return this.run(() => {
      const row = this.stmts.getGroup.get(scope, groupId) as Row | undefined;
      return row ? groupFromRow(row) : null;
    });
  }

  listGroups(scope: string): Promise<GroupRecord[]> {
    return this.run(() => (this.stmts.listGroups.all(scope) as Row[]).map(groupFromRow));
  }

  deleteGroup(scope: string, groupId: string): Promise<boolean> {
    return this.run(() => this.stmts.deleteGroup.run(scope, groupId).changes > 0);
  }

  // --- per-topic protocol options and group id counters --------------------------------------

  listClientQuotas(): Promise<ClientQuotaRecord[]> {
    return this.run(() =>
      (this.stmts.listClientQuotas.all() as Row[]).map((r) => ({ entity: String(r.entity), quotas: JSON.parse(String(r.quotas)) as Record<string, number>, updatedAt: Number(r.updated_at) })),
    );
  }

  putClientQuota(record: ClientQuotaRecord): Promise<void> {
    return this.run(() => void this.stmts.putClientQuota.run(record.entity, JSON.stringify(record.quotas), record.updatedAt));
  }

  deleteClientQuota(entity: string): Promise<boolean> {
    return this.run(() => this.stmts.deleteClientQuota.run(entity).changes > 0);
  }

  putTopicOptions(record: TopicOptionsRecord): Promise<void> {
    return this.run(
      () => void this.stmts.putTopicOptions.run(record.protocol, record.topicInternalId, JSON.stringify(record.options ?? null), record.updatedAt),
    );
  }

  listTopicOptions(protocol: string): Promise<TopicOptionsRecord[]> {
    return this.run(() =>
      (this.stmts.listTopicOptions.all(protocol) as Row[]).map((r) => ({
        protocol: String(r.protocol),
        topicInternalId: Number(r.topic_internal_id),
        options: JSON.parse(String(r.options)) as unknown,
        updatedAt: Number(r.updated_at),
      })),
    );
  }

  deleteTopicOptions(protocol: string, topicInternalId: number): Promise<boolean> {
    return this.run(() => this.stmts.deleteTopicOptions.run(protocol, topicInternalId).changes > 0);
  }

  putGroupIdCounter(record: GroupIdCounterRecord): Promise<void> {
    return this.run(() => void this.stmts.putGroupIdCounter.run(record.scope, record.topicInternalId, record.nextId));
  }

  listGroupIdCounters(scope: string): Promise<GroupIdCounterRecord[]> {
    return this.run(() =>
      (this.stmts.listGroupIdCounters.all(scope) as Row[]).map((r) => ({ scope: String(r.scope), topicInternalId: Number(r.topic_internal_id), nextId: Number(r.next_id) })),
    );
  }

  deleteGroupIdCounter(scope: string, topicInternalId: number): Promise<boolean> {
    return this.run(() => this.stmts.deleteGroupIdCounter.run(scope, topicInternalId).changes > 0);
  }

  // --- event-sourcing snapshots ---------------------------------------------------------------

  putEventSnapshot(record: EventSnapshotRecord): Promise<void> {
    return this.run(() => void this.stmts.putEventSnapshot.run(record.topicInternalId, record.partition, record.key, record.version, record.payload, record.updatedAt));
  }

  getEventSnapshot(topicInternalId: number, partition: number, key: Buffer): Promise<EventSnapshotRecord | null> {
    return this.run(() => {
      const r = this.stmts.getEventSnapshot.get(topicInternalId, partition, key) as Row | undefined;
      if (!r) return null;
      return {
        topicInternalId: Number(r.topic_internal_id),
        partition: Number(r.partition),
        key: Buffer.from(r.stream_key as Uint8Array),
        version: Number(r.version),
        payload: Buffer.from(r.payload as Uint8Array),
        updatedAt: Number(r.updated_at),
      };
    });
  }

  deleteTopicEventSnapshots(topicInternalId: number): Promise<number> {
    return this.run(() => this.stmts.deleteTopicEventSnapshots.run(topicInternalId).changes);
  }

  // --- producer snapshots ---------------------------------------------------------------------

  putProducerSnapshots(records: readonly ProducerSnapshotRecord[]): Promise<void> {
    return this.run(() => this.tx.putSnapshots(records));
  }

  listProducerSnapshots(): Promise<ProducerSnapshotRecord[]> {
    return this.run(() =>
      (this.stmts.listSnapshots.all() as Row[]).map((r) => ({
        partitionKey: String(r.partition_key),
        nextOffset: Number(r.next_offset),
        entries: JSON.parse(String(r.entries)) as unknown,
        takenAt: Number(r.taken_at),
      })),
    );
  }

  deleteProducerSnapshots(partitionKeys: readonly string[]): Promise<void> {
    return this.run(() => this.tx.deleteSnapshots(partitionKeys));
  }

  // --- producer names -------------------------------------------------------------------------

  getProducerName(scope: string, name: string): Promise<ProducerNameRecord | null> {
    return this.run(() => {
      const r = this.stmts.getProducerName.get(scope, name) as Row | undefined;
      if (r === undefined) return null;
      return {
        scope: String(r.scope),
        name: String(r.name),
        producerId: Number(r.producer_id),
        producerEpoch: Number(r.producer_epoch),
        epoch: Number(r.epoch),
        usedAt: Number(r.used_at),
      };
    });
  }

  putProducerName(r: ProducerNameRecord): Promise<void> {
    return this.run(() => void this.stmts.putProducerName.run(r.scope, r.name, r.producerId, r.producerEpoch, r.epoch, r.usedAt));
  }

  deleteProducerNamesUsedBefore(usedBefore: number): Promise<number> {
    return this.run(() => this.stmts.deleteProducerNamesUsedBefore.run(usedBefore).changes);
  }

  // --- transactions ---------------------------------------------------------------------------

  putTransaction(record: TransactionRecord): Promise<void> {
    return this.run(() => void this.stmts.putTransaction.run(record.scope, record.transactionalId, JSON.stringify(record.state ?? null), record.updatedAt));
  }

  listTransactions(): Promise<TransactionRecord[]> {
    return this.run(() =>
      (this.stmts.listTransactions.all() as Row[]).map((r) => ({
        scope: String(r.scope),
        transactionalId: String(r.transactional_id),
        state: JSON.parse(String(r.state)) as unknown,
        updatedAt: Number(r.updated_at),
      })),
    );
  }

  deleteTransaction(scope: string, transactionalId: string): Promise<boolean> {
    return this.run(() => this.stmts.deleteTransaction.run(scope, transactionalId).changes > 0);
  }

  putTxnCheckpoints(records: readonly TxnCheckpointRecord[]): Promise<void> {
    return this.run(() => this.tx.putTxnCheckpoints(records));
  }

  listTxnCheckpoints(): Promise<TxnCheckpointRecord[]> {
    return this.run(() =>
      (this.stmts.listTxnCheckpoints.all() as Row[]).map((r) => ({
        partitionKey: String(r.partition_key),
        nextOffset: Number(r.next_offset),
        state: JSON.parse(String(r.state)) as unknown,
        takenAt: Number(r.taken_at),
      })),
    );
  }

  deleteTxnCheckpoints(partitionKeys: readonly string[]): Promise<void> {
    return this.run(() => this.tx.deleteTxnCheckpoints(partitionKeys));
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    try {
      this.db.close();
    } catch (err) {
      return Promise.reject(new QuartetError('storage_error', `closing the metadata store: ${(err as Error).message}`, err));
    }
    return Promise.resolve();
  }

  /** Runs a synchronous statement, mapping SQLite failures to storage_error. */
  private run<T>(work: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new QuartetError('shutting_down', 'the metadata store is closed'));
    try {
      return Promise.resolve(work());
    } catch (err) {
      return Promise.reject(new QuartetError('storage_error', `metadata store: ${(err as Error).message}`, err));
    }
  }
}

function prepareStatements(db: Database.Database) {
  return {
    getCounter: db.prepare('SELECT value FROM counters WHERE name = ?'),
    putCounter: db.prepare('INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
    listNamespaces: db.prepare('SELECT id, name, created_at FROM namespaces ORDER BY id'),
    putNamespace: db.prepare(
      'INSERT INTO namespaces (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name',
    ),
    deleteNamespace: db.prepare('DELETE FROM namespaces WHERE id = ?'),
    deleteNamespaceTopics: db.prepare('DELETE FROM topics WHERE namespace_id = ?'),
    listTopics: db.prepare('SELECT * FROM topics ORDER BY internal_id'),
    putTopic: db.prepare(
      `INSERT INTO topics (internal_id, namespace_id, id, name, uuid, partitions, config, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (internal_id) DO UPDATE SET name = excluded.name, partitions = excluded.partitions, config = excluded.config`,
    ),
    deleteTopic: db.prepare('DELETE FROM topics WHERE internal_id = ?'),
    listUsers: db.prepare('SELECT * FROM users ORDER BY id'),
    putUser: db.prepare(
      `INSERT INTO users (id, username, status, password_hash, scram, permissions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET username = excluded.username, status = excluded.status,
         password_hash = excluded.password_hash, scram = excluded.scram, permissions = excluded.permissions`,
    ),
    deleteUser: db.prepare('DELETE FROM users WHERE id = ?'),
    listTokens: db.prepare('SELECT * FROM tokens ORDER BY user_id, name'),
    putToken: db.prepare('INSERT OR REPLACE INTO tokens (token_hash, user_id, name, expires_at, created_at) VALUES (?, ?, ?, ?, ?)'),
    deleteToken: db.prepare('DELETE FROM tokens WHERE token_hash = ?'),
    putOffset: db.prepare(
      `INSERT INTO offsets (scope, group_id, topic_internal_id, partition, offset, leader_epoch, metadata, commit_time)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope, group_id, topic_internal_id, partition) DO UPDATE SET offset = excluded.offset,
         leader_epoch = excluded.leader_epoch, metadata = excluded.metadata, commit_time = excluded.commit_time`,
    ),
    getOffset: db.prepare('SELECT * FROM offsets WHERE scope = ? AND group_id = ? AND topic_internal_id = ? AND partition = ?'),
    deleteOffset: db.prepare('DELETE FROM offsets WHERE scope = ? AND group_id = ? AND topic_internal_id = ? AND partition = ?'),
    listGroupOffsets: db.prepare('SELECT * FROM offsets WHERE scope = ? AND group_id = ? ORDER BY topic_internal_id, partition'),
    listGroupOffsetTopics: db.prepare('SELECT DISTINCT topic_internal_id FROM offsets WHERE scope = ? AND group_id = ? ORDER BY topic_internal_id'),
    listOffsetGroups: db.prepare('SELECT DISTINCT group_id FROM offsets WHERE scope = ? ORDER BY group_id'),
    deleteGroupOffsets: db.prepare('DELETE FROM offsets WHERE scope = ? AND group_id = ?'),
    deleteTopicOffsets: db.prepare('DELETE FROM offsets WHERE topic_internal_id = ?'),
    deletePartitionOffsets: db.prepare('DELETE FROM offsets WHERE topic_internal_id = ? AND partition >= ?'),
    putGroup: db.prepare(
      `INSERT INTO groups (scope, group_id, state, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (scope, group_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
    ),
    getGroup: db.prepare('SELECT * FROM groups WHERE scope = ? AND group_id = ?'),
    listGroups: db.prepare('SELECT * FROM groups WHERE scope = ? ORDER BY group_id'),
    deleteGroup: db.prepare('DELETE FROM groups WHERE scope = ? AND group_id = ?'),
    listClientQuotas: db.prepare('SELECT * FROM client_quotas ORDER BY entity'),
    putClientQuota: db.prepare(
      `INSERT INTO client_quotas (entity, quotas, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (entity) DO UPDATE SET quotas = excluded.quotas, updated_at = excluded.updated_at`,
    ),
    deleteClientQuota: db.prepare('DELETE FROM client_quotas WHERE entity = ?'),
    putTopicOptions: db.prepare(
      `INSERT INTO topic_options (protocol, topic_internal_id, options, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (protocol, topic_internal_id) DO UPDATE SET options = excluded.options, updated_at = excluded.updated_at`,
    ),
    listTopicOptions: db.prepare('SELECT * FROM topic_options WHERE protocol = ? ORDER BY topic_internal_id'),
    deleteTopicOptions: db.prepare('DELETE FROM topic_options WHERE protocol = ? AND topic_internal_id = ?'),
    putGroupIdCounter: db.prepare(
      `INSERT INTO group_id_counters (scope, topic_internal_id, next_id) VALUES (?, ?, ?)
       ON CONFLICT (scope, topic_internal_id) DO UPDATE SET next_id = excluded.next_id`,
    ),
    listGroupIdCounters: db.prepare('SELECT * FROM group_id_counters WHERE scope = ? ORDER BY topic_internal_id'),
    deleteGroupIdCounter: db.prepare('DELETE FROM group_id_counters WHERE scope = ? AND topic_internal_id = ?'),
    putEventSnapshot: db.prepare(
      `INSERT INTO event_snapshots (topic_internal_id, partition, stream_key, version, payload, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (topic_internal_id, partition, stream_key) DO UPDATE SET version = excluded.version, payload = excluded.payload,
         updated_at = excluded.updated_at`,
    ),
    getEventSnapshot: db.prepare('SELECT * FROM event_snapshots WHERE topic_internal_id = ? AND partition = ? AND stream_key = ?'),
    deleteTopicEventSnapshots: db.prepare('DELETE FROM event_snapshots WHERE topic_internal_id = ?'),
    putSnapshot: db.prepare(
      `INSERT INTO producer_snapshots (partition_key, next_offset, entries, taken_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (partition_key) DO UPDATE SET next_offset = excluded.next_offset, entries = excluded.entries,
         taken_at = excluded.taken_at`,
    ),
    listSnapshots: db.prepare('SELECT * FROM producer_snapshots ORDER BY partition_key'),
    deleteSnapshot: db.prepare('DELETE FROM producer_snapshots WHERE partition_key = ?'),
    getProducerName: db.prepare('SELECT * FROM producer_names WHERE scope = ? AND name = ?'),
    putProducerName: db.prepare(
      `INSERT INTO producer_names (scope, name, producer_id, producer_epoch, epoch, used_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope, name) DO UPDATE SET producer_id = excluded.producer_id, producer_epoch = excluded.producer_epoch,
         epoch = excluded.epoch, used_at = excluded.used_at`,
    ),
    deleteProducerNamesUsedBefore: db.prepare('DELETE FROM producer_names WHERE used_at < ?'),
    putTransaction: db.prepare(
      `INSERT INTO transactions (scope, transactional_id, state, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (scope, transactional_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
    ),
    listTransactions: db.prepare('SELECT * FROM transactions ORDER BY scope, transactional_id'),
    deleteTransaction: db.prepare('DELETE FROM transactions WHERE scope = ? AND transactional_id = ?'),
    putTxnCheckpoint: db.prepare(
      `INSERT INTO txn_checkpoints (partition_key, next_offset, state, taken_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (partition_key) DO UPDATE SET next_offset = excluded.next_offset, state = excluded.state,
         taken_at = excluded.taken_at`,
    ),
    listTxnCheckpoints: db.prepare('SELECT * FROM txn_checkpoints ORDER BY partition_key'),
    deleteTxnCheckpoint: db.prepare('DELETE FROM txn_checkpoints WHERE partition_key = ?'),
  };
}

/** Multi-statement operations, each wrapped once in a transaction function. */
function prepareTransactions(db: Database.Database, stmts: ReturnType<typeof prepareStatements>) {
  return {
    nextId: db.transaction((counter: string, start: number): number => {
      const row = stmts.getCounter.get(counter) as Row | undefined;
      const value = row ? Number(row.value) : start;
      stmts.putCounter.run(counter, value + 1);
      return value;
    }),
    commitOffsets: db.transaction((records: readonly OffsetRecord[]): void => {
      for (const r of records) {
        stmts.putOffset.run(r.scope, r.group, r.topicInternalId, r.partition, r.offset, r.leaderEpoch, r.metadata, r.commitTime);
      }
    }),
    deleteGroupPartitionOffsets: db.transaction((scope: string, group: string, partitions: ReadonlyArray<{ topicInternalId: number; partition: number }>): number => {
      let deleted = 0;
      for (const p of partitions) deleted += stmts.deleteOffset.run(scope, group, p.topicInternalId, p.partition).changes;
      return deleted;
    }),
    deleteNamespace: db.transaction((id: number): void => {
      stmts.deleteNamespaceTopics.run(id);
      stmts.deleteNamespace.run(id);
    }),
    putSnapshots: db.transaction((records: readonly ProducerSnapshotRecord[]): void => {
      for (const r of records) stmts.putSnapshot.run(r.partitionKey, r.nextOffset, JSON.stringify(r.entries), r.takenAt);
    }),
    deleteSnapshots: db.transaction((keys: readonly string[]): void => {
      for (const key of keys) stmts.deleteSnapshot.run(key);
    }),
    putTxnCheckpoints: db.transaction((records: readonly TxnCheckpointRecord[]): void => {
      for (const r of records) stmts.putTxnCheckpoint.run(r.partitionKey, r.nextOffset, JSON.stringify(r.state), r.takenAt);
    }),
    deleteTxnCheckpoints: db.transaction((keys: readonly string[]): void => {
      for (const key of keys) stmts.deleteTxnCheckpoint.run(key);
    }),
  };
}

function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT');
  const applied = currentVersion(db);
  if (applied > metadataSchemaVersion) {
    // A newer Quartet wrote this database; running old code over it could corrupt it.
    throw new Error(`metadata schema version ${applied} is newer than this build supports (${metadataSchemaVersion})`);
  }
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const m of migrations) {
    if (m.version <= applied) continue;
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now());
    })();
  }
}

function currentVersion(db: Database.Database): number {
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as Row | undefined;
  return row && row.v !== null ? Number(row.v) : 0;
}

function topicFromRow(r: Row): TopicRecord {
  return {
    internalId: Number(r.internal_id),
    namespaceId: Number(r.namespace_id),
    id: Number(r.id),
    name: String(r.name),
    uuid: Buffer.from(r.uuid as Uint8Array),
    partitions: Number(r.partitions),
    config: JSON.parse(String(r.config)) as Record<string, string | number>,
    createdAt: Number(r.created_at),
  };
}

function userFromRow(r: Row): UserRecord {
  const status = String(r.status);
  if (status !== 'active' && status !== 'inactive') throw new Error(`bad user status in store: ${status}`);
  return {
    id: Number(r.id),
    username: String(r.username),
    status,
    passwordHash: String(r.password_hash),
    scram: JSON.parse(String(r.scram)) as unknown,
    permissions: JSON.parse(String(r.permissions)) as unknown,
    createdAt: Number(r.created_at),
  };
}

function offsetFromRow(r: Row): OffsetRecord {
  return {
    scope: String(r.scope),
    group: String(r.group_id),
    topicInternalId: Number(r.topic_internal_id),
    partition: Number(r.partition),
    offset: Number(r.offset),
    leaderEpoch: Number(r.leader_epoch),
    metadata: String(r.metadata),
    commitTime: Number(r.commit_time),
  };
}

function groupFromRow(r: Row): GroupRecord {
  return { scope: String(r.scope), groupId: String(r.group_id), state: JSON.parse(String(r.state)) as unknown, updatedAt: Number(r.updated_at) };
}
