// Users, passwords and personal access tokens, shared by every protocol.
//
// A password is kept twice, never in clear: as an scrypt hash (PLAIN, Iggy login, Cursus AUTH)
// and as SCRAM credentials for SHA-256 and SHA-512 (RFC 5802 StoredKey/ServerKey, RFC 7677), so
// the Kafka front-end can run SASL SCRAM without ever seeing the password. Permissions are opaque
// JSON: each protocol keeps its own shape. The user with id 0 is root (Iggy's convention).
//
// Users and tokens are few; they are loaded into memory at open and every mutation is written
// through to the metadata store. Password hashing runs on libuv's thread pool (async scrypt and
// pbkdf2), not on the event loop.

import { createHash, createHmac, pbkdf2, randomBytes, scrypt, timingSafeEqual, type BinaryLike, type ScryptOptions } from 'node:crypto';
import type { Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import { silentLogger, type Logger } from '../base/logger.js';
import type { MetadataStore, TokenRecord, UserRecord } from './metadata-store.js';
import { SerialQueue } from './serial.js';

// Named limits.
export const usernameBytesMax = 255;
export const passwordBytesMax = 1024;
export const tokenNameBytesMax = 255;
export const tokensPerUserMax = 100;
/** RFC 7677 recommends at least 4096; Kafka's minimum is 4096 too. */
export const scramIterations = 4096;
export const scramSaltBytes = 16;
export const tokenSecretBytes = 32;
export const generatedPasswordBytes = 18;
export const rootUserId = 0;

/** scrypt cost; N=2^14, r=8, p=1 takes ~30-50 ms and 16 MiB per hash. */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}
export const defaultScryptCost: ScryptCost = { N: 16384, r: 8, p: 1 };
const scryptKeyBytes = 32;
const scryptSaltBytes = 16;

export type UserStatus = 'active' | 'inactive';
export type ScramMechanism = 'SHA-256' | 'SHA-512';
export const scramMechanisms: readonly ScramMechanism[] = ['SHA-256', 'SHA-512'];

export interface ScramCredential {
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

/** A user as handed to front-ends: no secrets. */
export interface User {
  readonly id: number;
  readonly username: string;
  readonly status: UserStatus;
  readonly permissions: unknown;
  readonly createdAt: number;
  /** Root may do everything whatever its permissions say. */
  readonly root: boolean;
}

export interface TokenInfo {
  readonly userId: number;
  readonly name: string;
  /** ms since the epoch; null = never. */
  readonly expiresAt: number | null;
  readonly createdAt: number;
}

export interface CreateUserOptions {
  username: string;
  password: string;
  status?: UserStatus;
  permissions?: unknown;
  /** Explicit id (root is 0); allocated when absent. */
  id?: number;
}

export interface UserStoreOptions {
  clock: Clock;
  /** Where user and token changes are logged (names only, never secrets); default silent. */
  logger?: Logger;
  scryptCost?: ScryptCost;
}

type UserRef = string | number;

interface StoredScram {
  salt: string;
  iterations: number;
  storedKey: string;
  serverKey: string;
}

const userIdCounter = 'user_id';

export class UserStore {
  private readonly byId = new Map<number, UserRecord>();
  private readonly byName = new Map<string, UserRecord>();
  private readonly tokensByHash = new Map<string, TokenRecord>();
  private readonly mutations = new SerialQueue();
  private readonly clock: Clock;
  private readonly scryptCost: ScryptCost;
  /** Hashed when a login names an unknown user, so that timing does not reveal which users exist. */
  private dummyHash: Promise<string> | null = null;

  private readonly logger: Logger;

  private constructor(
    private readonly store: MetadataStore,
    options: UserStoreOptions,
  ) {
    this.clock = options.clock;
    this.scryptCost = options.scryptCost ?? defaultScryptCost;
    this.logger = options.logger ?? silentLogger;
  }

  static async open(store: MetadataStore, options: UserStoreOptions): Promise<UserStore> {
    const users = new UserStore(store, options);
    for (const record of await store.listUsers()) users.index(record);
    for (const token of await store.listTokens()) users.tokensByHash.set(token.tokenHash, token);
    return users;
  }

  // --- reads ----------------------------------------------------------------------------------

