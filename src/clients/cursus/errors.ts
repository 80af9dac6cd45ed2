// The errors the Cursus SDK raises. Every one carries a stable `kind`, a `retryable` flag and the
// `Symbol.for('quartet.cursus.error')` brand (so `isCursusClientError` works across package copies).
//
//   CursusClientError          base class (never thrown directly), a ClientError (../common/errors.ts)
//   ├─ CursusError             the broker answered status ERROR: the binary error payload
//   │                          (docs/protocols/cursus-wire-v2.md §8) as code, class, retryable,
//   │                          message and fields
//   ├─ CursusTimeoutError      no reply within the request timeout (the outcome is unknown)
//   ├─ CursusConnectionError   the connection could not be opened, or dropped with the request on it
//   ├─ CursusProtocolError     the broker sent bytes the codec cannot read, or out of step
//   └─ CursusClosedError       close() was called
//
// Spec §7: "SDKs should parse the code and fields first, use class for broad handling, and use
// retryable only as a retry eligibility signal". The helpers below do the broad handling.

import type { CursusError as WireError, ErrorClassName, Fields } from '../../protocols/cursus/codec/index.js';
import { renderError } from '../../protocols/cursus/codec/index.js';
import { ClientError, closedClientMessage, hasBrand } from '../common/errors.js';

const brand = Symbol.for('quartet.cursus.error');

export type CursusClientErrorKind = 'server' | 'timeout' | 'connection' | 'protocol' | 'closed';

export abstract class CursusClientError extends ClientError<CursusClientErrorKind> {
  /** True when the same request may be sent again (after following what the error says). */
  abstract readonly retryable: boolean;
  readonly [brand] = true;
}

export function isCursusClientError(err: unknown): err is CursusClientError {
  return hasBrand(err, brand);
}

/** A refusal from the broker: a frame of status ERROR and its typed payload. */
export class CursusError extends CursusClientError {
  override name = 'CursusError';
  readonly kind: CursusClientErrorKind = 'server';
  /** The registry code ('GEN_MISMATCH', 'topic_not_found', ...). */
  readonly code: string;
  /** validation, authorization, routing, availability, conflict, fencing, not_found or internal. */
  readonly class: ErrorClassName;
  readonly retryable: boolean;
  /** The deterministic fields, in the broker's order. */
  readonly fields: Fields;
  /** The broker's message for people (never parsed). */
  readonly detail: string;

  constructor(
    error: WireError,
    /** The command that was refused ('CONSUME'). */
    readonly command: string,
  ) {
    super(`${command}: ${renderError(error)}${error.message !== '' ? ` (${error.message})` : ''}`);
    this.code = error.code;
    this.class = error.class;
    this.retryable = error.retryable;
    this.fields = error.fields;
    this.detail = error.message;
  }

  /** A field's value, or undefined. */
  field(key: string): string | undefined {
    for (const [k, v] of this.fields) if (k === key) return v;
    return undefined;
  }

  /** A field's value as a non-negative integer, or undefined when absent or not one. */
  numberField(key: string): number | undefined {
    const v = this.field(key);
    return v !== undefined && /^(0|[1-9][0-9]{0,15})$/.test(v) && Number(v) <= Number.MAX_SAFE_INTEGER ? Number(v) : undefined;
  }
}

export class CursusTimeoutError extends CursusClientError {
  override name = 'CursusTimeoutError';
  readonly kind: CursusClientErrorKind = 'timeout';
  /** The broker may or may not have applied the request. */
  readonly retryable = true;
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(`${command}: no reply within ${timeoutMs} ms`);
  }
}

export class CursusConnectionError extends CursusClientError {
  override name = 'CursusConnectionError';
  readonly kind: CursusClientErrorKind = 'connection';
  readonly retryable = true;
}

export class CursusProtocolError extends CursusClientError {
  override name = 'CursusProtocolError';
  readonly kind: CursusClientErrorKind = 'protocol';
  readonly retryable = false;
}

export class CursusClosedError extends CursusClientError {
  override name = 'CursusClosedError';
  readonly kind: CursusClientErrorKind = 'closed';
  readonly retryable = false;
  constructor(message = closedClientMessage) {
    super(message);
  }
}

/** True when the same operation may be attempted again (the broker's flag, or a lost reply). */
export function isRetryable(err: unknown): boolean {
  return isCursusClientError(err) && err.retryable;
}

function hasClass(err: unknown, cls: ErrorClassName): err is CursusError {
  return err instanceof CursusError && err.class === cls;
}

/** Producer epoch, group generation, member or ownership is stale: recreate state or rejoin. */
export function isFencing(err: unknown): err is CursusError {
  return hasClass(err, 'fencing');
}

/** The request reached the wrong broker: follow the redirect (the client does, once). */
export function isRouting(err: unknown): err is CursusError {
  return hasClass(err, 'routing');
}

/** A broker subsystem is unavailable for now: back off and retry. */
export function isAvailability(err: unknown): err is CursusError {
  return hasClass(err, 'availability');
}

export function isConflict(err: unknown): err is CursusError {
  return hasClass(err, 'conflict');
}

export function isAuthorization(err: unknown): err is CursusError {
  return hasClass(err, 'authorization');
}

export function isNotFound(err: unknown): err is CursusError {
  return hasClass(err, 'not_found');
}

export function isValidation(err: unknown): err is CursusError {
  return hasClass(err, 'validation');
}

/** Codes by which a group member learns it must stop, rejoin and resume (spec §6 "Rebalancing"). */
export const rebalanceCodes: ReadonlySet<string> = new Set(['GEN_MISMATCH', 'NOT_OWNER', 'member_not_found']);

/** GEN_MISMATCH, NOT_OWNER or member_not_found: stop consuming and rejoin the group. */
export function isRebalance(err: unknown): err is CursusError {
  return err instanceof CursusError && rebalanceCodes.has(err.code);
}

/**
 * Where a routing error sends the request: `NOT_LEADER leader=host:port` or
 * `NOT_COORDINATOR host= port=`; null for any other error or a redirect without an address.
 */
export function redirectOf(err: unknown): { host: string; port: number } | null {
  if (!(err instanceof CursusError)) return null;
  if (err.code === 'NOT_LEADER') {
    const leader = err.field('leader');
    return leader === undefined ? null : parseHostPort(leader);
  }
  if (err.code === 'NOT_COORDINATOR') {
    const host = err.field('host');
    const port = err.numberField('port');
    return host === undefined || host === '' || port === undefined || port < 1 || port > 65_535 ? null : { host, port };
  }
  return null;
}

/** `host:port` or `[v6]:port`; null when it is not one. */
export function parseHostPort(addr: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(addr);
  if (m === null) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65_535) return null;
  return { host: (m[1] ?? m[2])!, port };
}
