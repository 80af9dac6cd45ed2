// CursusClient: a promise-based client for Cursus Wire v2 (docs/protocols/cursus-wire-v2.md) over
// TCP or TLS, one typed method per command. The request path (pool, negotiation, compression,
// AUTH, redirects, reconnects) is ClientCore's (./client-core.ts); the reply shapes are
// ./replies.ts's. The producer, consumer, transactions and event store build on these methods.

import {
  CommandId,
  decodeBatch,
  encodeBatch,
  encodeCommandPayload,
  type Acks,
  type CursusBatch,
  type CursusRecord,
} from '../../protocols/cursus/codec/index.js';
import { ClientCore, crq2Fields, jsonOf, type FieldValue, type RequestOptions } from './client-core.js';
import { CursusProtocolError } from './errors.js';
import {
  ackResponse,
  alterTopicConfigResult,
  coordinator,
  deleteTopicResult,
  groupStatus,
  joinGroupResult,
  partitionOffsets,
  readStreamEnvelope,
  snapshotOf,
  topicDefinition,
  topicDescription,
  topicMetadata,
  truncateTopicResult,
  txnStatus,
  type AckResponse,
  type AlterTopicConfigResult,
  type AuthPolicy,
  type CleanupPolicy,
  type Coordinator,
  type DeleteTopicResult,
  type EndTxnResult,
  type GroupStatus,
  type JoinGroupResult,
  type PartitionOffsets,
  type Partitioner,
  type ProducerSession,
  type ReadStreamEnvelope,
  type Snapshot,
  type TopicDefinition,
  type TopicDescription,
  type TopicMetadata,
  type TruncateTopicResult,
  type TxnStatus,
} from './replies.js';
import { CursusStream, type StreamOptions } from './stream.js';

/** CREATE's fields (spec §4 CREATE); on an existing topic only the given ones change. */
export interface TopicConfig {
  partitions?: number;
  idempotent?: boolean;
  eventSourcing?: boolean;
  /** Retained aggregate replay (needs eventSourcing and idempotent). */
  aggregateReplay?: boolean;
  replicationFactor?: number;
  /** 'default': the broker's fallback. */
  minInSyncReplicas?: number | 'default';
  cleanupPolicy?: CleanupPolicy;
  retentionHours?: number;
  retentionBytes?: number;
  partitioner?: Partitioner;
  authPolicy?: AuthPolicy;
  /** Principals allowed to read under auth_policy=acl ('*': any authenticated one); [] clears. */
  readAcl?: readonly string[];
  writeAcl?: readonly string[];
}

export type AcksInput = Acks | 0 | 1 | -1;

export function acksOf(a: AcksInput | undefined): Acks {
  if (a === undefined) return '1';
  const s = String(a);
  if (s !== '0' && s !== '1' && s !== '-1' && s !== 'all') throw new RangeError(`acks must be 0, 1, -1 or 'all' (got ${JSON.stringify(a)})`);
  return s;
}

export interface PublishOptions {
  acks?: AcksInput;
  /** Default: the client's producerId. */
  producerId?: string;
  /** Omitted: the topic's partitioner chooses. */
  partition?: number;
  key?: string | Buffer;
  seqNum?: number;
  epoch?: number;
  idempotent?: boolean;
}

export type Isolation = 'read_committed' | 'read_uncommitted';

export interface ConsumeRequest {
  topic: string;
  partition: number;
  offset: number;
  member: string;
  group?: string;
  autoOffsetReset?: 'earliest' | 'latest';
  isolation?: Isolation;
  /** Records at most (broker default 8192). */
  batch?: number;
  /** Long-poll: wait up to this long for records (the request timeout is extended by it). */
  waitMs?: number;
}

export interface StreamRequest {
  topic: string;
  partition: number;
  member: string;
  group?: string;
  isolation?: Isolation;
  batch?: number;
}

