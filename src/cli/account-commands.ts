// quartet user|token|acl against a running broker, over its admin API: users and their
// permissions, personal access tokens, and who may do what. The change is live at once for every
// protocol. (`quartet user ... --offline` changes a stopped broker's data directory instead:
// user-commands.ts.)

import { globalGrantNames } from '../core/access.js';
import { adminClientFor, apiPath, connectionFlags, type AdminClient } from './admin-client.js';
import { parseArgs, stringFlag, UsageError, type FlagSpec, type ParsedArgs } from './args.js';
import type { CliIo } from './io.js';
import { didYouMean } from './suggest.js';
import { formatTable } from './table.js';

/** A password read from stdin (the core's 1,024-byte limit plus a line ending). */
const PASSWORD_STDIN_BYTES_MAX = 1026;

export const userSubcommands: Record<string, Record<string, FlagSpec>> = {
  list: { ...connectionFlags },
  create: { ...connectionFlags, 'new-password': {}, 'new-password-stdin': { boolean: true }, grant: {} },
  delete: { ...connectionFlags },
  permissions: { ...connectionFlags },
  password: { ...connectionFlags, 'new-password': {}, 'new-password-stdin': { boolean: true }, 'current-password': {} },
  activate: { ...connectionFlags },
  deactivate: { ...connectionFlags },
};

export const tokenSubcommands: Record<string, Record<string, FlagSpec>> = {
  list: { ...connectionFlags, for: {} },
  create: { ...connectionFlags, for: {}, 'expires-in': {} },
  delete: { ...connectionFlags, for: {} },
};

export const aclSubcommands: Record<string, Record<string, FlagSpec>> = { list: { ...connectionFlags } };

export const userUsage = `Usage: quartet user list
       quartet user create NAME [--new-password PW | --new-password-stdin] [--grant LIST]
       quartet user delete NAME
       quartet user permissions NAME LIST
       quartet user password NAME [--new-password PW | --new-password-stdin] [--current-password PW]
       quartet user activate|deactivate NAME
       quartet user <create|list|delete|permissions> --offline ... (a stopped broker: quartet help user-offline)

Changes the users of a running broker at once, for every protocol. Without a password, create
generates one and prints it once. LIST is all, none, or a comma-separated list of
${Object.keys(globalGrantNames).join(', ')}
(per-stream grants set through Iggy are kept). Changing your own password takes the current one
(default: the password you logged in with).
Takes --json and the connection options of quartet topic (--broker, --user, --password, --token).
`;

export const tokenUsage = `Usage: quartet token list [--for USER]
       quartet token create NAME [--expires-in DURATION] [--for USER]
       quartet token delete NAME [--for USER]

Personal access tokens: your own, or with --for another user's (needs manage_users). create
prints the token once; use it as --token or QUARTET_TOKEN (Bearer on HTTP), or to log in over
Iggy. DURATION is a number with s, m, h or d (30d); without it the token never expires.
Takes --json and the connection options of quartet topic (--broker, --user, --password, --token).
`;

export const aclUsage = `Usage: quartet acl list

What each user may do: one row per grant (cluster-wide, a namespace or a topic) with its rights.
Without read_users, only your own. Takes --json and the connection options of quartet topic.
`;

interface UserJson {
  id: number;
  username: string;
  status: string;
  root: boolean;
  createdAt: string;
  permissions: { global: string[]; streams: unknown[] };
}

function subcommand(kind: string, argv: readonly string[], table: Record<string, Record<string, FlagSpec>>): { sub: string; command: string; args: ParsedArgs } {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError(`${kind} needs a subcommand: ${Object.keys(table).join(', ')}`, kind);
  const spec = table[sub];
  if (spec === undefined) throw new UsageError(`unknown ${kind} subcommand "${sub}"${didYouMean(sub, Object.keys(table))}`, kind);
  const command = `${kind} ${sub}`;
  return { sub, command, args: parseArgs(rest, spec, command) };
}

function positionals(args: ParsedArgs, count: number, command: string, what: string): string[] {
  if (args.positionals.length !== count) throw new UsageError(`${command} takes ${what}`, command);
  return args.positionals;
}

function out(io: CliIo, json: boolean, value: unknown, text: () => string): number {
  io.stdout(json ? JSON.stringify(value) + '\n' : text());
  return 0;
}

function grantList(list: string, command: string): string | string[] {
  const trimmed = list.trim();
  if (trimmed === 'all' || trimmed === 'none') return trimmed;
  const names = trimmed.split(',').map((n) => n.trim());
  for (const n of names) {
    if (!Object.hasOwn(globalGrantNames, n)) throw new UsageError(`unknown permission "${n}"${didYouMean(n, Object.keys(globalGrantNames))}`, command);
  }
  return names;
}

async function newPassword(args: ParsedArgs, io: CliIo, command: string): Promise<string | undefined> {
  const given = stringFlag(args, 'new-password');
  const fromStdin = args.flags['new-password-stdin'] === true;
  if (given !== undefined && fromStdin) throw new UsageError('give --new-password or --new-password-stdin, not both', command);
  return fromStdin ? (await io.readStdin(PASSWORD_STDIN_BYTES_MAX)).replace(/\r?\n$/, '') : given;
}

function userRows(users: readonly UserJson[]): string {
  return formatTable(
    ['id', 'username', 'status', 'permissions', 'created'],
    users.map((u) => [u.id, u.username, u.status, u.root ? 'root (all)' : u.permissions.global.join(',') || 'none', u.createdAt]),
  );
}

