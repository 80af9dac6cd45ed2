// The binary error payload of a status ERROR frame and the error registry
// (docs/protocols/cursus-wire-v2.md §8):
//
//   code string (1-64 bytes [A-Za-z0-9_]) | class u8 (1..8) | retryable u8 (0|1)
//   | message string (<= 65,535 bytes) | field_count u16 (<= 64) | (key string, value string) × count
//
// Readable form: `ERROR: <code> class=<class> retryable=<bool> k=v ...` (spec §7).

import type { Decoded } from './frame.js';
import { formatLine, type Fields } from './lines.js';
import { Reader, Writer, checkKey, keyBytesMax } from './primitives.js';

/** Error classes in the spec's order, numbered from 1 (docs §8). */
export const ErrorClass = {
  validation: 1,
  authorization: 2,
  routing: 3,
  availability: 4,
  conflict: 5,
  fencing: 6,
  not_found: 7,
  internal: 8,
} as const;
export type ErrorClassName = keyof typeof ErrorClass;

const classNames = Object.keys(ErrorClass) as ErrorClassName[];

export function errorClassName(n: number): ErrorClassName | undefined {
  return classNames[n - 1];
}

export interface CursusError {
  code: string;
  class: ErrorClassName;
  retryable: boolean;
  /** For people; never parsed. */
  message: string;
  /** Deterministic fields, in the order of the readable form. */
  fields: Fields;
}

export const errorCodeBytesMax = 64;
export const errorMessageBytesMax = 65_535;
export const errorFieldValueBytesMax = 65_535;
export const errorFieldsMax = 64;
const codePattern = /^[A-Za-z0-9_]+$/;

export function encodeErrorPayload(e: CursusError): Buffer {
  if (!codePattern.test(e.code) || e.code.length > errorCodeBytesMax) throw new Error(`bad error code ${JSON.stringify(e.code)}`);
  if (e.fields.length > errorFieldsMax) throw new RangeError(`${e.fields.length} error fields (at most ${errorFieldsMax})`);
  let message = Buffer.from(e.message, 'utf8');
  if (message.length > errorMessageBytesMax) message = message.subarray(0, errorMessageBytesMax);
  const w = new Writer();
  w.string(e.code).uint8(ErrorClass[e.class]).uint8(e.retryable ? 1 : 0).bytes(message).uint16(e.fields.length);
  for (const [k, v] of e.fields) {
    const bad = checkKey(k);
    if (bad !== null) throw new Error(bad);
    const value = Buffer.from(v, 'utf8');
    if (value.length > errorFieldValueBytesMax) throw new RangeError(`error field ${k} of ${value.length} bytes`);
    w.string(k).bytes(value);
  }
  return w.toBuffer();
}

export function decodeErrorPayload(p: Buffer): Decoded<CursusError> {
  const r = new Reader(p);
  const code = r.string('error code', errorCodeBytesMax);
  if (r.error === null && !codePattern.test(code)) return { ok: false, reason: `bad error code ${JSON.stringify(code)}` };
  const classByte = r.uint8();
  const cls = errorClassName(classByte);
  if (r.error === null && cls === undefined) return { ok: false, reason: `unknown error class ${classByte}` };
  const retryable = r.uint8();
  if (r.error === null && retryable > 1) return { ok: false, reason: `retryable byte ${retryable} (0 or 1)` };
  const message = r.string('error message', errorMessageBytesMax);
  const count = r.uint16();
  if (count > errorFieldsMax) return { ok: false, reason: `${count} error fields (at most ${errorFieldsMax})` };
  const fields: Fields = [];
  const seen = new Set<string>();
  for (let i = 0; i < count && r.error === null; i++) {
    const key = r.string('error field name', keyBytesMax);
    const value = r.string('error field value', errorFieldValueBytesMax);
    if (r.error !== null) break;
    const bad = checkKey(key);
    if (bad !== null) return { ok: false, reason: bad };
    if (seen.has(key)) return { ok: false, reason: `error field ${key} given twice` };
    seen.add(key);
    fields.push([key, value]);
  }
  const done = r.done();
  if (done !== null) return { ok: false, reason: `error payload: ${done}` };
  return { ok: true, value: { code, class: cls!, retryable: retryable === 1, message, fields } };
}

/** `ERROR: <code> class=<class> retryable=<bool> k=v ...` */
export function renderError(e: CursusError): string {
  return formatLine(`ERROR: ${e.code}`, [['class', e.class], ['retryable', String(e.retryable)], ...e.fields]);
}

