// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), server side, plus the credential
// derivation the user store needs and a client for tests. Messages (RFC 5802 §7, abridged):
//
//   client-first-message = gs2-header client-first-message-bare
//   gs2-header           = gs2-cbind-flag "," [ authzid ] ","
//   gs2-cbind-flag       = ("p=" cb-name) / "n" / "y"
//   authzid              = "a=" saslname
//   client-first-message-bare = [reserved-mext ","] username "," nonce ["," extensions]
//   username             = "n=" saslname        ; "," and "=" escaped as "=2C" and "=3D"
//   server-first-message = [reserved-mext ","] nonce "," salt "," iteration-count ["," extensions]
//   client-final-message = channel-binding "," nonce ["," extensions] "," proof
//   channel-binding      = "c=" base64(gs2-header)   ; "biws" for "n,,"
//   server-final-message = ("e=" server-error-value) / ("v=" base64(ServerSignature))
//
//   SaltedPassword  = Hi(password, salt, i)          ; PBKDF2 with HMAC-H
//   ClientKey       = HMAC(SaltedPassword, "Client Key");  StoredKey = H(ClientKey)
//   ServerKey       = HMAC(SaltedPassword, "Server Key")
//   AuthMessage     = client-first-message-bare "," server-first-message "," client-final-without-proof
//   ClientSignature = HMAC(StoredKey, AuthMessage);  ClientProof = ClientKey XOR ClientSignature
//   ServerSignature = HMAC(ServerKey, AuthMessage)
//
// Like Kafka (ScramFormatter), passwords are used as UTF-8 without SASLprep, channel binding
// (-PLUS) is not offered, and extensions other than Kafka's are ignored; `tokenauth=true`
// (delegation tokens) is refused because Quartet has none.

import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { QuartetError } from '../../../base/errors.js';
import { scramIterations as storedIterations, scramSaltBytes as storedSaltBytes } from '../../../core/users.js';
import { authFailure, decodeUtf8, type SaslStepFailure, type SaslStepResult } from './types.js';

export type ScramMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

export const scramMechanisms: readonly ScramMechanism[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];

interface HashSpec {
  readonly name: 'sha256' | 'sha512';
  readonly bytes: number;
}

const hashes: Readonly<Record<ScramMechanism, HashSpec>> = {
  'SCRAM-SHA-256': { name: 'sha256', bytes: 32 },
  'SCRAM-SHA-512': { name: 'sha512', bytes: 64 },
};

/** Kafka's ScramMechanism bounds on the iteration count of stored credentials. */
export const scramIterationsMin = 4096;
export const scramIterationsMax = 16384;
/** Salt we generate for new credentials. */
export const scramSaltBytes = 32;
/** Longest client or server SCRAM message we parse. */
export const scramMessageBytesMax = 4096;
/** Random bytes in the server's half of the nonce (base64-encoded on the wire). */
export const scramServerNonceBytes = 24;

export interface ScramCredentials {
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

export type ScramCredentialLookup = (
  username: string,
  mechanism: ScramMechanism,
) => ScramCredentials | null | Promise<ScramCredentials | null>;

function hmac(spec: HashSpec, key: Buffer, data: string | Buffer): Buffer {
  return createHmac(spec.name, key).update(data).digest();
}

function hash(spec: HashSpec, data: Buffer): Buffer {
  return createHash(spec.name).update(data).digest();
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

function saltedPassword(spec: HashSpec, password: string, salt: Buffer, iterations: number): Buffer {
  return pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, spec.bytes, spec.name);
}

/** What the user store keeps for a password: never the password itself. */
export function computeScramCredentials(
  mechanism: ScramMechanism,
  password: string,
  options: { salt?: Buffer; iterations?: number } = {},
): ScramCredentials {
  const iterations = options.iterations ?? scramIterationsMin;
  if (!Number.isInteger(iterations) || iterations < scramIterationsMin || iterations > scramIterationsMax) {
    throw new QuartetError('invalid_config', `SCRAM iterations must be ${scramIterationsMin}..${scramIterationsMax}, got ${iterations}`);
  }
  const spec = hashes[mechanism];
  const salt = options.salt ?? randomBytes(scramSaltBytes);
  const salted = saltedPassword(spec, password, salt, iterations);
  return { salt, iterations, storedKey: hash(spec, hmac(spec, salted, 'Client Key')), serverKey: hmac(spec, salted, 'Server Key') };
}

// ------------------------------------------------------------------------------- parsing

/** saslname: "=2C" is ",", "=3D" is "=", any other "=" is invalid; null when invalid. */
export function decodeSaslName(value: string): string | null {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (ch === ',') return null;
    if (ch !== '=') {
      out += ch;
      continue;
    }
    const escape = value.slice(i + 1, i + 3);
    if (escape === '2C') out += ',';
    else if (escape === '3D') out += '=';
    else return null;
    i += 2;
  }
  return out;
}