export async function onlineUserCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { sub, command, args } = subcommand('user', argv, userSubcommands);
  const client = adminClientFor(args, io, command);
  const json = args.flags.json === true;
  switch (sub) {
    case 'list': {
      positionals(args, 0, command, 'no arguments');
      const { users } = await client.call<{ users: UserJson[] }>('GET', 'users');
      return out(io, json, users, () => userRows(users));
    }
    case 'create': {
      const [name] = positionals(args, 1, command, 'one user name');
      const password = await newPassword(args, io, command);
      const grant = stringFlag(args, 'grant');
      const body = { username: name, ...(password !== undefined ? { password } : {}), ...(grant !== undefined ? { permissions: { global: grantList(grant, command) } } : {}) };
      const created = await client.call<{ user: UserJson; password?: string }>('POST', 'users', body);
      return out(io, json, created, () => userRows([created.user]) + (created.password !== undefined ? `quartet: generated password for user '${created.user.username}': ${created.password} (shown once)\n` : ''));
    }
    case 'delete': {
      const [name] = positionals(args, 1, command, 'one user name');
      const deleted = await client.call<{ deleted: UserJson }>('DELETE', `users/${apiPath(name!)}`);
      return out(io, json, deleted, () => formatTable(['user', 'status'], [[name, 'deleted']]));
    }
    case 'permissions': {
      const [name, list] = positionals(args, 2, command, 'a user name and a list of global permissions (or all, or none)');
      const updated = await client.call<{ user: UserJson }>('PUT', `users/${apiPath(name!)}/permissions`, { global: grantList(list!, command) });
      return out(io, json, updated, () => userRows([updated.user]));
    }
    case 'password':
      return userPassword(client, args, io, json, command);
    default: {
      const [name] = positionals(args, 1, command, 'one user name');
      const updated = await client.call<{ user: UserJson }>('PATCH', `users/${apiPath(name!)}`, { status: sub === 'activate' ? 'active' : 'inactive' });
      return out(io, json, updated, () => userRows([updated.user]));
    }
  }
}

async function userPassword(client: AdminClient, args: ParsedArgs, io: CliIo, json: boolean, command: string): Promise<number> {
  const [name] = positionals(args, 1, command, 'one user name');
  const password = await newPassword(args, io, command);
  if (password === undefined) throw new UsageError('give the new password with --new-password or --new-password-stdin', command);
  const own = name === client.username;
  const current = stringFlag(args, 'current-password') ?? (own ? (stringFlag(args, 'password') ?? io.env.QUARTET_PASSWORD) : undefined);
  const result = await client.call('PUT', `users/${apiPath(name!)}/password`, { password, ...(current !== undefined ? { currentPassword: current } : {}) });
  return out(io, json, result, () => formatTable(['user', 'status'], [[name, 'password changed']]));
}

/** `30d`, `12h`, `15m`, `90s` as ms. */
export function durationMs(text: string, command: string): number {
  const m = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  const ms = m ? Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'] : NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new UsageError(`--expires-in takes a duration such as 90s, 15m, 12h or 30d, not "${text}"`, command);
  return ms;
}

interface TokenJson {
  user: string;
  name: string;
  createdAt: string;
  expiresAt: string | null;
}

export async function tokenCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { sub, command, args } = subcommand('token', argv, tokenSubcommands);
  const client = adminClientFor(args, io, command);
  const json = args.flags.json === true;
  const owner = stringFlag(args, 'for');
  const base = owner === undefined ? 'tokens' : `users/${apiPath(owner)}/tokens`;
  switch (sub) {
    case 'list': {
      positionals(args, 0, command, 'no arguments');
      const { tokens } = await client.call<{ tokens: TokenJson[] }>('GET', base);
      return out(io, json, tokens, () => formatTable(['user', 'name', 'created', 'expires'], tokens.map((t) => [t.user, t.name, t.createdAt, t.expiresAt ?? 'never'])));
    }
    case 'create': {
      const [name] = positionals(args, 1, command, 'one token name');
      const expires = stringFlag(args, 'expires-in');
      const created = await client.call<{ token: TokenJson; secret: string }>('POST', base, { name, ...(expires !== undefined ? { expiresInMs: durationMs(expires, command) } : {}) });
      if (!json) io.stderr('quartet: the token is shown once; keep it now\n');
      return out(io, json, created, () => formatTable(['user', 'name', 'expires', 'token'], [[created.token.user, created.token.name, created.token.expiresAt ?? 'never', created.secret]]));
    }
    default: {
      const [name] = positionals(args, 1, command, 'one token name');
      const deleted = await client.call('DELETE', `${base}/${apiPath(name!)}`);
      return out(io, json, deleted, () => formatTable(['token', 'status'], [[name, 'deleted']]));
    }
  }
}

export async function aclCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { command, args } = subcommand('acl', argv, aclSubcommands);
  positionals(args, 0, command, 'no arguments');
  const client = adminClientFor(args, io, command);
  const { acls } = await client.call<{ acls: Array<{ user: string; resource: string; name: string; rights: string[] }> }>('GET', 'acls');
  return out(io, args.flags.json === true, acls, () => formatTable(['user', 'resource', 'name', 'rights'], acls.map((a) => [a.user, a.resource, a.name, a.rights.join(',')])));
}