  list(): User[] {
    return [...this.byId.values()].sort((a, b) => a.id - b.id).map(publicUser);
  }

  get(ref: UserRef): User | null {
    const record = this.record(ref);
    return record ? publicUser(record) : null;
  }

  /** SCRAM credentials for the Kafka front-end's SASL exchange; null for an unknown user. */
  scramCredential(username: string, mechanism: ScramMechanism): ScramCredential | null {
    const record = this.byName.get(username);
    if (!record) return null;
    const stored = (record.scram as Record<string, StoredScram | undefined>)[mechanism];
    if (!stored) return null;
    return {
      salt: Buffer.from(stored.salt, 'base64'),
      iterations: stored.iterations,
      storedKey: Buffer.from(stored.storedKey, 'base64'),
      serverKey: Buffer.from(stored.serverKey, 'base64'),
    };
  }

  /** The SCRAM mechanisms the user has credentials for, with their iterations; null for an unknown user. */
  scramMechanismsOf(ref: UserRef): Array<{ mechanism: ScramMechanism; iterations: number }> | null {
    const record = this.record(ref);
    if (!record) return null;
    const stored = record.scram as Record<string, StoredScram | undefined>;
    return scramMechanisms.filter((m) => stored[m] !== undefined).map((m) => ({ mechanism: m, iterations: stored[m]!.iterations }));
  }

  /**
   * Sets (or with null removes) the user's SCRAM credential for one mechanism, leaving its
   * password and the other mechanism alone (Kafka AlterUserScramCredentials). A later password
   * change derives both credentials from the new password again.
   */
  setScramCredential(ref: UserRef, mechanism: ScramMechanism, credential: ScramCredential | null): Promise<void> {
    return this.mutations.run(async () => {
      const record = this.requireRecord(ref);
      const scram = { ...(record.scram as Record<string, StoredScram>) };
      if (credential === null) delete scram[mechanism];
      else scram[mechanism] = { salt: credential.salt.toString('base64'), iterations: credential.iterations, storedKey: credential.storedKey.toString('base64'), serverKey: credential.serverKey.toString('base64') };
      const updated: UserRecord = { ...record, scram };
      await this.store.putUser(updated);
      this.index(updated);
    });
  }

  // --- passwords ------------------------------------------------------------------------------

  /**
   * The user if the password matches and the user is active. Throws invalid_credentials for an
   * unknown user or a wrong password (indistinguishable, also in time), user_inactive otherwise.
   */
  async verifyPassword(username: string, password: string): Promise<User> {
    const record = this.byName.get(username);
    const encoded = record?.passwordHash ?? (await this.dummy());
    const matches = await verifyScrypt(encoded, password);
    if (!record || !matches) throw new QuartetError('invalid_credentials');
    if (record.status !== 'active') throw new QuartetError('user_inactive', `user '${username}' is not active`);
    return publicUser(record);
  }

  // --- mutations ------------------------------------------------------------------------------

  create(options: CreateUserOptions): Promise<User> {
    return this.mutations.run(async () => {
      assertUsername(options.username);
      assertPassword(options.password);
      if (this.byName.has(options.username)) throw new QuartetError('user_exists', `user '${options.username}' already exists`);
      const id = await this.allocateId(options.id);
      const record: UserRecord = {
        id,
        username: options.username,
        status: options.status ?? 'active',
        ...(await this.secretsFor(options.password)),
        permissions: options.permissions ?? null,
        createdAt: this.clock.now(),
      };
      await this.store.putUser(record);
      this.logger.info('created user', { user: record.username, id: record.id });
      return publicUser(this.index(record));
    });
  }

  /**
   * Changes the password. When `currentPassword` is given it must match (a user changing their
   * own password); an administrator passes null.
   */
  changePassword(ref: UserRef, currentPassword: string | null, newPassword: string): Promise<void> {
    return this.mutations.run(async () => {
      const record = this.requireRecord(ref);
      assertPassword(newPassword);
      if (currentPassword !== null && !(await verifyScrypt(record.passwordHash, currentPassword))) {
        throw new QuartetError('invalid_credentials', 'the current password is wrong');
      }
      const updated: UserRecord = { ...record, ...(await this.secretsFor(newPassword)) };
      await this.store.putUser(updated);
      this.index(updated);
    });
  }