export function encodeSaslName(value: string): string {
  return value.replaceAll('=', '=3D').replaceAll(',', '=2C');
}

/** printable = %x21-2B / %x2D-7E: visible ASCII without ",". */
function isValidNonce(nonce: string): boolean {
  return nonce.length > 0 && /^[\x21-\x2b\x2d-\x7e]+$/.test(nonce);
}

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict base64 (Buffer.from accepts anything); null when invalid. */
function decodeBase64(value: string): Buffer | null {
  return base64Pattern.test(value) ? Buffer.from(value, 'base64') : null;
}

/** Splits "k=v" attributes; null when an item is not of that shape. */
function attributes(message: string): { key: string; value: string }[] | null {
  const items = message.split(',');
  const out: { key: string; value: string }[] = [];
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq < 1) return null;
    out.push({ key: item.slice(0, eq), value: item.slice(eq + 1) });
  }
  return out;
}

export interface ClientFirstMessage {
  gs2Header: string;
  username: string;
  authzid: string | null;
  clientNonce: string;
  bare: string;
  extensions: Map<string, string>;
}

/** Parses client-first-message or returns the RFC 5802 server-error-value it deserves. */
export function parseClientFirst(message: string): ClientFirstMessage | { error: string } {
  const firstComma = message.indexOf(',');
  const secondComma = message.indexOf(',', firstComma + 1);
  if (firstComma < 0 || secondComma < 0) return { error: 'invalid-encoding' };
  const cbindFlag = message.slice(0, firstComma);
  if (cbindFlag.startsWith('p=')) return { error: 'channel-binding-not-supported' };
  // "y": the client could bind but thinks we cannot, which is true, so it is fine (§6).
  if (cbindFlag !== 'n' && cbindFlag !== 'y') return { error: 'invalid-encoding' };
  const authzField = message.slice(firstComma + 1, secondComma);
  let authzid: string | null = null;
  if (authzField !== '') {
    if (!authzField.startsWith('a=')) return { error: 'invalid-encoding' };
    authzid = decodeSaslName(authzField.slice(2));
    if (authzid === null || authzid === '') return { error: 'invalid-username-encoding' };
  }
  const bare = message.slice(secondComma + 1);
  const attrs = attributes(bare);
  if (attrs === null || attrs.length < 2) return { error: 'invalid-encoding' };
  if (attrs[0]!.key === 'm') return { error: 'extensions-not-supported' };
  if (attrs[0]!.key !== 'n' || attrs[1]!.key !== 'r') return { error: 'invalid-encoding' };
  const username = decodeSaslName(attrs[0]!.value);
  if (username === null || username === '') return { error: 'invalid-username-encoding' };
  if (!isValidNonce(attrs[1]!.value)) return { error: 'invalid-encoding' };
  const extensions = new Map(attrs.slice(2).map((a) => [a.key, a.value] as const));
  return { gs2Header: message.slice(0, secondComma + 1), username, authzid, clientNonce: attrs[1]!.value, bare, extensions };
}

export interface ClientFinalMessage {
  channelBinding: Buffer;
  nonce: string;
  proof: Buffer;
  withoutProof: string;
}

