// quartet user create|list|delete|permissions --offline: manage users straight in a stopped
// broker's data directory (metadata store). They take the data-directory lock, so they refuse to
// run next to a live broker (which caches users in memory and would not see the change); a
// running broker's users are changed online (account-commands.ts).

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { systemClock } from '../base/clock.js';
import { isQuartetError } from '../base/errors.js';
import { metadataDbPath, SqliteMetadataStore } from '../core/metadata-store.js';
import { allGlobalGrants, globalGrantNames, globalGrants, grantsOf, type Grants } from '../core/access.js';
import { generatedPasswordBytes, passwordBytesMax, UserStore } from '../core/users.js';
import { CONFIG_FLAG, loadConfig, type QuartetConfig } from '../server/config.js';
import { acquireDataDirLock, DataDirLockedError } from '../server/lock.js';
import { rootPasswordLine } from '../server/server.js';
import { parseArgs, stringFlag, UsageError, type FlagSpec, type ParsedArgs } from './args.js';
import type { CliIo } from './io.js';
import { didYouMean } from './suggest.js';

/** A password read from stdin: the core's limit plus room for a line ending. */
const PASSWORD_STDIN_BYTES_MAX = passwordBytesMax + 2;

const commonFlags: Record<string, FlagSpec> = { 'data-dir': {}, [CONFIG_FLAG]: {} };

export async function userCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'create':
      return userCreate(parseArgs(rest, { ...commonFlags, password: {}, 'password-stdin': { boolean: true }, grant: {} }, 'user create'), io);
    case 'permissions':
      return userPermissions(parseArgs(rest, commonFlags, 'user permissions'), io);
    case 'list':
      return userList(parseArgs(rest, { ...commonFlags, json: { boolean: true } }, 'user list'), io);
    case 'delete':
      return userDelete(parseArgs(rest, commonFlags, 'user delete'), io);
    case undefined:
      throw new UsageError('user needs a subcommand: create, list, delete or permissions', 'user');
    default:
      throw new UsageError(`unknown user subcommand "${sub}"${didYouMean(sub, ['create', 'list', 'delete', 'permissions'])}`, 'user');
  }
}

function configFor(args: ParsedArgs, io: CliIo): QuartetConfig {
  const flags: Record<string, string> = {};
  for (const name of ['data-dir', CONFIG_FLAG]) {
    const v = stringFlag(args, name);
    if (v !== undefined) flags[name] = v;
  }
  return loadConfig({ flags, env: io.env, cwd: io.cwd }).config;
}

function oneName(args: ParsedArgs, command: string): string {
  if (args.positionals.length !== 1) throw new UsageError(`${command} takes exactly one user name`, command);
  return args.positionals[0]!;
}

async function userCreate(args: ParsedArgs, io: CliIo): Promise<number> {
  const name = oneName(args, 'user create');
  const given = stringFlag(args, 'password');
  const fromStdin = args.flags['password-stdin'] === true;
  if (given !== undefined && fromStdin) throw new UsageError('give --password or --password-stdin, not both', 'user create');
  const config = configFor(args, io);
  const password = fromStdin ? stripLineEnd(await io.readStdin(PASSWORD_STDIN_BYTES_MAX)) : given;
  const generated = password === undefined ? randomBytes(generatedPasswordBytes).toString('base64url') : null;
  const grantList = stringFlag(args, 'grant');
  const permissions = grantList === undefined ? null : parseGrantList(grantList, 'user create');
  return withUsers(config, 'user create', true, io, async (users) => {
    // The broker creates root only in an empty store: do it here too, or it would never exist.
    const root = await users.ensureRootUser(config.root.username, config.root.password ?? undefined);
    if (root.generatedPassword !== null) io.stdout(rootPasswordLine(config.root.username, root.generatedPassword));
    const user = await users.create({ username: name, password: password ?? generated!, permissions });
    io.stdout(`created user '${user.username}' (id ${user.id})\n`);
    if (generated !== null) io.stdout(`quartet: generated password for user '${user.username}': ${generated} (shown once)\n`);
  });
}

async function userList(args: ParsedArgs, io: CliIo): Promise<number> {
  if (args.positionals.length > 0) throw new UsageError('user list takes no arguments', 'user list');
  const json = args.flags.json === true;
  return withUsers(configFor(args, io), 'user list', false, io, async (users) => {
    for (const u of users.list()) {
      const created = new Date(u.createdAt).toISOString();
      if (json) io.stdout(JSON.stringify({ id: u.id, username: u.username, status: u.status, root: u.root, createdAt: created, global: u.root ? Object.keys(globalGrantNames) : globalGrantList(u.permissions), streamGrants: grantsOf(u)?.streams.length ?? 0 }) + '\n');
      // Five columns on every row: the fourth is `root` for the root user, `-` for the others.
      else io.stdout(`${u.id}\t${u.username}\t${u.status}\t${u.root ? 'root' : '-'}\t${created}\n`);
    }
  });
}

