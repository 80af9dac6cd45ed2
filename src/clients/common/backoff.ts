// The reconnection backoff every SDK in src/clients uses: exponential from a floor to a ceiling,
// with ±20 % jitter so that clients a broker dropped together do not all come back together.

export interface BackoffOptions {
  /** First delay, ms. */
  backoffMinMs: number;
  /** Largest delay, ms. */
  backoffMaxMs: number;
}

/** The delay before attempt `attempt + 1`: backoffMinMs × 2^(attempt-1), capped at backoffMaxMs, ±20 %. */
export function backoffDelayMs(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const base = Math.min(options.backoffMaxMs, options.backoffMinMs * 2 ** (attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}
