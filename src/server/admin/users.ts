// Admin API routes for users, personal access tokens and what each user may do (the ACL view),
// online over the core UserStore: the change is live for every protocol at once. Reading users
// needs read_users, changing them manage_users; a user may always see itself, change its own
// password (giving the current one) and manage its own tokens. A user grants only rights it holds
// (core/access.ts rightNotHeld), as through Iggy, and for the same reason sets the password of, or
// creates a token for, only a user holding no right it lacks: root's credentials only root changes.

import { randomBytes } from 'node:crypto';
import { QuartetError } from '../../base/errors.js';
import type { Broker } from '../../core/broker.js';
import { allGlobalGrants, globalGrantNames, globalGrants, grantsOf, mayServer, rightNotHeld, type Grants, type StreamGrants } from '../../core/access.js';
import { generatedPasswordBytes, type TokenInfo, type User } from '../../core/users.js';
import type { AdminReply, AdminRequest, Route } from './api.js';
import { AdminHttpError } from './errors.js';
import { objectBody, optionalInteger, optionalString, requiredString, type Body } from './input.js';

type GlobalName = keyof typeof globalGrantNames;

export function globalNames(user: User): GlobalName[] {
  if (user.root) return Object.keys(globalGrantNames) as GlobalName[];
  const global = grantsOf(user)?.global;
  if (!global) return [];
  return (Object.entries(globalGrantNames) as Array<[GlobalName, keyof Grants['global']]>).filter(([, key]) => global[key]).map(([name]) => name);
}

function userJson(user: User): Record<string, unknown> {
  return {
    id: user.id,
    username: user.username,
    status: user.status,
    root: user.root,
    createdAt: new Date(user.createdAt).toISOString(),
    permissions: { global: globalNames(user), streams: grantsOf(user)?.streams ?? [] },
  };
}

function tokenJson(username: string, t: TokenInfo): Record<string, unknown> {
  return { user: username, name: t.name, createdAt: new Date(t.createdAt).toISOString(), expiresAt: t.expiresAt === null ? null : new Date(t.expiresAt).toISOString() };
}

function requireServer(user: User, action: 'readUsers' | 'manageUsers'): void {
  if (!mayServer(user, action)) throw new QuartetError('unauthorized', `user '${user.username}' lacks ${action === 'readUsers' ? 'read_users' : 'manage_users'}`);
}

/** The user named by the path; the caller needs `action` unless it is itself. */
function target(request: AdminRequest, action: 'readUsers' | 'manageUsers'): User {
  const name = request.params.user!;
  if (name === request.user.username) return request.user;
  requireServer(request.user, action);
  const found = request.broker.users.get(name);
  if (found === null) throw new QuartetError('unknown_user', `unknown user '${name}'`);
  return found;
}

// --- permissions input ------------------------------------------------------------------------

/** `global`: "all", "none" or a list of names (read_topics, ...); `streams`: Iggy's per-stream grants. */
export function grantsFromBody(body: Body, keptStreams: readonly StreamGrants[]): Grants {
  const global = body.global;
  let grants: Grants;
  if (global === 'all') grants = allGlobalGrants();
  else if (global === 'none' || global === undefined || global === null) grants = globalGrants([]);
  else if (Array.isArray(global) && global.every((n) => typeof n === 'string')) {
    const unknown = global.find((n) => !Object.hasOwn(globalGrantNames, n));
    if (unknown !== undefined) throw new QuartetError('invalid_request', `unknown permission "${unknown}": one of ${Object.keys(globalGrantNames).join(', ')}`);
    grants = globalGrants(global as GlobalName[]);
  } else throw new QuartetError('invalid_request', '"global" must be "all", "none" or a list of permission names');
  return { global: grants.global, streams: body.streams === undefined ? [...keptStreams] : streamGrants(body.streams) };
}

const streamFlags = ['manageStream', 'readStream', 'manageTopics', 'readTopics', 'pollMessages', 'sendMessages'] as const;
const topicFlags = ['manageTopic', 'readTopic', 'pollMessages', 'sendMessages'] as const;

function streamGrants(raw: unknown): StreamGrants[] {
  if (!Array.isArray(raw)) throw new QuartetError('invalid_request', '"streams" must be a list');
  return raw.map((s: unknown) => {
    const o = objectBody(s);
    const streamId = o.streamId;
    if (typeof streamId !== 'number' || !Number.isInteger(streamId) || streamId < 0) throw new QuartetError('invalid_request', 'each stream grant needs a numeric "streamId"');
    const topics = o.topics === undefined ? [] : o.topics;
    if (!Array.isArray(topics)) throw new QuartetError('invalid_request', '"topics" of a stream grant must be a list');
    return {
      streamId,
      ...(Object.fromEntries(streamFlags.map((f) => [f, o[f] === true])) as Record<(typeof streamFlags)[number], boolean>),
      topics: topics.map((t: unknown) => {
        const to = objectBody(t);
        if (typeof to.topicId !== 'number' || !Number.isInteger(to.topicId) || to.topicId < 0) throw new QuartetError('invalid_request', 'each topic grant needs a numeric "topicId"');
        return { topicId: to.topicId, ...(Object.fromEntries(topicFlags.map((f) => [f, to[f] === true])) as Record<(typeof topicFlags)[number], boolean>) };
      }),
    };
  });
}