  /**
   * Renames the user or changes its status. Root can be neither deactivated nor renamed through a
   * client (`unauthorized`): only the operator may, with `asOperator` (the configured root name
   * at start, the offline CLI).
   */
  update(ref: UserRef, change: { username?: string; status?: UserStatus }, options: { asOperator?: boolean } = {}): Promise<User> {
    return this.mutations.run(async () => {
      const record = this.requireRecord(ref);
      if (record.id === rootUserId && options.asOperator !== true) {
        if (change.status !== undefined && change.status !== record.status) throw new QuartetError('unauthorized', 'the root user cannot be deactivated');
        if (change.username !== undefined && change.username !== record.username) throw new QuartetError('unauthorized', 'the root user cannot be renamed');
      }
      if (change.username !== undefined && change.username !== record.username) {
        assertUsername(change.username);
        if (this.byName.has(change.username)) throw new QuartetError('user_exists', `user '${change.username}' already exists`);
      }
      if (change.status !== undefined && change.status !== 'active' && change.status !== 'inactive') {
        throw new QuartetError('invalid_request', `invalid user status ${String(change.status)}`);
      }
      const updated: UserRecord = { ...record, username: change.username ?? record.username, status: change.status ?? record.status };
      await this.store.putUser(updated);
      this.byName.delete(record.username);
      return publicUser(this.index(updated));
    });
  }

  /** Replaces the user's permissions; root's cannot be changed (it may do everything whatever is stored). */
  setPermissions(ref: UserRef, permissions: unknown): Promise<User> {
    return this.mutations.run(async () => {
      const record = this.requireRecord(ref);
      if (record.id === rootUserId) throw new QuartetError('unauthorized', 'the root user\'s permissions cannot be changed');
      const updated: UserRecord = { ...record, permissions: permissions ?? null };
      await this.store.putUser(updated);
      return publicUser(this.index(updated));
    });
  }

  /**
   * Replaces each user's permissions by `edit(current)` where it returns something else than
   * `current` (the same object), one user at a time inside the store's mutation queue, so a
   * concurrent setPermissions is never overwritten with a stale copy. Returns how many changed.
   */
  editPermissions(edit: (current: unknown, user: User) => unknown): Promise<number> {
    return this.mutations.run(async () => {
      let changed = 0;
      for (const record of [...this.byId.values()]) {
        const current = record.permissions ?? null;
        const next = edit(current, publicUser(record));
        if (next === current) continue;
        const updated: UserRecord = { ...record, permissions: next ?? null };
        await this.store.putUser(updated);
        this.index(updated);
        changed++;
      }
      return changed;
    });
  }

  /** Deletes the user and its tokens. Root cannot be deleted. */
  delete(ref: UserRef): Promise<User> {
    return this.mutations.run(async () => {
      const record = this.requireRecord(ref);
      if (record.id === rootUserId) throw new QuartetError('invalid_request', 'the root user cannot be deleted');
      await this.store.deleteUser(record.id);
      this.byId.delete(record.id);
      this.byName.delete(record.username);
      for (const [hash, token] of this.tokensByHash) if (token.userId === record.id) this.tokensByHash.delete(hash);
      this.logger.info('deleted user', { user: record.username, id: record.id });
      return publicUser(record);
    });
  }