/** The registry of docs §8.1: code → class and retryable. */
export const cursusErrorRegistry: Readonly<Record<string, { class: ErrorClassName; retryable: boolean }>> = (() => {
  const table: Record<string, { class: ErrorClassName; retryable: boolean }> = {};
  const add = (cls: ErrorClassName, retryable: boolean, codes: string[]): void => {
    for (const c of codes) table[c] = { class: cls, retryable };
  };
  add('routing', true, ['NOT_LEADER', 'NOT_COORDINATOR', 'NOT_PARTITION_LEADER']);
  add('availability', true, ['cluster_metadata_unavailable', 'leader_election_result_unavailable', 'snapshot_replicate_failed', 'aggregate_proof_proof_unavailable', 'coordinator_not_available', 'not_enough_replicas', 'request_bytes_exhausted']);
  add('fencing', false, ['GEN_MISMATCH', 'NOT_OWNER', 'member_not_found', 'stale_producer_epoch', 'producer_fenced', 'STALE_LEADER_EPOCH', 'PARTITION_LEADER_FENCED']);
  add('conflict', false, [
    'OFFSET_OUT_OF_RANGE',
    'offset_regression',
    'version_conflict',
    'snapshot_version_exceeds_stream',
    'producer_reinitialization_required',
    'topic_not_assigned_to_group',
    'topic_delete_blocked',
    'leader_election_rejected',
    'invalid_commit_watermark',
    'revision_mismatch',
    'aggregate_proof_retention_gap',
    'aggregate_proof_sequence_gap',
    'aggregate_proof_identity_conflict',
    'out_of_order_sequence',
    'transaction_already_committed',
    'transaction_aborted',
  ]);
  add('authorization', false, [
    'authentication_required',
    'authentication_failed',
    'NOT_AUTHORIZED_FOR_OPERATION',
    'NOT_AUTHORIZED_FOR_TOPIC',
    'NOT_AUTHORIZED_FOR_PARTITION',
    'transaction_metadata_forbidden',
    'internal_topic_delete_forbidden',
    'internal_command_unauthorized',
    'internal_auth_not_configured',
  ]);
  add('not_found', false, ['topic_not_found', 'TOPIC_NOT_FOUND', 'partition_not_found', 'PARTITION_NOT_FOUND', 'group_not_found', 'partition_metadata_not_found', 'transaction_not_found']);
  add('validation', false, [
    'invalid_topic_name',
    'invalid_topic_policy',
    'unsupported_topic_policy',
    'invalid_if_exists',
    'missing_topic',
    'invalid_partition',
    'missing_broker',
    'missing_generation',
    'no_valid_offsets',
    'invalid_batch_commit_entry',
    'duplicate_partition',
    'missing_leader_fence',
    'invalid_control_batch_bytes',
    'event_sourcing_not_enabled',
    'invalid_schema_version',
    'invalid_from_version',
    'invalid_acks',
    'batch_decode_failed',
    'unknown_command',
    'UNSUPPORTED_PROTOCOL_VERSION',
    'unsupported_compression',
    'invalid_negotiation',
    'invalid_command_payload',
    'decompression_failed',
  ]);
  add('validation', true, ['checksum_mismatch']);
  add('availability', false, ['event_index_exhausted']);
  add('internal', false, ['replica_index_prepare_failed', 'delete_topic_failed', 'marshal_cluster_status_failed']);
  return table;
})();

/** The class and retryable flag of a code: the registry's, else Cursus v1's fallback rule. */
export function classifyError(code: string): { class: ErrorClassName; retryable: boolean } {
  const known = cursusErrorRegistry[code];
  if (known !== undefined) return known;
  const lower = code.toLowerCase();
  if (lower.startsWith('not_authorized') || lower.startsWith('authorization_')) return { class: 'authorization', retryable: false };
  if (lower.endsWith('_not_found') || lower.endsWith('_missing')) return { class: 'not_found', retryable: false };
  if (['missing_', 'invalid_', 'empty_', 'malformed_', 'decode_', 'unmarshal_'].some((p) => lower.startsWith(p))) return { class: 'validation', retryable: false };
  return { class: 'internal', retryable: false };
}

/** An error with the class and retryable flag its code has in the registry. */
export function cursusError(code: string, fields: Fields = [], message = ''): CursusError {
  return { code, ...classifyError(code), message, fields };
}
