// quartet topic list|create|describe|alter-config|delete|purge: topics of a running broker, over
// its admin API. A topic is `NAME` (namespace `default`: every Kafka and Cursus topic) or
// `NAMESPACE/NAME` (an Iggy stream's topic), or NAME with --namespace.

import { adminClientFor, apiPath, connectionFlags, type AdminClient } from './admin-client.js';
import { integerFlag, listFlag, parseArgs, stringFlag, UsageError, type FlagSpec, type ParsedArgs } from './args.js';
import type { CliIo } from './io.js';
import { didYouMean } from './suggest.js';
import { formatBytes, formatPairs, formatTable } from './table.js';

export const topicSubcommands: Record<string, Record<string, FlagSpec>> = {
  list: { ...connectionFlags },
  create: { ...connectionFlags, namespace: {}, partitions: { short: 'p' }, config: { short: 'c', multiple: true } },
  describe: { ...connectionFlags, namespace: {} },
  'alter-config': { ...connectionFlags, namespace: {}, set: { multiple: true }, delete: { multiple: true } },
  delete: { ...connectionFlags, namespace: {} },
  purge: { ...connectionFlags, namespace: {} },
};

export const topicUsage = `Usage: quartet topic list
       quartet topic create TOPIC [-p PARTITIONS] [-c KEY=VALUE ...]
       quartet topic describe TOPIC
       quartet topic alter-config TOPIC [--set KEY=VALUE ...] [--delete KEY ...]
       quartet topic delete TOPIC ...
       quartet topic purge TOPIC

TOPIC is NAME (namespace "default": Kafka and Cursus topics) or NAMESPACE/NAME (an Iggy
stream's topic), or NAME with --namespace NS. Every command takes --json and the connection
options: --broker URL (QUARTET_BROKER, default http://127.0.0.1:9080), --user and --password
(QUARTET_USER, QUARTET_PASSWORD) or --token (QUARTET_TOKEN).
`;

interface TopicSummary {
  namespace: string;
  name: string;
  partitions: number;
  messages: number;
  sizeBytes: number;
  names: { kafka: string | null; iggy: { stream: string; topic: string; streamId: number; topicId: number }; cursus: string | null; felix: { tenant: string; namespace: string; stream: string } | null };
}

interface TopicDescription extends TopicSummary {
  ids: { namespaceId: number; topicId: number; internalId: number; uuid: string };
  partitionDetails: Array<{ partition: number; startOffset: number; endOffset: number; messages: number; sizeBytes: number; segments: number }>;
  config: Array<{ key: string; value: string | number; source: string }>;
}

export async function topicCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError(`topic needs a subcommand: ${Object.keys(topicSubcommands).join(', ')}`, 'topic');
  const spec = topicSubcommands[sub];
  if (spec === undefined) throw new UsageError(`unknown topic subcommand "${sub}"${didYouMean(sub, Object.keys(topicSubcommands))}`, 'topic');
  const command = `topic ${sub}`;
  const args = parseArgs(rest, spec, command);
  const client = adminClientFor(args, io, command);
  const json = args.flags.json === true;
  switch (sub) {
    case 'list':
      return topicList(client, args, io, json);
    case 'create':
      return topicCreate(client, args, io, json);
    case 'describe':
      return topicDescribe(client, args, io, json);
    case 'alter-config':
      return topicAlterConfig(client, args, io, json);
    case 'delete':
      return topicDelete(client, args, io, json);
    default:
      return topicPurge(client, args, io, json);
  }
}

/** [namespace, name] of a TOPIC argument. */
export function topicRef(arg: string, args: ParsedArgs): [string, string] {
  const namespace = stringFlag(args, 'namespace');
  if (namespace !== undefined) return [namespace, arg];
  const slash = arg.indexOf('/');
  return slash > 0 ? [arg.slice(0, slash), arg.slice(slash + 1)] : ['default', arg];
}

function oneTopic(args: ParsedArgs, command: string): [string, string] {
  if (args.positionals.length !== 1) throw new UsageError(`${command} takes one topic`, command);
  return topicRef(args.positionals[0]!, args);
}

function display(namespace: string, name: string): string {
  return namespace === 'default' ? name : `${namespace}/${name}`;
}

function printJson(io: CliIo, value: unknown): void {
  io.stdout(JSON.stringify(value) + '\n');
}

/** KEY=VALUE pairs; a value that is an integer is sent as a number. */
function configPairs(list: readonly string[], flag: string, command: string): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const item of list) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`--${flag} takes KEY=VALUE, not "${item}"`, command);
    const value = item.slice(eq + 1);
    out[item.slice(0, eq)] = /^-?\d+$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : value;
  }
  return out;
}

