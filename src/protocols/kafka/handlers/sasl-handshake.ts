// SaslHandshake (key 17), v0-1, answered before authentication. Grammar:
// codec/messages/sasl-handshake.ts.
//
// Picks the mechanism for this connection and starts its exchange (../sasl/session.ts), kept in
// `session.sasl.exchange` until it completes. The response always lists the enabled mechanisms
// (settings.saslMechanisms that Quartet implements: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512).
//   v1: the tokens follow in SaslAuthenticate requests (librdkafka, kafkajs, platformatic).
//   v0: the tokens follow as raw int32-size-prefixed frames with no request header
//       (kafka-python 2.0.2); the connection hands them to ./sasl-raw.ts.
// A mechanism that is not enabled → UNSUPPORTED_SASL_MECHANISM (33). A handshake after a
// mechanism was chosen, or after authentication → ILLEGAL_SASL_STATE (34), as Kafka's
// SaslServerAuthenticator / KafkaApis do (Quartet has no re-authentication, KIP-368).
//
// Users come from the core UserStore, shared with the other protocols: PLAIN checks the scrypt
// password hash, SCRAM the stored SCRAM-SHA-256/512 credentials. Inactive users cannot log in.

import { isQuartetError } from '../../../base/errors.js';
import type { UserStore } from '../../../core/users.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { SaslSession, saslMechanismNames, type SaslMechanismName } from '../sasl/session.js';
import { isSaslFailure } from '../sasl/types.js';
import { defineHandler, type KafkaFrontend, type KafkaSession } from './types.js';

/** The mechanisms this listener offers: the configured ones Quartet implements, in configured order. */
export function enabledSaslMechanisms(frontend: KafkaFrontend): SaslMechanismName[] {
  const known = new Set<string>(saslMechanismNames);
  return frontend.settings.saslMechanisms.filter((m): m is SaslMechanismName => known.has(m));
}

/**
 * A PLAIN password check over the user store: false for a wrong password, an unknown or an
 * inactive user. `verified` gets the id of the user the password matched.
 */
export function plainVerifier(users: UserStore, verified: (userId: number) => void): (user: string, password: string) => Promise<boolean> {
  return (user, password) =>
    users.verifyPassword(user, password).then(
      (found) => {
        verified(found.id);
        return true;
      },
      (err: unknown) => {
        if (isQuartetError(err) && (err.code === 'invalid_credentials' || err.code === 'user_inactive')) return false;
        throw err;
      },
    );
}

/**
 * One connection's SASL exchange, over the core's users. `identified` gets the id of the user
 * whose password or SCRAM credentials the exchange checks, taken together with them: the
 * connection's grants are that user's (../access.ts), whatever happens to its name meanwhile.
 * Each check first goes through the broker's failed-login throttle (core/auth-throttle.ts): it may
 * wait, and a locked-out name or peer fails as a wrong password would. The name the client gave
 * is kept in `sasl.claimed` for saslOutcome().
 */
export function newSaslExchange(frontend: KafkaFrontend, session: KafkaSession, sasl: NonNullable<KafkaSession['sasl']>, enabledMechanisms: readonly SaslMechanismName[]): SaslSession {
  const users = frontend.broker.users;
  const throttle = frontend.broker.authThrottle;
  const identified = (userId: number): void => void (sasl.userId = userId);
  const verify = plainVerifier(users, identified);
  return new SaslSession({
    enabledMechanisms,
    verifyPassword: async (username, password) => {
      sasl.claimed = username;
      if (!(await throttle.admit(username, session.remote, 'kafka')).admitted) return false;
      return verify(username, password);
    },
    scramCredentials: async (username, mechanism) => {
      sasl.claimed = username;
      // Locked out: no credentials, so the exchange goes on with a mock salt and fails at the proof.
      if (!(await throttle.admit(username, session.remote, 'kafka')).admitted) return null;
      const user = users.get(username);
      if (user?.status !== 'active') return null;
      const credential = users.scramCredential(username, mechanism === 'SCRAM-SHA-256' ? 'SHA-256' : 'SHA-512');
      if (credential !== null) identified(user.id);
      return credential;
    },
  });
}

/** Tells the failed-login throttle how a SASL step ended (a wrong password, or the exchange done). */
export function saslOutcome(frontend: KafkaFrontend, session: KafkaSession, outcome: 'failed' | 'succeeded'): void {
  const claimed = session.sasl?.claimed ?? null;
  if (outcome === 'failed') frontend.broker.authThrottle.failed(claimed, session.remote, 'kafka');
  else if (claimed !== null) frontend.broker.authThrottle.succeeded(claimed);
}

export const saslHandshakeHandler = defineHandler({
  apiKey: ApiKey.SaslHandshake,
  minVersion: 0,
  maxVersion: 1,
  preAuth: true,
  handle(request, { frontend, session, version }) {
    const mechanisms = enabledSaslMechanisms(frontend);
    if (session.principal !== null || session.sasl !== null) {
      session.logger.warn('SaslHandshake after the SASL mechanism was chosen', { mechanism: request.mechanism });
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms };
    }
    const sasl: NonNullable<KafkaSession['sasl']> = { mechanism: request.mechanism, rawTokens: version === 0, userId: null, claimed: null };
    const exchange = newSaslExchange(frontend, session, sasl, mechanisms);
    const started = exchange.start(request.mechanism);
    if (isSaslFailure(started)) {
      session.logger.info('SASL mechanism not enabled', { mechanism: request.mechanism, enabled: mechanisms });
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms };
    }
    sasl.exchange = exchange;
    session.sasl = sasl;
    return { errorCode: 0, mechanisms };
  },
});
