// The core error set: one closed catalog of what can go wrong below the protocols. Every
// front-end maps each code to its own wire error in a table (src/protocols/<name>/errors.ts), and
// test/base/errors.test.ts checks that every table covers every code.

export const coreErrorCodes = {
  // Catalog
  unknown_namespace: 'The namespace (Iggy stream, Felix tenant/namespace) does not exist',
  namespace_exists: 'A namespace with this name or id already exists',
  unknown_topic: 'The topic does not exist',
  topic_exists: 'A topic with this name already exists',
  invalid_name: 'The name is empty, too long or has characters that are not allowed',
  unknown_partition: 'The partition does not exist',
  invalid_partitions: 'The partition count is out of range',
  invalid_config: 'A configuration name or value is not valid',
  // Data path
  record_too_large: 'The batch is larger than the topic allows',
  corrupt_batch: 'The batch failed validation (checksum, layout or sizes)',
  offset_out_of_range: 'The offset is outside the partition log',
  storage_error: 'The log could not be written or read',
  not_leader: 'This node does not lead the partition',
  // Producers and transactions
  unknown_producer: 'No state is known for this producer id',
  producer_fenced: 'A newer epoch of this producer exists',
  out_of_order_sequence: 'The batch sequence is not the next expected one',
  duplicate_sequence: 'The batch was already appended',
  invalid_producer_epoch: 'The producer epoch is not valid for this operation',
  invalid_txn_state: 'The transaction is not in a state that allows this operation',
  concurrent_transactions: 'The transaction is still completing (markers being written); retry shortly',
  transactional_id_not_found: 'The transactional id is unknown, or is bound to another producer id',
  // Groups and offsets
  unknown_group: 'The consumer group does not exist',
  group_exists: 'A consumer group with this name already exists',
  unknown_member: 'The member is not part of the group',
  illegal_generation: 'The generation is not the current one',
  rebalance_in_progress: 'The group is rebalancing',
  group_not_empty: 'The group still has members',
  // Identity
  unauthenticated: 'The connection has not authenticated',
  invalid_credentials: 'The username or password is wrong',
  invalid_token: 'The token is unknown or expired',
  user_inactive: 'The user is not active',
  unauthorized: 'The user lacks the permission for this operation',
  unknown_user: 'The user does not exist',
  user_exists: 'A user with this name already exists',
  token_exists: 'A personal access token with this name already exists for the user',
  // Requests and the process
  invalid_request: 'The request is malformed or its arguments are invalid',
  unsupported: 'The operation is not supported',
  timeout: 'The operation did not finish in time',
  resource_exhausted: 'A limit was reached (connections, in-flight requests, queue length)',
  not_ready: 'The broker is still starting',
  shutting_down: 'The broker is stopping',
} as const;

export type CoreErrorCode = keyof typeof coreErrorCodes;

export const allCoreErrorCodes = Object.keys(coreErrorCodes) as CoreErrorCode[];

const brand = Symbol.for('quartet.error');

/** An operating error from the core. Programmer errors stay plain Errors (they crash loudly). */
export class QuartetError extends Error {
  readonly [brand] = true;
  readonly code: CoreErrorCode;
  override readonly cause: unknown;

  constructor(code: CoreErrorCode, message?: string, cause?: unknown) {
    super(message ?? coreErrorCodes[code]);
    this.name = 'QuartetError';
    this.code = code;
    this.cause = cause;
  }
}

export function isQuartetError(value: unknown): value is QuartetError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/** The core code for any thrown value: a QuartetError's own code, or storage_error for I/O. */
export function coreCodeOf(value: unknown): CoreErrorCode {
  if (isQuartetError(value)) return value.code;
  return 'storage_error';
}

/** A protocol's mapping of every core code to its own wire error. Checked total by the tests. */
export type ProtocolErrorTable<T> = Readonly<Record<CoreErrorCode, T>>;

/**
 * Throws (a plain Error: a missing mapping is a programmer error) unless `table` maps every core
 * code, and nothing else. Each front-end's errors test calls it on its table; mapping values are
 * checked to be present (not undefined or null).
 */
export function assertTableComplete(table: Readonly<Record<string, unknown>>, name = 'error table'): void {
  const missing = allCoreErrorCodes.filter((code) => !Object.hasOwn(table, code) || table[code] === undefined || table[code] === null);
  const extra = Object.keys(table).filter((key) => !Object.hasOwn(coreErrorCodes, key));
  if (missing.length > 0 || extra.length > 0) {
    const parts = [missing.length > 0 ? `missing ${missing.join(', ')}` : '', extra.length > 0 ? `unknown ${extra.join(', ')}` : ''];
    throw new Error(`${name} is incomplete: ${parts.filter(Boolean).join('; ')}`);
  }
}
