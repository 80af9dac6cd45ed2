// The Wire v2 command IDs (docs/protocols/cursus-wire-v2.md §5), with each command's CRQ2 fields
// and reply shape. IDs 1-38 follow Cursus's HELP order; 39 on are the commands the v2 spec adds;
// 256 on are broker-internal; 0 and 32 (PROTOCOL_INFO in v1) are never assigned.

export type ReplyShape = 'text' | 'json' | 'batch' | 'stream' | 'negotiation';

export interface CommandSpec {
  id: number;
  name: string;
  /** CRQ2 keys that must be present. */
  required: readonly string[];
  /** CRQ2 keys that may be present (besides the inline auth fields). */
  optional: readonly string[];
  reply: ReplyShape;
  /** Broker-to-broker only: refused on the client listener. */
  internal?: boolean;
}

const spec = (id: number, name: string, required: string[], optional: string[], reply: ReplyShape, internal = false): CommandSpec => ({ id, name, required, optional, reply, ...(internal ? { internal } : {}) });

/** Fields every request may carry (inline authentication, spec §8). */
export const inlineAuthFields = ['principal', 'auth_token'] as const;

export const commandSpecs: readonly CommandSpec[] = [
  spec(1, 'CREATE', ['topic'], ['partitions', 'idempotent', 'event_sourcing', 'aggregate_replay', 'replication_factor', 'min_in_sync_replicas', 'cleanup_policy', 'retention_hours', 'retention_bytes', 'partitioner', 'auth_policy', 'read_acl', 'write_acl'], 'text'),
  spec(2, 'DELETE', ['topic'], ['if_exists'], 'text'),
  spec(3, 'LIST', [], [], 'text'),
  spec(4, 'PUBLISH', ['topic', 'producerId', 'message'], ['acks', 'partition', 'key', 'seqNum', 'epoch', 'isIdempotent'], 'json'),
  spec(5, 'CONSUME', ['topic', 'partition', 'offset', 'member'], ['group', 'autoOffsetReset', 'isolation', 'batch', 'wait_ms'], 'batch'),
  spec(6, 'STREAM', ['topic', 'partition', 'member'], ['group', 'isolation', 'batch'], 'stream'),
  spec(7, 'JOIN_GROUP', ['group', 'member'], ['topic'], 'text'),
  spec(8, 'SYNC_GROUP', ['group', 'member', 'generation'], ['topic'], 'text'),
  spec(9, 'LEAVE_GROUP', ['topic', 'group', 'member'], [], 'text'),
  spec(10, 'HEARTBEAT', ['topic', 'group', 'member'], ['generation'], 'text'),
  spec(11, 'COMMIT_OFFSET', ['topic', 'partition', 'group', 'offset', 'member', 'generation'], [], 'text'),
  spec(12, 'BATCH_COMMIT', ['topic', 'group', 'member', 'generation', 'offsets'], [], 'text'),
  spec(13, 'FETCH_OFFSET', ['topic', 'partition', 'group'], [], 'text'),
  spec(14, 'LIST_OFFSETS', ['topic'], ['partition'], 'text'),
  spec(15, 'INIT_PRODUCER_ID', ['transactional_id'], [], 'text'),
  spec(16, 'BEGIN_TXN', ['transactional_id', 'producerId', 'epoch'], [], 'text'),
  spec(17, 'TXN_PUBLISH', ['transactional_id', 'topic', 'producerId', 'seqNum', 'epoch', 'message'], ['partition', 'key'], 'text'),
  spec(18, 'SEND_OFFSETS_TO_TXN', ['transactional_id', 'producerId', 'epoch', 'topic', 'group', 'member', 'generation', 'offsets'], [], 'text'),
  spec(19, 'END_TXN', ['transactional_id', 'producerId', 'epoch', 'result'], [], 'text'),
  spec(20, 'TXN_STATUS', ['transactional_id'], [], 'text'),
  spec(21, 'REGISTER_GROUP', ['group'], ['topic', 'topics', 'pattern'], 'text'),
  spec(22, 'GROUP_STATUS', ['group'], [], 'json'),
  spec(23, 'LIST_GROUPS', [], [], 'text'),
  spec(24, 'DESCRIBE', ['topic'], [], 'json'),
  spec(25, 'APPEND_STREAM', ['topic', 'key', 'version', 'message'], ['event_type', 'schema_version', 'metadata', 'event_id', 'producerId', 'seqNum', 'epoch'], 'text'),
  spec(26, 'READ_STREAM', ['topic', 'key'], ['from_version'], 'stream'),
  spec(27, 'SAVE_SNAPSHOT', ['topic', 'key', 'version', 'message'], [], 'text'),
  spec(28, 'READ_SNAPSHOT', ['topic', 'key'], [], 'text'),
  spec(29, 'STREAM_VERSION', ['topic', 'key'], [], 'text'),
  spec(30, 'METADATA', ['topic'], [], 'text'),
  spec(31, 'FIND_COORDINATOR', [], ['group', 'transactional_id'], 'text'),
  spec(33, 'NEGOTIATE', [], [], 'negotiation'),
  spec(34, 'LIST_CLUSTER', [], [], 'text'),
  spec(35, 'CLUSTER_STATUS', [], [], 'text'),
  spec(36, 'ELECT_LEADER', ['topic', 'partition', 'broker'], [], 'text'),
  spec(37, 'HELP', [], [], 'text'),
  spec(38, 'EXIT', [], [], 'text'),
  spec(39, 'AUTH', ['principal', 'token'], [], 'text'),
  spec(40, 'ALTER_TOPIC_CONFIG', ['topic', 'min_in_sync_replicas'], [], 'text'),
  spec(41, 'TRUNCATE', ['topic', 'expected_revision'], [], 'text'),
  spec(42, 'AGGREGATE_REPLAY_PROOF', ['topic', 'match_id'], ['partition', 'expected_last_sequence'], 'text'),
  spec(43, 'AGGREGATE_EVENT_RANGE_READ', ['topic', 'match_id', 'from_sequence', 'to_sequence', 'max_records'], [], 'json'),
  spec(256, 'REPLICATE_MESSAGE', [], [], 'text', true),
  spec(257, 'REPLICATE_SNAPSHOT', [], [], 'text', true),
  spec(258, 'LIST_SNAPSHOTS', [], [], 'text', true),
  spec(259, 'FETCH_SNAPSHOT', [], [], 'text', true),
  spec(260, 'CATCHUP_SNAPSHOTS', [], [], 'text', true),
  spec(261, 'RAFT_APPLY', [], [], 'text', true),
  spec(262, 'INTERNAL_BATCH', [], [], 'text', true),
];

/** Command IDs by name. */
export const CommandId: Readonly<Record<string, number>> = Object.fromEntries(commandSpecs.map((c) => [c.name, c.id]));

const byId: ReadonlyMap<number, CommandSpec> = new Map(commandSpecs.map((c) => [c.id, c]));

/** The command with this ID, or undefined for an unassigned or reserved one. */
export function commandSpec(id: number): CommandSpec | undefined {
  return byId.get(id);
}

/** The command's name, or `#<id>` for an unassigned one (for messages). */
export function commandName(id: number): string {
  return byId.get(id)?.name ?? `#${id}`;
}