async function topicList(client: AdminClient, args: ParsedArgs, io: CliIo, json: boolean): Promise<number> {
  if (args.positionals.length > 0) throw new UsageError('topic list takes no arguments', 'topic list');
  const { topics } = await client.call<{ topics: TopicSummary[] }>('GET', 'topics');
  if (json) printJson(io, topics);
  else {
    const rows = topics.map((t) => [t.namespace, t.name, t.partitions, t.messages, formatBytes(t.sizeBytes), t.names.kafka, `${t.names.iggy.stream}/${t.names.iggy.topic}`, t.names.cursus]);
    io.stdout(formatTable(['namespace', 'name', 'partitions', 'messages', 'size', 'kafka', 'iggy', 'cursus'], rows));
  }
  return 0;
}

async function topicCreate(client: AdminClient, args: ParsedArgs, io: CliIo, json: boolean): Promise<number> {
  const [namespace, name] = oneTopic(args, 'topic create');
  const partitions = integerFlag(args, 'partitions', 'topic create');
  const config = configPairs(listFlag(args, 'config'), 'config', 'topic create');
  const created = await client.call<TopicDescription>('POST', 'topics', { namespace, name, ...(partitions !== undefined ? { partitions } : {}), ...(Object.keys(config).length > 0 ? { config } : {}) });
  if (json) printJson(io, created);
  else io.stdout(formatTable(['topic', 'partitions', 'status'], [[display(created.namespace, created.name), created.partitions, 'created']]));
  return 0;
}

async function topicDescribe(client: AdminClient, args: ParsedArgs, io: CliIo, json: boolean): Promise<number> {
  const [namespace, name] = oneTopic(args, 'topic describe');
  const t = await client.call<TopicDescription>('GET', `topics/${apiPath(namespace, name)}`);
  if (json) {
    printJson(io, t);
    return 0;
  }
  io.stdout('SUMMARY\n');
  io.stdout(
    formatPairs([
      ['namespace', t.namespace],
      ['name', t.name],
      ['partitions', t.partitions],
      ['messages', t.messages],
      ['size', formatBytes(t.sizeBytes)],
      ['kafka name', t.names.kafka],
      ['iggy stream/topic', `${t.names.iggy.stream}/${t.names.iggy.topic} (ids ${t.names.iggy.streamId}/${t.names.iggy.topicId})`],
      ['cursus name', t.names.cursus],
      ['felix tenant/namespace/stream', t.names.felix === null ? '-' : `${t.names.felix.tenant}/${t.names.felix.namespace}/${t.names.felix.stream}`],
    ]),
  );
  io.stdout('\nPARTITIONS\n');
  io.stdout(formatTable(['partition', 'start-offset', 'end-offset', 'messages', 'size', 'segments'], t.partitionDetails.map((p) => [p.partition, p.startOffset, p.endOffset, p.messages, formatBytes(p.sizeBytes), p.segments])));
  io.stdout('\nCONFIG\n');
  io.stdout(formatTable(['key', 'value', 'source'], t.config.map((c) => [c.key, String(c.value), c.source])));
  return 0;
}

async function topicAlterConfig(client: AdminClient, args: ParsedArgs, io: CliIo, json: boolean): Promise<number> {
  const [namespace, name] = oneTopic(args, 'topic alter-config');
  const set = configPairs(listFlag(args, 'set'), 'set', 'topic alter-config');
  const remove = listFlag(args, 'delete');
  if (Object.keys(set).length === 0 && remove.length === 0) throw new UsageError('topic alter-config needs --set KEY=VALUE or --delete KEY', 'topic alter-config');
  const result = await client.call<{ config: Array<{ key: string; value: string | number; source: string }> }>('PATCH', `topics/${apiPath(namespace, name)}/config`, { set, delete: remove });
  if (json) printJson(io, result);
  else {
    const changed = new Set([...Object.keys(set), ...remove]);
    io.stdout(formatTable(['key', 'value', 'source'], result.config.filter((c) => changed.has(c.key)).map((c) => [c.key, String(c.value), c.source])));
  }
  return 0;
}

async function topicDelete(client: AdminClient, args: ParsedArgs, io: CliIo, json: boolean): Promise<number> {
  if (args.positionals.length === 0) throw new UsageError('topic delete takes at least one topic', 'topic delete');
  const rows: Array<[string, string]> = [];
  const results: unknown[] = [];
  let failed = false;
  for (const arg of args.positionals) {
    const [namespace, name] = topicRef(arg, args);
    try {
      results.push(await client.call('DELETE', `topics/${apiPath(namespace, name)}`));
      rows.push([display(namespace, name), 'deleted']);
    } catch (err) {
      failed = true;
      const message = (err as Error).message;
      results.push({ error: { topic: display(namespace, name), message } });
      rows.push([display(namespace, name), `failed: ${message}`]);
    }
  }
  if (json) printJson(io, results);
  else io.stdout(formatTable(['topic', 'status'], rows));
  return failed ? 1 : 0;
}

async function topicPurge(client: AdminClient, args: ParsedArgs, io: CliIo, json: boolean): Promise<number> {
  const [namespace, name] = oneTopic(args, 'topic purge');
  const result = await client.call('POST', `topics/${apiPath(namespace, name)}/purge`);
  if (json) printJson(io, result);
  else io.stdout(formatTable(['topic', 'status'], [[display(namespace, name), 'purged']]));
  return 0;
}
