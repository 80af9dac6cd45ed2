// SASL PLAIN, server side (RFC 4616):
//
//   message   = [authzid] UTF8NUL authcid UTF8NUL passwd
//   authcid   = 1*SAFE ; MUST accept up to 255 octets
//   authzid   = 1*SAFE ; MUST accept up to 255 octets
//   passwd    = 1*SAFE ; MUST accept up to 255 octets
//   SAFE      = UTF1 / UTF2 / UTF3 / UTF4 ; any UTF-8 character except NUL
//
// As in Kafka's PlainSaslServer: exactly three fields, non-empty user and password, and an
// authzid, if given, must equal the user (we do not support acting as someone else).

import { authFailure, decodeUtf8, type SaslStepResult } from './types.js';

/** RFC 4616 requires accepting 255 octets per field; we accept more (API secrets can be long). */
export const plainFieldBytesMax = 1024;

export type PlainPasswordVerifier = (user: string, password: string) => boolean | Promise<boolean>;

export interface PlainMessage {
  authzid: string;
  authcid: string;
  password: string;
}

/** Parses a PLAIN client message, or says why it is malformed. */
export function parsePlainMessage(token: Buffer): PlainMessage | { error: string } {
  const fields: Buffer[] = [];
  let start = 0;
  for (let i = token.indexOf(0); i !== -1; i = token.indexOf(0, start)) {
    fields.push(token.subarray(start, i));
    start = i + 1;
  }
  fields.push(token.subarray(start));
  if (fields.length !== 3) return { error: 'malformed: expected authzid NUL authcid NUL passwd' };
  if (fields.some((f) => f.length > plainFieldBytesMax)) return { error: `malformed: a field exceeds ${plainFieldBytesMax} bytes` };
  const [authzid, authcid, password] = fields.map(decodeUtf8);
  if (authzid == null || authcid == null || password == null) return { error: 'malformed: not UTF-8' };
  if (authcid === '') return { error: 'malformed: empty username' };
  if (password === '') return { error: 'malformed: empty password' };
  return { authzid, authcid, password };
}

/** One-step PLAIN exchange: success answers with an empty token. */
export async function authenticatePlain(token: Buffer, verifyPassword: PlainPasswordVerifier): Promise<SaslStepResult> {
  const parsed = parsePlainMessage(token);
  if ('error' in parsed) return authFailure('malformed-message', `Authentication failed: ${parsed.error}`);
  if (parsed.authzid !== '' && parsed.authzid !== parsed.authcid) {
    return authFailure('authzid-mismatch', 'Authentication failed: the authorization id must equal the username');
  }
  if (!(await verifyPassword(parsed.authcid, parsed.password))) return authFailure('invalid-credentials');
  return { token: Buffer.alloc(0), done: true, user: parsed.authcid };
}