export interface ReadStreamResult extends ReadStreamEnvelope {
  /** The events after the snapshot (or from from_version), in version order. */
  events: CursusRecord[];
}

export interface AppendStreamRequest {
  topic: string;
  key: string;
  /** The version this event gets: the aggregate's current version + 1. */
  version: number;
  message: string | Buffer;
  eventType?: string;
  schemaVersion?: number;
  /** JSON text. */
  metadata?: string;
  eventId?: string;
  producerId?: string;
  seqNum?: number;
  epoch?: number;
}

/** Partition → next offset, for BATCH_COMMIT and SEND_OFFSETS_TO_TXN. */
export type OffsetsInput = ReadonlyMap<number, number> | ReadonlyArray<readonly [number, number]>;

/** `P<partition>:<nextOffset>,...` (spec §6 BATCH_COMMIT). */
export function offsetsField(offsets: OffsetsInput): string {
  const entries = offsets instanceof Map ? [...offsets.entries()] : [...(offsets as ReadonlyArray<readonly [number, number]>)];
  if (entries.length === 0) throw new RangeError('offsets: at least one partition');
  return entries
    .map(([p, o]) => {
      if (!Number.isSafeInteger(p) || p < 0 || !Number.isSafeInteger(o) || o < 0) throw new RangeError(`offsets: P${p}:${o} is not a partition and offset`);
      return `P${p}:${o}`;
    })
    .join(',');
}

export class CursusClient extends ClientCore {
  // -------------------------------------------------------------------------------------------
  // Topic management

  /** CREATE: a missing topic is made from the broker's defaults and `config`; an existing one is patched. */
  async createTopic(topic: string, config: TopicConfig = {}, options?: RequestOptions): Promise<TopicDefinition> {
    const f = await this.callText(
      'CREATE',
      {
        topic,
        partitions: config.partitions,
        idempotent: config.idempotent,
        event_sourcing: config.eventSourcing,
        aggregate_replay: config.aggregateReplay,
        replication_factor: config.replicationFactor,
        min_in_sync_replicas: config.minInSyncReplicas,
        cleanup_policy: config.cleanupPolicy,
        retention_hours: config.retentionHours,
        retention_bytes: config.retentionBytes,
        partitioner: config.partitioner,
        auth_policy: config.authPolicy,
        read_acl: config.readAcl?.join(','),
        write_acl: config.writeAcl?.join(','),
      },
      options,
    );
    return topicDefinition(f);
  }

  /** ALTER_TOPIC_CONFIG: replaces the topic's min_in_sync_replicas override ('default' removes it). */
  async alterTopicConfig(topic: string, config: { minInSyncReplicas: number | 'default' }, options?: RequestOptions): Promise<AlterTopicConfigResult> {
    return alterTopicConfigResult(await this.callText('ALTER_TOPIC_CONFIG', { topic, min_in_sync_replicas: config.minInSyncReplicas }, options));
  }

  async deleteTopic(topic: string, opts: { ifExists?: boolean } = {}, options?: RequestOptions): Promise<DeleteTopicResult> {
    return deleteTopicResult(await this.callText('DELETE', { topic, if_exists: opts.ifExists }, options));
  }

  /** TRUNCATE: empties every partition, keeping the definition; `expectedRevision` must be current. */
  async truncateTopic(topic: string, expectedRevision: number, options?: RequestOptions): Promise<TruncateTopicResult> {
    return truncateTopicResult(await this.callText('TRUNCATE', { topic, expected_revision: expectedRevision }, options));
  }

  async listTopics(options?: RequestOptions): Promise<string[]> {
    return (await this.callText('LIST', {}, options)).list('topics');
  }

  async describeTopic(topic: string, options?: RequestOptions): Promise<TopicDescription> {
    return topicDescription(await this.callJson('DESCRIBE', { topic }, options));
  }

  async metadata(topic: string, options?: RequestOptions): Promise<TopicMetadata> {
    return topicMetadata(await this.callText('METADATA', { topic }, options));
  }