  /**
   * Creates root (id 0) when no user exists at all. Returns the generated password when none was
   * given, so that the caller can show it once; it is never logged here.
   *
   * With `applyToExisting` (the broker at start), when root exists and a password is given
   * (configured), the configured credentials are root's: its password is set to the given one if
   * it differs (a password generated at the first start, or one changed since), and it is renamed
   * to `username` if it has another name and no other user has that one (`updated` says what
   * changed; `renameRefused` when the name is taken), and made active if it is not. The password
   * is checked before anything changes.
   */
  async ensureRootUser(
    username: string,
    password?: string,
    permissions?: unknown,
    options: { applyToExisting?: boolean } = {},
  ): Promise<{ created: boolean; generatedPassword: string | null; updated: Array<'username' | 'password' | 'status'>; renameRefused: boolean }> {
    const root = this.byId.get(rootUserId);
    if (root === undefined && !this.byName.has(username)) {
      const generated = password === undefined ? randomBytes(generatedPasswordBytes).toString('base64url') : null;
      await this.create({ username, password: password ?? generated!, id: rootUserId, permissions });
      return { created: true, generatedPassword: generated, updated: [], renameRefused: false };
    }
    const updated: Array<'username' | 'password' | 'status'> = [];
    let renameRefused = false;
    if (root !== undefined && password !== undefined && options.applyToExisting === true) {
      assertPassword(password);
      // Clients cannot deactivate root; a store from before that rule, or edited by hand, can
      // have it inactive: the configured credentials bring it back.
      if (root.status !== 'active') {
        await this.update(rootUserId, { status: 'active' }, { asOperator: true });
        updated.push('status');
      }
      if (root.username !== username) {
        if (this.byName.has(username)) renameRefused = true;
        else {
          await this.update(rootUserId, { username }, { asOperator: true });
          updated.push('username');
        }
      }
      if (!(await verifyScrypt(root.passwordHash, password))) {
        await this.changePassword(rootUserId, null, password);
        updated.push('password');
      }
    }
    return { created: false, generatedPassword: null, updated, renameRefused };
  }

  // --- personal access tokens -----------------------------------------------------------------

  /**
   * Creates a token for the user; returns the secret, which is shown once and stored only as its
   * SHA-256. `lifetimeMs` null = never expires. An expired token of the user with the same name is
   * removed first: the name is free again.
   */
  createToken(ref: UserRef, name: string, lifetimeMs: number | null): Promise<{ token: string; info: TokenInfo }> {
    return this.mutations.run(async () => {
      const user = this.requireRecord(ref);
      assertTokenName(name);
      if (lifetimeMs !== null && (!Number.isSafeInteger(lifetimeMs) || lifetimeMs <= 0)) {
        throw new QuartetError('invalid_request', `token lifetime must be a positive number of ms or null, got ${lifetimeMs}`);
      }
      await this.dropExpiredToken(user.id, name);
      const own = this.tokensOf(user.id);
      if (own.some((t) => t.name === name)) throw new QuartetError('token_exists', `user '${user.username}' already has a token named '${name}'`);
      if (own.length >= tokensPerUserMax) throw new QuartetError('resource_exhausted', `at most ${tokensPerUserMax} tokens per user`);
      const token = randomBytes(tokenSecretBytes).toString('base64url');
      const now = this.clock.now();
      const record: TokenRecord = { tokenHash: hashToken(token), userId: user.id, name, expiresAt: lifetimeMs === null ? null : now + lifetimeMs, createdAt: now };
      await this.store.putToken(record);
      this.tokensByHash.set(record.tokenHash, record);
      this.logger.info('created token', { user: user.username, token: name, expiresAt: record.expiresAt });
      return { token, info: tokenInfo(record) };
    });
  }

  /** The token's user; invalid_token when unknown or expired, user_inactive when the user is. */
  verifyToken(token: string): User {
    const record = this.tokensByHash.get(hashToken(token));
    if (!record || isExpired(record, this.clock.now())) throw new QuartetError('invalid_token');
    const user = this.byId.get(record.userId);
    if (!user) throw new QuartetError('invalid_token');
    if (user.status !== 'active') throw new QuartetError('user_inactive', `user '${user.username}' is not active`);
    return publicUser(user);
  }

  /**
   * The user's tokens, expired ones too until the maintenance pass removes them (as the Iggy
   * reference lists every stored token with its expiry until its cleaner runs): only a login with
   * an expired token is refused.
   */
  listTokens(ref: UserRef): TokenInfo[] {
    return this.tokensOf(this.requireRecord(ref).id, { expired: true }).map(tokenInfo);
  }

  /** Deletes a token by name, an expired one too (see listTokens). */
  deleteToken(ref: UserRef, name: string): Promise<void> {
    return this.mutations.run(async () => {
      const user = this.requireRecord(ref);
      const record = this.tokensOf(user.id, { expired: true }).find((t) => t.name === name);
      if (!record) throw new QuartetError('invalid_token', `user '${user.username}' has no token named '${name}'`);
      await this.store.deleteToken(record.tokenHash);
      this.tokensByHash.delete(record.tokenHash);
      this.logger.info('deleted token', { user: user.username, token: name });
    });
  }

