// Where Cursus v1 and Wire v2 differ, in one table (docs/protocols/cursus-v1.md "Mapping"): how a
// v1 command becomes a v2 request (which v2 command, which keys under which names, what v1 checks
// first) and how the v2 reply becomes the line a v1 broker would have written. A v1 command not
// listed here is dispatched under its own name with its keys as they are and its reply fields
// as the v2 handler gives them.
//
// Requests: only the keys the v2 command accepts are passed on (v1 ignores keys it does not know,
// so dropping them changes nothing a v1 client relies on); keys that are not valid CRQ2 keys
// cannot be passed at all. Replies: OK lines keep the v1 fields in v1's order and drop the
// fields Wire v2 added; values are written as v1 writes them (`%s`, lists as Go's `%v`).

import { commandSpec, CommandId, inlineAuthFields } from '../codec/commands.js';

/** A field of v1's OK line: where its value comes from. */
export type V1ReplyField =
  /** The v2 reply's field of the same name (omitted when the reply lacks it). */
  | string
  /** Another field of the v2 reply. */
  | { readonly key: string; readonly reply: string }
  /** A value taken from the v1 request's arguments (omitted when it gives undefined). */
  | { readonly key: string; readonly request: (args: ReadonlyMap<string, Buffer>) => string | undefined }
  /** A fixed value. */
  | { readonly key: string; readonly value: string };

export interface V1Mapping {
  /** The v2 command it is dispatched as. */
  readonly v2: string;
  /** v1 keys read under another name (v1 key → v2 key), used when the v2 key is absent or empty. */
  readonly aliases?: Readonly<Record<string, string>>;
  /** v1's own checks before anything runs, in order: the first key missing or empty is answered with its line. */
  readonly required?: ReadonlyArray<readonly [key: string, error: string]>;
  /** The offsets list is whatever follows the line's last space (`P0:10,P1:20`), not a key. */
  readonly trailingOffsets?: boolean;
  /** The fields of v1's OK line, in order; absent: the v2 reply's fields as they are. */
  readonly reply?: readonly V1ReplyField[];
  /** How a JSON reply is written: AckResponse key order, or json.MarshalIndent (DESCRIBE). */
  readonly json?: 'ack' | 'indent';
}

const txnAliases = { txn: 'transactional_id', transaction: 'transactional_id' } as const;

const requestText =
  (key: string) =>
  (args: ReadonlyMap<string, Buffer>): string | undefined =>
    args.get(key)?.toString('utf8');

const missing = (command: string, ...keys: string[]): Array<readonly [string, string]> => keys.map((k) => [k, `ERROR: missing_${k} command=${command}`] as const);

/**
 * The mapping, command by command. Why each entry differs:
 * - CONSUME/STREAM: v1 answers a missing argument with one syntax error before anything else.
 * - PUBLISH: v1 checks topic, message, producerId in that order and names the last
 *   `missing_producer_id` (v2: `missing_producerId`).
 * - JOIN/SYNC/LEAVE_GROUP, HEARTBEAT: v1 requires `topic` (and LEAVE_GROUP/HEARTBEAT a
 *   `generation`), where v2 makes them optional or has none; SYNC_GROUP's v1 line repeats the
 *   request's generation and member, which v2's `OK assignments=` does not carry.
 * - JOIN_GROUP with `generation=` is v1's resume: it is dispatched as a v2 SYNC_GROUP (the
 *   session does this) and answered `OK generation= member= assignments= resumed=true`.
 * - REGISTER_GROUP: v1 takes one `topic` and answers `OK group= topic= registered=true`.
 * - BATCH_COMMIT, SEND_OFFSETS_TO_TXN: the offsets are the line's last token, not a key.
 * - FIND_COORDINATOR, INIT_PRODUCER_ID and the transaction commands: `txn=` and `transaction=`
 *   are accepted for `transactional_id`; v1's FIND_COORDINATOR line has `coordinator_type`.
 * - CREATE, DELETE, LIST_OFFSETS ...: the v1 line has fewer fields than v2's (no revisions,
 *   lifecycle epochs or min ISR).
 * - PUBLISH's AckResponse has v1's key order (producer_epoch before producer_id); DESCRIBE is
 *   indented as v1's json.MarshalIndent writes it.
 */
