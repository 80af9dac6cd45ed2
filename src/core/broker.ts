// The Broker: the one object every front-end and the server use. It owns the metadata store and
// the stores over it (catalog, users, offsets, groups, producer state and names, transactions, client quotas), the
// partition logs of every topic (partition-logs.ts), the append path (appends.ts), the read
// service (reads.ts) and the maintenance timer, and applies every catalog change to them all.
//
// Layout of a data directory:
//   <dataDir>/meta/quartet.db                 the metadata store (SQLite, WAL)
//   <dataDir>/logs/<internalId>/<partition>/  one directory per partition log
//
// Producer state and the transaction index are made durable by snapshots on close and on every
// maintenance pass, and rebuilt from the logs' tails at open.
//
// Topics are named by TopicRef (see catalog.ts): a resolved Topic, or { namespace?, topic } by
// name or numeric id, with namespace defaulting to 'default'.

import { Catalog, type CatalogObserver, type ConfigChanges, type Namespace, type NamespaceRef, type PartitionCountConfig, type Topic, type TopicRef } from './catalog.js';
import { systemClock, type Clock } from '../base/clock.js';
import { QuartetError, isQuartetError } from '../base/errors.js';
import { GroupStore } from './groups/store.js';
import { LiveGroupDirectory } from './groups/directory.js';
import { GroupEvents } from './groups/events.js';
import { TopicOptionsStore } from './topic-options.js';
import { EventSnapshotStore } from './event-streams.js';
import { silentLogger, type Logger } from '../base/logger.js';
import { SqliteMetadataStore, type MetadataStore } from './metadata-store.js';
import { registerRequestBytesMetrics, registerScrapeMetrics } from './scrape-metrics.js';
import { MetricsRegistry } from './metrics.js';
import { OffsetStore } from './offsets.js';
import { ClientQuotas } from './client-quotas.js';
import { ProducerStateManager } from './producer-state.js';
import { ProducerNames } from './producer-names.js';
import { ReadService } from './reads.js';
import { Transcoder, workerSettingsDefault, type WorkerSettings } from './offload.js';
import type { Scheduler } from './scheduler.js';
import { TransactionCoordinator, type TxnPartitionHandle, type TxnPartitions } from './transactions.js';
import { markerKindByFormat, type MarkerEncoder, type MarkerKindFn } from './txn-index.js';
import { describeTopicConfig, parseTopicConfig, type TopicConfig, type TopicConfigEntry, type TopicConfigValues } from './topic-config.js';
import { UserStore } from './users.js';
import { AuthThrottle, defaultAuthThrottleSettings, type AuthThrottleSettings } from './auth-throttle.js';
import { StorageHealth } from './storage-health.js';
import { Scrubber } from './scrubber.js';
import { SingleNodeReplication, type Leadership, type Replication, type ReplicaState } from './replication.js';
import { createFormatRegistry, type DirectWriteGate, type AppendRequest, type BatchFormat, type AppendResult, type FormatRegistry, type LogConfig, type PartitionLog, type ReadOptions, type StoredBatch } from '../log/index.js';
import type { LogFileSystem } from '../log/fs.js';
import { checkBatchBytes } from '../log/common.js';
import { AppendPath, type AppendOrigin } from './appends.js';
import { PartitionLogs, type PartitionHandle } from './partition-logs.js';
import type { TopicReadSeries } from './read-metrics.js';
import { MemoryBudget } from './memory-budget.js';
import { RequestByteBudget } from '../base/request-bytes.js';
import { CacheService, type CacheServiceOptions } from './caches/service.js';

export type { TopicRef, Topic, Namespace, NamespaceRef } from './catalog.js';
export type { AppendResult, PartitionLog } from '../log/types.js';
export type { AppendOrigin } from './appends.js';
export { logOpenConcurrencyMax } from './partition-logs.js';

// Named limits.
export const maintenanceIntervalMsDefault = 300_000;
export const defaultRootUsername = 'root';

