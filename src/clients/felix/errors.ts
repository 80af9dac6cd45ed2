// The errors the Felix SDK raises. Every one carries a stable `kind`, a `retryable` flag and the
// `Symbol.for('quartet.felix.error')` brand (so `isFelixClientError` works across package copies).
//
//   FelixClientError            base class (never thrown directly), a ClientError (../common/errors.ts)
//   ├─ FelixError               the broker refused: an `error` message, a `publish_error` or an
//   │  │                        error ack, with its text (docs/protocols/felix-wire-v1.md §8)
//   │  ├─ FelixAuthError        auth failed, auth required, auth already established, tenant mismatch
//   │  ├─ FelixForbiddenError   forbidden
//   │  ├─ FelixNotFoundError    stream / tenant / namespace / cache scope not found (names parsed)
//   │  ├─ FelixOverloadedError  server or ingress overloaded, subscriber lane full, too many subscriptions
//   │  └─ FelixRequestError     the broker could not read the request (malformed batch, bad flags, ...)
//   ├─ FelixCursorError         subscribe_cursor_error: too_old or in_future, requested, available
//   ├─ FelixPublishRefusedError publish_refused for an idempotent publish: the reason
//   ├─ FelixNotLeaderError      not_leader: the node that leads the shard
//   ├─ FelixUnsupportedError    the broker did not advertise the feature or frame a call needs
//   ├─ FelixTimeoutError        no answer within the request timeout (the outcome is unknown)
//   ├─ FelixConnectionError     the QUIC connection or stream could not be opened, or went away
//   ├─ FelixProtocolError       the broker sent bytes the codec cannot read, or out of step
//   └─ FelixClosedError         close() was called
//
// The broker's texts are matched exactly as the reference broker words them (notes §10), so the
// class a refusal gets is the same against every Felix broker.

import { ErrorText, type CursorErrorReason, type PublishRefusalReason } from '../../protocols/felix/codec/index.js';
import { ClientError, closedClientMessage, hasBrand } from '../common/errors.js';

const brand = Symbol.for('quartet.felix.error');

export type FelixClientErrorKind = 'server' | 'cursor' | 'refused' | 'not_leader' | 'unsupported' | 'timeout' | 'connection' | 'protocol' | 'closed';

export abstract class FelixClientError extends ClientError<FelixClientErrorKind> {
  /** True when the same request may be sent again. */
  abstract readonly retryable: boolean;
  readonly [brand] = true;
}

export function isFelixClientError(err: unknown): err is FelixClientError {
  return hasBrand(err, brand);
}

/** A refusal in the broker's words. Subclasses name the texts clients act on. */
export class FelixError extends FelixClientError {
  override name = 'FelixError';
  readonly kind: FelixClientErrorKind = 'server';
  readonly retryable: boolean = false;
  constructor(
    /** The broker's text, exactly as sent. */
    readonly text: string,
    /** The request that was refused ('publish', 'cache_get', ...). */
    readonly request: string,
  ) {
    super(`${request}: ${text}`);
  }
}

export class FelixAuthError extends FelixError {
  override readonly name: string = 'FelixAuthError';
}

export class FelixForbiddenError extends FelixError {
  override readonly name: string = 'FelixForbiddenError';
}

/** What a not-found text names. */
export type NotFoundWhat = 'stream' | 'tenant' | 'namespace' | 'cache';

export class FelixNotFoundError extends FelixError {
  override name = 'FelixNotFoundError';
  constructor(
    text: string,
    request: string,
    readonly what: NotFoundWhat,
    /** The names in the text: tenant, namespace, stream or cache as it says. */
    readonly names: Readonly<Record<string, string>>,
  ) {
    super(text, request);
  }
}

export class FelixOverloadedError extends FelixError {
  override readonly name: string = 'FelixOverloadedError';
  override readonly retryable = true;
}

export class FelixRequestError extends FelixError {
  override readonly name: string = 'FelixRequestError';
}

const authTexts: ReadonlySet<string> = new Set([ErrorText.authFailed, ErrorText.authRequired, ErrorText.authAlreadyEstablished, ErrorText.tenantMismatch]);
const overloadTexts: ReadonlySet<string> = new Set([ErrorText.serverOverloaded, ErrorText.ingressOverloaded, ErrorText.subscriberLaneFull, ErrorText.maxSubscriptions]);
const requestTexts: ReadonlySet<string> = new Set([
  ErrorText.unsupportedFrameFlags,
  ErrorText.unexpectedMessageType,
  ErrorText.cursorErrorFromClient,
  ErrorText.malformedPublishBatch,
  ErrorText.malformedAckedPrefix,
  ErrorText.missingRequestId,
]);

/** key=value pairs of a not-found text ("tenant=t1 namespace=default stream=orders"). */
function namedPairs(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(/(\w+)=(\S*)/g)) out[m[1]!] = m[2]!;
  return out;
}