  /** Earliest, latest (next committed), LEO and HWM per partition (one partition when given). */
  async listOffsets(topic: string, partition?: number, options?: RequestOptions): Promise<PartitionOffsets[]> {
    return partitionOffsets(await this.callText('LIST_OFFSETS', { topic, partition }, options));
  }

  async findCoordinator(key: { group: string } | { transactionalId: string }, options?: RequestOptions): Promise<Coordinator> {
    const values = 'group' in key ? { group: key.group } : { transactional_id: key.transactionalId };
    return coordinator(await this.callText('FIND_COORDINATOR', values, options));
  }

  /** The broker's command names. */
  async help(options?: RequestOptions): Promise<string[]> {
    return (await this.callText('HELP', {}, options)).list('commands');
  }

  /** LIST_CLUSTER's broker list (JSON, as the broker gives it). */
  async listCluster(options?: RequestOptions): Promise<unknown> {
    return (await this.callText('LIST_CLUSTER', {}, options)).json('brokers');
  }

  /** CLUSTER_STATUS's report (JSON, as the broker gives it). */
  async clusterStatus(options?: RequestOptions): Promise<unknown> {
    return (await this.callText('CLUSTER_STATUS', {}, options)).json('cluster');
  }

  // -------------------------------------------------------------------------------------------
  // Publishing and consuming

  /** The producerId sent when a publish names none. */
  readonly producerId = `quartet-${process.pid}-${Math.floor(Math.random() * 0xffffffff).toString(16)}`;

  /** PUBLISH of one message (CRQ2). Resolves with the AckResponse, or null for acks 0. */
  async publish(topic: string, message: string | Buffer, opts: PublishOptions = {}, options?: RequestOptions): Promise<AckResponse | null> {
    const acks = acksOf(opts.acks);
    const fields = crq2Fields({
      topic,
      message,
      acks,
      producerId: opts.producerId ?? this.producerId,
      partition: opts.partition,
      key: opts.key,
      seqNum: opts.seqNum,
      epoch: opts.epoch,
      isIdempotent: opts.idempotent,
    });
    const payload = await this.callRaw('PUBLISH', fields, encodeCommandPayload(fields), acks === '0' ? 'none' : 'response', options);
    return payload === null ? null : ackResponse(jsonOf('PUBLISH', payload));
  }

  /** PUBLISH of a CBV2 batch (its records carry the batch's topic and partition). Null for acks 0. */
  async publishBatch(batch: Omit<CursusBatch, 'recordCount'>, options?: RequestOptions): Promise<AckResponse | null> {
    return this.publishEncoded(batch.topic, batch.partition, batch.acks, encodeBatch(batch), options);
  }

  /** PUBLISH of an encoded CBV2 batch (the producer's path: its bytes are reused on a retry). */
  async publishEncoded(topic: string, partition: number, acks: Acks, chunks: readonly Buffer[], options?: RequestOptions): Promise<AckResponse | null> {
    const route = { topic, partition: String(partition) };
    const payload = await this.callRaw('PUBLISH', route, chunks, acks === '0' ? 'none' : 'response', options);
    return payload === null ? null : ackResponse(jsonOf('PUBLISH', payload));
  }

  /** CONSUME: one poll of a partition; the reply's CBV2 batch (0 records when nothing came). */
  async consume(request: ConsumeRequest, options?: RequestOptions): Promise<CursusBatch> {
    const fields = crq2Fields({
      topic: request.topic,
      partition: request.partition,
      offset: request.offset,
      member: request.member,
      group: request.group,
      autoOffsetReset: request.autoOffsetReset,
      isolation: request.isolation,
      batch: request.batch,
      wait_ms: request.waitMs,
    });
    const payload = (await this.callRaw('CONSUME', fields, encodeCommandPayload(fields), 'response', { ...options, extraTimeoutMs: request.waitMs ?? 0 }))!;
    const b = decodeBatch(payload);
    if (!b.ok) throw new CursusProtocolError(`CONSUME reply: ${b.reason}`);
    return b.value;
  }