  /** Removes expired tokens (called by the broker's maintenance pass). Returns how many. */
  purgeExpiredTokens(): Promise<number> {
    return this.mutations.run(async () => {
      const now = this.clock.now();
      const expired = [...this.tokensByHash.values()].filter((t) => isExpired(t, now));
      for (const t of expired) {
        await this.store.deleteToken(t.tokenHash);
        this.tokensByHash.delete(t.tokenHash);
      }
      return expired.length;
    });
  }

  // --- internals ------------------------------------------------------------------------------

  private async secretsFor(password: string): Promise<Pick<UserRecord, 'passwordHash' | 'scram'>> {
    const [passwordHash, ...scram] = await Promise.all([
      hashPassword(password, this.scryptCost),
      ...scramMechanisms.map((m) => scramCredentialFor(password, m, randomBytes(scramSaltBytes), scramIterations)),
    ]);
    const stored: Record<string, StoredScram> = {};
    scramMechanisms.forEach((m, i) => {
      const c = scram[i]!;
      stored[m] = { salt: c.salt.toString('base64'), iterations: c.iterations, storedKey: c.storedKey.toString('base64'), serverKey: c.serverKey.toString('base64') };
    });
    return { passwordHash, scram: stored };
  }

  private async allocateId(explicit: number | undefined): Promise<number> {
    if (explicit !== undefined) {
      if (!Number.isInteger(explicit) || explicit < 0 || explicit > 0xffff_ffff) throw new QuartetError('invalid_request', `user id ${explicit} is not a u32`);
      if (this.byId.has(explicit)) throw new QuartetError('user_exists', `user id ${explicit} is already in use`);
      return explicit;
    }
    // Id 0 is root's alone: a user made before root (the server creates root once its listeners
    // are bound) must not take it, or root's credentials would later be applied to that user.
    for (;;) {
      const id = await this.store.nextId(userIdCounter, 0);
      if (id !== rootUserId && !this.byId.has(id)) return id;
    }
  }

  private dummy(): Promise<string> {
    this.dummyHash ??= hashPassword(randomBytes(16).toString('hex'), this.scryptCost);
    return this.dummyHash;
  }

  private index(record: UserRecord): UserRecord {
    this.byId.set(record.id, record);
    this.byName.set(record.username, record);
    return record;
  }

  private record(ref: UserRef): UserRecord | undefined {
    return typeof ref === 'number' ? this.byId.get(ref) : this.byName.get(ref);
  }

