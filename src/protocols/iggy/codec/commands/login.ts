// Login and logout: LoginRegister (40) and LoginRegisterWithPat (45), both operation 1
// (Register), result-framed replies; Logout (39, operation 3, empty both ways, not result-framed);
// legacy LoginUser (38) and LoginWithPat (44), which the server answers with Eviction 15.
// Sources: specs "Connection lifecycle", server notes §1 and §5,
// core/binary_protocol/src/requests/users/login_register*.rs, core/server/src/auth.rs.
//
//   LoginRegister        := ClientVersionInfo | username Name | password_len u8 | password
//                           | context_len u32 | context{context_len}
//   LoginRegisterWithPat := ClientVersionInfo | token_len u8 | token | context_len u32 | context
//   ClientVersionInfo    := protocol_version u32 | sdk_name Name | sdk_version Name
//   Reply (R:)           := 00000000 | user_id u32 | session u64 | server_protocol_version u32
//                           | server_version Name
//
// Both register shapes ride operation 1 with no command code in the header, so the server gates
// on the version prefix once and then tries the password shape before the token shape
// (`decodeLoginRegisterBody`); each shape may leave trailing bytes (the server ignores them).

import { Reader, Writer } from '../primitives.js';
import { readClientVersionInfo, readName, readShortString, writeClientVersionInfo, writeName, writeShortString, type ClientVersionInfo } from '../values.js';

/** Context strings above this are refused (bounds the claimed u32 length). */
export const loginContextBytesMax = 64 * 1024;

function readContext(r: Reader): string | null {
  const len = r.u32('context length');
  if (r.ok && len > loginContextBytesMax) r.fail(`context length ${len} exceeds ${loginContextBytesMax}`);
  return len === 0 ? null : r.utf8(len, 'context');
}

/**
 * The largest LoginRegister body that can decode (the password shape; the token shape is
 * smaller): ClientVersionInfo (4 + 2 x 256), username 256, password 256, context 4 + 64 KiB.
 */
export const loginRegisterBodyBytesMax = 4 + 256 + 256 + 256 + 256 + 4 + loginContextBytesMax;

function writeContext(w: Writer, context: string | null): void {
  if (context === null) {
    w.u32(0);
    return;
  }
  const bytes = Buffer.from(context, 'utf8');
  w.u32(bytes.length).bytes(bytes);
}

export interface LoginRegisterRequest {
  versionInfo: ClientVersionInfo;
  username: string;
  password: string;
  context: string | null;
}

export interface LoginRegisterWithPatRequest {
  versionInfo: ClientVersionInfo;
  token: string;
  context: string | null;
}

export function readLoginRegisterRequest(r: Reader): LoginRegisterRequest {
  const versionInfo = readClientVersionInfo(r);
  const username = readName(r, 'username');
  const password = readShortString(r, 'password');
  const context = readContext(r);
  return { versionInfo, username, password, context };
}

export function writeLoginRegisterRequest(w: Writer, v: LoginRegisterRequest): void {
  writeClientVersionInfo(w, v.versionInfo);
  writeName(w, v.username, 'username');
  writeShortString(w, v.password, 'password');
  writeContext(w, v.context);
}

export function readLoginRegisterWithPatRequest(r: Reader): LoginRegisterWithPatRequest {
  const versionInfo = readClientVersionInfo(r);
  const token = readShortString(r, 'token');
  const context = readContext(r);
  return { versionInfo, token, context };
}

export function writeLoginRegisterWithPatRequest(w: Writer, v: LoginRegisterWithPatRequest): void {
  writeClientVersionInfo(w, v.versionInfo);
  writeShortString(w, v.token, 'token');
  writeContext(w, v.context);
}

/** What a Register body can be: the server tries `password` first, then `token`. */
export interface LoginRegisterBody {
  versionInfo: ClientVersionInfo;
  password: { username: string; password: string; context: string | null } | null;
  token: { token: string; context: string | null } | null;
}

/**
 * Server side of operation 1: decodes the ClientVersionInfo prefix (a reason string when it does
 * not decode: answer with Eviction 15 MalformedLogin), then both credential shapes. The caller
 * checks the version (Eviction 14 when incompatible) before credentials.
 */
export function decodeLoginRegisterBody(body: Buffer): LoginRegisterBody | string {
  const prefix = new Reader(body);
  const versionInfo = readClientVersionInfo(prefix);
  if (!prefix.ok) return `malformed ClientVersionInfo: ${prefix.error}`;
  const tailStart = prefix.pos;

  const p = new Reader(body, tailStart);
  const username = readName(p, 'username');
  const password = readShortString(p, 'password');
  const passwordContext = readContext(p);

  const t = new Reader(body, tailStart);
  const token = readShortString(t, 'token');
  const tokenContext = readContext(t);

  return {
    versionInfo,
    password: p.ok ? { username, password, context: passwordContext } : null,
    token: t.ok ? { token, context: tokenContext } : null,
  };
}

export interface LoginRegisterReply {
  userId: number;
  session: bigint;
  serverProtocolVersion: number;
  serverVersion: string;
}

/** The payload after the result prefix (the registry adds and strips 00000000). */
export function readLoginRegisterReply(r: Reader): LoginRegisterReply {
  return {
    userId: r.u32('user_id'),
    session: r.u64('session'),
    serverProtocolVersion: r.u32('server_protocol_version'),
    serverVersion: readName(r, 'server_version'),
  };
}

export function writeLoginRegisterReply(w: Writer, v: LoginRegisterReply): void {
  w.u32(v.userId).u64(v.session).u32(v.serverProtocolVersion);
  writeName(w, v.serverVersion, 'server_version');
}

// Legacy LoginUser (38), decoded for completeness only (the 0.11 server evicts with reason 15):
//   [username Name][password_len u8][password][version_len u32][version][context_len u32][context]
export interface LegacyLoginUserRequest {
  username: string;
  password: string;
  version: string | null;
  context: string | null;
}

export function readLegacyLoginUserRequest(r: Reader): LegacyLoginUserRequest {
  const username = readName(r, 'username');
  const password = readShortString(r, 'password');
  const version = readContext(r);
  const context = readContext(r);
  return { username, password, version, context };
}

export function writeLegacyLoginUserRequest(w: Writer, v: LegacyLoginUserRequest): void {
  writeName(w, v.username, 'username');
  writeShortString(w, v.password, 'password');
  writeContext(w, v.version);
  writeContext(w, v.context);
}

/** Legacy LoginWithPat (44): [token_len u8][token]. Decoded only to be refused. */
export interface LegacyLoginWithPatRequest {
  token: string;
}

export function readLegacyLoginWithPatRequest(r: Reader): LegacyLoginWithPatRequest {
  return { token: readShortString(r, 'token') };
}

export function writeLegacyLoginWithPatRequest(w: Writer, v: LegacyLoginWithPatRequest): void {
  writeShortString(w, v.token, 'token');
}

/** Legacy IdentityResponse [user_id u32] (never served by 0.11). */
export function readIdentityReply(r: Reader): { userId: number } {
  return { userId: r.u32('user_id') };
}

export function writeIdentityReply(w: Writer, v: { userId: number }): void {
  w.u32(v.userId);
}