  /**
   * STREAM: continuous push of one partition from the group's committed offset. The returned
   * stream yields batches, keepalives and the closing STREAM_CONTROL; stop() closes its connection
   * (the only way a client ends a stream). Runs on a dedicated connection of its own unless `via`.
   */
  stream(request: StreamRequest, opts: StreamOptions & RequestOptions = {}): CursusStream {
    const via = opts.via ?? this.dedicated();
    const own = opts.via === undefined;
    const values: Record<string, FieldValue> = {
      topic: request.topic,
      partition: request.partition,
      member: request.member,
      group: request.group,
      isolation: request.isolation,
      batch: request.batch,
    };
    return new CursusStream(opts, (sink) =>
      this.callStream('STREAM', values, sink.onFrame, {
        via,
        endless: true,
        idleTimeoutMs: opts.idleTimeoutMs ?? this.streamIdleTimeoutMs,
        started: sink.started,
      }).finally(() => {
        if (own) void this.closeDedicated(via);
      }),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Consumer groups and offsets

  /** REGISTER_GROUP with exactly one selector. Resolves with the topics it expanded to. */
  async registerGroup(group: string, selector: { topic: string } | { topics: readonly string[] } | { pattern: string }, options?: RequestOptions): Promise<{ group: string; topics: string[] }> {
    const values: Record<string, FieldValue> = { group };
    if ('topic' in selector) values['topic'] = selector.topic;
    else if ('topics' in selector) values['topics'] = selector.topics.join(',');
    else values['pattern'] = selector.pattern;
    const f = await this.callText('REGISTER_GROUP', values, options);
    return { group: f.string('group'), topics: f.list('topics') };
  }

  /** JOIN_GROUP: the broker appends a suffix to `member`; use the returned memberId afterwards. */
  async joinGroup(request: { group: string; member: string; topic?: string }, options?: RequestOptions): Promise<JoinGroupResult> {
    return joinGroupResult(await this.callText('JOIN_GROUP', request, options));
  }

  /** SYNC_GROUP: the member's confirmed partitions for `generation`. */
  async syncGroup(request: { group: string; member: string; generation: number; topic?: string }, options?: RequestOptions): Promise<number[]> {
    return (await this.callText('SYNC_GROUP', request, options)).partitions('assignments');
  }

  async heartbeat(request: { topic: string; group: string; member: string; generation?: number }, options?: RequestOptions): Promise<{ memberId: string; generation: number }> {
    const f = await this.callText('HEARTBEAT', request, options);
    return { memberId: f.string('member'), generation: f.int('generation') };
  }

  async leaveGroup(request: { topic: string; group: string; member: string }, options?: RequestOptions): Promise<void> {
    await this.callText('LEAVE_GROUP', request, options);
  }

  /** COMMIT_OFFSET: `offset` is the next one to read (last processed + 1). */
  async commitOffset(request: { topic: string; partition: number; group: string; offset: number; member: string; generation: number }, options?: RequestOptions): Promise<void> {
    await this.callText('COMMIT_OFFSET', request, options);
  }

  /** BATCH_COMMIT: all or nothing. Resolves with how many partitions were committed. */
  async batchCommit(request: { topic: string; group: string; member: string; generation: number; offsets: OffsetsInput }, options?: RequestOptions): Promise<number> {
    const f = await this.callText('BATCH_COMMIT', { ...request, offsets: offsetsField(request.offsets) }, options);
    return f.int('batched');
  }

  /** FETCH_OFFSET: the group's committed next offset (0 when none). */
  async fetchOffset(request: { topic: string; partition: number; group: string }, options?: RequestOptions): Promise<number> {
    return (await this.callText('FETCH_OFFSET', request, options)).int('offset');
  }

  async groupStatus(group: string, options?: RequestOptions): Promise<GroupStatus> {
    return groupStatus(await this.callJson('GROUP_STATUS', { group }, options));
  }

  async listGroups(options?: RequestOptions): Promise<string[]> {
    return (await this.callText('LIST_GROUPS', {}, options)).list('groups');
  }

  // -------------------------------------------------------------------------------------------
  // Transactions (the low-level commands; CursusTransactionalProducer drives them)

  async initProducerId(transactionalId: string, options?: RequestOptions): Promise<ProducerSession> {
    const f = await this.callText('INIT_PRODUCER_ID', { transactional_id: transactionalId }, options);
    return { transactionalId: f.string('transactional_id'), producerId: f.string('producerId'), epoch: f.int('epoch') };
  }

  async beginTxn(session: ProducerSession, options?: RequestOptions): Promise<void> {
    await this.callText('BEGIN_TXN', { transactional_id: session.transactionalId, producerId: session.producerId, epoch: session.epoch }, options);
  }

  async txnPublish(
    session: ProducerSession,
    record: { topic: string; message: string | Buffer; seqNum: number; partition?: number; key?: string | Buffer },
    options?: RequestOptions,
  ): Promise<{ topic: string; partition: number }> {
    const f = await this.callText(
      'TXN_PUBLISH',
      {
        transactional_id: session.transactionalId,
        producerId: session.producerId,
        epoch: session.epoch,
        topic: record.topic,
        partition: record.partition,
        key: record.key,
        seqNum: record.seqNum,
        message: record.message,
      },
      options,
    );
    return { topic: f.string('topic'), partition: f.int('partition') };
  }

  /** SEND_OFFSETS_TO_TXN: stages the group's next offsets; they commit with the transaction. */
  async sendOffsetsToTxn(
    session: ProducerSession,
    request: { topic: string; group: string; member: string; generation: number; offsets: OffsetsInput },
    options?: RequestOptions,
  ): Promise<number> {
    const f = await this.callText(
      'SEND_OFFSETS_TO_TXN',
      {
        transactional_id: session.transactionalId,
        producerId: session.producerId,
        epoch: session.epoch,
        topic: request.topic,
        group: request.group,
        member: request.member,
        generation: request.generation,
        offsets: offsetsField(request.offsets),
      },
      options,
    );
    return f.int('staged_offsets');
  }

  async endTxn(session: ProducerSession, result: 'commit' | 'abort', options?: RequestOptions): Promise<EndTxnResult> {
    const f = await this.callText('END_TXN', { transactional_id: session.transactionalId, producerId: session.producerId, epoch: session.epoch, result }, options);
    return { transactionalId: f.string('transactional_id'), state: f.string('state'), messages: f.int('messages'), offsets: f.int('offsets') };
  }

  async txnStatus(transactionalId: string, options?: RequestOptions): Promise<TxnStatus> {
    return txnStatus(await this.callText('TXN_STATUS', { transactional_id: transactionalId }, options));
  }

  // -------------------------------------------------------------------------------------------
  // Event sourcing (the low-level commands; CursusEventStore drives them)

  async appendStream(request: AppendStreamRequest, options?: RequestOptions): Promise<{ version: number; offset: number; partition: number }> {
    const f = await this.callText(
      'APPEND_STREAM',
      {
        topic: request.topic,
        key: request.key,
        version: request.version,
        message: request.message,
        event_type: request.eventType,
        schema_version: request.schemaVersion,
        metadata: request.metadata,
        event_id: request.eventId,
        producerId: request.producerId,
        seqNum: request.seqNum,
        epoch: request.epoch,
      },
      options,
    );
    return { version: f.int('version'), offset: f.int('offset'), partition: f.int('partition') };
  }

  /**
   * READ_STREAM: two stream frames, the JSON envelope (with the snapshot when one applies) and the
   * CBV2 batch of the events after it. A failure is one ERROR frame and no batch.
   */
  async readStream(request: { topic: string; key: string; fromVersion?: number }, options?: RequestOptions): Promise<ReadStreamResult> {
    let envelope: ReadStreamEnvelope | null = null;
    let events: CursusRecord[] | null = null;
    await this.callStream(
      'READ_STREAM',
      { topic: request.topic, key: request.key, from_version: request.fromVersion },
      (frame) => {
        if (envelope === null) {
          envelope = readStreamEnvelope(jsonOf('READ_STREAM', frame.payload));
          return;
        }
        if (events !== null) throw new CursusProtocolError('READ_STREAM: more than two frames');
        const b = decodeBatch(frame.payload);
        if (!b.ok) throw new CursusProtocolError(`READ_STREAM batch: ${b.reason}`);
        events = b.value.records;
      },
      { ...options },
    );
    const env = envelope as ReadStreamEnvelope | null;
    const evs = events as CursusRecord[] | null;
    if (env === null || evs === null) throw new CursusProtocolError('READ_STREAM: the envelope and the batch frame did not both come');
    if (evs.length !== env.count) throw new CursusProtocolError(`READ_STREAM: envelope count ${env.count}, batch of ${evs.length} events`);
    return { ...env, events: evs };
  }

  /** STREAM_VERSION: the aggregate's current version (0 when it has no events). */
  async streamVersion(topic: string, key: string, options?: RequestOptions): Promise<number> {
    return (await this.callText('STREAM_VERSION', { topic, key }, options)).int('version');
  }

  async saveSnapshot(request: { topic: string; key: string; version: number; message: string | Buffer }, options?: RequestOptions): Promise<{ version: number; partition: number }> {
    const f = await this.callText('SAVE_SNAPSHOT', request, options);
    return { version: f.int('version'), partition: f.int('partition') };
  }

  /** READ_SNAPSHOT: the latest snapshot, or null. */
  async readSnapshot(topic: string, key: string, options?: RequestOptions): Promise<Snapshot | null> {
    return snapshotOf('READ_SNAPSHOT snapshot', (await this.callText('READ_SNAPSHOT', { topic, key }, options)).json('snapshot'));
  }

  /**
   * AGGREGATE_REPLAY_PROOF: the broker's proof (JSON, as it gives it) that the committed retained
   * log of `matchId` holds exactly sequences 1..last.
   */
  async aggregateReplayProof(topic: string, matchId: string, opts: { partition?: number; expectedLastSequence?: number } = {}, options?: RequestOptions): Promise<unknown> {
    const f = await this.callText('AGGREGATE_REPLAY_PROOF', { topic, match_id: matchId, partition: opts.partition, expected_last_sequence: opts.expectedLastSequence }, options);
    return f.json('proof');
  }

  /** AGGREGATE_EVENT_RANGE_READ: the proof and the raw event envelopes of a sequence range (JSON). */
  async aggregateEventRangeRead(
    topic: string,
    matchId: string,
    range: { fromSequence: number; toSequence: number; maxRecords: number },
    options?: RequestOptions,
  ): Promise<{ proof: unknown; events: unknown[] }> {
    const v = await this.callJson(
      'AGGREGATE_EVENT_RANGE_READ',
      { topic, match_id: matchId, from_sequence: range.fromSequence, to_sequence: range.toSequence, max_records: range.maxRecords },
      options,
    );
    if (v['status'] !== 'OK' || !Array.isArray(v['events'])) throw new CursusProtocolError('AGGREGATE_EVENT_RANGE_READ reply: not {"status":"OK",...,"events":[...]}');
    return { proof: v['proof'], events: v['events'] as unknown[] };
  }

  /** A command this class does not wrap, answered with an OK line: its fields. */
  async command(name: string, values: Readonly<Record<string, FieldValue>>, options?: RequestOptions): Promise<Array<[string, string]>> {
    if (CommandId[name] === undefined) throw new RangeError(`unknown Cursus command ${name}`);
    return (await this.callText(name, values, options)).entries();
  }
}
