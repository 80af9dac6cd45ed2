// The Kafka front-end's mapping of every core error (src/base/errors.ts) to a Kafka error code
// (apache/kafka Errors.java, the protocol guide's error table; numbers from codec/errors.ts).
// test/protocols/kafka/errors.test.ts checks the table is complete with assertTableComplete.
//
// Handlers normally answer per partition with a code they choose; this table is the fallback
// when a core call throws a QuartetError, and the connection's answer when a handler throws one.

import { coreCodeOf, type CoreErrorCode, type ProtocolErrorTable } from '../../base/errors.js';
import { ErrorCode } from './codec/errors.js';

export const kafkaErrorTable: ProtocolErrorTable<number> = {
  // Catalog
  unknown_namespace: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  namespace_exists: ErrorCode.TOPIC_ALREADY_EXISTS,
  unknown_topic: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  topic_exists: ErrorCode.TOPIC_ALREADY_EXISTS,
  invalid_name: ErrorCode.INVALID_TOPIC_EXCEPTION,
  unknown_partition: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  invalid_partitions: ErrorCode.INVALID_PARTITIONS,
  invalid_config: ErrorCode.INVALID_CONFIG,
  // Data path
  record_too_large: ErrorCode.MESSAGE_TOO_LARGE,
  corrupt_batch: ErrorCode.CORRUPT_MESSAGE,
  offset_out_of_range: ErrorCode.OFFSET_OUT_OF_RANGE,
  storage_error: ErrorCode.KAFKA_STORAGE_ERROR,
  not_leader: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  // Producers and transactions
  unknown_producer: ErrorCode.UNKNOWN_PRODUCER_ID,
  producer_fenced: ErrorCode.PRODUCER_FENCED,
  out_of_order_sequence: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
  duplicate_sequence: ErrorCode.DUPLICATE_SEQUENCE_NUMBER,
  invalid_producer_epoch: ErrorCode.INVALID_PRODUCER_EPOCH,
  invalid_txn_state: ErrorCode.INVALID_TXN_STATE,
  concurrent_transactions: ErrorCode.CONCURRENT_TRANSACTIONS,
  transactional_id_not_found: ErrorCode.INVALID_PRODUCER_ID_MAPPING,
  // Groups and offsets
  unknown_group: ErrorCode.GROUP_ID_NOT_FOUND,
  group_exists: ErrorCode.INVALID_GROUP_ID,
  unknown_member: ErrorCode.UNKNOWN_MEMBER_ID,
  illegal_generation: ErrorCode.ILLEGAL_GENERATION,
  rebalance_in_progress: ErrorCode.REBALANCE_IN_PROGRESS,
  group_not_empty: ErrorCode.NON_EMPTY_GROUP,
  // Identity
  unauthenticated: ErrorCode.SASL_AUTHENTICATION_FAILED,
  invalid_credentials: ErrorCode.SASL_AUTHENTICATION_FAILED,
  invalid_token: ErrorCode.SASL_AUTHENTICATION_FAILED,
  user_inactive: ErrorCode.SASL_AUTHENTICATION_FAILED,
  unauthorized: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  unknown_user: ErrorCode.RESOURCE_NOT_FOUND,
  user_exists: ErrorCode.DUPLICATE_RESOURCE,
  token_exists: ErrorCode.DUPLICATE_RESOURCE,
  // Requests and the process
  invalid_request: ErrorCode.INVALID_REQUEST,
  unsupported: ErrorCode.UNSUPPORTED_VERSION,
  timeout: ErrorCode.REQUEST_TIMED_OUT,
  resource_exhausted: ErrorCode.THROTTLING_QUOTA_EXCEEDED,
  not_ready: ErrorCode.LEADER_NOT_AVAILABLE,
  shutting_down: ErrorCode.BROKER_NOT_AVAILABLE,
};

/** The Kafka code for a core code. */
export function kafkaCodeFor(code: CoreErrorCode): number {
  return kafkaErrorTable[code];
}

/**
 * The Kafka code for anything a core call threw: a QuartetError's mapped code; any other value is
 * treated as an I/O failure (KAFKA_STORAGE_ERROR), as coreCodeOf does.
 */
export function kafkaCodeOf(error: unknown): number {
  return kafkaErrorTable[coreCodeOf(error)];
}