export function parseClientFinal(message: string): ClientFinalMessage | { error: string } {
  const proofAt = message.lastIndexOf(',p=');
  if (proofAt < 0) return { error: 'invalid-encoding' };
  const withoutProof = message.slice(0, proofAt);
  const attrs = attributes(withoutProof);
  if (attrs === null || attrs.length < 2 || attrs[0]!.key !== 'c' || attrs[1]!.key !== 'r') return { error: 'invalid-encoding' };
  const channelBinding = decodeBase64(attrs[0]!.value);
  const proof = decodeBase64(message.slice(proofAt + 3));
  if (channelBinding === null || proof === null) return { error: 'invalid-encoding' };
  return { channelBinding, nonce: attrs[1]!.value, proof, withoutProof };
}

// ------------------------------------------------------------------------------- server

type ServerState =
  | { kind: 'client-first' }
  | { kind: 'client-final'; first: ClientFirstMessage; serverFirst: string; nonce: string; credentials: ScramCredentials }
  | { kind: 'finished' };

export interface ScramServerOptions {
  /** The server's half of the nonce; random by default, fixed in tests. */
  serverNonce?: () => string;
}

/** The key of the mock salts of this process (RFC 5802 §5.1: "a mock salt"). */
const mockSaltKey = randomBytes(32);

/**
 * What an unknown user is answered with, so that the exchange goes on exactly as for a known one
 * and fails only at the proof (RFC 5802 §5.1): a salt derived from the name (the same name gets
 * the same salt every time, as a stored one would), the stored credentials' salt length and
 * iteration count, and keys no proof can match.
 */
function mockCredentials(spec: HashSpec, username: string): ScramCredentials {
  const salt = createHmac('sha256', mockSaltKey).update(`${spec.name}\0${username}`).digest().subarray(0, storedSaltBytes);
  return { salt, iterations: storedIterations, storedKey: randomBytes(spec.bytes), serverKey: randomBytes(spec.bytes) };
}

function scramFailure(error: string, message?: string): SaslStepFailure {
  return authFailure(error, message ?? `Authentication failed: ${error}`, Buffer.from(`e=${error}`));
}

/** One SCRAM exchange: client-first → server-first, client-final → server-final. */
export class ScramServerExchange {
  private state: ServerState = { kind: 'client-first' };
  private readonly spec: HashSpec;
  private readonly serverNonce: () => string;

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly lookup: ScramCredentialLookup,
    options: ScramServerOptions = {},
  ) {
    this.spec = hashes[mechanism];
    this.serverNonce = options.serverNonce ?? (() => randomBytes(scramServerNonceBytes).toString('base64'));
  }

  async step(token: Buffer): Promise<SaslStepResult> {
    const state = this.state;
    this.state = { kind: 'finished' }; // any failure ends the exchange
    if (token.length > scramMessageBytesMax) return scramFailure('invalid-encoding', 'Authentication failed: message too long');
    const message = decodeUtf8(token);
    if (message === null) return scramFailure('invalid-encoding');
    switch (state.kind) {
      case 'client-first':
        return this.onClientFirst(message);
      case 'client-final':
        return this.onClientFinal(state, message);
      case 'finished':
        return scramFailure('other-error', 'Authentication failed: the exchange is over');
    }
  }

  private async onClientFirst(message: string): Promise<SaslStepResult> {
    const first = parseClientFirst(message);
    if ('error' in first) return scramFailure(first.error);
    if (first.authzid !== null && first.authzid !== first.username) {
      return scramFailure('other-error', 'Authentication failed: the authorization id must equal the username');
    }
    if (first.extensions.get('tokenauth') === 'true') return scramFailure('extensions-not-supported');
    // An unknown user gets a server-first message like any other and fails at the proof, with the
    // same error as a wrong password: the exchange does not tell which names exist.
    const credentials = (await this.lookup(first.username, this.mechanism)) ?? mockCredentials(this.spec, first.username);
    const nonce = first.clientNonce + this.serverNonce();
    const serverFirst = `r=${nonce},s=${credentials.salt.toString('base64')},i=${credentials.iterations}`;
    this.state = { kind: 'client-final', first, serverFirst, nonce, credentials };
    return { token: Buffer.from(serverFirst), done: false };
  }

  private onClientFinal(state: Extract<ServerState, { kind: 'client-final' }>, message: string): SaslStepResult {
    const final = parseClientFinal(message);
    if ('error' in final) return scramFailure(final.error);
    if (!final.channelBinding.equals(Buffer.from(state.first.gs2Header))) return scramFailure('channel-bindings-dont-match');
    // Kafka's ScramSaslServer asks only that the nonce end with the server's: librdkafka (kcat,
    // confluent-kafka) sends its client nonce again before the whole server nonce. The proof
    // covers the message as sent, so that is what is verified.
    if (!final.nonce.endsWith(state.nonce)) return scramFailure('other-error', 'Authentication failed: nonce mismatch');
    const authMessage = `${state.first.bare},${state.serverFirst},${final.withoutProof}`;
    const { storedKey, serverKey } = state.credentials;
    if (final.proof.length !== this.spec.bytes) return scramFailure('invalid-proof', 'Authentication failed: invalid credentials');
    const clientKey = xor(final.proof, hmac(this.spec, storedKey, authMessage));
    if (!timingSafeEqual(hash(this.spec, clientKey), storedKey)) return scramFailure('invalid-proof', 'Authentication failed: invalid credentials');
    const serverSignature = hmac(this.spec, serverKey, authMessage).toString('base64');
    return { token: Buffer.from(`v=${serverSignature}`), done: true, user: state.first.username };
  }
}