  private requireRecord(ref: UserRef): UserRecord {
    const record = this.record(ref);
    if (!record) throw new QuartetError('unknown_user', `unknown user ${typeof ref === 'number' ? `#${ref}` : `'${ref}'`}`);
    return record;
  }

  /** The user's tokens by name: those that have not expired, or with `expired` every stored one. */
  private tokensOf(userId: number, options: { expired?: boolean } = {}): TokenRecord[] {
    const now = this.clock.now();
    return [...this.tokensByHash.values()]
      .filter((t) => t.userId === userId && (options.expired === true || !isExpired(t, now)))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Removes the user's expired token of this name, if any (a new one may take its name). */
  private async dropExpiredToken(userId: number, name: string): Promise<void> {
    const now = this.clock.now();
    for (const t of [...this.tokensByHash.values()]) {
      if (t.userId !== userId || t.name !== name || !isExpired(t, now)) continue;
      await this.store.deleteToken(t.tokenHash);
      this.tokensByHash.delete(t.tokenHash);
    }
  }
}

function isExpired(token: TokenRecord, now: number): boolean {
  return token.expiresAt !== null && token.expiresAt <= now;
}

// ---------------------------------------------------------------------------------------------
// Password primitives (exported for the SCRAM front-end and the tests)

function scryptAsync(password: BinaryLike, salt: BinaryLike, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));
}

function pbkdf2Async(password: BinaryLike, salt: BinaryLike, iterations: number, keylen: number, digest: string): Promise<Buffer> {
  return new Promise((resolve, reject) => pbkdf2(password, salt, iterations, keylen, digest, (err, key) => (err ? reject(err) : resolve(key))));
}

/** `scrypt$N$r$p$<salt b64>$<hash b64>`: the parameters travel with the hash so they can change. */
export async function hashPassword(password: string, cost: ScryptCost = defaultScryptCost): Promise<string> {
  const salt = randomBytes(scryptSaltBytes);
  const hash = await scryptAsync(password, salt, scryptKeyBytes, { ...cost, maxmem: scryptMaxmem(cost) });
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyScrypt(encoded: string, password: string): Promise<boolean> {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') throw new Error('malformed password hash in the store');
  const cost: ScryptCost = { N: Number(parts[1]), r: Number(parts[2]), p: Number(parts[3]) };
  const expected = Buffer.from(parts[5]!, 'base64');
  const actual = await scryptAsync(password, Buffer.from(parts[4]!, 'base64'), expected.length, { ...cost, maxmem: scryptMaxmem(cost) });
  return timingSafeEqual(actual, expected);
}

function scryptMaxmem(cost: ScryptCost): number {
  // scrypt needs 128 * N * r bytes; Node's default cap (32 MiB) is too tight at the edges.
  return 256 * cost.N * cost.r + 1024 * 1024;
}

const hashNames: Record<ScramMechanism, 'sha256' | 'sha512'> = { 'SHA-256': 'sha256', 'SHA-512': 'sha512' };
const hashBytes: Record<ScramMechanism, number> = { 'SHA-256': 32, 'SHA-512': 64 };

/**
 * RFC 5802 §3: SaltedPassword = Hi(password, salt, i); ClientKey = HMAC(SaltedPassword, "Client
 * Key"); StoredKey = H(ClientKey); ServerKey = HMAC(SaltedPassword, "Server Key"). The password
 * is used as UTF-8 without SASLprep, as Kafka's own ScramFormatter does.
 */
export async function scramCredentialFor(password: string, mechanism: ScramMechanism, salt: Buffer, iterations: number): Promise<ScramCredential> {
  const h = hashNames[mechanism];
  const salted = await pbkdf2Async(Buffer.from(password, 'utf8'), salt, iterations, hashBytes[mechanism], h);
  return scramCredentialFromSalted(salted, mechanism, salt, iterations);
}

/** The stored form of a SCRAM credential from its SaltedPassword (what Kafka's AlterUserScramCredentials sends). */
export function scramCredentialFromSalted(salted: Buffer, mechanism: ScramMechanism, salt: Buffer, iterations: number): ScramCredential {
  const h = hashNames[mechanism];
  const clientKey = createHmac(h, salted).update('Client Key').digest();
  return {
    salt,
    iterations,
    storedKey: createHash(h).update(clientKey).digest(),
    serverKey: createHmac(h, salted).update('Server Key').digest(),
  };
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function publicUser(record: UserRecord): User {
  return Object.freeze({
    id: record.id,
    username: record.username,
    status: record.status,
    permissions: record.permissions,
    createdAt: record.createdAt,
    root: record.id === rootUserId,
  });
}

function tokenInfo(record: TokenRecord): TokenInfo {
  return Object.freeze({ userId: record.userId, name: record.name, expiresAt: record.expiresAt, createdAt: record.createdAt });
}

function assertUsername(name: string): void {
  const bytes = Buffer.byteLength(name ?? '', 'utf8');
  // eslint-disable-next-line no-control-regex
  if (bytes === 0 || bytes > usernameBytesMax || /[\u0000-\u001f\u007f]/.test(name) || name.trim() !== name) {
    throw new QuartetError('invalid_name', `invalid username ${JSON.stringify(name)}: 1..${usernameBytesMax} bytes, no control characters or surrounding whitespace`);
  }
}

function assertPassword(password: string): void {
  const bytes = Buffer.byteLength(password ?? '', 'utf8');
  if (typeof password !== 'string' || bytes === 0 || bytes > passwordBytesMax) {
    throw new QuartetError('invalid_request', `the password must be 1..${passwordBytesMax} bytes`);
  }
}

function assertTokenName(name: string): void {
  const bytes = Buffer.byteLength(name ?? '', 'utf8');
  if (bytes === 0 || bytes > tokenNameBytesMax) throw new QuartetError('invalid_name', `invalid token name ${JSON.stringify(name)}: 1..${tokenNameBytesMax} bytes`);
}
