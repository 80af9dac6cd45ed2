// Personal access tokens: GetPersonalAccessTokens (41, NonReplicated),
// CreatePersonalAccessToken (42, op 146, R:), DeletePersonalAccessToken (43, op 147, R:).
//
//   Create request := [name Name][expiry u64 µs: 0 = server default (no expiry), u64::MAX = never]
//   Create reply   := R: [token_len u8][token]                      (build_raw_pat_reply)
//   Delete request := [name Name]                                   reply R: empty
//   List reply     := {[name Name][expiry_at u64 µs, 0 = never]}*  (no count prefix)

import { Reader, Writer } from '../primitives.js';
import { readName, readShortString, writeName, writeShortString } from '../values.js';
import { readUntilEnd, writeAll } from './common.js';

export interface CreatePersonalAccessTokenRequest {
  name: string;
  expiry: bigint;
}

export function readCreatePersonalAccessTokenRequest(r: Reader): CreatePersonalAccessTokenRequest {
  const name = readName(r, 'name');
  const expiry = r.u64('expiry');
  return { name, expiry };
}

export function writeCreatePersonalAccessTokenRequest(w: Writer, v: CreatePersonalAccessTokenRequest): void {
  writeName(w, v.name);
  w.u64(v.expiry);
}

export interface CreatePersonalAccessTokenReply {
  token: string;
}

export function readCreatePersonalAccessTokenReply(r: Reader): CreatePersonalAccessTokenReply {
  return { token: readShortString(r, 'token') };
}

export function writeCreatePersonalAccessTokenReply(w: Writer, v: CreatePersonalAccessTokenReply): void {
  writeShortString(w, v.token, 'token');
}

export interface DeletePersonalAccessTokenRequest {
  name: string;
}

export function readDeletePersonalAccessTokenRequest(r: Reader): DeletePersonalAccessTokenRequest {
  return { name: readName(r, 'name') };
}

export function writeDeletePersonalAccessTokenRequest(w: Writer, v: DeletePersonalAccessTokenRequest): void {
  writeName(w, v.name);
}

export interface PersonalAccessTokenInfo {
  name: string;
  /** Microseconds since the epoch; 0 = never expires. */
  expiryAt: bigint;
}

function readTokenInfo(r: Reader): PersonalAccessTokenInfo {
  const name = readName(r, 'name');
  const expiryAt = r.u64('expiry_at');
  return { name, expiryAt };
}

function writeTokenInfo(w: Writer, v: PersonalAccessTokenInfo): void {
  writeName(w, v.name);
  w.u64(v.expiryAt);
}

export function readPersonalAccessTokens(r: Reader): PersonalAccessTokenInfo[] {
  return readUntilEnd(r, readTokenInfo);
}

export function writePersonalAccessTokens(w: Writer, v: readonly PersonalAccessTokenInfo[]): void {
  writeAll(w, v, writeTokenInfo);
}
