// The Cursus data path's service (CursusServices.data): what PUBLISH, CONSUME, STREAM and
// LIST_OFFSETS share. The topic's Cursus definition, topic authorization and committed offsets
// belong to other parts of the front-end and come in as functions (topicView, authorize,
// committedOffset); the rest is the core's: appends, producer state, the read service, and long
// polls on the core's append waiters. It owns the per-topic round-robin counters of unkeyed
// publishes and the open STREAMs (stopped with reason `stopped` at close).

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { AppendWaiters, appendWaitersMaxDefault } from '../../core/append-waiters.js';
import { systemScheduler, type Scheduler } from '../../core/scheduler.js';
import type { Clock } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';
import { isQuartetError } from '../../base/errors.js';
import { CursusFailure, type CursusContext, type CursusTopicView } from './handler.js';
import { CursusProducers } from './producers.js';
import { CursusStreams } from './stream-push.js';
import { defaultTopicView, topicNotFound } from './routing.js';

export type TopicOperation = 'read' | 'write';

export interface CursusDataSettings {
  /** Bytes of records one CONSUME reply or STREAM push carries at most (at least one stored batch). */
  consumeBytesMax: number;
  /** A CONSUME's wait_ms is cut to this. */
  consumeWaitMsMax: number;
  /** CONSUMEs waiting for an append at once; past it, a long poll answers at once. */
  consumeWaitersMax: number;
  /** How often a STREAM looks for new records (spec: "~100ms intervals"); an append wakes it sooner. */
  streamPushIntervalMs: number;
  /** A STREAM with nothing new sends a keepalive this long after its last frame. */
  streamKeepaliveMs: number;
  /** The effective min_in_sync_replicas of a topic without its own (spec: the broker's min_insync_replicas). */
  minInSyncReplicas: number;
}

export const cursusDataSettingsDefault: CursusDataSettings = {
  consumeBytesMax: 8 * 1024 * 1024,
  consumeWaitMsMax: 60_000,
  consumeWaitersMax: appendWaitersMaxDefault,
  streamPushIntervalMs: 100,
  streamKeepaliveMs: 5_000,
  minInSyncReplicas: 1,
};

export interface CursusDataOptions {
  broker: Broker;
  logger: Logger;
  clock: Clock;
  /** STREAM push timers (tests pass a ManualScheduler); default: real timers. */
  scheduler?: Scheduler;
  settings?: Partial<CursusDataSettings>;
  /** The Cursus definition of a topic (the topic table); default: defaultTopicView of the catalog's topic. */
  topicView?: (name: string) => CursusTopicView | undefined;
  /** Refuses a topic read or write by throwing a CursusFailure (auth_policy, ACLs); default: allow. */
  authorize?: (ctx: CursusContext, topic: CursusTopicView, operation: TopicOperation) => void | Promise<void>;
  /** The next offset committed for (group, topic, partition), or null (the groups' offsets); default: none. */
  committedOffset?: (group: string, topic: string, partition: number) => number | null | Promise<number | null>;
}

/** A topic as the data path serves it: its Cursus definition and its core topic (namespace `default`). */
export interface DataTopic {
  readonly view: CursusTopicView;
  readonly topic: Topic;
}

export function partitionNotFound(partition: number): CursusFailure {
  return CursusFailure.of('partition_not_found', [['partition', String(partition)]]);
}

export class CursusDataPath {
  readonly broker: Broker;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly settings: CursusDataSettings;
  readonly producers: CursusProducers;
  /** Long-polling CONSUMEs. */
  readonly waiters: AppendWaiters;
  readonly streams: CursusStreams;
  private readonly options: CursusDataOptions;
  /** The next partition of an unkeyed publish, per topic internal id. */
  private readonly roundRobin = new Map<number, number>();

  constructor(options: CursusDataOptions) {
    this.options = options;
    this.broker = options.broker;
    this.logger = options.logger;
    this.clock = options.clock;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.settings = { ...cursusDataSettingsDefault, ...options.settings };
    this.producers = new CursusProducers(this.broker);
    this.waiters = new AppendWaiters(this.settings.consumeWaitersMax);
    this.streams = new CursusStreams();
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  /** Stops every STREAM (CLOSE reason `stopped`) and wakes every long poll. */
  async close(): Promise<void> {
    this.waiters.close();
    await this.streams.stopAll();
  }

  /** The topic named `name` in namespace `default`, with its Cursus view; throws topic_not_found. */
  topic(name: string): DataTopic {
    const topic = this.broker.catalog.getTopic({ topic: name });
    if (topic === null) throw topicNotFound(name);
    const view = this.options.topicView === undefined ? defaultTopicView(topic) : this.options.topicView(name);
    if (view === undefined) throw topicNotFound(name);
    return { view, topic };
  }

  /** Throws partition_not_found unless `partition` is one of the topic's. */
  checkPartition(topic: Topic, partition: number): void {
    if (!Number.isInteger(partition) || partition < 0 || partition >= topic.partitions) throw partitionNotFound(partition);
  }

  async authorize(ctx: CursusContext, view: CursusTopicView, operation: TopicOperation): Promise<void> {
    await this.options.authorize?.(ctx, view, operation);
  }

  async committedOffset(group: string, topic: string, partition: number): Promise<number | null> {
    return (await this.options.committedOffset?.(group, topic, partition)) ?? null;
  }

  /** The partition of the topic's next unkeyed (or round_robin) publish. */
  nextRoundRobin(topic: Topic): number {
    const next = this.roundRobin.get(topic.internalId) ?? 0;
    this.roundRobin.set(topic.internalId, (next + 1) % topic.partitions);
    return next % topic.partitions;
  }
}

/**
 * A core failure of a topic or partition gone meanwhile as the Cursus error a client acts on; any
 * other error as it is.
 */
export function dataFailure(err: unknown, topic: string, partition: number): unknown {
  if (!isQuartetError(err)) return err;
  switch (err.code) {
    case 'unknown_topic':
    case 'unknown_namespace':
      return topicNotFound(topic);
    case 'unknown_partition':
      return partitionNotFound(partition);
    default:
      return err;
  }
}
