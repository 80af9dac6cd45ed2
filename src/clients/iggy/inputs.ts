// The Iggy SDK's inputs: the friendly forms the client's methods take (ids by number or name,
// consumers, polling strategies, partitioning, topic options) and their conversion to the codec's
// types, and host:port parsing.

import {
  numericId,
  option,
  stringId,
  u64Max,
  writeIdentifier,
  writePartitioning,
  ConsumerKind,
  Writer,
  PollingKind,
  type Consumer,
  type Identifier,
  type OptionEntry,
  type Partitioning,
  type PollingStrategy,
} from '../../protocols/iggy/codec/index.js';

/** A stream, topic, user or group: a numeric id, a name, or a codec Identifier. */
export type Id = number | string | Identifier;

export function toIdentifier(id: Id): Identifier {
  if (typeof id === 'number') return numericId(id);
  if (typeof id === 'string') return stringId(id);
  return id;
}

export type IggyCredentials = { username: string; password: string } | { token: string };

/** A consumer (its own offsets) or a consumer group (shared offsets, assigned partitions). */
export type ConsumerInput = Consumer | { consumer: Id } | { group: Id };

export function toConsumer(c: ConsumerInput): Consumer {
  if ('kind' in c) return c;
  if ('consumer' in c) return { kind: ConsumerKind.consumer, id: toIdentifier(c.consumer) };
  return { kind: ConsumerKind.consumerGroup, id: toIdentifier(c.group) };
}

/** Where polling starts: next (after the stored offset), first, last, an offset or a timestamp (µs). */
export type PollStrategyInput = 'next' | 'first' | 'last' | { offset: bigint | number } | { timestamp: bigint } | PollingStrategy;

export function toPollingStrategy(s: PollStrategyInput): PollingStrategy {
  if (s === 'next') return { kind: PollingKind.next, value: 0n };
  if (s === 'first') return { kind: PollingKind.first, value: 0n };
  if (s === 'last') return { kind: PollingKind.last, value: 0n };
  if ('kind' in s) return s;
  if ('offset' in s) return { kind: PollingKind.offset, value: BigInt(s.offset) };
  return { kind: PollingKind.timestamp, value: s.timestamp };
}

/** Balanced (server round-robin), a partition id, or a messages key (server hashes it). */
export type PartitioningInput = 'balanced' | { partitionId: number } | { key: Buffer | string } | Partitioning;

export interface SendMetadata {
  streamId: Identifier;
  topicId: Identifier;
  partitioning: Partitioning;
}

/**
 * The metadata of a SendMessages request, encoded once to throw here what encoding the request
 * would throw (a name or key over 255 bytes), before the batch takes a pooled buffer.
 */
export function sendMetadata(streamId: Id, topicId: Id, partitioning: Partitioning): SendMetadata {
  const meta = { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId), partitioning };
  const w = new Writer();
  writeIdentifier(w, meta.streamId);
  writeIdentifier(w, meta.topicId);
  writePartitioning(w, meta.partitioning);
  return meta;
}

export function toPartitioning(p: PartitioningInput): Partitioning {
  if (p === 'balanced') return { kind: 'balanced' };
  if ('kind' in p) return p;
  if ('partitionId' in p) return { kind: 'partitionId', partitionId: p.partitionId };
  return { kind: 'messagesKey', key: typeof p.key === 'string' ? Buffer.from(p.key, 'utf8') : p.key };
}

/** Topic settings (the options block of CreateTopic / UpdateTopic; server notes §8). */
export interface TopicOptions {
  compressionAlgorithm?: 'none' | 'gzip';
  /** µs, or 'never'. */
  messageExpiryMicros?: bigint | 'never';
  /** Bytes, or 'unlimited'. */
  maxTopicSizeBytes?: bigint | 'unlimited';
  segmentSizeBytes?: bigint | number;
  enforceFsync?: boolean;
  messagesRequiredToSave?: number;
  sizeOfMessagesRequiredToSave?: bigint | number;
  preallocateSegments?: boolean;
  /** Raw entries appended as they are. */
  extra?: OptionEntry[];
}

export function topicOptionsBlock(o: TopicOptions = {}): OptionEntry[] {
  const out: OptionEntry[] = [];
  if (o.compressionAlgorithm !== undefined) out.push(option('compression_algorithm', { kind: 'string', value: o.compressionAlgorithm }));
  if (o.messageExpiryMicros !== undefined) {
    out.push(option('message_expiry', { kind: 'uint64', value: o.messageExpiryMicros === 'never' ? u64Max : o.messageExpiryMicros }));
  }
  if (o.maxTopicSizeBytes !== undefined) {
    out.push(option('max_topic_size', { kind: 'uint64', value: o.maxTopicSizeBytes === 'unlimited' ? u64Max : o.maxTopicSizeBytes }));
  }
  if (o.segmentSizeBytes !== undefined) out.push(option('segment_size', { kind: 'uint64', value: BigInt(o.segmentSizeBytes) }));
  if (o.enforceFsync !== undefined) out.push(option('enforce_fsync', { kind: 'bool', value: o.enforceFsync }));
  if (o.messagesRequiredToSave !== undefined) out.push(option('messages_required_to_save', { kind: 'uint32', value: o.messagesRequiredToSave }));
  if (o.sizeOfMessagesRequiredToSave !== undefined) {
    out.push(option('size_of_messages_required_to_save', { kind: 'uint64', value: BigInt(o.sizeOfMessagesRequiredToSave) }));
  }
  if (o.preallocateSegments !== undefined) out.push(option('preallocate_segments', { kind: 'bool', value: o.preallocateSegments }));
  if (o.extra) out.push(...o.extra);
  return out;
}


export function groupRef(streamId: Id, topicId: Id, groupId: Id): { streamId: Identifier; topicId: Identifier; groupId: Identifier } {
  return { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId), groupId: toIdentifier(groupId) };
}

export function offsetRef(ref: { consumer: ConsumerInput; streamId: Id; topicId: Id; partitionId?: number | null }): {
  consumer: Consumer;
  streamId: Identifier;
  topicId: Identifier;
  partitionId: number | null;
} {
  return { consumer: toConsumer(ref.consumer), streamId: toIdentifier(ref.streamId), topicId: toIdentifier(ref.topicId), partitionId: ref.partitionId ?? null };
}

export function userIdNumber(id: Id): number | null {
  if (typeof id === 'number') return id;
  if (typeof id === 'object' && id.kind === 'numeric') return id.value;
  return null;
}

export function splitAddr(addr: string): [string, number] {
  const i = addr.lastIndexOf(':');
  if (i <= 0) throw new RangeError(`address "${addr}" is not host:port`);
  let host = addr.slice(0, i);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const port = Number(addr.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`address "${addr}" has a bad port`);
  return [host, port];
}