function notFound(text: string, request: string): FelixNotFoundError | null {
  let m: RegExpExecArray | null;
  if ((m = /^stream not found: (.*)$/.exec(text)) !== null) return new FelixNotFoundError(text, request, 'stream', namedPairs(m[1]!));
  if ((m = /^namespace not found: (.*)$/.exec(text)) !== null) return new FelixNotFoundError(text, request, 'namespace', namedPairs(m[1]!));
  if ((m = /^tenant not found: (.*)$/.exec(text)) !== null) return new FelixNotFoundError(text, request, 'tenant', { tenant: m[1]! });
  if ((m = /^cache scope not found: ([^/]*)\/([^/]*)\/(.*)$/.exec(text)) !== null) return new FelixNotFoundError(text, request, 'cache', { tenant: m[1]!, namespace: m[2]!, cache: m[3]! });
  return null;
}

/** The error class for a broker's text (an unknown text is a plain FelixError). */
export function felixError(text: string, request: string): FelixError {
  if (authTexts.has(text)) return new FelixAuthError(text, request);
  if (text === ErrorText.forbidden) return new FelixForbiddenError(text, request);
  if (overloadTexts.has(text)) return new FelixOverloadedError(text, request);
  if (requestTexts.has(text)) return new FelixRequestError(text, request);
  return notFound(text, request) ?? new FelixError(text, request);
}

/** subscribe_cursor_error: the start offset cannot be served. */
export class FelixCursorError extends FelixClientError {
  override name = 'FelixCursorError';
  readonly kind: FelixClientErrorKind = 'cursor';
  readonly retryable = false;
  constructor(
    /** too_old: retention removed it (`available` is the oldest kept); in_future: past the tail (`available` is the tail). */
    readonly reason: CursorErrorReason,
    readonly requested: bigint,
    readonly available: bigint,
    readonly request: string,
  ) {
    super(`${request}: cursor ${reason}: requested ${requested}, available ${available}`);
  }
}

/** publish_refused: the broker did not append an idempotent batch, and says why. */
export class FelixPublishRefusedError extends FelixClientError {
  override name = 'FelixPublishRefusedError';
  readonly kind: FelixClientErrorKind = 'refused';
  readonly retryable = false;
  constructor(
    readonly reason: PublishRefusalReason,
    readonly text: string,
    readonly sequence: bigint,
  ) {
    super(`publish_idempotent: refused (${reason.kind}) at sequence ${sequence}${text !== '' ? `: ${text}` : ''}`);
  }
}

/** not_leader: another node leads the shard (sent only to clients that offered REDIRECT). */
export class FelixNotLeaderError extends FelixClientError {
  override name = 'FelixNotLeaderError';
  readonly kind: FelixClientErrorKind = 'not_leader';
  readonly retryable = true;
  constructor(
    readonly nodeId: string,
    readonly addr: string | null,
    readonly generation: bigint,
    readonly request: string,
  ) {
    super(`${request}: not leader; node ${nodeId}${addr !== null ? ` at ${addr}` : ''} leads (generation ${generation})`);
  }
}

/** The broker did not advertise what the call needs; nothing was sent. */
export class FelixUnsupportedError extends FelixClientError {
  override name = 'FelixUnsupportedError';
  readonly kind: FelixClientErrorKind = 'unsupported';
  readonly retryable = false;
  constructor(
    readonly request: string,
    /** The feature (or frame flag) bit the broker lacks. */
    readonly bit: number,
    what: 'feature' | 'flag',
  ) {
    super(`${request}: the broker does not advertise ${what} 0x${bit.toString(16).padStart(4, '0')}`);
  }
}

export class FelixTimeoutError extends FelixClientError {
  override name = 'FelixTimeoutError';
  readonly kind: FelixClientErrorKind = 'timeout';
  /** The broker may or may not have applied the request. */
  readonly retryable = true;
  constructor(
    readonly request: string,
    readonly timeoutMs: number,
  ) {
    super(`${request}: no answer within ${timeoutMs} ms`);
  }
}

export class FelixConnectionError extends FelixClientError {
  override name = 'FelixConnectionError';
  readonly kind: FelixClientErrorKind = 'connection';
  readonly retryable = true;
}

export class FelixProtocolError extends FelixClientError {
  override name = 'FelixProtocolError';
  readonly kind: FelixClientErrorKind = 'protocol';
  readonly retryable = false;
}

export class FelixClosedError extends FelixClientError {
  override name = 'FelixClosedError';
  readonly kind: FelixClientErrorKind = 'closed';
  readonly retryable = false;
  constructor(message = closedClientMessage) {
    super(message);
  }
}

/** True when the same operation may be attempted again (an overload, a lost answer). */
export function isRetryable(err: unknown): boolean {
  return isFelixClientError(err) && err.retryable;
}
