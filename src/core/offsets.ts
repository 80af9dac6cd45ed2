// Committed consumer offsets for every protocol: one store keyed by (protocol scope, group or
// consumer id, topic internal id, partition). The scope keeps a Kafka group and an Iggy consumer
// of the same name apart. Keying by the topic's internal id means a topic deleted and recreated
// under the same name starts with no offsets, as in Kafka.
//
// Commits are written through to the metadata store before they are acknowledged (synchronous=FULL
// under SQLite), so a committed offset survives a crash. Commits are per request, not per record.
//
// Offsets deleted (a group's, or some partitions') and reset are logged here, for every protocol
// (groups/events.ts), named as the protocol reads its keys (GroupEvents.nameOffsetKeys); commits
// are not.

import type { Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import type { GroupEvents } from './groups/events.js';
import type { MetadataStore, OffsetRecord } from './metadata-store.js';

// Named limits.
/** Kafka's offset.metadata.max.bytes default. */
export const offsetMetadataBytesMax = 4096;
export const offsetsPerCommitMax = 100_000;
export const scopeBytesMax = 64;
export const groupIdBytesMax = 1024;

export interface OffsetCommit {
  topicInternalId: number;
  partition: number;
  /** The next offset to consume. */
  offset: number;
  /** Kafka's committed leader epoch; -1 (default) when unknown. */
  leaderEpoch?: number;
  metadata?: string;
}

export interface CommittedOffset {
  scope: string;
  group: string;
  topicInternalId: number;
  partition: number;
  offset: number;
  leaderEpoch: number;
  metadata: string;
  /** Broker clock (ms) at commit. */
  commitTime: number;
}

export class OffsetStore {
  constructor(
    private readonly store: MetadataStore,
    private readonly clock: Clock,
    private readonly events: GroupEvents | null = null,
  ) {}

  /** Commits every entry in one transaction: all of them are stored, or none. */
  async commit(scope: string, group: string, commits: readonly OffsetCommit[]): Promise<CommittedOffset[]> {
    assertKey(scope, group);
    if (commits.length > offsetsPerCommitMax) throw new QuartetError('resource_exhausted', `at most ${offsetsPerCommitMax} offsets per commit`);
    const commitTime = this.clock.now();
    const records: OffsetRecord[] = commits.map((c) => toRecord(scope, group, c, commitTime));
    await this.store.commitOffsets(records);
    return records;
  }

  fetch(scope: string, group: string, topicInternalId: number, partition: number): Promise<CommittedOffset | null> {
    return this.store.fetchOffset(scope, group, topicInternalId, partition);
  }

  /** Every committed offset of the group, optionally narrowed to one topic. */
  async fetchGroup(scope: string, group: string, topicInternalId?: number): Promise<CommittedOffset[]> {
    const all = await this.store.listGroupOffsets(scope, group);
    return topicInternalId === undefined ? all : all.filter((o) => o.topicInternalId === topicInternalId);
  }

  /** The topics (internal ids) a group has committed offsets for. */
  groupTopics(scope: string, group: string): Promise<number[]> {
    return this.store.listGroupOffsetTopics(scope, group);
  }

  /** Groups with at least one committed offset in the scope. */
  listGroups(scope: string): Promise<string[]> {
    return this.store.listOffsetGroups(scope);
  }

  /** Deletes every offset of the group; returns how many there were. */
  async deleteGroup(scope: string, group: string): Promise<number> {
    const deleted = await this.store.deleteGroupOffsets(scope, group);
    if (deleted > 0) this.events?.offsetsDeleted(this.events.offsetsLabel(scope, group), { offsets: deleted });
    return deleted;
  }

  /** Deletes the group's offsets of these partitions (all or none); returns how many there were. */
  async deletePartitions(scope: string, group: string, partitions: ReadonlyArray<{ topicInternalId: number; partition: number }>): Promise<number> {
    assertKey(scope, group);
    const deleted = await this.store.deleteGroupPartitionOffsets(scope, group, partitions);
    if (deleted > 0) this.events?.offsetsDeleted(this.events.offsetsLabel(scope, group), { offsets: deleted, partitions: describePartitions(partitions) });
    return deleted;
  }

  /** An operator moved the group's offsets (a reset): committed as commit() does, and logged. */
  async reset(scope: string, group: string, commits: readonly OffsetCommit[]): Promise<CommittedOffset[]> {
    const committed = await this.commit(scope, group, commits);
    this.events?.offsetsReset(this.events.offsetsLabel(scope, group), { partitions: describePartitions(commits) });
    return committed;
  }

  /** Called when a topic is deleted: every scope and group loses its offsets for it. */
  deleteTopic(topicInternalId: number): Promise<number> {
    return this.store.deleteTopicOffsets(topicInternalId);
  }

  /** Called when partitions are removed: every scope and group loses its offsets for them. */
  deletePartitionsFrom(topicInternalId: number, fromPartition: number): Promise<number> {
    return this.store.deletePartitionOffsets(topicInternalId, fromPartition);
  }
}

/** "topicInternalId/partition[=offset],..." for a log line, the first 20 at most. */
function describePartitions(partitions: ReadonlyArray<{ topicInternalId: number; partition: number; offset?: number }>): string {
  const shown = partitions.slice(0, 20).map((p) => `${p.topicInternalId}/${p.partition}${p.offset !== undefined ? `=${p.offset}` : ''}`);
  return partitions.length > 20 ? `${shown.join(',')},...(${partitions.length})` : shown.join(',');
}

function toRecord(scope: string, group: string, c: OffsetCommit, commitTime: number): OffsetRecord {
  // Negative offsets are stored as Kafka stores them (KafkaJS commits -2 when it resets to the
  // earliest offset; clients read a negative committed offset as none).
  if (!Number.isSafeInteger(c.offset)) throw new QuartetError('invalid_request', `invalid committed offset ${c.offset}`);
  if (!Number.isInteger(c.partition) || c.partition < 0) throw new QuartetError('invalid_request', `invalid partition ${c.partition}`);
  const metadata = c.metadata ?? '';
  if (Buffer.byteLength(metadata, 'utf8') > offsetMetadataBytesMax) {
    throw new QuartetError('invalid_request', `offset metadata is longer than ${offsetMetadataBytesMax} bytes`);
  }
  return {
    scope,
    group,
    topicInternalId: c.topicInternalId,
    partition: c.partition,
    offset: c.offset,
    leaderEpoch: c.leaderEpoch ?? -1,
    metadata,
    commitTime,
  };
}

function assertKey(scope: string, group: string): void {
  if (scope.length === 0 || Buffer.byteLength(scope) > scopeBytesMax) throw new QuartetError('invalid_request', `invalid offset scope '${scope}'`);
  if (Buffer.byteLength(group) > groupIdBytesMax) throw new QuartetError('invalid_request', `group id longer than ${groupIdBytesMax} bytes`);
}
