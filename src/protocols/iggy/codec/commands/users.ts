// User commands: GetUser (31), GetUsers (32), CreateUser (33, op 141), DeleteUser (34, op 143),
// UpdateUser (35, op 142), UpdatePermissions (36, op 145), ChangePassword (37, op 144).
// Replicated replies are result-framed (the registry adds the 00000000 prefix).
// Layouts: specs/iggy-binary-protocol-0.11.md "Users", server notes §7 "Users and permissions".

import { Reader, Writer } from '../primitives.js';
import { encodePermissions, readIdentifier, readName, readOptionsToEnd, readPermissions, readPrefixedOptions, readShortString, writeIdentifier, writeName, writeOptions, writePrefixedOptions, writeShortString, type Identifier, type OptionEntry, type Permissions } from '../values.js';
import { readUntilEnd, writeAll } from './common.js';

export const UserStatus = { active: 1, inactive: 2 } as const;

/** Largest permissions block accepted (bounds hostile lengths before decoding). */
export const permissionsBytesMax = 1024 * 1024;

// Request: GetUser / DeleteUser := [user_id Identifier]
export interface UserRef {
  userId: Identifier;
}

export function readUserRef(r: Reader): UserRef {
  return { userId: readIdentifier(r, 'user_id') };
}

export function writeUserRef(w: Writer, v: UserRef): void {
  writeIdentifier(w, v.userId);
}

/** `[permissions_len u32][permissions]`, bounded and exactly consumed. */
function readSizedPermissions(r: Reader): Permissions | null {
  const len = r.u32('permissions length');
  if (r.ok && len > permissionsBytesMax) {
    r.fail(`permissions length ${len} exceeds ${permissionsBytesMax}`);
    return null;
  }
  const sub = r.sub(len, 'permissions');
  const p = readPermissions(sub);
  r.adopt(sub, 'permissions');
  return r.ok ? p : null;
}

function writeSizedPermissions(w: Writer, p: Permissions): void {
  const bytes = encodePermissions(p);
  w.u32(bytes.length).bytes(bytes);
}

// CreateUser (33):
//   [username Name][password_len u8][password][status u8][has_permissions u8]
//   [permissions_len u32, only when 1][permissions, only when 1][options block to end]
export interface CreateUserRequest {
  username: string;
  password: string;
  status: number;
  permissions: Permissions | null;
  options: OptionEntry[];
}

export function readCreateUserRequest(r: Reader): CreateUserRequest {
  const username = readName(r, 'username');
  const password = readShortString(r, 'password');
  const status = r.u8('status');
  const hasPermissions = r.bool('has_permissions');
  const permissions = hasPermissions ? readSizedPermissions(r) : null;
  const options = readOptionsToEnd(r);
  return { username, password, status, permissions, options };
}

export function writeCreateUserRequest(w: Writer, v: CreateUserRequest): void {
  writeName(w, v.username, 'username');
  writeShortString(w, v.password, 'password');
  w.u8(v.status);
  if (v.permissions === null) w.u8(0);
  else {
    w.u8(1);
    writeSizedPermissions(w, v.permissions);
  }
  writeOptions(w, v.options);
}

// UpdateUser (35):
//   [user_id Identifier][has_username u8][username Name, only when 1]
//   [has_status u8][status u8, only when 1][options block to end]
export interface UpdateUserRequest {
  userId: Identifier;
  username: string | null;
  status: number | null;
  options: OptionEntry[];
}

export function readUpdateUserRequest(r: Reader): UpdateUserRequest {
  const userId = readIdentifier(r, 'user_id');
  const username = r.bool('has_username') ? readName(r, 'username') : null;
  const status = r.bool('has_status') ? r.u8('status') : null;
  const options = readOptionsToEnd(r);
  return { userId, username, status, options };
}

export function writeUpdateUserRequest(w: Writer, v: UpdateUserRequest): void {
  writeIdentifier(w, v.userId);
  if (v.username === null) w.u8(0);
  else {
    w.u8(1);
    writeName(w, v.username, 'username');
  }
  if (v.status === null) w.u8(0);
  else w.u8(1).u8(v.status);
  writeOptions(w, v.options);
}