export interface BrokerOptions {
  dataDir: string;
  /** Broker-level defaults for topic config (validated like topic values). */
  topicDefaults?: Partial<TopicConfigValues>;
  /** Partitions of a topic created without a count; default 1. */
  defaultPartitions?: number;
  /**
   * Created (id 0) when no user exists; a random password is generated when none is given. null
   * leaves it to the caller (ensureRootUser), who creates root only once its listeners are bound.
   */
  rootUser?: { username: string; password?: string } | null;
  clock?: Clock;
  logger?: Logger;
  metrics?: MetricsRegistry;
  /** Injected into openFileLog; tests use it to make the disk fail. */
  logFs?: LogFileSystem;
  /** Synchronous page-cache writes (FileLogOptions.directWrites); tests that hold writes pass null. */
  directWrites?: DirectWriteGate | null;
  /** MemoryLog partitions and an in-memory metadata store (tests). */
  memory?: boolean;
  /** Retention/compaction pass period (ms); default 300000; 0 disables the timer. */
  maintenanceIntervalMs?: number;
  /** This broker's node id (Kafka broker id); default 1. */
  nodeId?: number;
  /** Leadership and high watermarks; default: this node alone (SingleNodeReplication with nodeId). */
  replication?: Replication;
  /**
   * The batch formats the broker can look inside (compaction, transcoding between protocols,
   * timestamps): the server passes every built-in one (src/server/listeners.ts builtinFormats);
   * the neutral format alone when absent.
   */
  formats?: FormatRegistry;
  /**
   * Worker threads for transcoding large batches off the event loop (core/offload.ts); default:
   * none (0 threads), everything inline. The server passes its `workers` settings.
   */
  workers?: Partial<WorkerSettings>;
  /** Overrides producer-state bounds (tests). */
  producerEntriesMax?: number;
  producerIdleExpiryMs?: number;
  /** scrypt cost for password hashes (tests lower it). */
  scryptCost?: { N: number; r: number; p: number };
  /** Failed-login throttling (auth-throttle.ts); defaults when absent. */
  authThrottle?: Partial<AuthThrottleSettings>;
  /** Timers of the transaction coordinator (tests pass a ManualScheduler). */
  scheduler?: Scheduler;
  transactions?: BrokerTransactionOptions;
  /** Bytes replies of reads may hold in memory at once, broker-wide (memory-budget.ts); default memoryBudgetBytesDefault. */
  memoryBudgetBytes?: number;
  /** Bytes large request frames may hold in memory at once, broker-wide (base/request-bytes.ts); default requestBytesMaxDefault. */
  requestBytesMax?: number;
  /**
   * Bytes of stored batches the background scrubber checks per second (scrubber.ts); default 0:
   * none (the server passes its `log.scrubBytesPerSec`, by default scrubBytesPerSecDefault).
   */
  scrubBytesPerSec?: number;
  /** Settings of the cache and counter service (caches/service.ts): limits, auto-creation, shards, cache topic config, sweep period. */
  caches?: Omit<CacheServiceOptions, 'broker' | 'clock' | 'logger'>;
}

/** What the protocol front-ends bring to the transaction coordinator. */
export interface BrokerTransactionOptions {
  /**
   * Marker encoders by protocol scope ('kafka' → a Kafka control batch). A transaction whose scope
   * has none gets neutral-format markers (txn-index.ts encodeNeutralMarker).
   */
  markerEncoders?: Readonly<Record<string, MarkerEncoder>>;
  /** Marker decoders by batch format (Kafka: reads the control record's type); neutral is built in. */
  markerKinds?: Readonly<Partial<Record<BatchFormat, MarkerKindFn>>>;
  /**
   * How a marker looks in each batch format, for readers of whole batches in that format
   * (ReadService.readBatches): a marker another protocol wrote is served to them as one of their
   * own (a Kafka client must see the ABORT marker of a producer it is skipping).
   */
  markerFormats?: Readonly<Partial<Record<BatchFormat, MarkerEncoder>>>;
  /**
   * The OffsetStore scope a transaction scope's offsets commit under, when it is not the scope
   * itself (Cursus groups keep their offsets with Kafka's: { cursus: 'kafka' }).
   */
  offsetScopes?: Readonly<Record<string, string>>;
  transactionTimeoutMsMax?: number;
  transactionalIdExpirationMs?: number;
  markerRetryBackoffMs?: number;
}

export interface CreateTopicRequest {
  /** Default: BrokerOptions.defaultPartitions. */
  partitions?: number;
  /** Raw topic config values (Kafka names), validated. */
  config?: Readonly<Record<string, unknown>>;
  /** Explicit numeric id (Iggy); allocated when absent. */
  id?: number;
}

/** What a front-end hears about topics changed by any protocol (Broker.onTopicChanges). */
export interface TopicChangeListener {
  /**
   * A topic was created (by any protocol): told once it is in the catalog, before the creation
   * returns. A failing listener fails nothing (it is logged).
   */
  topicCreated?(topic: Topic): Promise<void> | void;
  /** Told once the topic has left the catalog (in a namespace deletion, with the namespace). */
  topicDeleted?(topic: Topic): Promise<void> | void;
  namespaceDeleted?(namespace: Namespace): Promise<void> | void;
  /**
   * Inside the catalog mutation that changes the topic's partition count (`topic` as it is before
   * it): config changes to store in the same step (a limit spread over the partitions), or null.
   */
  partitionCountConfig?(topic: Topic, newCount: number): ConfigChanges | null;
  /** The partition count changed (grown or shrunk, `topic` as it is now); awaited before the change returns. */
  partitionsChanged?(topic: Topic): Promise<void> | void;
}

