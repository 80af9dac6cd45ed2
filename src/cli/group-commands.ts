// quartet group list|describe|reset-offsets|delete: the consumer groups of a running broker
// (Kafka, Cursus and Iggy), over its admin API. A group is found by name; --protocol (and, for an
// Iggy group, --topic) pick one when several protocols have a group of that name.

import type { OffsetRow } from '../server/admin/groups.js';
import { AdminCallError, adminClientFor, apiPath, connectionFlags, type AdminClient } from './admin-client.js';
import { integerFlag, parseArgs, stringFlag, UsageError, type FlagSpec, type ParsedArgs } from './args.js';
import type { CliIo } from './io.js';
import { didYouMean } from './suggest.js';
import { formatPairs, formatTable } from './table.js';
import { topicRef } from './topic-commands.js';

const pick: Record<string, FlagSpec> = { protocol: {}, topic: {} };

export const groupSubcommands: Record<string, Record<string, FlagSpec>> = {
  list: { ...connectionFlags },
  describe: { ...connectionFlags, ...pick },
  'reset-offsets': {
    ...connectionFlags,
    ...pick,
    partitions: {},
    'to-earliest': { boolean: true },
    'to-latest': { boolean: true },
    'to-offset': {},
    'to-timestamp': {},
    'to-datetime': {},
    'dry-run': { boolean: true },
    execute: { boolean: true },
  },
  delete: { ...connectionFlags, ...pick },
};

export const groupUsage = `Usage: quartet group list
       quartet group describe GROUP [--protocol kafka|cursus|iggy] [--topic TOPIC]
       quartet group reset-offsets GROUP (--to-earliest | --to-latest | --to-offset N |
                                          --to-timestamp MS | --to-datetime ISO-8601)
                                         [--topic TOPIC] [--partitions 0,1,...] [--dry-run | --execute]
       quartet group delete GROUP [--protocol kafka|cursus|iggy] [--topic TOPIC]

Kafka, Cursus and Iggy groups, with members, committed offsets and lag. reset-offsets shows what
it would do unless --execute is given, and is refused while the group has members (stop its
consumers first). Without --topic it resets every topic the group has offsets for. An Iggy group
belongs to one topic: name it with --topic when several have a group of that name.
Takes --json and the connection options of quartet topic (--broker, --user, --password, --token).
`;

interface ListedGroup {
  protocol: string;
  group: string;
  iggy?: { namespace: string; topic: string; id: number };
  state: string;
  members: number;
  topics: string[];
  lag: number;
}

export async function groupCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError(`group needs a subcommand: ${Object.keys(groupSubcommands).join(', ')}`, 'group');
  const spec = groupSubcommands[sub];
  if (spec === undefined) throw new UsageError(`unknown group subcommand "${sub}"${didYouMean(sub, Object.keys(groupSubcommands))}`, 'group');
  const command = `group ${sub}`;
  const args = parseArgs(rest, spec, command);
  const client = adminClientFor(args, io, command);
  const json = args.flags.json === true;
  if (sub === 'list') {
    if (args.positionals.length > 0) throw new UsageError('group list takes no arguments', command);
    return groupList(client, io, json);
  }
  if (args.positionals.length !== 1) throw new UsageError(`${command} takes one group`, command);
  if (sub === 'reset-offsets') return groupReset(client, args, io, json);
  const path = await groupPath(client, args, command);
  if (sub === 'describe') return groupDescribe(client, path, io, json);
  const result = await client.call('DELETE', path);
  if (json) io.stdout(JSON.stringify(result) + '\n');
  else io.stdout(formatTable(['group', 'status'], [[args.positionals[0]!, 'deleted']]));
  return 0;
}

function label(g: ListedGroup): string {
  return g.iggy ? `${g.protocol} (${g.iggy.namespace}/${g.iggy.topic})` : g.protocol;
}

/** The API path of the group the arguments name. */
async function groupPath(client: AdminClient, args: ParsedArgs, command: string): Promise<string> {
  const name = args.positionals[0]!;
  const protocol = stringFlag(args, 'protocol');
  if (protocol !== undefined && !['kafka', 'cursus', 'iggy'].includes(protocol)) throw new UsageError(`--protocol takes kafka, cursus or iggy, not "${protocol}"${didYouMean(protocol, ['kafka', 'cursus', 'iggy'])}`, command);
  const topicArg = stringFlag(args, 'topic');
  const [namespace, topic] = topicArg === undefined ? [undefined, undefined] : topicRef(topicArg, { flags: {}, positionals: [] });
  const { groups } = await client.call<{ groups: ListedGroup[] }>('GET', 'groups');
  const matches = groups.filter(
    (g) => g.group === name && (protocol === undefined || g.protocol === protocol) && (g.iggy === undefined || topic === undefined || (g.iggy.namespace === namespace && g.iggy.topic === topic)),
  );
  if (matches.length === 0) {
    const hint = didYouMean(name, new Set(groups.map((g) => g.group)));
    throw new AdminCallError(404, 'unknown_group', `no group "${name}"${protocol ? ` (${protocol})` : ''}${hint}`);
  }
  if (matches.length > 1) throw new UsageError(`several groups are named "${name}": ${matches.map(label).join(', ')}; pick one with --protocol (and --topic)`, command);
  const g = matches[0]!;
  return g.iggy ? `groups/iggy/${apiPath(g.iggy.namespace, g.iggy.topic, g.group)}` : `groups/${g.protocol}/${apiPath(g.group)}`;
}

