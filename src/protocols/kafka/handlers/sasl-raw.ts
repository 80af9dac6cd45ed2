// The legacy raw-token SASL path (SaslHandshake v0, used by kafka-python 2.0.2): after the
// handshake, every frame the client sends until it is authenticated is a bare SASL token (int32
// size + token, no request header), and the server answers each with a bare token the same way.
//
// Contract with connection.ts: while `session.sasl?.rawTokens === true && session.principal ===
// null`, the connection passes each frame's bytes (without the size) here, one at a time, writes
// `reply` back prefixed with its int32 size (nothing when null), and closes the connection after
// it when `close` is set.
//
//   PLAIN   one token; success → an empty reply, i.e. the 4 zero bytes kafka-python waits for
//           (conn.py _try_authenticate_plain); failure → no reply, the connection closes (Kafka's
//           SaslServerAuthenticator does the same: without SaslAuthenticate there is no way to
//           carry an error).
//   SCRAM   client-first → server-first, client-final → server-final (v=...); failure → close.
// Success sets session.principal; the next frame is an ordinary request again.

import { authenticatedAs } from '../access.js';
import { SaslKafkaError, isSaslFailure } from '../sasl/types.js';
import { saslOutcome } from './sasl-handshake.js';
import type { KafkaFrontend, KafkaSession } from './types.js';

export interface SaslRawReply {
  /** The token to send back (the connection adds the int32 size); null sends nothing. */
  reply: Buffer | null;
  /** Close the connection after the reply. */
  close: boolean;
}

/** Whether the connection must treat its next frame as a raw SASL token. */
export function expectsRawSaslToken(session: KafkaSession): boolean {
  return session.sasl?.rawTokens === true && session.principal === null;
}

export async function saslRawToken(frontend: KafkaFrontend, session: KafkaSession, token: Buffer): Promise<SaslRawReply> {
  const sasl = session.sasl;
  if (sasl === null || !sasl.rawTokens || sasl.exchange === undefined || session.principal !== null) {
    session.logger.warn('raw SASL token outside a SaslHandshake v0 exchange; closing the connection');
    return { reply: null, close: true };
  }
  const result = await sasl.exchange.step(token);
  if (isSaslFailure(result)) {
    // A failed login is logged once, by the core (AuthThrottle.failed: protocol, peer, user).
    const loginFailed = result.kafkaErrorCode === SaslKafkaError.SASL_AUTHENTICATION_FAILED;
    session.logger[loginFailed ? 'debug' : 'info']('SASL exchange failed', { mechanism: sasl.mechanism, reason: result.error, rawTokens: true });
    if (loginFailed) saslOutcome(frontend, session, 'failed');
    return { reply: null, close: true };
  }
  if (result.done) {
    saslOutcome(frontend, session, 'succeeded');
    authenticatedAs(session, result.user ?? null);
    session.logger.info('SASL authentication succeeded', { mechanism: sasl.mechanism, user: session.principal, rawTokens: true });
  }
  return { reply: result.token, close: false };
}