// ------------------------------------------------------------------------------- client

/** Most iterations the client accepts from a server, so a hostile one cannot stall it. */
export const scramClientIterationsMax = 1_000_000;

/** A SCRAM client, for tests and for the SDKs' own use. Throws on a bad server: it is not a peer we serve. */
export class ScramClient {
  private readonly spec: HashSpec;
  private readonly clientNonce: string;
  private bare = '';
  private serverSignature: Buffer | null = null;

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly username: string,
    private readonly password: string,
    options: { clientNonce?: string } = {},
  ) {
    this.spec = hashes[mechanism];
    this.clientNonce = options.clientNonce ?? randomBytes(18).toString('base64');
  }

  firstMessage(): Buffer {
    this.bare = `n=${encodeSaslName(this.username)},r=${this.clientNonce}`;
    return Buffer.from(`n,,${this.bare}`);
  }

  finalMessage(serverFirst: Buffer): Buffer {
    const text = serverFirst.toString('utf8');
    const attrs = attributes(text);
    const r = attrs?.find((a) => a.key === 'r')?.value;
    const s = attrs?.find((a) => a.key === 's')?.value;
    const i = Number(attrs?.find((a) => a.key === 'i')?.value);
    if (r === undefined || s === undefined || !r.startsWith(this.clientNonce)) throw new Error('SCRAM: bad server-first-message');
    if (!Number.isInteger(i) || i < scramIterationsMin || i > scramClientIterationsMax) throw new Error(`SCRAM: bad iteration count ${i}`);
    const salt = decodeBase64(s);
    if (salt === null) throw new Error('SCRAM: bad salt');
    const salted = saltedPassword(this.spec, this.password, salt, i);
    const clientKey = hmac(this.spec, salted, 'Client Key');
    const withoutProof = `c=biws,r=${r}`;
    const authMessage = `${this.bare},${text},${withoutProof}`;
    const proof = xor(clientKey, hmac(this.spec, hash(this.spec, clientKey), authMessage));
    this.serverSignature = hmac(this.spec, hmac(this.spec, salted, 'Server Key'), authMessage);
    return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`);
  }

  /** True when the server proved it knows the credentials. */
  verifyServerFinal(serverFinal: Buffer): boolean {
    const text = serverFinal.toString('utf8');
    if (this.serverSignature === null || !text.startsWith('v=')) return false;
    const signature = decodeBase64(text.slice(2));
    return signature !== null && signature.length === this.serverSignature.length && timingSafeEqual(signature, this.serverSignature);
  }
}
