// The root of the errors every SDK in src/clients raises (Felix, Cursus, Iggy). Each SDK derives
// its own base class from ClientError, adding its kinds, its retry flag (`retryable` in Felix and
// Cursus, `retriable` in Iggy, as each SDK has always spelt it) and its `Symbol.for` brand, which
// `hasBrand` checks so that an SDK's `is...ClientError` guard also answers for an error made by
// another copy of the same package (where `instanceof` cannot). Classes name themselves with an
// `override name = '...'` field.

/** What every SDK error constructor may take besides the message: the error behind it. */
export interface ClientErrorOptions {
  cause?: unknown;
}

export abstract class ClientError<Kind extends string> extends Error {
  /** What went wrong, stable across releases (the SDK's own set of kinds). */
  abstract readonly kind: Kind;

  constructor(message: string, options?: ClientErrorOptions) {
    super(message, options);
  }
}

/** True when `err` is an object carrying `brand` (a `Symbol.for` key) set to true. */
export function hasBrand(err: unknown, brand: symbol): boolean {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[brand] === true;
}

/** The message of every SDK's closed-client error when the caller gives none. */
export const closedClientMessage = 'the client is closed';