async function groupList(client: AdminClient, io: CliIo, json: boolean): Promise<number> {
  const { groups } = await client.call<{ groups: ListedGroup[] }>('GET', 'groups');
  if (json) io.stdout(JSON.stringify(groups) + '\n');
  else io.stdout(formatTable(['protocol', 'group', 'state', 'members', 'lag', 'topics'], groups.map((g) => [g.protocol, g.group, g.state, g.members, g.lag, g.topics.join(',')])));
  return 0;
}

async function groupDescribe(client: AdminClient, path: string, io: CliIo, json: boolean): Promise<number> {
  const g = await client.call<ListedGroup & { members: Array<{ memberId: string; clientId: string | null; clientHost: string | null; partitions: number[] | null }>; offsets: OffsetRow[] }>('GET', path);
  if (json) {
    io.stdout(JSON.stringify(g) + '\n');
    return 0;
  }
  io.stdout(formatPairs([['group', g.group], ['protocol', label(g)], ['state', g.state], ['members', g.members.length], ['total lag', g.lag]]));
  if (g.members.length > 0) {
    io.stdout('\nMEMBERS\n');
    io.stdout(formatTable(['member-id', 'client-id', 'host', 'partitions'], g.members.map((m) => [m.memberId, m.clientId, m.clientHost, m.partitions?.join(',')])));
  }
  io.stdout('\nOFFSETS\n');
  io.stdout(formatTable(['topic', 'partition', 'committed', 'end-offset', 'lag'], g.offsets.map((o) => [o.namespace === 'default' ? o.topic : `${o.namespace}/${o.topic}`, o.partition, o.committed, o.endOffset, o.lag])));
  return 0;
}

function resetBody(args: ParsedArgs, command: string): Record<string, unknown> {
  const targets: Array<Record<string, unknown>> = [];
  if (args.flags['to-earliest'] === true) targets.push({ to: 'earliest' });
  if (args.flags['to-latest'] === true) targets.push({ to: 'latest' });
  const offset = integerFlag(args, 'to-offset', command);
  if (offset !== undefined) targets.push({ to: 'offset', offset });
  const timestamp = integerFlag(args, 'to-timestamp', command);
  if (timestamp !== undefined) targets.push({ to: 'timestamp', timestamp });
  const datetime = stringFlag(args, 'to-datetime');
  if (datetime !== undefined) {
    const ms = Date.parse(datetime);
    if (Number.isNaN(ms)) throw new UsageError(`--to-datetime takes an ISO-8601 date and time (2026-01-31T12:00:00Z), not "${datetime}"`, command);
    targets.push({ to: 'timestamp', timestamp: ms });
  }
  if (targets.length !== 1) throw new UsageError('give exactly one of --to-earliest, --to-latest, --to-offset, --to-timestamp, --to-datetime', command);
  if (args.flags['dry-run'] === true && args.flags.execute === true) throw new UsageError('give --dry-run or --execute, not both', command);
  const partitions = stringFlag(args, 'partitions');
  const list = partitions === undefined ? undefined : partitions.split(',').map((p) => p.trim());
  if (list?.some((p) => !/^\d+$/.test(p))) throw new UsageError(`--partitions takes a comma-separated list of partition numbers, not "${partitions}"`, command);
  const topicArg = stringFlag(args, 'topic');
  const [namespace, topic] = topicArg === undefined ? [undefined, undefined] : topicRef(topicArg, { flags: {}, positionals: [] });
  return { ...targets[0], dryRun: args.flags.execute !== true, ...(topic !== undefined ? { namespace, topic } : {}), ...(list ? { partitions: list.map(Number) } : {}) };
}

async function groupReset(client: AdminClient, args: ParsedArgs, io: CliIo, json: boolean): Promise<number> {
  const command = 'group reset-offsets';
  const body = resetBody(args, command);
  const path = await groupPath(client, args, command);
  const result = await client.call<{ dryRun: boolean; offsets: Array<{ namespace: string; topic: string; partition: number; previous: number | null; offset: number }> }>('POST', `${path}/reset-offsets`, body);
  if (json) io.stdout(JSON.stringify(result) + '\n');
  else {
    io.stdout(formatTable(['topic', 'partition', 'current', 'new'], result.offsets.map((o) => [o.namespace === 'default' ? o.topic : `${o.namespace}/${o.topic}`, o.partition, o.previous, o.offset])));
    if (result.dryRun) io.stderr('quartet: dry run, nothing changed; add --execute to reset these offsets\n');
  }
  return 0;
}