// UpdatePermissions (36):
//   [user_id Identifier][has_permissions u8][permissions_len u32, only when 1][permissions]
export interface UpdatePermissionsRequest {
  userId: Identifier;
  permissions: Permissions | null;
}

export function readUpdatePermissionsRequest(r: Reader): UpdatePermissionsRequest {
  const userId = readIdentifier(r, 'user_id');
  const permissions = r.bool('has_permissions') ? readSizedPermissions(r) : null;
  return { userId, permissions };
}

export function writeUpdatePermissionsRequest(w: Writer, v: UpdatePermissionsRequest): void {
  writeIdentifier(w, v.userId);
  if (v.permissions === null) w.u8(0);
  else {
    w.u8(1);
    writeSizedPermissions(w, v.permissions);
  }
}

// ChangePassword (37):
//   [user_id Identifier][current_password_len u8][current_password][new_password_len u8][new]
export interface ChangePasswordRequest {
  userId: Identifier;
  currentPassword: string;
  newPassword: string;
}

export function readChangePasswordRequest(r: Reader): ChangePasswordRequest {
  const userId = readIdentifier(r, 'user_id');
  const currentPassword = readShortString(r, 'current_password');
  const newPassword = readShortString(r, 'new_password');
  return { userId, currentPassword, newPassword };
}

export function writeChangePasswordRequest(w: Writer, v: ChangePasswordRequest): void {
  writeIdentifier(w, v.userId);
  writeShortString(w, v.currentPassword, 'current_password');
  writeShortString(w, v.newPassword, 'new_password');
}

// Replies.
//   UserResponse := [id u32][created_at u64 µs][status u8][username Name][options_len u32][TLV]
//   GetUser (31), CreateUser (R:) := UserResponse + (00 00 00 00 | 01 [len u32][permissions])
//                                    GetUser: empty body for an unknown user
//   GetUsers (32) := UserResponse* (no count prefix)
export interface UserInfo {
  id: number;
  createdAt: bigint;
  status: number;
  username: string;
  options: OptionEntry[];
}

export interface UserDetails extends UserInfo {
  permissions: Permissions | null;
}

export function readUserInfo(r: Reader): UserInfo {
  return {
    id: r.u32('user id'),
    createdAt: r.u64('created_at'),
    status: r.u8('status'),
    username: readName(r, 'username'),
    options: readPrefixedOptions(r),
  };
}

export function writeUserInfo(w: Writer, v: UserInfo): void {
  w.u32(v.id).u64(v.createdAt).u8(v.status);
  writeName(w, v.username, 'username');
  writePrefixedOptions(w, v.options);
}

export function readUserDetails(r: Reader): UserDetails {
  const info = readUserInfo(r);
  const flag = r.u8('has_permissions');
  let permissions: Permissions | null = null;
  if (flag === 0) {
    // The server writes no-permissions as a u32 zero (00 00 00 00); SDKs read one flag byte.
    const pad = r.remaining >= 3 ? r.bytes(3, 'permissions padding') : null;
    if (pad !== null && (pad[0] !== 0 || pad[1] !== 0 || pad[2] !== 0)) r.fail('no-permissions marker must be 00 00 00 00');
  } else if (flag === 1) {
    permissions = readSizedPermissions(r);
  } else if (r.ok) {
    r.fail(`has_permissions must be 0 or 1, got ${flag}`);
  }
  return { ...info, permissions };
}

export function writeUserDetails(w: Writer, v: UserDetails): void {
  writeUserInfo(w, v);
  if (v.permissions === null) w.u32(0);
  else {
    w.u8(1);
    writeSizedPermissions(w, v.permissions);
  }
}

export function readUserInfoList(r: Reader): UserInfo[] {
  return readUntilEnd(r, readUserInfo);
}

export function writeUserInfoList(w: Writer, v: readonly UserInfo[]): void {
  writeAll(w, v, writeUserInfo);
}