async function userDelete(args: ParsedArgs, io: CliIo): Promise<number> {
  const name = oneName(args, 'user delete');
  return withUsers(configFor(args, io), 'user delete', false, io, async (users) => {
    const user = await users.delete(name);
    io.stdout(`deleted user '${user.username}' (id ${user.id})\n`);
  });
}

async function userPermissions(args: ParsedArgs, io: CliIo): Promise<number> {
  if (args.positionals.length !== 2) throw new UsageError('user permissions takes a user name and a list of global permissions (or all, or none)', 'user permissions');
  const [name, list] = args.positionals as [string, string];
  const wanted = parseGrantList(list, 'user permissions');
  return withUsers(configFor(args, io), 'user permissions', false, io, async (users) => {
    const current = users.get(name);
    // As Iggy's UpdatePermissions (cannot_change_permissions): root may do everything, always.
    if (current?.root === true) {
      io.stderr(`quartet: the permissions of the root user '${current.username}' cannot be changed (root may do everything)\n`);
      return false;
    }
    // Per-stream and per-topic grants (set through Iggy) are kept; only the global ones change.
    const kept = current === null ? [] : (grantsOf(current)?.streams ?? []);
    const user = await users.setPermissions(name, { global: wanted.global, streams: kept });
    const names = globalGrantList(user.permissions);
    io.stdout(`user '${user.username}' (id ${user.id}): global permissions ${names.length === 0 ? 'none' : names.join(',')}${kept.length > 0 ? ` (and ${kept.length} stream grants, kept)` : ''}\n`);
  });
}

/**
 * A comma-separated list of global permissions as Iggy names them (manage_servers, read_servers,
 * manage_users, read_users, manage_streams, read_streams, manage_topics, read_topics,
 * poll_messages, send_messages), or `all`, or `none`.
 */
export function parseGrantList(list: string, command: string): Grants {
  const trimmed = list.trim();
  if (trimmed === 'all') return allGlobalGrants();
  if (trimmed === 'none' || trimmed === '') return globalGrants([]);
  const names = trimmed.split(',').map((n) => n.trim());
  for (const n of names) {
    if (!Object.hasOwn(globalGrantNames, n)) {
      throw new UsageError(`unknown permission "${n}": give all, none, or a comma-separated list of ${Object.keys(globalGrantNames).join(', ')}`, command);
    }
  }
  return globalGrants(names as Array<keyof typeof globalGrantNames>);
}

/** The global permissions a user holds, by name. */
function globalGrantList(permissions: unknown): string[] {
  const global = (permissions as Grants | null)?.global;
  if (global === undefined || global === null || typeof global !== 'object') return [];
  return Object.entries(globalGrantNames).filter(([, key]) => global[key] === true).map(([name]) => name);
}

/** Locks the data directory, opens its user store, runs `action`; maps failures (and an action that returns false) to exit 1. */
async function withUsers(config: QuartetConfig, purpose: string, create: boolean, io: CliIo, action: (users: UserStore) => Promise<void | boolean>): Promise<number> {
  const dataDir = config.dataDir;
  if (!create && !existsSync(metadataDbPath(dataDir))) {
    io.stderr(`quartet: no metadata store in ${dataDir} (${metadataDbPath(dataDir)} does not exist); check --data-dir\n`);
    return 1;
  }
  let lock;
  try {
    lock = acquireDataDirLock(dataDir, { purpose });
  } catch (err) {
    if (!(err instanceof DataDirLockedError)) throw err;
    io.stderr(`quartet: ${err.message}\nWith --offline, users are changed in a stopped broker's data directory: stop the broker first, or leave out --offline to change the running broker's users.\n`);
    return 1;
  }
  try {
    const store = SqliteMetadataStore.openInDataDir(dataDir);
    try {
      return (await action(await UserStore.open(store, { clock: systemClock }))) === false ? 1 : 0;
    } finally {
      await store.close();
    }
  } catch (err) {
    if (!isQuartetError(err)) throw err;
    io.stderr(`quartet: ${err.message}\n`);
    return 1;
  } finally {
    lock.release();
  }
}

function stripLineEnd(text: string): string {
  return text.replace(/\r?\n$/, '');
}
