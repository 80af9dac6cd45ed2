// Users (31–37) and personal access tokens (41–43). Permissions are the codec's Permissions
// object stored as the user's opaque core `permissions` (../permissions.ts). Reading users needs
// read_users (for oneself too); changing them needs manage_users (a user may change
// its own password, giving the current one). Root (id 0) cannot be deleted (48) nor have its
// permissions changed (49), renamed or deactivated (41); it is reported with every global
// permission. A user grants only what it holds itself (41). User not found: 20 (ResourceNotFound). Tokens are the caller's own.

import { QuartetError } from '../../../base/errors.js';
import type { User } from '../../../core/users.js';
import { CommandCode, IggyErrorCode, u64Max, type Identifier, type Permissions } from '../codec/index.js';
import { UserStatus, type UserDetails, type UserInfo } from '../codec/commands/users.js';
import { IggyFailure } from '../errors.js';
import { permissionsOf, requireServer } from '../permissions.js';
import { rightNotHeld } from '../../../core/access.js';
import type { IggyHandlerTable, IggyRequestContext } from './types.js';
import { micros } from './views.js';

function userInfo(u: User): UserInfo {
  return { id: u.id, createdAt: micros(u.createdAt), status: u.status === 'active' ? UserStatus.active : UserStatus.inactive, username: u.username, options: [] };
}

/** Every global permission, what the reference server reports for its root user (Permissions::root). */
const rootPermissions: Permissions = {
  global: {
    manageServers: true,
    readServers: true,
    manageUsers: true,
    readUsers: true,
    manageStreams: true,
    readStreams: true,
    manageTopics: true,
    readTopics: true,
    pollMessages: true,
    sendMessages: true,
  },
  streams: [],
};

/** A user may grant only what it holds itself (rightNotHeld): more is Unauthorized (41). */
function requireHeld(ctx: IggyRequestContext, permissions: Permissions | null): void {
  const missing = rightNotHeld(ctx.user, permissions);
  if (missing !== null) throw new IggyFailure(IggyErrorCode.unauthorized, 'result', `cannot grant ${missing}: the user does not hold it`);
}

function userDetails(u: User): UserDetails {
  // Root may do everything whatever is stored for it; report it so.
  return { ...userInfo(u), permissions: u.root ? rootPermissions : permissionsOf(u) };
}

function findUser(ctx: IggyRequestContext, id: Identifier): User | null {
  return ctx.frontend.broker.users.get(id.value);
}

function requireUser(ctx: IggyRequestContext, id: Identifier): User {
  const u = findUser(ctx, id);
  if (u === null) throw new IggyFailure(IggyErrorCode.resourceNotFound, 'result', 'user not found');
  return u;
}

function statusOf(code: number): 'active' | 'inactive' {
  if (code === UserStatus.active) return 'active';
  if (code === UserStatus.inactive) return 'inactive';
  throw new IggyFailure(IggyErrorCode.invalidFormat, 'result', `user status ${code}`);
}

/** Iggy's bounds (iggy_common MIN/MAX_USERNAME_LENGTH, MIN/MAX_PASSWORD_LENGTH), in bytes. */
export const iggyUsernameBytes = { min: 3, max: 50 } as const;
export const iggyPasswordBytes = { min: 3, max: 100 } as const;

/** The reference server's length checks on a username (43 InvalidUsername) and a new password (44 InvalidPassword). */
function checkCredentialLengths(username: string | null, password: string | null): void {
  const within = (text: string, bounds: { min: number; max: number }) => {
    const bytes = Buffer.byteLength(text, 'utf8');
    return bytes >= bounds.min && bytes <= bounds.max;
  };
  if (username !== null && !within(username, iggyUsernameBytes)) {
    throw new IggyFailure(IggyErrorCode.invalidUsername, 'result', `a username has ${iggyUsernameBytes.min}..${iggyUsernameBytes.max} bytes`);
  }
  if (password !== null && !within(password, iggyPasswordBytes)) {
    throw new IggyFailure(IggyErrorCode.invalidPassword, 'result', `a password has ${iggyPasswordBytes.min}..${iggyPasswordBytes.max} bytes`);
  }
}

function usernameProblem(err: unknown): never {
  if (err instanceof QuartetError && err.code === 'invalid_request') {
    throw new IggyFailure(/password/i.test(err.message) ? IggyErrorCode.invalidPassword : IggyErrorCode.invalidUsername, 'result', err.message);
  }
  throw err;
}

