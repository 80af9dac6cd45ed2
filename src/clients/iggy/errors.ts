// The errors the Iggy SDK raises. Every one carries a stable `kind`, a `retriable` flag and the
// `Symbol.for('quartet.iggy.error')` brand (so `isIggyClientError` works across package copies).
//
//   IggyClientError            base class (never thrown directly), a ClientError (../common/errors.ts)
//   ├─ IggyError               the server refused: numeric `code` + `codeName` from the codec's table
//   │  └─ IggyEvictedError     the server killed the session (EvictionHeader): reason + version window
//   ├─ IggyTimeoutError        no reply within the request timeout
//   ├─ IggyConnectionError     the connection dropped with the request in flight (retriable)
//   ├─ IggyProtocolError       the server sent bytes the codec cannot read
//   └─ IggyClosedError         close() was called

import {
  EvictionReason,
  evictionSdkError,
  iggyErrorName,
  IggyErrorCode,
  unpackVersion,
} from '../../protocols/iggy/codec/index.js';
import { ClientError, closedClientMessage, hasBrand } from '../common/errors.js';

const brand = Symbol.for('quartet.iggy.error');

export type IggyClientErrorKind = 'server' | 'evicted' | 'timeout' | 'connection' | 'protocol' | 'closed';

export abstract class IggyClientError extends ClientError<IggyClientErrorKind> {
  /** True when the same request may succeed if sent again (on a new connection). */
  abstract readonly retriable: boolean;
  readonly [brand] = true;
}

export function isIggyClientError(err: unknown): err is IggyClientError {
  return hasBrand(err, brand);
}

/** Codes worth retrying: transient consensus outcomes. */
const retriableCodes: ReadonlySet<number> = new Set([IggyErrorCode.transientNotCommitted, IggyErrorCode.transientNotAccepted]);

/** A refusal from the server: a non-zero reply status or a committed result code. */
export class IggyError extends IggyClientError {
  override name = 'IggyError';
  readonly kind: IggyClientErrorKind = 'server';
  readonly retriable: boolean;
  /** The IggyError name from the codec's table ('streamNameAlreadyExists'), or 'unknown'. */
  readonly codeName: string;

  constructor(
    /** The u32 IggyError code (1009 StreamIdNotFound, ...). */
    readonly code: number,
    /** What was asked ('stream.create'). */
    readonly command: string,
    message?: string,
  ) {
    const codeName = iggyErrorName(code) ?? 'unknown';
    super(message ?? `${command}: ${codeName} (${code})`);
    this.codeName = codeName;
    this.retriable = retriableCodes.has(code);
  }
}

const reasonNames = new Map<number, string>(Object.entries(EvictionReason).map(([name, value]) => [value, name]));

/**
 * The server evicted the session (EvictionHeader, command 13). `code` is the IggyError an SDK
 * raises for the reason (server notes §3): 42 bad credentials, 53 bad token, 40 session errors,
 * 30 stale client, 14003 incompatible protocol (40 when the window is invalid), 4 malformed login,
 * 3 for any other reason, unknown ones included (the connection decodes evictions leniently).
 */
export class IggyEvictedError extends IggyError {
  override name = 'IggyEvictedError';
  override readonly kind: IggyClientErrorKind = 'evicted';
  override readonly retriable: boolean;
  readonly reasonName: string;

  constructor(
    readonly reason: number,
    command: string,
    /** Accepted window (packed), set for reason 14 only. */
    readonly serverProtocolVersion = 0,
    readonly serverProtocolVersionMin = 0,
  ) {
    const windowValid = isValidWindow(serverProtocolVersion, serverProtocolVersionMin);
    const code =
      reason === EvictionReason.incompatibleProtocol && !windowValid
        ? IggyErrorCode.unauthenticated
        : (evictionSdkError[reason as EvictionReason] ?? IggyErrorCode.invalidCommand);
    const reasonName = reasonNames.get(reason) ?? `reason ${reason}`;
    const window =
      reason === EvictionReason.incompatibleProtocol && windowValid
        ? ` (server accepts ${formatVersion(serverProtocolVersionMin)} ..= ${formatVersion(serverProtocolVersion)})`
        : '';
    super(code, command, `${command}: evicted: ${reasonName}${window}`);
    this.reasonName = reasonName;
    // A session-level eviction heals with a new registration; credentials and versions do not.
    this.retriable = sessionReasons.has(reason);
  }

  /** The server's accepted protocol window as semver strings, for IncompatibleProtocol with a valid window. */
  get serverProtocolWindow(): { min: string; max: string } | null {
    if (this.reason !== EvictionReason.incompatibleProtocol || !isValidWindow(this.serverProtocolVersion, this.serverProtocolVersionMin)) return null;
    return { min: formatVersion(this.serverProtocolVersionMin), max: formatVersion(this.serverProtocolVersion) };
  }
}

/** An IncompatibleProtocol window the SDK trusts: 1 <= min <= max (else the eviction maps to 40). */
function isValidWindow(max: number, min: number): boolean {
  return min !== 0 && max >= min;
}

const sessionReasons: ReadonlySet<number> = new Set([
  EvictionReason.noSession,
  EvictionReason.sessionTooLow,
  EvictionReason.sessionReleaseMismatch,
  EvictionReason.sessionError,
  EvictionReason.staleClient,
]);

/** True for evictions that end the client for good (bad credentials, token, version, login). */
export function isTerminalEviction(reason: number): boolean {
  return !sessionReasons.has(reason);
}

export function formatVersion(packed: number): string {
  const v = unpackVersion(packed);
  return `${v.major}.${v.minor}.${v.patch}`;
}

/**
 * No reply: none came within `timeoutMs`, or (`timeoutMs` 0) the server answered a later request
 * of the connection instead, so this one will not be answered.
 */
export class IggyTimeoutError extends IggyClientError {
  override name = 'IggyTimeoutError';
  readonly kind: IggyClientErrorKind = 'timeout';
  /** The request may or may not have been applied; metadata requests are deduplicated server-side. */
  readonly retriable = true;
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(timeoutMs > 0 ? `${command}: no reply within ${timeoutMs} ms` : `${command}: no reply (the server answered a later request of the connection)`);
  }
}

export class IggyConnectionError extends IggyClientError {
  override name = 'IggyConnectionError';
  readonly kind: IggyClientErrorKind = 'connection';
  readonly retriable = true;
}

export class IggyProtocolError extends IggyClientError {
  override name = 'IggyProtocolError';
  readonly kind: IggyClientErrorKind = 'protocol';
  readonly retriable = false;
}

export class IggyClosedError extends IggyClientError {
  override name = 'IggyClosedError';
  readonly kind: IggyClientErrorKind = 'closed';
  readonly retriable = false;
  constructor(message = closedClientMessage) {
    super(message);
  }
}
