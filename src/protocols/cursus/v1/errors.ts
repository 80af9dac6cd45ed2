// Cursus v1 error text (real Cursus pkg/protocol/errors.go). There is no status field: a failure
// is a frame whose body is
//
//   ERROR: <code>[ <key>=<value> | <bare detail> ]...
//
// values written as Go prints them (`%s`, or `%q` for reasons). Once a connection has enabled
// `structured_errors_v1` with NEGOTIATE, EnrichErrorResponse inserts ` class=<c> retryable=<b>`
// right after the code (each only when the line does not already carry a valid one), with the
// class and retryable flag of v1's registry below; codes it does not list are classified by
// v1's fallback rule. The registry is v1's own, which differs from Wire v2's in places
// (cursusErrorRegistry): a v1 client sees what a v1 broker would have said.

import type { ErrorClassName } from '../codec/errors.js';
import { parseBool, quote, unquote } from './go-text.js';

type Classification = { class: ErrorClassName; retryable: boolean };

/** v1's errorRegistry, code → class and retryable. */
export const v1ErrorRegistry: Readonly<Record<string, Classification>> = (() => {
  const table: Record<string, Classification> = {};
  const add = (cls: ErrorClassName, retryable: boolean, codes: string): void => {
    for (const c of codes.split(/\s+/).filter((s) => s !== '')) table[c] = { class: cls, retryable };
  };
  add('routing', true, 'NOT_COORDINATOR NOT_LEADER NOT_PARTITION_LEADER');
  add(
    'availability',
    true,
    `cluster_metadata_unavailable cluster_not_available coordinator_not_available fsm_not_available insufficient_in_sync_replicas
     leader_election_result_unavailable leader_not_found no_raft_leader offset_manager_not_available request_cancelled router_not_available
     transaction_abort_marker_failed transaction_commit_failed transaction_manager_not_available transaction_sync_failed`,
  );
  add('fencing', false, 'GEN_MISMATCH NOT_OWNER STALE_LEADER_EPOCH member_not_found producer_fenced stale_producer_epoch');
  add(
    'conflict',
    false,
    `OFFSET_OUT_OF_RANGE leader_election_rejected offset_regression snapshot_version_exceeds_stream producer_reinitialization_required
     topic_not_assigned_to_group transaction_aborted transaction_already_committed transaction_marker_partition_not_touched
     transaction_not_abortable transaction_not_committing transaction_record_not_staged version_conflict`,
  );
  add(
    'authorization',
    false,
    `NOT_AUTHORIZED_FOR_OPERATION NOT_AUTHORIZED_FOR_PARTITION NOT_AUTHORIZED_FOR_TOPIC authentication_failed authentication_required
     internal_auth_not_configured internal_batch_requires_token_wrapper internal_command_unauthorized internal_topic_write_forbidden
     internal_txn_publish_forbidden transaction_metadata_forbidden`,
  );
  add('not_found', false, 'group_not_found partition_metadata_not_found partition_not_found topic_not_found transaction_not_found');
  add(
    'validation',
    false,
    `UNSUPPORTED_FEATURE UNSUPPORTED_PROTOCOL_VERSION batch_decode_failed decode_failed distribution_not_enabled distribution_required
     duplicate_partition empty_command empty_messages empty_required_params event_sourcing_not_enabled invalid_acks invalid_batch_commit_entry
     invalid_batch_commit_format invalid_min_in_sync_replicas invalid_auth invalid_consume_syntax invalid_control_batch_bytes
     invalid_control_batch_coordinator_epoch invalid_control_batch_version invalid_commit_watermark invalid_epoch invalid_generation
     invalid_is_idempotent invalid_offset invalid_partition invalid_partitions invalid_payload invalid_payload_json invalid_protocol_features
     invalid_protocol_version invalid_replication_factor invalid_require_features invalid_transaction_control_batch
     invalid_transaction_control_epoch invalid_transaction_control_record invalid_transaction_marker invalid_transaction_marker_producer
     invalid_transaction_result invalid_transaction_state invalid_txn_offsets invalid_retention_bytes invalid_retention_hours
     invalid_schema_version invalid_seq_num invalid_snapshot_catchup_response invalid_snapshot_payload invalid_stream_syntax
     invalid_topic_name invalid_topic_policy invalid_version invalid_from_version malformed_input missing_generation missing_group missing_key
     unsupported_topic_policy missing_broker missing_leader_fence missing_member missing_message missing_offset missing_partition
     missing_payload missing_coordinator_key missing_ownership_params missing_producer_id missing_protocol_version
     missing_min_in_sync_replicas missing_required_params missing_topic missing_transactional_id missing_version no_valid_offsets
     unknown_command unmarshal_failed`,
  );
  add(
    'internal',
    false,
    `append_stream_failed broker_error command_failed coordinator_error create_topic_failed alter_topic_config_failed delete_topic_failed
     empty_command_response find_coordinator_failed forward_to_coordinator_failed forward_to_leader_failed
     forward_to_partition_leader_failed group_status_failed local_processor_not_configured marshal_ack_failed marshal_brokers_failed
     marshal_cluster_status_failed marshal_metadata_failed marshal_snapshot_failed marshal_snapshots_failed marshal_status_failed
     negotiation_context_required no_partitions_available offset_sync_failed partition_lookup_failed raft_apply_failed
     raft_batch_apply_failed register_group_failed replica_append_failed replica_index_failed replica_index_prepare_failed
     snapshot_catchup_failed snapshot_list_failed snapshot_read_failed snapshot_replicate_failed snapshot_save_failed
     snapshot_store_failed stream_index_failed topic_create_missing init_producer_failed transaction_abort_failed
     transaction_begin_failed transaction_offsets_failed transaction_prepare_failed transaction_publish_failed`,
  );
  return table;
})();