export const userHandlers: IggyHandlerTable = {
  [CommandCode.getUser]: (ctx, req) => {
    // As the reference server's GetUser gate: a missing user is not found (an empty body) before
    // any permission is checked, one's own account needs none, anyone else's read_users.
    const u = findUser(ctx, req.userId);
    if (u === null) return null;
    if (u.id !== ctx.user.id) requireServer(ctx.user, 'readUsers');
    return userDetails(u);
  },

  [CommandCode.getUsers]: (ctx) => {
    requireServer(ctx.user, 'readUsers');
    return ctx.frontend.broker.users.list().map(userInfo);
  },

  [CommandCode.createUser]: async (ctx, req) => {
    requireServer(ctx.user, 'manageUsers');
    if (req.options.length > 0) throw new IggyFailure(IggyErrorCode.unsupportedOptionKey, 'result', 'user options are not supported');
    checkCredentialLengths(req.username, req.password);
    requireHeld(ctx, req.permissions);
    const u = await ctx.frontend.broker.users
      .create({ username: req.username, password: req.password, status: statusOf(req.status), permissions: req.permissions })
      .catch(usernameProblem);
    return userDetails(u);
  },

  [CommandCode.updateUser]: async (ctx, req) => {
    requireServer(ctx.user, 'manageUsers');
    if (req.options.length > 0) throw new IggyFailure(IggyErrorCode.unsupportedOptionKey, 'result', 'user options are not supported');
    const u = requireUser(ctx, req.userId);
    checkCredentialLengths(req.username, null);
    await ctx.frontend.broker.users
      .update(u.id, { ...(req.username !== null ? { username: req.username } : {}), ...(req.status !== null ? { status: statusOf(req.status) } : {}) })
      .catch(usernameProblem);
    return {};
  },

  [CommandCode.deleteUser]: async (ctx, req) => {
    requireServer(ctx.user, 'manageUsers');
    const u = requireUser(ctx, req.userId);
    if (u.root || u.id === ctx.user.id) throw new IggyFailure(IggyErrorCode.cannotDeleteUser, 'result');
    await ctx.frontend.broker.users.delete(u.id);
    return {};
  },

  [CommandCode.updatePermissions]: async (ctx, req) => {
    requireServer(ctx.user, 'manageUsers');
    const u = requireUser(ctx, req.userId);
    if (u.root) throw new IggyFailure(IggyErrorCode.cannotChangePermissions, 'result');
    requireHeld(ctx, req.permissions);
    await ctx.frontend.broker.users.setPermissions(u.id, req.permissions);
    return {};
  },

  [CommandCode.changePassword]: async (ctx, req) => {
    const u = requireUser(ctx, req.userId);
    const self = u.id === ctx.user.id;
    if (!self) requireServer(ctx.user, 'manageUsers');
    checkCredentialLengths(null, req.newPassword);
    // The current password is checked whoever asks, an administrator changing another user's too
    // (as the reference's verify_and_rewrite_change_password): a wrong one is 42, nothing changed.
    await ctx.frontend.broker.users.changePassword(u.id, req.currentPassword, req.newPassword).catch(usernameProblem);
    return {};
  },

  // --- personal access tokens -----------------------------------------------------------------

  [CommandCode.getPersonalAccessTokens]: (ctx) => {
    return ctx.frontend.broker.users.listTokens(ctx.user.id).map((t) => ({ name: t.name, expiryAt: t.expiresAt === null ? 0n : micros(t.expiresAt) }));
  },

  [CommandCode.createPersonalAccessToken]: async (ctx, req) => {
    // expiry: µs from now; 0 (server default) and u64::MAX mean never.
    let lifetimeMs: number | null = null;
    if (req.expiry !== 0n && req.expiry !== u64Max) {
      const ms = (req.expiry + 999n) / 1000n;
      if (ms > BigInt(Number.MAX_SAFE_INTEGER)) throw new IggyFailure(IggyErrorCode.invalidPersonalAccessTokenExpiry, 'result');
      lifetimeMs = Number(ms);
    }
    const { token } = await ctx.frontend.broker.users.createToken(ctx.user.id, req.name, lifetimeMs).catch((err: unknown) => {
      if (err instanceof QuartetError && err.code === 'invalid_request') throw new IggyFailure(IggyErrorCode.invalidFormat, 'result', err.message);
      throw err;
    });
    return { token };
  },

  [CommandCode.deletePersonalAccessToken]: async (ctx, req) => {
    await ctx.frontend.broker.users.deleteToken(ctx.user.id, req.name).catch((err: unknown) => {
      if (err instanceof QuartetError && err.code === 'invalid_token') throw new IggyFailure(IggyErrorCode.resourceNotFound, 'result', err.message);
      throw err;
    });
    return {};
  },
};
