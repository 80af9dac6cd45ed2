// Client quota enforcement on Produce and Fetch (the quotas themselves: core/client-quotas.ts,
// set with AlterClientQuotas). As Kafka's ClientQuotaManager and KIP-219: the request's bytes
// (Produce: the records sent; Fetch: the records answered) count against the byte-rate quota of
// its user (`ANONYMOUS` without SASL) and client id, its handling time against
// request_percentage; over either, the response carries throttle_time_ms and the connection is
// muted (no further request is read from it) for that long once the response is written. A
// throttled Fetch answers without records, as Kafka's getThrottledResponse, so the consumer's
// position does not move past what its quota allowed. With no quota set anywhere this costs one
// property read.

import type { QuotaKey } from '../../core/client-quotas.js';
import type { KafkaRequestContext } from './handlers/types.js';

/** Kafka's principal for a connection that did not authenticate. */
export const anonymousPrincipal = 'ANONYMOUS';

/**
 * Records the request's bytes (and its handling time since `startedMs`) and returns the throttle
 * time in ms; when positive, the connection is muted for that long after the response.
 */
export function throttleRequest(context: KafkaRequestContext, key: QuotaKey, bytes: number, startedMs: number): number {
  const quotas = context.frontend.broker.clientQuotas;
  if (!quotas.active) return 0;
  const user = context.session.principal ?? anonymousPrincipal;
  const clientId = context.session.clientId ?? '';
  const byteMs = quotas.record(key, user, clientId, bytes);
  const timeMs = quotas.record('request_percentage', user, clientId, Math.max(0, context.frontend.clock.now() - startedMs));
  const throttleMs = Math.max(byteMs, timeMs);
  if (throttleMs > 0) context.throttleAfterResponse?.(throttleMs);
  return throttleMs;
}