export class Broker implements CatalogObserver {
  readonly catalog: Catalog;
  readonly users: UserStore;
  readonly offsets: OffsetStore;
  readonly groups: GroupStore;
  /** Who is in each consumer group now, from the coordinators of the listeners that are open. */
  readonly liveGroups = new LiveGroupDirectory();
  /** Where the group engines log group changes, for every protocol. */
  readonly groupEvents: GroupEvents;
  /** Per-topic options of a protocol that the core config does not hold (Iggy's). */
  readonly topicOptions: TopicOptionsStore;
  /** Snapshots of event-sourced aggregates (event-streams.ts); a deleted or purged topic loses them. */
  readonly eventSnapshots: EventSnapshotStore;
  readonly producers: ProducerStateManager;
  /** Byte-rate and request-time quotas per user and client id (client-quotas.ts), enforced by front-ends. */
  readonly clientQuotas: ClientQuotas;
  /** Producers a protocol names by strings (Cursus), mapped onto `producers` (producer-names.ts). */
  readonly producerNames: ProducerNames;
  /** Set by open() once the logs are recovered. */
  readonly transactions!: TransactionCoordinator;
  readonly metrics: MetricsRegistry;
  /** The one way a front-end reads a partition (reads.ts). */
  readonly reads: ReadService;
  /** Transcodes batches for the read service, large ones on worker threads (BrokerOptions.workers). */
  readonly transcoder: Transcoder;
  /** The batch formats this broker's logs and reads look inside (BrokerOptions.formats). */
  readonly formats: FormatRegistry;
  /** Set only when open() or ensureRootUser() just created root with a random password. Never logged. */
  readonly generatedRootPassword: string | null = null;
  readonly dataDir: string;
  /** The validated broker-level topic defaults. */
  readonly topicDefaults: Readonly<TopicConfig>;
  readonly defaultPartitions: number;
  /** Leaders, epochs, replicas and high watermarks (replication.ts): one node today. */
  readonly replication: Replication;
  /** Failed-login throttling, shared by every protocol (auth-throttle.ts). */
  readonly authThrottle: AuthThrottle;
  /** Whether appends are failing because the disk is full, and batches found corrupt (storage-health.ts). */
  readonly storage: StorageHealth;
  /** Checks stored batches against their checksums in the background (scrubber.ts). */
  readonly scrubber: Scrubber;
  /** The bytes replies of reads hold in memory, broker-wide (memory-budget.ts). */
  readonly memoryBudget: MemoryBudget;
  /** The bytes large Kafka and Iggy request frames hold in memory, broker-wide (base/request-bytes.ts). */
  readonly requestBytes: RequestByteBudget;
  /**
   * Caches and counters over compacted topics (caches/service.ts): one per broker, so that every
   * front-end shares each cache's index and the queue its writes are serialised on.
   */
  readonly caches: CacheService;

  private readonly store: MetadataStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly options: BrokerOptions;
  /** The open partition logs of every topic. */
  private readonly logs: PartitionLogs;
  /** Removes the scrape-time collector (consumer lag, disk bytes) from the registry. */
  private readonly stopScrapeMetrics: () => void;
  private readonly stopRequestBytesMetrics: () => void;
  private readonly appends: AppendPath;
  private readonly topicListeners = new Set<TopicChangeListener>();
  /** The marker type of a stored control batch of any format (BrokerTransactionOptions.markerKinds). */
  private readonly markerKind: MarkerKindFn;
  private maintenanceTimer: NodeJS.Timeout | null = null;
  private maintenanceRun: Promise<void> | null = null;
  private closing: Promise<void> | null = null;

  private constructor(parts: {
    options: BrokerOptions;
    store: MetadataStore;
    catalog: Catalog;
    users: UserStore;
    producers: ProducerStateManager;
    clientQuotas: ClientQuotas;
    topicDefaults: TopicConfig;
    defaultPartitions: number;
  }) {
    this.options = parts.options;
    this.dataDir = parts.options.dataDir;
    this.clock = parts.options.clock ?? systemClock;
    this.logger = parts.options.logger ?? silentLogger;
    this.groupEvents = new GroupEvents(this.logger, this.clock);
    this.metrics = parts.options.metrics ?? new MetricsRegistry();
    this.store = parts.store;
    this.catalog = parts.catalog;
    this.users = parts.users;
    this.producers = parts.producers;
    this.clientQuotas = parts.clientQuotas;
    this.producerNames = new ProducerNames(parts.store, parts.producers, this.clock, { idleExpiryMs: parts.producers.idleExpiryMs });
    this.offsets = new OffsetStore(parts.store, this.clock, this.groupEvents);
    this.groups = new GroupStore(parts.store, this.clock);
    this.topicOptions = new TopicOptionsStore(parts.store, this.clock);
    this.eventSnapshots = new EventSnapshotStore(parts.store, this.clock);
    this.topicDefaults = Object.freeze({ ...parts.topicDefaults });
    this.defaultPartitions = parts.defaultPartitions;
    this.replication = parts.options.replication ?? new SingleNodeReplication(parts.options.nodeId);
    this.formats = parts.options.formats ?? createFormatRegistry();
    this.markerKind = markerKindByFormat(parts.options.transactions?.markerKinds);
    this.memoryBudget = new MemoryBudget(parts.options.memoryBudgetBytes);
    this.requestBytes = new RequestByteBudget(parts.options.requestBytesMax);
    this.stopRequestBytesMetrics = registerRequestBytesMetrics(this.metrics, this.requestBytes);
    this.transcoder = new Transcoder(this.formats, { ...workerSettingsDefault, ...parts.options.workers });
    this.reads = new ReadService(this, this.formats, this.transcoder);
    this.authThrottle = new AuthThrottle({ ...defaultAuthThrottleSettings, ...parts.options.authThrottle }, this.clock, this.metrics, this.logger);
    const { dataDir, memory, logFs, directWrites } = parts.options;
    this.storage = new StorageHealth(this.metrics, this.clock);
    const onCorruptBatch = (partition: Readonly<{ namespace: string; topic: string; partition: string }>): void => this.storage.corruptBatchFound(partition);
    this.logs = new PartitionLogs({ dataDir, memory: memory === true, topicDefaults: this.topicDefaults, formats: this.formats, clock: this.clock, logger: this.logger, metrics: this.metrics, logFs, directWrites, onCorruptBatch, offload: this.transcoder.logOffload() });
    this.storage.countCorruptWith(() => this.corruptBatchesHeld());
    this.scrubber = new Scrubber(() => this.scrubbedPartitions(), parts.options.scrubBytesPerSec ?? 0, this.logger.child({ component: 'scrubber' }), this.metrics, () => void this.storage.corruptBatches());
    this.caches = new CacheService({ ...parts.options.caches, broker: this, clock: this.clock, logger: this.logger.child({ component: 'caches' }) });
    this.stopScrapeMetrics = registerScrapeMetrics(this.metrics, { catalog: this.catalog, offsets: this.offsets, partitions: () => this.logs.entries() });
    this.appends = new AppendPath({ catalog: this.catalog, logs: this.logs, producers: this.producers, clock: this.clock, markerEncoders: parts.options.transactions?.markerEncoders ?? {}, storage: this.storage });
  }

