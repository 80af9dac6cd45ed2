// Core errors → Cursus error codes (docs/protocols/cursus-wire-v2.md §8.1): one row per core code,
// checked total by test/protocols/cursus/core-errors.test.ts. A handler that lets a core error
// through is answered with the mapped code (class and retryable from the registry), the core's
// message as the message; codes outside the registry take its fallback classes (`internal_error`,
// `storage_error` and the like are internal). Anything that is neither a CursusFailure nor a core
// error is a bug: answered `internal_error` and logged by the connection.

import { coreCodeOf, isQuartetError, type ProtocolErrorTable } from '../../base/errors.js';
import { CursusFailure } from './handler.js';

export const cursusCoreErrorTable: ProtocolErrorTable<string> = {
  unknown_namespace: 'topic_not_found',
  namespace_exists: 'topic_exists',
  unknown_topic: 'topic_not_found',
  topic_exists: 'topic_exists',
  invalid_name: 'invalid_topic_name',
  unknown_partition: 'partition_not_found',
  invalid_partitions: 'invalid_partitions',
  invalid_config: 'invalid_topic_policy',
  record_too_large: 'invalid_message_size',
  corrupt_batch: 'batch_decode_failed',
  offset_out_of_range: 'OFFSET_OUT_OF_RANGE',
  storage_error: 'storage_error',
  // One node leads everything; the seam stays for a cluster.
  not_leader: 'NOT_LEADER',
  unknown_producer: 'producer_fenced',
  producer_fenced: 'producer_fenced',
  out_of_order_sequence: 'invalid_sequence',
  duplicate_sequence: 'invalid_sequence',
  invalid_producer_epoch: 'stale_producer_epoch',
  invalid_txn_state: 'invalid_transaction_state',
  concurrent_transactions: 'coordinator_not_available',
  transactional_id_not_found: 'transaction_not_found',
  unknown_group: 'group_not_found',
  group_exists: 'invalid_group',
  unknown_member: 'member_not_found',
  illegal_generation: 'GEN_MISMATCH',
  rebalance_in_progress: 'coordinator_not_available',
  group_not_empty: 'topic_delete_blocked',
  unauthenticated: 'authentication_required',
  invalid_credentials: 'authentication_failed',
  invalid_token: 'authentication_failed',
  user_inactive: 'authentication_failed',
  unauthorized: 'NOT_AUTHORIZED_FOR_OPERATION',
  unknown_user: 'authentication_failed',
  user_exists: 'invalid_principal',
  token_exists: 'invalid_principal',
  invalid_request: 'invalid_command_payload',
  unsupported: 'unsupported_operation',
  timeout: 'request_timeout',
  resource_exhausted: 'resource_exhausted',
  not_ready: 'coordinator_not_available',
  shutting_down: 'coordinator_not_available',
};

/** The failure a core error is answered with; null for anything else (a bug). */
export function cursusFailureOfCoreError(error: unknown): CursusFailure | null {
  if (!isQuartetError(error)) return null;
  return CursusFailure.of(cursusCoreErrorTable[coreCodeOf(error)], [], error.message);
}