export const v1Mappings: Readonly<Record<string, V1Mapping>> = {
  CREATE: {
    v2: 'CREATE',
    required: [['topic', 'ERROR: missing_topic expected="CREATE topic=<name> [partitions=<N>]"']],
    reply: ['topic', 'partitions', 'cleanup_policy', 'partitioner', 'auth_policy', 'read_acl', 'write_acl', 'retention_hours', 'retention_bytes'],
  },
  DELETE: { v2: 'DELETE', required: [['topic', 'ERROR: missing_topic expected="DELETE topic=<name>"']], reply: ['topic', 'deleted'] },
  LIST: { v2: 'LIST', reply: ['count', 'topics'] },
  PUBLISH: { v2: 'PUBLISH', required: [...missing('PUBLISH', 'topic', 'message'), ['producerId', 'ERROR: missing_producer_id command=PUBLISH']], json: 'ack' },
  CONSUME: { v2: 'CONSUME', required: ['topic', 'partition', 'offset', 'member'].map((k) => [k, 'ERROR: invalid_consume_syntax'] as const) },
  STREAM: { v2: 'STREAM', required: ['topic', 'partition', 'group'].map((k) => [k, 'ERROR: invalid_stream_syntax'] as const) },
  JOIN_GROUP: { v2: 'JOIN_GROUP', required: missing('JOIN_GROUP', 'topic', 'group', 'member'), reply: ['generation', 'member', 'assignments'] },
  SYNC_GROUP: {
    v2: 'SYNC_GROUP',
    required: missing('SYNC_GROUP', 'topic', 'group', 'member', 'generation'),
    reply: [{ key: 'generation', request: requestText('generation') }, { key: 'member', request: requestText('member') }, 'assignments'],
  },
  LEAVE_GROUP: { v2: 'LEAVE_GROUP', required: missing('LEAVE_GROUP', 'topic', 'group', 'member', 'generation'), reply: ['group', 'member', 'left'] },
  HEARTBEAT: { v2: 'HEARTBEAT', required: missing('HEARTBEAT', 'topic', 'group', 'member', 'generation'), reply: ['member', 'generation'] },
  COMMIT_OFFSET: { v2: 'COMMIT_OFFSET', required: missing('COMMIT_OFFSET', 'topic', 'partition', 'group', 'offset', 'member', 'generation'), reply: [] },
  BATCH_COMMIT: { v2: 'BATCH_COMMIT', required: missing('BATCH_COMMIT', 'topic', 'group', 'member', 'generation'), trailingOffsets: true, reply: ['batched'] },
  FETCH_OFFSET: { v2: 'FETCH_OFFSET', required: missing('FETCH_OFFSET', 'topic', 'partition', 'group'), reply: ['offset'] },
  LIST_OFFSETS: { v2: 'LIST_OFFSETS', required: missing('LIST_OFFSETS', 'topic'), reply: ['topic', 'partitions', 'offsets'] },
  REGISTER_GROUP: {
    v2: 'REGISTER_GROUP',
    required: missing('REGISTER_GROUP', 'topic', 'group'),
    reply: ['group', { key: 'topic', request: requestText('topic') }, { key: 'registered', value: 'true' }],
  },
  FIND_COORDINATOR: {
    v2: 'FIND_COORDINATOR',
    aliases: txnAliases,
    reply: ['coordinator_id', { key: 'coordinator_type', request: (args) => (args.get('group')?.length ? 'group' : 'transaction') }, 'host', 'port'],
  },
  INIT_PRODUCER_ID: { v2: 'INIT_PRODUCER_ID', aliases: txnAliases, required: missing('INIT_PRODUCER_ID', 'transactional_id'), reply: ['transactional_id', 'producerId', 'epoch'] },
  BEGIN_TXN: { v2: 'BEGIN_TXN', aliases: txnAliases },
  TXN_PUBLISH: { v2: 'TXN_PUBLISH', aliases: txnAliases, reply: ['transactional_id', { key: 'staged_messages', value: '1' }, 'topic', 'partition'] },
  SEND_OFFSETS_TO_TXN: { v2: 'SEND_OFFSETS_TO_TXN', aliases: txnAliases, trailingOffsets: true },
  END_TXN: { v2: 'END_TXN', aliases: txnAliases },
  TXN_STATUS: { v2: 'TXN_STATUS', aliases: txnAliases },
  AUTH: { v2: 'AUTH', reply: ['principal', 'authenticated'] },
  DESCRIBE: { v2: 'DESCRIBE', json: 'indent' },
};

/** The mapping of a v1 command (a pass-through one for commands the table does not list). */
export function v1Mapping(command: string): V1Mapping {
  return v1Mappings[command] ?? { v2: command };
}

/** The keys the v2 command accepts (its CRQ2 fields and the inline authentication fields). */
export function v2Keys(command: string): ReadonlySet<string> {
  const spec = commandSpec(CommandId[command] ?? 0);
  return new Set([...(spec?.required ?? []), ...(spec?.optional ?? []), ...inlineAuthFields]);
}

/** v2 error codes v1 spells differently (the other codes are the same in both). */
export const v1ErrorCodes: Readonly<Record<string, string>> = {
  TOPIC_NOT_FOUND: 'topic_not_found',
  PARTITION_NOT_FOUND: 'partition_not_found',
  missing_producerId: 'missing_producer_id',
};

/**
 * The v1 HELP order (helpOrder in pkg/controller/handler.go): the only numbering v1 has, which
 * Wire v2's command IDs 1-38 follow. HELP answers `OK commands=` with these, in this order.
 */
export const v1HelpOrder: readonly string[] = [
  'CREATE',
  'DELETE',
  'LIST',
  'PUBLISH',
  'CONSUME',
  'STREAM',
  'JOIN_GROUP',
  'SYNC_GROUP',
  'LEAVE_GROUP',
  'HEARTBEAT',
  'COMMIT_OFFSET',
  'BATCH_COMMIT',
  'FETCH_OFFSET',
  'LIST_OFFSETS',
  'INIT_PRODUCER_ID',
  'BEGIN_TXN',
  'TXN_PUBLISH',
  'SEND_OFFSETS_TO_TXN',
  'END_TXN',
  'TXN_STATUS',
  'REGISTER_GROUP',
  'GROUP_STATUS',
  'LIST_GROUPS',
  'DESCRIBE',
  'APPEND_STREAM',
  'READ_STREAM',
  'SAVE_SNAPSHOT',
  'READ_SNAPSHOT',
  'STREAM_VERSION',
  'METADATA',
  'FIND_COORDINATOR',
  'PROTOCOL_INFO',
  'NEGOTIATE',
  'LIST_CLUSTER',
  'CLUSTER_STATUS',
  'ELECT_LEADER',
  'HELP',
  'EXIT',
];