  /**
   * Opens the store, the catalog, every partition log (running their recovery), the producer
   * state (snapshot + log tail replay), and ensures the root user exists.
   */
  static async open(options: BrokerOptions): Promise<Broker> {
    const clock = options.clock ?? systemClock;
    const logger = options.logger ?? silentLogger;
    const topicDefaults = parseTopicConfig(options.topicDefaults ?? {});
    const defaultPartitions = options.defaultPartitions ?? 1;
    if (!Number.isInteger(defaultPartitions) || defaultPartitions < 1) {
      throw new QuartetError('invalid_config', `defaultPartitions must be a positive integer, got ${defaultPartitions}`);
    }
    const store = options.memory ? SqliteMetadataStore.open({ path: ':memory:' }) : SqliteMetadataStore.openInDataDir(options.dataDir);
    let broker: Broker | null = null;
    try {
      const catalog = await Catalog.open(store, clock);
      const users = await UserStore.open(store, { clock, logger: logger.child({ component: 'users' }), ...(options.scryptCost ? { scryptCost: options.scryptCost } : {}) });
      const producers = await ProducerStateManager.open(store, {
        clock,
        logger: logger.child({ component: 'producer-state' }),
        ...(options.producerEntriesMax !== undefined ? { entriesMax: options.producerEntriesMax } : {}),
        ...(options.producerIdleExpiryMs !== undefined ? { idleExpiryMs: options.producerIdleExpiryMs } : {}),
      });
      const clientQuotas = await ClientQuotas.open(store, clock);
      broker = new Broker({ options, store, catalog, users, producers, clientQuotas, topicDefaults, defaultPartitions });
      await broker.logs.openAll(catalog.listTopics());
      await broker.logs.removeOrphanDirs();
      await broker.recoverProducerState();
      const transactions = await broker.openTransactions();
      (broker as { transactions: TransactionCoordinator }).transactions = transactions;
      broker.appends.attachTransactions(transactions);
      // Markers of transactions a crash left prepared go through append(), so only now.
      await transactions.start();
      if (options.rootUser !== null) await broker.ensureRootUser(options.rootUser ?? { username: defaultRootUsername });
      catalog.setObserver(broker);
      broker.startMaintenanceTimer();
      broker.scrubber.start();
      return broker;
    } catch (err) {
      broker?.caches.close();
      if (broker) await broker.logs.closeAll().catch(() => undefined);
      await broker?.transcoder.close();
      await store.close().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Creates root (id 0) when no user exists, or gives an existing root the configured password and
   * name; logs what changed. A generated password is kept in generatedRootPassword, never logged.
   */
  async ensureRootUser(rootUser: { username: string; password?: string }): Promise<void> {
    const { username, password } = rootUser;
    const root = await this.users.ensureRootUser(username, password, undefined, { applyToExisting: true });
    (this as { generatedRootPassword: string | null }).generatedRootPassword = root.generatedPassword;
    if (root.created) this.logger.info('created the root user', { username, passwordGenerated: root.generatedPassword !== null });
    if (root.updated.length > 0) this.logger.warn('the root user now has the configured credentials', { username, changed: root.updated });
    if (root.renameRefused) this.logger.error('the root user keeps its name: another user already has the configured one', { username });
  }

  // --- the data path --------------------------------------------------------------------------

  /**
   * Settles once the purge of the topic under way (purgeTopic) has replaced its logs; undefined
   * when none is (nearly always). append() and read() wait for it themselves; a caller that uses
   * partition() for more than stats waits first, so it does not hold a log the purge closes.
   */
  purgeInProgress(topic: TopicRef): Promise<void> | undefined {
    return this.appends.purgeInProgress(topic);
  }

  /** The partition's log; throws unknown_namespace / unknown_topic / unknown_partition. */
  partition(topic: TopicRef, partition: number): PartitionLog {
    return this.handle(topic, partition).log;
  }

  /** The topic's bytes- and records-read series (the read service counts what it serves). */
  readSeries(topic: Topic): TopicReadSeries {
    return this.logs.readSeries(topic);
  }

  /** The partition's leader, epoch and replicas (no log is read); throws unknown_topic / unknown_partition. */
  leadership(topic: TopicRef, partition: number): Leadership {
    const resolved = this.catalog.requireTopic(topic);
    if (!Number.isInteger(partition) || partition < 0 || partition >= resolved.partitions) throw new QuartetError('unknown_partition', `topic '${resolved.name}' has no partition ${partition}`);
    return this.replication.leadership({ topicInternalId: resolved.internalId, partition });
  }

  /** The partition's leadership with its high watermark and log bounds; throws as partition(). */
  replicaState(topic: TopicRef, partition: number): ReplicaState {
    const resolved = this.catalog.requireTopic(topic);
    return this.replication.stateOf({ topicInternalId: resolved.internalId, partition }, this.handle(resolved, partition).log.stats());
  }

  /** Whether `log` is still the partition's (a purge replaces it, a deletion removes it). */
  isCurrentLog(topic: TopicRef, partition: number, log: PartitionLog): boolean {
    try {
      return this.handle(topic, partition).log === log;
    } catch {
      return false;
    }
  }

  /** The broker clock's reading (ms), which appends are stamped with (Kafka's LogAppendTime and timestamp limits). */
  now(): number {
    return this.clock.now();
  }

  /**
   * Appends one batch (appends.ts). A transactional batch must belong to the ongoing transaction
   * of its producer that added the partition (`origin.transaction` names it). Idempotent batches
   * (producerId >= 0) pass the producer checks: a retry of a batch already in the log resolves
   * with the original offsets and appends nothing. A retry of a batch still being written waits
   * for it: it resolves when the original does (under fsyncPolicy 'always', after its fsync) and
   * rejects with the original's error.
   */
  append(topic: TopicRef, partition: number, request: AppendRequest, origin: AppendOrigin = {}): Promise<AppendResult> {
    return this.appends.append(topic, partition, request, origin);
  }

  read(topic: TopicRef, partition: number, offset: number, options: ReadOptions): Promise<StoredBatch[]> {
    const reset = this.purgeInProgress(topic);
    if (reset !== undefined) return reset.then(() => this.read(topic, partition, offset, options));
    try {
      this.assertOpen();
      return this.handle(topic, partition).log.read(offset, options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  // --- catalog changes (the catalog calls back into the CatalogObserver methods below) --------

  /** Creates the topic and its logs; the listeners hear of it before this returns. */
  async createTopic(namespace: NamespaceRef, name: string, request: CreateTopicRequest = {}): Promise<Topic> {
    const topic = await this.catalog.createTopic(namespace, name, {
      partitions: request.partitions ?? this.defaultPartitions,
      ...(request.config ? { config: request.config } : {}),
      ...(request.id !== undefined ? { id: request.id } : {}),
    });
    await this.tellListeners((l) => l.topicCreated?.(topic));
    return topic;
  }

  /** Deletes the topic, its logs (directory included), committed offsets and producer state. */
  deleteTopic(topic: TopicRef): Promise<Topic> {
    return this.catalog.deleteTopic(topic);
  }

  /** Grows the topic to `newCount` partitions; the listeners hear of it before this returns. */
  async addPartitions(topic: TopicRef, newCount: number): Promise<Topic> {
    const updated = await this.catalog.addPartitions(topic, newCount, this.partitionCountConfig);
    await this.tellListeners((l) => l.partitionsChanged?.(updated));
    return updated;
  }

  /**
   * Shrinks the topic to `newCount` partitions (an Iggy-side operation: Kafka never shrinks a
   * topic). Partitions newCount..n-1 lose their logs (directories included), every protocol's
   * committed offsets, producer state and transaction index. 0 is allowed. The listeners hear of
   * it before this returns.
   */
  async removePartitions(topic: TopicRef, newCount: number): Promise<Topic> {
    const updated = await this.catalog.removePartitions(topic, newCount, this.partitionCountConfig);
    await this.tellListeners((l) => l.partitionsChanged?.(updated));
    return updated;
  }

  /**
   * Changes topic config (null removes a key; replace=true drops the keys not given); `changes`
   * may be a function of the topic as it is when the change runs.
   */
  updateTopicConfig(topic: TopicRef, changes: ConfigChanges | ((current: Topic) => ConfigChanges), replace = false): Promise<Topic> {
    return this.catalog.updateTopicConfig(topic, changes, replace);
  }

  /** The listeners' config changes for a new partition count, merged (Catalog PartitionCountConfig). */
  private readonly partitionCountConfig: PartitionCountConfig = (current, newCount) => {
    let merged: Record<string, unknown> | null = null;
    for (const l of this.topicListeners) {
      const changes = l.partitionCountConfig?.(current, newCount) ?? null;
      if (changes !== null) merged = { ...(merged ?? {}), ...changes };
    }
    return merged;
  };

  async createNamespace(name: string, options: { id?: number } = {}): Promise<Namespace> {
    const namespace = await this.catalog.createNamespace(name, options);
    this.logger.info('created namespace', { namespace: namespace.name, id: namespace.id });
    return namespace;
  }

  /** Deletes the namespace with every topic in it. */
  deleteNamespace(namespace: NamespaceRef): Promise<Namespace> {
    return this.catalog.deleteNamespace(namespace);
  }

  /**
   * Told when a topic was created (once it is visible); when a topic (any protocol's deletion, or
   * its namespace's) or a namespace is gone, inside the catalog mutation (before its id can be
   * handed out again), so a front-end can drop what it keeps about it; and when a topic's
   * partition count changed, asked inside the catalog mutation for config to store with the new
   * count, and told after it. Returns the unsubscribe function.
   */
  onTopicChanges(listener: TopicChangeListener): () => void {
    this.topicListeners.add(listener);
    return () => this.topicListeners.delete(listener);
  }

  /** Removes every record of the topic and restarts its offsets at 0 (Iggy purge; partitionsReset). */
  async purgeTopic(topic: TopicRef): Promise<void> {
    await this.catalog.resetPartitions(topic);
  }

  /** The effective config of a topic, key by key, with where each value comes from. */
  describeTopicConfig(topic: TopicRef): TopicConfigEntry[] {
    return describeTopicConfig(this.catalog.requireTopic(topic).config, this.topicDefaults);
  }

  logConfigFor(topic: Topic): LogConfig {
    return this.logs.logConfigFor(topic);
  }

  /** Refuses (record_too_large) a batch of `bytes` over the topic's largest batch, before any of it is appended. */
  checkBatchBytes(topic: Topic, bytes: number): void {
    checkBatchBytes(bytes, this.logConfigFor(topic));
  }

  /**
   * A stored transaction marker as a batch of `format` at the same offset, for a reader of whole
   * batches in that format; null when the batch is no marker or the format has no marker encoder
   * (BrokerTransactionOptions.markerFormats). Readers never look at the coordinator epoch, which
   * is written as 0.
   */
  markerAs(format: BatchFormat, batch: StoredBatch, topicName: string, partition: number): Buffer | null {
    const encode = this.options.transactions?.markerFormats?.[format];
    if (encode === undefined || batch.format === format) return null;
    const kind = this.markerKind(batch);
    if (kind === null) return null;
    const timestamp = batch.maxTimestamp;
    const request = encode({ producerId: batch.producerId, producerEpoch: batch.producerEpoch, commit: kind === 'commit', coordinatorEpoch: 0, timestamp, topic: topicName, partition });
    this.formats.get(format)?.stamp?.(request, { baseOffset: batch.baseOffset, appendTime: timestamp, appendMicros: timestamp * 1000 });
    return request.payload;
  }

  /** @internal CatalogObserver */
  async topicCreated(topic: Topic): Promise<void> {
    await this.logs.createTopic(topic);
    // Logged here, once for every protocol; a front-end does not log the creation itself.
    this.logger.info('created topic', { namespace: topic.namespace, topic: topic.name, partitions: topic.partitions, internalId: topic.internalId });
  }

  /** @internal CatalogObserver */
  async topicDeleted(topic: Topic): Promise<void> {
    try {
      const handles = await this.logs.deleteTopic(topic);
      await this.offsets.deleteTopic(topic.internalId);
      await this.eventSnapshots.dropTopic(topic.internalId);
      await this.producers.dropPartitions(handles.map((h) => h.key));
      await this.transactions.dropPartitions(handles.map((h) => h.key));
      this.logs.dropMetrics(handles);
      this.logger.info('deleted topic', { namespace: topic.namespace, topic: topic.name, internalId: topic.internalId });
    } finally {
      // The catalog has let the topic go whatever failed above: front-ends hear of it regardless.
      this.caches.topicDeleted(topic);
      await this.tellListeners((l) => l.topicDeleted?.(topic));
    }
  }

  /** @internal CatalogObserver */
  async namespaceDeleted(namespace: Namespace): Promise<void> {
    this.logger.info('deleted namespace', { namespace: namespace.name, id: namespace.id });
    await this.tellListeners((l) => l.namespaceDeleted?.(namespace));
  }

  /**
   * A deletion's runs inside the catalog mutation, so a listener is done before the id can be
   * reused. The change has happened whatever a listener does: its failure is logged (a front-end
   * repairs what it keeps about a deleted topic at its next start).
   */
  private async tellListeners(call: (l: TopicChangeListener) => Promise<void> | void | undefined): Promise<void> {
    for (const l of this.topicListeners) {
      try {
        await call(l);
      } catch (err) {
        this.logger.warn('a topic change listener failed', { error: err });
      }
    }
  }

  /** @internal CatalogObserver */
  async partitionsAdded(topic: Topic, previousCount: number): Promise<void> {
    // A partition number may have existed before (removed by Iggy DeletePartitions): a removal
    // interrupted by a crash may have left its offsets or its directory; the new one starts empty.
    await this.offsets.deletePartitionsFrom(topic.internalId, previousCount);
    await this.logs.addPartitions(topic, previousCount);
  }

  /** @internal CatalogObserver */
  async partitionsRemoved(topic: Topic, previousCount: number): Promise<void> {
    const removed = await this.logs.removePartitions(topic, previousCount);
    await this.offsets.deletePartitionsFrom(topic.internalId, topic.partitions);
    const keys = removed.map((h) => h.key);
    await this.producers.dropPartitions(keys);
    await this.transactions.dropPartitions(keys);
    this.logs.dropMetrics(removed);
    this.logger.info('removed partitions', { namespace: topic.namespace, topic: topic.name, from: topic.partitions, to: previousCount - 1 });
  }

  /**
   * @internal CatalogObserver. The Iggy purge, as the reference server's: every partition starts
   * again empty at offset 0, and every protocol's committed offsets for the topic go (they would
   * point past the new end), with its producer and transaction state. The committed offsets go
   * first: after a crash half-way, a partition not yet replaced is read again from its start, never
   * skipped. Each partition's log is closed (appends already given to it are written first; a
   * failure to flush is logged, the data is going anyway), its directory renamed away in one
   * step (durably) and removed, and a new log opened in its place; the offsets are deleted once
   * more at the end, for any stored meanwhile from the old logs' positions. Appends and reads that
   * arrive meanwhile wait for the new logs (purgeInProgress), and so does a broker close. A
   * purge that fails (a disk error) stops at that partition: if its directory could not be
   * renamed away it is opened again with its records, and the records of the partitions after it
   * are untouched (the topic's stored offsets are gone already), and only the partitions whose
   * records went lose their producer and transaction state; if a new log cannot be opened, that
   * partition stays closed until a restart opens it, empty.
   */
  async partitionsReset(topic: Topic): Promise<void> {
    const reset = this.logs.beginReset(topic);
    if (reset === null) return;
    try {
      await this.offsets.deleteTopic(topic.internalId);
      for (let p = 0; p < reset.partitions; p++) await reset.replace(p);
      await this.offsets.deleteTopic(topic.internalId);
      await this.eventSnapshots.dropTopic(topic.internalId);
    } finally {
      // Transactions first: they let go of the partitions at once, before a completion resuming
      // meanwhile could commit an offset staged for them.
      await this.transactions.dropPartitions(reset.replaced).catch((error: unknown) => this.logger.error('purge: dropping transaction state failed', { error }));
      await this.producers.dropPartitions(reset.replaced).catch((error: unknown) => this.logger.error('purge: dropping producer state failed', { error }));
      reset.end();
    }
    this.logger.info('purged topic', { namespace: topic.namespace, topic: topic.name, partitions: reset.partitions });
  }

  /** @internal CatalogObserver */
  async topicConfigChanged(topic: Topic): Promise<void> {
    this.logs.configChanged(topic);
  }

  /** @internal CatalogObserver */
  topicRenamed(topic: Topic): void {
    this.logs.renamed(topic);
  }

  // --- maintenance and lifecycle --------------------------------------------------------------

  /**
   * One retention + compaction pass over every partition, then producer-state expiry and snapshot
   * and token expiry. Concurrent calls share the running pass. A failing partition is logged and
   * skipped: one bad disk must not stop retention everywhere else.
   */
  runMaintenance(): Promise<void> {
    if (this.closing) return Promise.resolve();
    this.maintenanceRun ??= this.maintain().finally(() => {
      this.maintenanceRun = null;
    });
    return this.maintenanceRun;
  }

  private async maintain(): Promise<void> {
    const now = this.clock.now();
    let segmentsDeleted = 0;
    for (const [internalId, handles] of this.logs.entries()) {
      for (const h of handles) {
        try {
          const policy = h.log.config.cleanupPolicy;
          if (policy !== 'compact') segmentsDeleted += (await h.log.applyRetention(now)).segmentsDeleted;
          if (policy !== 'delete') segmentsDeleted += (await h.log.compact(now)).segmentsDeleted;
        } catch (err) {
          // A topic deleted or purged during the pass closes its logs under us; that is not a failure.
          if (this.logs.has(internalId) && !this.logs.isClosedByPurge(h.log)) this.logger.warn('maintenance failed for a partition', { partition: h.key, error: err });
        }
      }
    }
    const expired = this.producers.expireIdle(now);
    const namesExpired = await this.producerNames.expireIdle(now);
    await this.users.purgeExpiredTokens();
    await this.snapshotProducers();
    const transactionalIdsExpired = await this.transactions.maintain(now);
    this.logger.debug('maintenance pass done', { segmentsDeleted, producersExpired: expired, producerNamesExpired: namesExpired, transactionalIdsExpired });
  }

  /** Stops the timer, snapshots producer state, flushes and closes every log and the store. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.stopScrapeMetrics();
    this.stopRequestBytesMetrics();
    this.caches.close();
    this.appends.stop();
    if (this.maintenanceTimer) clearInterval(this.maintenanceTimer);
    this.maintenanceTimer = null;
    await this.maintenanceRun?.catch(() => undefined);
    await this.scrubber.stop();
    // A purge replacing logs finishes first (it closes and opens logs of its own).
    await Promise.all(this.logs.purgesInProgress());
    this.catalog.setObserver(null);
    let failure: unknown = null;
    try {
      await this.transactions.close();
    } catch (err) {
      failure = err;
      this.logger.error('could not close the transaction coordinator', { error: err });
    }
    try {
      await this.snapshotProducers();
    } catch (err) {
      failure ??= err;
      this.logger.error('could not snapshot producer state', { error: err });
    }
    try {
      await this.logs.closeAll();
    } catch (err) {
      failure ??= err;
    }
    try {
      await this.store.close();
    } finally {
      await this.transcoder.close();
    }
    if (failure) throw isQuartetError(failure) ? failure : new QuartetError('storage_error', `closing the broker: ${(failure as Error).message}`, failure);
  }

  // --- internals ------------------------------------------------------------------------------

  private handle(topic: TopicRef, partition: number): PartitionHandle {
    return this.logs.handle(this.catalog.requireTopic(topic), partition);
  }

  private assertOpen(): void {
    if (this.closing) throw new QuartetError('shutting_down', 'the broker is closing');
  }

  private async recoverProducerState(): Promise<void> {
    let replayed = 0;
    for (const [, handles] of this.logs.entries()) {
      for (const h of handles) replayed += await this.producers.recover(h.key, h.log);
    }
    if (replayed > 0) this.logger.info('replayed producer state from the logs', { batches: replayed });
  }

  private openTransactions(): Promise<TransactionCoordinator> {
    const txn = this.options.transactions ?? {};
    return TransactionCoordinator.open({
      store: this.store,
      producers: this.producers,
      offsets: this.offsets,
      partitions: this.txnPartitions(),
      writeMarker: (marker) => this.appends.writeMarker(marker),
      markerKind: markerKindByFormat(txn.markerKinds),
      ...(txn.offsetScopes !== undefined ? { offsetScopes: txn.offsetScopes } : {}),
      clock: this.clock,
      logger: this.logger.child({ component: 'transactions' }),
      ...(this.options.scheduler ? { scheduler: this.options.scheduler } : {}),
      ...(txn.transactionTimeoutMsMax !== undefined ? { transactionTimeoutMsMax: txn.transactionTimeoutMsMax } : {}),
      ...(txn.transactionalIdExpirationMs !== undefined ? { transactionalIdExpirationMs: txn.transactionalIdExpirationMs } : {}),
      ...(txn.markerRetryBackoffMs !== undefined ? { markerRetryBackoffMs: txn.markerRetryBackoffMs } : {}),
    });
  }

  private txnPartitions(): TxnPartitions {
    return {
      resolve: (topic, partition): TxnPartitionHandle => {
        const topicInternalId = this.catalog.requireTopic(topic).internalId;
        const h = this.handle(topic, partition);
        return { key: h.key, topicInternalId, partition, log: h.log };
      },
      list: () => this.logs.entries().flatMap(([topicInternalId, handles]) => handles.map((h, partition) => ({ key: h.key, topicInternalId, partition, log: h.log }))),
      purgeInProgress: (topicInternalId) => this.logs.purgeInProgress(topicInternalId),
    };
  }

  /** Batches found corrupt that the open logs still hold at or after their start. */
  private corruptBatchesHeld(): number {
    let n = 0;
    for (const [, handles] of this.logs.entries()) for (const h of handles) n += h.log.corruptBatches().length;
    return n;
  }

  private scrubbedPartitions(): Array<{ key: string; log: PartitionLog }> {
    return this.logs.entries().flatMap(([, handles]) => handles.map((h) => ({ key: h.key, log: h.log })));
  }

  /** Snapshots cover the high watermark: offsets above it are assigned but not (yet) written. */
  private snapshotProducers(): Promise<void> {
    const partitions: Array<{ key: string; nextOffset: number }> = [];
    for (const [, handles] of this.logs.entries()) for (const h of handles) partitions.push({ key: h.key, nextOffset: h.log.stats().highWatermark });
    return this.producers.snapshot(partitions);
  }

  private startMaintenanceTimer(): void {
    const period = this.options.maintenanceIntervalMs ?? maintenanceIntervalMsDefault;
    if (period <= 0) return;
    this.maintenanceTimer = setInterval(() => {
      this.runMaintenance().catch((err: unknown) => this.logger.warn('maintenance pass failed', { error: err }));
    }, period);
    // Maintenance must never keep the process alive on its own.
    this.maintenanceTimer.unref();
  }
}
