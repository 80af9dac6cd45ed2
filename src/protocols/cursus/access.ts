// Cursus authentication and authorization (spec §8) over Quartet's users (core/users.ts) and
// grants (core/access.ts):
//
// - A principal is a Quartet user name; its token is the user's password or one of its personal
//   access tokens. Failed attempts go through the core auth throttle (as Kafka SASL and Iggy login).
// - Coarse permissions come from the user's grants over the topics of stream `default` (the Cursus
//   topics; global grants and stream `default`'s grants count, per-topic grants do not):
//     admin        manage topics (manage_streams or manage_topics, globally or on stream default)
//     topic.read   poll messages (read_streams, read_topics or poll_messages, or a manage right)
//     topic.write  send messages (send_messages, or a manage right)
//     group        as topic.read (groups consume)
//     transaction  as topic.write (transactions produce)
//   root holds `*`; an inactive user holds nothing.
// - With `cursus.requireAuth` false (the default, as Cursus's enable_sasl=false) nothing is
//   checked: every request may do everything, and topic policies are stored but not enforced.
//   With it true, a command that needs permissions needs an authenticated principal
//   (authentication_required), each permission (NOT_AUTHORIZED_FOR_OPERATION), and then the
//   topic's auth_policy (authorizeTopic: NOT_AUTHORIZED_FOR_TOPIC).

import { isQuartetError } from '../../base/errors.js';
import type { Broker } from '../../core/broker.js';
import { defaultNamespaceName } from '../../core/catalog.js';
import { mayTopic, noSuchId } from '../../core/access.js';
import type { User } from '../../core/users.js';
import { CursusFailure, type CursusContext, type CursusPermission, type CursusPrincipal, type CursusTopicView } from './handler.js';

export const cursusPermissions: readonly CursusPermission[] = ['admin', 'topic.read', 'topic.write', 'group', 'transaction'];

const everything: ReadonlySet<CursusPermission | '*'> = new Set(['*']);
const nothing: ReadonlySet<CursusPermission | '*'> = new Set();

export interface CursusAccessOptions {
  broker: Broker;
  /** Protected commands need an authenticated principal and its permissions. */
  requireAuth: boolean;
}

export class CursusAccess {
  readonly requireAuth: boolean;
  private readonly broker: Broker;

  constructor(options: CursusAccessOptions) {
    this.broker = options.broker;
    this.requireAuth = options.requireAuth;
  }

  /** The principal of a request: the user (null: anonymous), read again each time so grant changes apply. */
  principalOf(userId: number | null): CursusPrincipal {
    const user = userId === null ? null : this.broker.users.get(userId);
    const name = user === null || user.status !== 'active' ? null : user.username;
    if (!this.requireAuth) return { name, permissions: everything };
    return { name, permissions: user === null || name === null ? nothing : permissionsOf(user, this.defaultStreamId()) };
  }

  /**
   * Checks `principal`/`token` (a password or a personal access token of that user), throttled per
   * name and peer; `authentication_failed principal=` when they do not match an active user.
   */
  async authenticate(principal: string, token: string, peer: string): Promise<User> {
    const throttle = this.broker.authThrottle;
    const refused = (): CursusFailure => CursusFailure.of('authentication_failed', [['principal', principal]]);
    if (!(await throttle.admit(principal, peer, 'cursus')).admitted) {
      throttle.failed(principal, peer, 'cursus');
      throw refused();
    }
    try {
      const user = await this.verify(principal, token);
      throttle.succeeded(principal);
      return user;
    } catch (error) {
      if (!isQuartetError(error)) throw error;
      if (error.code !== 'invalid_credentials' && error.code !== 'invalid_token' && error.code !== 'user_inactive') throw error;
      throttle.failed(principal, peer, 'cursus');
      throw refused();
    }
  }

  /** A token of the named user first (no hashing cost), else the password. */
  private async verify(principal: string, token: string): Promise<User> {
    try {
      const user = this.broker.users.verifyToken(token);
      if (user.username === principal) return user;
    } catch (error) {
      if (!isQuartetError(error) || error.code !== 'invalid_token') throw error;
    }
    return this.broker.users.verifyPassword(principal, token);
  }

  private defaultStreamId(): number {
    return this.broker.catalog.getNamespace(defaultNamespaceName)?.id ?? noSuchId;
  }
}

/** The Cursus permissions a user's grants give (module comment). */
export function permissionsOf(user: User, defaultStreamId: number): ReadonlySet<CursusPermission | '*'> {
  if (user.status !== 'active') return nothing;
  if (user.root) return everything;
  const held = new Set<CursusPermission | '*'>();
  const may = (action: 'manageTopic' | 'poll' | 'send'): boolean => mayTopic(user, defaultStreamId, noSuchId, action);
  if (may('manageTopic')) held.add('admin');
  if (may('poll')) held.add('topic.read').add('group');
  if (may('send')) held.add('topic.write').add('transaction');
  return held;
}

export function holds(principal: CursusPrincipal, permission: CursusPermission): boolean {
  return principal.permissions.has('*') || principal.permissions.has(permission);
}

/**
 * The checks of the dispatch table for a command that needs `permissions`: an authenticated
 * principal, then each permission in turn. Nothing when authentication is not required.
 */
export function authorizeCommand(ctx: CursusContext, access: CursusAccess, command: string, permissions: readonly CursusPermission[]): void {
  if (!access.requireAuth || permissions.length === 0) return;
  if (ctx.principal.name === null) throw CursusFailure.of('authentication_required', [['command', command]]);
  for (const permission of permissions) {
    if (!holds(ctx.principal, permission)) throw CursusFailure.of('NOT_AUTHORIZED_FOR_OPERATION', [['command', command], ['permission', permission]]);
  }
}

/**
 * The topic's own policy, after the coarse permissions (spec §8): deny_read / deny_write refuse
 * that operation to everyone; acl admits the principals of read_acl / write_acl (`*`: any
 * authenticated principal). Handlers call it once they have the topic's view.
 */
export function authorizeTopic(ctx: CursusContext, topic: CursusTopicView, operation: 'read' | 'write'): void {
  if (!ctx.services.access.requireAuth) return;
  const refuse = (): CursusFailure => CursusFailure.of('NOT_AUTHORIZED_FOR_TOPIC', [['topic', topic.name], ['operation', operation]]);
  switch (topic.authPolicy) {
    case 'open':
      return;
    case 'deny_read':
      if (operation === 'read') throw refuse();
      return;
    case 'deny_write':
      if (operation === 'write') throw refuse();
      return;
    case 'acl': {
      const acl = operation === 'read' ? topic.readAcl : topic.writeAcl;
      const name = ctx.principal.name;
      if (name === null || !(acl.includes('*') || acl.includes(name))) throw refuse();
    }
  }
}
