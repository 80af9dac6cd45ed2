// Felix authentication and authorization over Quartet's users (core/users.ts) and grants
// (core/access.ts); docs/felix.md "Tokens".
//
// - `auth.token` is a Quartet credential: a personal access token, or `user:password`. The
//   stream's tenant is the auth's `tenant_id`; every later request must name it ("tenant
//   mismatch"). Failed attempts go through the core auth throttle.
// - A request is checked against the user's grants on the catalog namespace and topic its tenant,
//   namespace and stream map to (docs/mapping.md "Catalog ↔ Felix"): publishing needs
//   send_messages, subscribing and groups poll_messages ("forbidden" otherwise). Root may do all.
// - With `felix.requireAuth` false (the default) the token is not checked and nothing is
//   authorized: every stream may do everything, as a Kafka client without SASL.

import { isQuartetError } from '../../base/errors.js';
import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { mayTopic } from '../../core/access.js';
import { cacheTopicName } from '../../core/caches/index.js';
import type { User } from '../../core/users.js';
import { ErrorText, type Auth } from './codec/index.js';
import { FelixFailure } from './handler.js';

/** Who a stream authenticated as: a user, or anonymous (unrestricted without requireAuth). */
export interface FelixPrincipal {
  readonly userId: number | null;
  readonly name: string | null;
}

export type FelixAction = 'poll' | 'send';

const anonymous: FelixPrincipal = Object.freeze({ userId: null, name: null });

export class FelixAccess {
  constructor(
    private readonly broker: Broker,
    readonly requireAuth: boolean,
  ) {}

  /** Checks an auth's token (when required); throws FelixFailure "auth failed" (stream-fatal). */
  async authenticate(auth: Auth, peer: string): Promise<FelixPrincipal> {
    if (!this.requireAuth) return anonymous;
    const throttle = this.broker.authThrottle;
    const colon = auth.token.indexOf(':');
    const named = colon > 0 ? auth.token.slice(0, colon) : null;
    const refused = new FelixFailure(ErrorText.authFailed, true);
    if (!(await throttle.admit(named, peer, 'felix')).admitted) {
      throttle.failed(named, peer, 'felix');
      throw refused;
    }
    try {
      const user = await this.verify(auth.token, named, colon);
      throttle.succeeded(user.username);
      return { userId: user.id, name: user.username };
    } catch (error) {
      if (!isQuartetError(error)) throw error;
      if (error.code !== 'invalid_credentials' && error.code !== 'invalid_token' && error.code !== 'user_inactive') throw error;
      throttle.failed(named, peer, 'felix');
      throw refused;
    }
  }

  /** A personal access token first (no hashing cost), else `user:password`. */
  private async verify(token: string, named: string | null, colon: number): Promise<User> {
    try {
      return this.broker.users.verifyToken(token);
    } catch (error) {
      if (!isQuartetError(error) || error.code !== 'invalid_token' || named === null) throw error;
    }
    return this.broker.users.verifyPassword(named, token.slice(colon + 1));
  }

  /**
   * Throws "forbidden" unless the principal may `action` on a cache of the catalog namespace
   * `namespace`: the grant on its values topic, or on the namespace while the cache has none.
   */
  authorizeCache(principal: FelixPrincipal, namespace: string, cache: string, action: FelixAction): void {
    if (!this.requireAuth) return;
    const user = principal.userId === null ? null : this.broker.users.get(principal.userId);
    const ns = this.broker.catalog.getNamespace(namespace);
    const topic = ns === null ? null : this.broker.catalog.getTopic({ namespace: ns.id, topic: cacheTopicName('cache', cache) });
    if (user === null || !mayTopic(user, ns?.id ?? -1, topic?.id ?? -1, action)) throw new FelixFailure(ErrorText.forbidden);
  }

  /** Throws "forbidden" unless the principal may `action` on `topic` (read again: grant changes apply). */
  authorize(principal: FelixPrincipal, topic: Topic, action: FelixAction): void {
    if (!this.requireAuth) return;
    const user = principal.userId === null ? null : this.broker.users.get(principal.userId);
    if (user === null || !mayTopic(user, topic.namespaceId, topic.id, action)) throw new FelixFailure(ErrorText.forbidden);
  }
}
