// The admin API's errors: every core error code and the API's own, each with its HTTP status.
// A reply is always `{"error":{"code":"...","message":"..."}}` (docs/admin-api.md "Errors").

import { coreCodeOf, isQuartetError, type CoreErrorCode, type ProtocolErrorTable } from '../../base/errors.js';

/** Errors of the HTTP layer itself, before any core call. */
export const httpErrorCodes = {
  not_found: 404,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  payload_too_large: 413,
  forbidden_origin: 403,
  query_not_allowed: 400,
} as const;

export type HttpErrorCode = keyof typeof httpErrorCodes;
export type AdminErrorCode = CoreErrorCode | HttpErrorCode;

/** Each core error's HTTP status. Checked total by test/server/admin/errors.test.ts. */
export const httpStatusOfCoreError: ProtocolErrorTable<number> = {
  unknown_namespace: 404,
  namespace_exists: 409,
  unknown_topic: 404,
  topic_exists: 409,
  invalid_name: 400,
  unknown_partition: 404,
  invalid_partitions: 400,
  invalid_config: 400,
  record_too_large: 413,
  corrupt_batch: 500,
  offset_out_of_range: 400,
  storage_error: 500,
  not_leader: 503,
  unknown_producer: 404,
  producer_fenced: 409,
  out_of_order_sequence: 409,
  duplicate_sequence: 409,
  invalid_producer_epoch: 409,
  invalid_txn_state: 409,
  concurrent_transactions: 409,
  transactional_id_not_found: 404,
  unknown_group: 404,
  group_exists: 409,
  unknown_member: 404,
  illegal_generation: 409,
  rebalance_in_progress: 409,
  group_not_empty: 409,
  unauthenticated: 401,
  invalid_credentials: 401,
  invalid_token: 401,
  user_inactive: 401,
  unauthorized: 403,
  unknown_user: 404,
  user_exists: 409,
  token_exists: 409,
  invalid_request: 400,
  unsupported: 501,
  timeout: 504,
  resource_exhausted: 429,
  not_ready: 503,
  shutting_down: 503,
};

/** An error the API answers with its own code (the HTTP layer's). */
export class AdminHttpError extends Error {
  constructor(
    readonly code: HttpErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AdminHttpError';
  }
}

export interface ErrorReply {
  status: number;
  code: AdminErrorCode;
  message: string;
}

/**
 * The reply for a thrown value. A core error keeps its message; anything else is a 500 whose
 * message says nothing of the internals (it is logged instead).
 */
export function errorReply(err: unknown): ErrorReply {
  if (err instanceof AdminHttpError) return { status: httpErrorCodes[err.code], code: err.code, message: err.message };
  if (isQuartetError(err)) return { status: httpStatusOfCoreError[err.code], code: err.code, message: err.message };
  return { status: 500, code: coreCodeOf(err), message: 'internal error; see the broker log' };
}
