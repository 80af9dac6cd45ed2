// Core errors → Iggy 0.11 error codes (specs/iggy-0.11-server-notes.md §9,
// core/common/src/error/iggy_error.rs). One row per core code; test/protocols/iggy/errors.test.ts
// checks the table is total with assertTableComplete.
//
// Where the code depends on what was named (invalid_name for a stream is 1013, for a topic 2014),
// the handler passes an override; the table holds the stream/general choice.

import { coreCodeOf, isQuartetError, type CoreErrorCode, type ProtocolErrorTable } from '../../base/errors.js';
import { IggyErrorCode } from './codec/index.js';

export const iggyErrorTable: ProtocolErrorTable<number> = {
  unknown_namespace: IggyErrorCode.streamIdNotFound,
  namespace_exists: IggyErrorCode.streamNameAlreadyExists,
  unknown_topic: IggyErrorCode.topicIdNotFound,
  topic_exists: IggyErrorCode.topicNameAlreadyExists,
  invalid_name: IggyErrorCode.invalidStreamName,
  unknown_partition: IggyErrorCode.partitionNotFound,
  invalid_partitions: IggyErrorCode.invalidPartitionsCount,
  invalid_config: IggyErrorCode.invalidOptionValue,
  record_too_large: IggyErrorCode.tooBigMessagePayload,
  corrupt_batch: IggyErrorCode.invalidBatchChecksum,
  offset_out_of_range: IggyErrorCode.invalidOffset,
  storage_error: IggyErrorCode.error,
  // A single node leads everything; the seam stays (a cluster would redirect via ClusterMetadata).
  not_leader: IggyErrorCode.transientNotAccepted,
  unknown_producer: IggyErrorCode.error,
  producer_fenced: IggyErrorCode.error,
  out_of_order_sequence: IggyErrorCode.error,
  duplicate_sequence: IggyErrorCode.requestAlreadyApplied,
  invalid_producer_epoch: IggyErrorCode.error,
  invalid_txn_state: IggyErrorCode.error,
  concurrent_transactions: IggyErrorCode.transientNotAccepted,
  transactional_id_not_found: IggyErrorCode.resourceNotFound,
  unknown_group: IggyErrorCode.consumerGroupIdNotFound,
  group_exists: IggyErrorCode.consumerGroupNameAlreadyExists,
  unknown_member: IggyErrorCode.consumerGroupMemberNotFound,
  illegal_generation: IggyErrorCode.consumerGroupMemberNotFound,
  rebalance_in_progress: IggyErrorCode.transientNotAccepted,
  group_not_empty: IggyErrorCode.error,
  unauthenticated: IggyErrorCode.unauthenticated,
  invalid_credentials: IggyErrorCode.invalidCredentials,
  invalid_token: IggyErrorCode.invalidPersonalAccessToken,
  user_inactive: IggyErrorCode.userInactive,
  unauthorized: IggyErrorCode.unauthorized,
  unknown_user: IggyErrorCode.resourceNotFound,
  user_exists: IggyErrorCode.userAlreadyExists,
  token_exists: IggyErrorCode.personalAccessTokenAlreadyExists,
  invalid_request: IggyErrorCode.invalidFormat,
  unsupported: IggyErrorCode.featureUnavailable,
  timeout: IggyErrorCode.transientNotCommitted,
  resource_exhausted: IggyErrorCode.error,
  not_ready: IggyErrorCode.transientNotAccepted,
  shutting_down: IggyErrorCode.transientNotAccepted,
};

/**
 * An Iggy-level failure a handler raises directly (no core error behind it). `mode`:
 * - 'status': a Reply with this status and an empty body (pre-commit denial: 40, 41, 4, 1009...).
 * - 'result': a committed business rejection (`01000000 00000000 code`) for result-framed
 *   commands; for the others it degrades to a status reply.
 */
export class IggyFailure extends Error {
  constructor(
    readonly code: number,
    readonly mode: 'status' | 'result' = 'result',
    message?: string,
  ) {
    super(message ?? `iggy error ${code}`);
    this.name = 'IggyFailure';
  }
}

export const unauthorized = (): IggyFailure => new IggyFailure(IggyErrorCode.unauthorized, 'status', 'unauthorized');

/** The Iggy code for any thrown value; `overrides` picks a context-specific code per core code. */
export function iggyCodeOf(err: unknown, overrides: Partial<Record<CoreErrorCode, number>> = {}): number {
  if (err instanceof IggyFailure) return err.code;
  const core = coreCodeOf(err);
  return overrides[core] ?? iggyErrorTable[core];
}

export function isOperatingError(err: unknown): boolean {
  return err instanceof IggyFailure || isQuartetError(err);
}