const classNames: readonly string[] = ['authorization', 'availability', 'conflict', 'fencing', 'internal', 'not_found', 'routing', 'validation'];

/** ClassifyErrorCode: v1's registry, else its fallback rule (never retryable). */
export function classifyV1Error(code: string): Classification {
  const known = v1ErrorRegistry[code];
  if (known !== undefined) return known;
  const lower = code.toLowerCase();
  if (lower.startsWith('not_authorized') || lower.startsWith('authorization_')) return { class: 'authorization', retryable: false };
  if (lower.endsWith('_not_found') || lower.endsWith('_missing')) return { class: 'not_found', retryable: false };
  if (
    ['missing_', 'invalid_', 'empty_', 'malformed_', 'decode_', 'unmarshal_'].some((p) => lower.startsWith(p)) ||
    ['unknown_command', 'distribution_required', 'distribution_not_enabled'].includes(lower)
  ) {
    return { class: 'validation', retryable: false };
  }
  return { class: 'internal', retryable: false };
}

/** isSpace as EnrichErrorResponse applies it: unicode.IsSpace(rune(byte)), one byte at a time. */
function isByteSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x85 || c === 0xa0;
}

function isRuneSpace(ch: string): boolean {
  return /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/.test(ch);
}

/** splitResponseFields: tokens split on whitespace outside double quotes (quotes kept). */
export function splitResponseFields(value: string): string[] {
  const out: string[] = [];
  let token = '';
  let inQuotes = false;
  let escaped = false;
  for (const ch of value) {
    if (escaped) {
      token += ch;
      escaped = false;
    } else if (ch === '\\' && inQuotes) {
      token += ch;
      escaped = true;
    } else if (ch === '"') {
      inQuotes = !inQuotes;
      token += ch;
    } else if (isRuneSpace(ch) && !inQuotes) {
      if (token !== '') out.push(token);
      token = '';
    } else {
      token += ch;
    }
  }
  if (token !== '') out.push(token);
  return out;
}

function goTrimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isRuneSpace(s[start]!)) start++;
  while (end > start && isRuneSpace(s[end - 1]!)) end--;
  return s.slice(start, end);
}

/**
 * EnrichErrorResponse: an `ERROR:` line with ` class=<c> retryable=<b>` inserted after its code
 * (each only when the line lacks a valid one); anything else unchanged.
 */
export function enrichErrorResponse(raw: string): string {
  const trimmed = goTrimSpace(raw);
  if (!trimmed.startsWith('ERROR:')) return raw;
  const tokens = splitResponseFields(goTrimSpace(trimmed.slice('ERROR:'.length)));
  if (tokens.length === 0) return raw;
  const base = classifyV1Error(tokens[0]!);
  let cls = base.class;
  let classExplicit = false;
  let retryableExplicit = false;
  let classSupplied = false;
  for (const token of tokens.slice(1)) {
    const eq = token.indexOf('=');
    if (eq <= 0) continue;
    const key = token.slice(0, eq);
    let value = token.slice(eq + 1);
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = unquote(value) ?? value;
    if (key === 'class') {
      classSupplied = true;
      if (classNames.includes(value)) {
        cls = value as ErrorClassName;
        classExplicit = true;
      }
    }
    if (key === 'retryable' && parseBool(value) !== null) retryableExplicit = true;
  }
  if (classSupplied && !classExplicit) {
    cls = base.class;
    retryableExplicit = false;
  }
  if (classExplicit && retryableExplicit) return raw;
  const bytes = Buffer.from(trimmed, 'utf8');
  let codeStart = 'ERROR:'.length;
  while (codeStart < bytes.length && isByteSpace(bytes[codeStart]!)) codeStart++;
  let codeEnd = codeStart;
  while (codeEnd < bytes.length && !isByteSpace(bytes[codeEnd]!)) codeEnd++;
  let metadata = '';
  if (!classExplicit) metadata += ` class=${cls}`;
  if (!retryableExplicit) metadata += ` retryable=${base.retryable}`;
  return bytes.toString('utf8', 0, codeEnd) + metadata + bytes.toString('utf8', codeEnd);
}

/** Keys v1 always writes with `%q`. */
const quotedKeys: ReadonlySet<string> = new Set(['reason', 'entry', 'expected']);

/**
 * A field value as v1 prints it: `%q` for the keys v1 always quotes, and for a value a reader
 * could not split back (whitespace, a quote, a control character); otherwise `%s`.
 */
export function formatV1Value(key: string, value: string): string {
  if (quotedKeys.has(key)) return quote(value);
  return value === '' || /^[^\p{C}\p{Z}\s"]+$/u.test(value) ? value : quote(value);
}

/** A field of an error line: `key=value`, or a bare detail word (NOT_LEADER's `LEADER_IS h:p`). */
export type V1ErrorPart = readonly [key: string, value: string] | string;

/** `ERROR: <code> k=v ...` */
export function formatV1Error(code: string, parts: readonly V1ErrorPart[] = []): string {
  let s = `ERROR: ${code}`;
  for (const p of parts) s += typeof p === 'string' ? ` ${p}` : ` ${p[0]}=${formatV1Value(p[0], p[1])}`;
  return s;
}