function requireGrantable(granter: User, grants: Grants): void {
  const missing = rightNotHeld(granter, grants);
  if (missing !== null) throw new QuartetError('unauthorized', `user '${granter.username}' cannot grant ${missing}, which it does not hold`);
}

/**
 * Setting another user's password or creating a token for it lets the caller log in as that user,
 * so the caller must hold every right the subject holds (root's: only root itself).
 */
function requireCovers(caller: User, subject: User, what: 'password' | 'tokens'): void {
  if (subject.id === caller.id || caller.root) return;
  const act = what === 'password' ? 'set the password of' : 'create tokens for';
  if (subject.root) throw new QuartetError('unauthorized', `only the root user '${subject.username}' may ${what === 'password' ? 'set its password' : 'create its tokens'}`);
  const missing = rightNotHeld(caller, grantsOf(subject));
  if (missing !== null) throw new QuartetError('unauthorized', `user '${caller.username}' cannot ${act} '${subject.username}', who holds ${missing}, which '${caller.username}' does not`);
}

// --- users ------------------------------------------------------------------------------------

function whoami({ user }: AdminRequest): AdminReply {
  return { body: { user: userJson(user) } };
}

function listUsers({ broker, user }: AdminRequest): AdminReply {
  requireServer(user, 'readUsers');
  return { body: { users: broker.users.list().map(userJson) } };
}

function getUser(request: AdminRequest): AdminReply {
  return { body: { user: userJson(target(request, 'readUsers')) } };
}

async function createUser({ broker, user, body: raw }: AdminRequest): Promise<AdminReply> {
  requireServer(user, 'manageUsers');
  const body = objectBody(raw);
  const username = requiredString(body, 'username');
  const given = optionalString(body, 'password');
  const status = optionalString(body, 'status');
  if (status !== undefined && status !== 'active' && status !== 'inactive') throw new QuartetError('invalid_request', '"status" must be active or inactive');
  const permissions = grantsFromBody(objectBody(body.permissions ?? {}), []);
  requireGrantable(user, permissions);
  const generated = given === undefined ? randomBytes(generatedPasswordBytes).toString('base64url') : null;
  const created = await broker.users.create({ username, password: given ?? generated!, permissions, ...(status !== undefined ? { status } : {}) });
  return { status: 201, body: { user: userJson(created), ...(generated !== null ? { password: generated } : {}) } };
}

async function updateUser(request: AdminRequest): Promise<AdminReply> {
  requireServer(request.user, 'manageUsers');
  const subject = target(request, 'manageUsers');
  const body = objectBody(request.body);
  const username = optionalString(body, 'username');
  const status = optionalString(body, 'status');
  if (status !== undefined && status !== 'active' && status !== 'inactive') throw new QuartetError('invalid_request', '"status" must be active or inactive');
  const updated = await request.broker.users.update(subject.id, { ...(username !== undefined ? { username } : {}), ...(status !== undefined ? { status } : {}) });
  return { body: { user: userJson(updated) } };
}

async function deleteUser(request: AdminRequest): Promise<AdminReply> {
  requireServer(request.user, 'manageUsers');
  const deleted = await request.broker.users.delete(target(request, 'manageUsers').id);
  return { body: { deleted: userJson(deleted) } };
}

async function changePassword(request: AdminRequest): Promise<AdminReply> {
  const subject = target(request, 'manageUsers');
  const body = objectBody(request.body);
  const password = requiredString(body, 'password');
  const current = optionalString(body, 'currentPassword');
  // Changing one's own password takes the current one, whatever rights the caller has.
  const self = subject.id === request.user.id;
  if (self && current === undefined) throw new QuartetError('invalid_request', 'changing your own password needs "currentPassword"');
  requireCovers(request.user, subject, 'password');
  await request.broker.users.changePassword(subject.id, self ? current! : null, password);
  return { body: { user: userJson(subject), passwordChanged: true } };
}

async function setPermissions(request: AdminRequest): Promise<AdminReply> {
  requireServer(request.user, 'manageUsers');
  const subject = target(request, 'manageUsers');
  if (subject.root) throw new QuartetError('unauthorized', `the permissions of the root user '${subject.username}' cannot be changed (root may do everything)`);
  const grants = grantsFromBody(objectBody(request.body), grantsOf(subject)?.streams ?? []);
  requireGrantable(request.user, grants);
  const updated = await request.broker.users.setPermissions(subject.id, grants);
  return { body: { user: userJson(updated) } };
}

