// SaslAuthenticate (key 36), v0-2, answered before authentication. Grammar:
// codec/messages/sasl-authenticate.ts.
//
// Carries one token of the exchange SaslHandshake v1 started (session.sasl.exchange): PLAIN
// completes in one step with an empty reply; SCRAM takes two (server-first, then server-final).
// Once the exchange completes, session.principal is the user. A failed step → the mechanism's code
// (SASL_AUTHENTICATION_FAILED 58, ILLEGAL_SASL_STATE 34) with a message that never says whether
// the user exists; the exchange is then over for good. After SASL_AUTHENTICATION_FAILED the
// connection closes once the answer is written, as Kafka's SaslServerAuthenticator does.
// Without a handshake, after a v0 handshake (raw tokens follow) or after authentication →
// ILLEGAL_SASL_STATE. session_lifetime_ms (v1+) is 0: no re-authentication (KIP-368).

import { emptyBuffer } from '../codec/reader.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { authenticatedAs } from '../access.js';
import { isSaslFailure } from '../sasl/types.js';
import { saslOutcome } from './sasl-handshake.js';
import { defineHandler } from './types.js';

function illegalState(errorMessage: string) {
  return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage, authBytes: emptyBuffer, sessionLifetimeMs: 0 };
}

export const saslAuthenticateHandler = defineHandler({
  apiKey: ApiKey.SaslAuthenticate,
  minVersion: 0,
  maxVersion: 2,
  preAuth: true,
  async handle(request, { frontend, session, closeAfterResponse }) {
    if (session.principal !== null) return illegalState('SaslAuthenticate request received after successful authentication');
    const sasl = session.sasl;
    if (sasl === null || sasl.exchange === undefined) return illegalState('SaslAuthenticate request received before SaslHandshake');
    if (sasl.rawTokens) return illegalState('SaslHandshake v0 was used: raw SASL tokens are expected, not SaslAuthenticate');
    const result = await sasl.exchange.step(request.authBytes);
    if (isSaslFailure(result)) {
      // A failed login is logged once, by the core (AuthThrottle.failed: protocol, peer, user).
      const loginFailed = result.kafkaErrorCode === ErrorCode.SASL_AUTHENTICATION_FAILED;
      session.logger[loginFailed ? 'debug' : 'info']('SASL exchange failed', { mechanism: sasl.mechanism, reason: result.error });
      if (loginFailed) saslOutcome(frontend, session, 'failed');
      // As Kafka's SaslServerAuthenticator: the error goes out, then the connection closes.
      if (result.kafkaErrorCode === ErrorCode.SASL_AUTHENTICATION_FAILED) closeAfterResponse?.();
      return { errorCode: result.kafkaErrorCode, errorMessage: result.message, authBytes: emptyBuffer, sessionLifetimeMs: 0 };
    }
    if (result.done) {
      saslOutcome(frontend, session, 'succeeded');
      authenticatedAs(session, result.user ?? null);
      session.logger.info('SASL authentication succeeded', { mechanism: sasl.mechanism, user: session.principal });
    }
    return { errorCode: 0, errorMessage: null, authBytes: result.token, sessionLifetimeMs: 0 };
  },
});