// --- tokens -----------------------------------------------------------------------------------

function tokenOwner(request: AdminRequest, action: 'readUsers' | 'manageUsers'): User {
  return request.params.user === undefined ? request.user : target(request, action);
}

function listTokens(request: AdminRequest): AdminReply {
  const owner = tokenOwner(request, 'readUsers');
  return { body: { tokens: request.broker.users.listTokens(owner.id).map((t) => tokenJson(owner.username, t)) } };
}

async function createToken(request: AdminRequest): Promise<AdminReply> {
  const owner = tokenOwner(request, 'manageUsers');
  requireCovers(request.user, owner, 'tokens');
  const body = objectBody(request.body);
  const name = requiredString(body, 'name');
  const expiresInMs = optionalInteger(body, 'expiresInMs', 1);
  const { token, info } = await request.broker.users.createToken(owner.id, name, expiresInMs ?? null);
  return { status: 201, body: { token: tokenJson(owner.username, info), secret: token } };
}

async function deleteToken(request: AdminRequest): Promise<AdminReply> {
  const owner = tokenOwner(request, 'manageUsers');
  const name = request.params.token!;
  // The core answers invalid_token (a failed login's code); here it is a missing resource.
  if (!request.broker.users.listTokens(owner.id).some((t) => t.name === name)) throw new AdminHttpError('not_found', `user '${owner.username}' has no token named '${name}'`);
  await request.broker.users.deleteToken(owner.id, name);
  return { body: { deleted: { user: owner.username, name: request.params.token } } };
}

// --- ACLs -------------------------------------------------------------------------------------

const streamRightNames: Record<(typeof streamFlags)[number], string> = {
  manageStream: 'manage_stream',
  readStream: 'read_stream',
  manageTopics: 'manage_topics',
  readTopics: 'read_topics',
  pollMessages: 'poll_messages',
  sendMessages: 'send_messages',
};
const topicRightNames: Record<(typeof topicFlags)[number], string> = { manageTopic: 'manage_topic', readTopic: 'read_topic', pollMessages: 'poll_messages', sendMessages: 'send_messages' };

/** One row per grant: who, on what (cluster, a namespace or a topic, by name where it exists), which rights. */
export function aclRows(broker: Broker, user: User): Array<{ user: string; resource: string; name: string; rights: string[] }> {
  if (user.root) return [{ user: user.username, resource: 'cluster', name: '*', rights: ['all (root)'] }];
  const rows: Array<{ user: string; resource: string; name: string; rights: string[] }> = [];
  const global = globalNames(user);
  if (global.length > 0) rows.push({ user: user.username, resource: 'cluster', name: '*', rights: global });
  for (const s of grantsOf(user)?.streams ?? []) {
    const namespace = broker.catalog.getNamespace(s.streamId);
    const streamName = namespace?.name ?? `#${s.streamId}`;
    const rights = streamFlags.filter((f) => s[f]).map((f) => streamRightNames[f]);
    if (rights.length > 0) rows.push({ user: user.username, resource: 'namespace', name: streamName, rights });
    for (const t of s.topics) {
      const topic = namespace === null ? null : broker.catalog.getTopic({ namespace: namespace.id, topic: t.topicId });
      const topicRights = topicFlags.filter((f) => t[f]).map((f) => topicRightNames[f]);
      if (topicRights.length > 0) rows.push({ user: user.username, resource: 'topic', name: `${streamName}/${topic?.name ?? `#${t.topicId}`}`, rights: topicRights });
    }
  }
  return rows;
}

function listAcls({ broker, user }: AdminRequest): AdminReply {
  const users = mayServer(user, 'readUsers') ? broker.users.list() : [user];
  return { body: { acls: users.flatMap((u) => aclRows(broker, u)) } };
}

export const userRoutes: readonly Route[] = [
  { method: 'GET', path: 'whoami', handler: whoami },
  { method: 'GET', path: 'users', handler: listUsers },
  { method: 'POST', path: 'users', handler: createUser },
  { method: 'GET', path: 'users/:user', handler: getUser },
  { method: 'PATCH', path: 'users/:user', handler: updateUser },
  { method: 'DELETE', path: 'users/:user', handler: deleteUser },
  { method: 'PUT', path: 'users/:user/password', handler: changePassword },
  { method: 'PUT', path: 'users/:user/permissions', handler: setPermissions },
  { method: 'GET', path: 'users/:user/tokens', handler: listTokens },
  { method: 'POST', path: 'users/:user/tokens', handler: createToken },
  { method: 'DELETE', path: 'users/:user/tokens/:token', handler: deleteToken },
  { method: 'GET', path: 'tokens', handler: listTokens },
  { method: 'POST', path: 'tokens', handler: createToken },
  { method: 'DELETE', path: 'tokens/:token', handler: deleteToken },
  { method: 'GET', path: 'acls', handler: listAcls },
];
