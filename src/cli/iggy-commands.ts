// quartet iggy <subcommand>: a client for a running broker's Iggy listener, over the Iggy SDK
// (src/clients/iggy/). Streams and topics (create, list, delete), send (arguments or stdin lines,
// batched through IggyProducer) and poll (one message per line, or JSON).
//
// Failures are one line on stderr and exit 1: connection refused, a refused login (the SDK's
// IggyEvictedError), a server refusal (IggyError), a timeout. Usage errors throw UsageError
// (main prints the usage and exits 2).

import { readFileSync } from 'node:fs';
import {
  IggyClient,
  IggyConnectionError,
  IggyConsumer,
  IggyError,
  IggyEvictedError,
  IggyProducer,
  IggyTimeoutError,
  isIggyClientError,
  type HeaderValue,
  type Id,
  type IggyCredentials,
  type IggyMessage,
  type PollStrategyInput,
  type ProducerSendOptions,
  type SendMessage,
  type TopicOptions,
} from '../clients/iggy/index.js';
import { iggyKeyHeader } from '../protocols/iggy/codec/iggy-format.js';
import { integerFlag, parseArgs, stringFlag, UsageError, type FlagSpec, type ParsedArgs } from './args.js';
import type { CliIo } from './io.js';
import { didYouMean } from './suggest.js';

export const iggyUsage = `Usage: quartet iggy <subcommand> [connection options]

Subcommands:
  ping                                  check the connection (and the login, when credentials are set)
  stream create NAME                    create a stream; prints its id
  stream list [--json]                  id, name, topics, messages, bytes, created
  stream delete NAME|ID
  topic create STREAM NAME [--partitions N] [--message-expiry DURATION|never]
  topic list STREAM [--json]            id, name, partitions, messages, bytes, expiry, created
  topic delete STREAM TOPIC
  send STREAM TOPIC [MESSAGE...] [--partition N] [--key K] [--headers K=V,...] [--no-progress]
                                        send the arguments, or stdin one message per line;
                                        --key K partitions by K (unless --partition) and sets
                                        the 'key' header, the Kafka record key
  poll STREAM TOPIC [--partition N] [--from first|last|OFFSET|timestamp:ISO] [--count N]
       [--follow] [--consumer-group G] [--json]
                                        print messages, one per line (payload as UTF-8, or JSON)

Connection options (every subcommand):
  --addr HOST:PORT      the broker's Iggy listener (default QUARTET_IGGY_ADDR, else 127.0.0.1:8090)
  --username NAME       (default QUARTET_ROOT_USERNAME, else root)
  --password PW         (default QUARTET_ROOT_PASSWORD)
  --token TOKEN         a personal access token instead (default QUARTET_IGGY_TOKEN)
  --tls [--tls-ca FILE] connect with TLS, trusting FILE's certificates in addition to the system's
  --json                print the result as JSON

STREAM and TOPIC are names, or numeric ids when all digits. Exit codes: 0 success, 1 the command
failed (connection refused, bad credentials, refused by the server), 2 usage. See docs/cli.md.
`;

const connectionFlags: Record<string, FlagSpec> = {
  addr: {},
  username: {},
  password: {},
  token: {},
  tls: { boolean: true },
  'tls-ca': {},
  // Every subcommand prints JSON instead of text with --json.
  json: { boolean: true },
};

/** Progress on stderr: every this many messages, or every progressIntervalMs. */
const PROGRESS_EVERY_MESSAGES = 10_000;
const PROGRESS_INTERVAL_MS = 1_000;
/** Lines per producer.send() and sends awaiting acknowledgement at once (bounds memory). */
const SEND_CHUNK_MESSAGES = 1_000;
const SENDS_IN_FLIGHT_MAX = 16;
/** How long a line read from stdin may wait for more to fill its batch before it is sent anyway. */
const SEND_LINGER_MS = 100;
/** stdin read whole when the CliIo has no stream (tests). */
const STDIN_BYTES_MAX = 256 * 1024 * 1024;
const POLL_BATCH_MAX = 1_000;
const FOLLOW_INTERVAL_MS = 100;

export async function iggyCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'ping':
      return run(parse(rest, {}, 'iggy ping'), io, 'iggy ping', ping);
    case 'stream':
      return streamCommand(rest, io);
    case 'topic':
      return topicCommand(rest, io);
    case 'send':
      return run(parse(rest, { partition: {}, key: {}, headers: {}, progress: { boolean: true } }, 'iggy send'), io, 'iggy send', send);
    case 'poll':
      return run(
        parse(rest, { partition: {}, from: {}, count: {}, follow: { boolean: true }, 'consumer-group': {}, json: { boolean: true } }, 'iggy poll'),
        io,
        'iggy poll',
        poll,
      );
    case undefined:
      throw new UsageError('iggy needs a subcommand: ping, stream, topic, send or poll', 'iggy');
    default:
      throw new UsageError(`unknown iggy subcommand "${sub}"${didYouMean(sub, ['ping', 'stream', 'topic', 'send', 'poll'])}`, 'iggy');
  }
}

function streamCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [action, ...rest] = argv;
  switch (action) {
    case 'create':
      return run(parse(rest, { id: {} }, 'iggy stream create'), io, 'iggy stream create', streamCreate);
    case 'list':
      return run(parse(rest, { json: { boolean: true } }, 'iggy stream list'), io, 'iggy stream list', streamList);
    case 'delete':
      return run(parse(rest, {}, 'iggy stream delete'), io, 'iggy stream delete', streamDelete);
    case undefined:
      throw new UsageError('iggy stream needs create, list or delete', 'iggy stream');
    default:
      throw new UsageError(`unknown iggy stream subcommand "${action}"${didYouMean(action, ['create', 'list', 'delete'])}`, 'iggy stream');
  }
}

function topicCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [action, ...rest] = argv;
  switch (action) {
    case 'create':
      return run(parse(rest, { partitions: {}, id: {}, 'message-expiry': {} }, 'iggy topic create'), io, 'iggy topic create', topicCreate);
    case 'list':
      return run(parse(rest, { json: { boolean: true } }, 'iggy topic list'), io, 'iggy topic list', topicList);
    case 'delete':
      return run(parse(rest, {}, 'iggy topic delete'), io, 'iggy topic delete', topicDelete);
    case undefined:
      throw new UsageError('iggy topic needs create, list or delete', 'iggy topic');
    default:
      throw new UsageError(`unknown iggy topic subcommand "${action}"${didYouMean(action, ['create', 'list', 'delete'])}`, 'iggy topic');
  }
}

function parse(argv: readonly string[], spec: Record<string, FlagSpec>, command: string): ParsedArgs {
  return parseArgs(argv, { ...connectionFlags, ...spec }, command);
}

// ---------------------------------------------------------------------------------------------
// Connection

interface Connection {
  client: IggyClient;
  addr: string;
  /** Who logs in, for error messages ('user "root"', 'a token'), or null without credentials. */
  who: string | null;
}

type Action = (ctx: Context) => Promise<void>;

interface Context {
  args: ParsedArgs;
  io: CliIo;
  command: string;
  /** Connects (and logs in); `needsLogin` false lets ping run without credentials. */
  connect(needsLogin?: boolean): Promise<Connection>;
}

function connectionSettings(args: ParsedArgs, io: CliIo, command: string): { addr: string; credentials: IggyCredentials | null; who: string | null; tls: IggyClientTls } {
  const addr = stringFlag(args, 'addr') ?? nonEmpty(io.env.QUARTET_IGGY_ADDR) ?? '127.0.0.1:8090';
  if (!/^(\[[^\]]+\]|[^:\s]+):\d{1,5}$/.test(addr) || Number(addr.slice(addr.lastIndexOf(':') + 1)) > 65535) {
    throw new UsageError(`--addr takes HOST:PORT, not "${addr}"`, command);
  }
  const token = stringFlag(args, 'token');
  const username = stringFlag(args, 'username');
  const password = stringFlag(args, 'password');
  if (token !== undefined && (username !== undefined || password !== undefined)) {
    throw new UsageError('give --token or --username/--password, not both', command);
  }
  let credentials: IggyCredentials | null = null;
  let who: string | null = null;
  const user = username ?? nonEmpty(io.env.QUARTET_ROOT_USERNAME) ?? 'root';
  if (token !== undefined) {
    credentials = { token };
  } else if (password !== undefined) {
    credentials = { username: user, password };
  } else if (username === undefined && nonEmpty(io.env.QUARTET_IGGY_TOKEN) !== undefined) {
    credentials = { token: io.env.QUARTET_IGGY_TOKEN! };
  } else if (nonEmpty(io.env.QUARTET_ROOT_PASSWORD) !== undefined) {
    credentials = { username: user, password: io.env.QUARTET_ROOT_PASSWORD! };
  }
  if (credentials !== null) who = 'token' in credentials ? 'a token' : `user "${credentials.username}"`;
  const caFile = stringFlag(args, 'tls-ca');
  const useTls = args.flags.tls === true || caFile !== undefined;
  let tls: IggyClientTls = false;
  if (useTls) {
    if (caFile === undefined) tls = true;
    else {
      let ca: Buffer;
      try {
        ca = readFileSync(caFile);
      } catch (err) {
        throw new UsageError(`--tls-ca: cannot read ${caFile}: ${(err as Error).message}`, command);
      }
      tls = { ca };
    }
  }
  return { addr, credentials, who, tls };
}

type IggyClientTls = boolean | { ca: Buffer };

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** Parses the connection settings, runs `action` with a lazily connected client, maps SDK errors to exit 1. */
async function run(args: ParsedArgs, io: CliIo, command: string, action: Action): Promise<number> {
  const settings = connectionSettings(args, io, command);
  let conn: Connection | null = null;
  const ctx: Context = {
    args,
    io,
    command,
    connect: async (needsLogin = true) => {
      if (conn !== null) return conn;
      if (needsLogin && settings.credentials === null) {
        throw new UsageError('no credentials: pass --password (or set QUARTET_ROOT_PASSWORD), or --token (QUARTET_IGGY_TOKEN)', command);
      }
      const client = new IggyClient({
        addr: settings.addr,
        tls: settings.tls,
        ...(settings.credentials !== null ? { credentials: settings.credentials } : {}),
        pingIntervalMs: 0,
        // A command is short-lived: fail fast when nothing listens, ride out a brief drop.
        reconnect: { attemptsMax: 3, backoffMinMs: 100, backoffMaxMs: 1_000 },
      });
      conn = { client, addr: settings.addr, who: settings.who };
      try {
        await client.connect();
      } catch (err) {
        throw new ConnectFailure(err);
      }
      return conn;
    },
  };
  try {
    await action(ctx);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const message = describeFailure(err, settings.addr, settings.who);
    if (message === null) throw err;
    io.stderr(`quartet: ${message}\n`);
    return 1;
  } finally {
    await (conn as Connection | null)?.client.close();
  }
}

/** An error raised while connecting and logging in. */
class ConnectFailure extends Error {
  constructor(readonly error: unknown) {
    super(error instanceof Error ? error.message : String(error));
  }
}

/** One line for an SDK failure, or null for an error that is not the SDK's (a bug: rethrown). */
function describeFailure(err: unknown, addr: string, who: string | null): string | null {
  const connecting = err instanceof ConnectFailure;
  const e = err instanceof ConnectFailure ? err.error : err;
  if (e instanceof CommandFailure) return e.message;
  if (!isIggyClientError(e)) return null;
  if (e instanceof IggyEvictedError) {
    switch (e.code) {
      case 42:
        return `login to ${addr} failed: invalid credentials for ${who ?? 'the user'}`;
      case 53:
        return `login to ${addr} failed: the token is invalid or expired`;
      default:
        return `${connecting ? `login to ${addr} failed` : 'the server ended the session'}: ${e.reasonName} (${e.code})`;
    }
  }
  if (e instanceof IggyConnectionError) {
    const cause = (e.cause as NodeJS.ErrnoException | undefined)?.code;
    if (connecting) {
      const why = cause === 'ECONNREFUSED' ? 'connection refused (is the broker running with its Iggy listener enabled?)' : e.message;
      return `cannot connect to the Iggy server at ${addr}: ${why}`;
    }
    return `lost the connection to ${addr}: ${e.message}`;
  }
  if (e instanceof IggyTimeoutError) return `${addr} did not answer: ${e.message}`;
  if (e instanceof IggyError) return `the server refused: ${e.message}`;
  return e.message;
}

/** A command failure with its own message (a topic with no partitions, ...). */
class CommandFailure extends Error {}

// ---------------------------------------------------------------------------------------------
// Arguments

function positionals(args: ParsedArgs, names: readonly string[], command: string): string[] {
  if (args.positionals.length !== names.length) {
    throw new UsageError(`${command} takes ${names.length === 0 ? 'no arguments' : names.join(' ')}`, command);
  }
  return args.positionals;
}

/** A stream or topic: a numeric id when all digits, else a name. */
function toId(s: string): Id {
  return /^\d+$/.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : s;
}

function rejectIdFlag(args: ParsedArgs, command: string, what: string): void {
  if (args.flags.id !== undefined) {
    throw new UsageError(`--id is not supported: Iggy 0.11's Create${what} carries no id, the server assigns it (and ${command} prints it)`, command);
  }
}

const durationUnitsMicros: Record<string, bigint> = {
  us: 1n,
  ms: 1_000n,
  s: 1_000_000n,
  m: 60_000_000n,
  min: 60_000_000n,
  h: 3_600_000_000n,
  d: 86_400_000_000n,
  w: 604_800_000_000n,
};

/** "never" | "30s" | "1h30m" | "7d" → µs. */
export function parseExpiry(v: string, command: string): bigint | 'never' {
  const s = v.trim().toLowerCase();
  if (s === 'never' || s === 'none' || s === 'unlimited') return 'never';
  const parts = [...s.matchAll(/(\d+)\s*(us|ms|min|s|m|h|d|w)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== s.replace(/\s+/g, '')) {
    throw new UsageError(`--message-expiry takes a duration such as 30s, 15m, 1h30m or 7d, or never; not "${v}"`, command);
  }
  const micros = parts.reduce((sum, p) => sum + BigInt(p[1]!) * durationUnitsMicros[p[2]!]!, 0n);
  if (micros === 0n) throw new UsageError('--message-expiry must be longer than 0 (or never)', command);
  return micros;
}

function parseFrom(v: string | undefined, command: string): PollStrategyInput {
  if (v === undefined || v === 'first') return 'first';
  if (v === 'last') return 'last';
  if (/^\d+$/.test(v)) return { offset: BigInt(v) };
  if (v.startsWith('timestamp:')) {
    const ms = Date.parse(v.slice('timestamp:'.length));
    if (Number.isNaN(ms)) throw new UsageError(`--from timestamp: "${v.slice(10)}" is not an ISO date-time`, command);
    return { timestamp: BigInt(ms) * 1000n };
  }
  throw new UsageError(`--from takes first, last, an offset or timestamp:ISO, not "${v}"`, command);
}

function parseHeaders(v: string | undefined, command: string): Record<string, string> | undefined {
  if (v === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const pair of v.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--headers takes KEY=VALUE[,KEY=VALUE...], not "${v}"`, command);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/** The longest key --key takes: a user header value holds at most 255 bytes. */
const SEND_KEY_BYTES_MAX = 255;

/**
 * The headers with --key's value as the user header `key`, placed first: what Kafka and Cursus
 * readers see as the record key (docs/mapping.md). A `key` in --headers as well is refused.
 */
function withKeyHeader(headers: Record<string, string> | undefined, key: string | undefined, command: string): Record<string, string> | undefined {
  if (key === undefined) return headers;
  const bytes = Buffer.byteLength(key);
  if (bytes === 0 || bytes > SEND_KEY_BYTES_MAX) throw new UsageError(`--key takes 1 to ${SEND_KEY_BYTES_MAX} bytes, not ${bytes}`, command);
  if (headers !== undefined && Object.hasOwn(headers, iggyKeyHeader)) throw new UsageError(`give the key with --key or a '${iggyKeyHeader}' header, not both`, command);
  return { [iggyKeyHeader]: key, ...headers };
}

function micros(us: bigint): string {
  return new Date(Number(us / 1000n)).toISOString();
}

const u64Max = (1n << 64n) - 1n;

function formatExpiry(us: bigint): string {
  if (us === 0n || us === u64Max) return 'never';
  for (const [unit, size] of [['d', 86_400_000_000n], ['h', 3_600_000_000n], ['m', 60_000_000n], ['s', 1_000_000n], ['ms', 1_000n]] as const) {
    if (us % size === 0n) return `${us / size}${unit}`;
  }
  return `${us}us`;
}

// ---------------------------------------------------------------------------------------------
// ping, streams, topics

async function ping(ctx: Context): Promise<void> {
  positionals(ctx.args, [], ctx.command);
  const { client, addr } = await ctx.connect(false);
  const started = performance.now();
  await client.ping();
  const ms = performance.now() - started;
  const login = client.loginInfo;
  const server = login !== null ? ` (server ${login.serverVersion}, logged in as user id ${login.userId})` : ' (not logged in)';
  if (ctx.args.flags.json === true) ctx.io.stdout(JSON.stringify({ addr, ms: Number(ms.toFixed(3)), loggedIn: login !== null, ...(login !== null ? { serverVersion: login.serverVersion, userId: login.userId } : {}) }) + '\n');
  else ctx.io.stdout(`pong from ${addr} in ${ms.toFixed(1)} ms${server}\n`);
}

async function streamCreate(ctx: Context): Promise<void> {
  const [name] = positionals(ctx.args, ['NAME'], ctx.command);
  rejectIdFlag(ctx.args, ctx.command, 'Stream');
  const { client } = await ctx.connect();
  const stream = await client.createStream(name!);
  say(ctx, { created: 'stream', id: stream.id, name: stream.name }, `created stream '${stream.name}' (id ${stream.id})`);
}

async function streamList(ctx: Context): Promise<void> {
  positionals(ctx.args, [], ctx.command);
  const { client } = await ctx.connect();
  const streams = [...(await client.getStreams())].sort((a, b) => a.id - b.id);
  let out = '';
  for (const s of streams) {
    const created = micros(s.createdAt);
    if (ctx.args.flags.json === true) {
      out += JSON.stringify({ id: s.id, name: s.name, topics: s.topicsCount, messages: Number(s.messagesCount), sizeBytes: Number(s.sizeBytes), createdAt: created }) + '\n';
    } else {
      out += `${s.id}\t${s.name}\t${s.topicsCount} topic(s)\t${s.messagesCount} message(s)\t${s.sizeBytes} B\t${created}\n`;
    }
  }
  ctx.io.stdout(out);
}

async function streamDelete(ctx: Context): Promise<void> {
  const [stream] = positionals(ctx.args, ['NAME|ID'], ctx.command);
  const { client } = await ctx.connect();
  const found = await client.getStream(toId(stream!));
  if (found === null) throw new CommandFailure(`stream ${quoteId(stream!)} does not exist`);
  await client.deleteStream(found.id);
  say(ctx, { deleted: 'stream', id: found.id, name: found.name }, `deleted stream '${found.name}' (id ${found.id})`);
}

async function topicCreate(ctx: Context): Promise<void> {
  const [stream, name] = positionals(ctx.args, ['STREAM', 'NAME'], ctx.command);
  rejectIdFlag(ctx.args, ctx.command, 'Topic');
  const partitionsCount = integerFlag(ctx.args, 'partitions', ctx.command) ?? 1;
  if (partitionsCount < 1) throw new UsageError('--partitions must be at least 1', ctx.command);
  const expiry = stringFlag(ctx.args, 'message-expiry');
  const options: TopicOptions = expiry === undefined ? {} : { messageExpiryMicros: parseExpiry(expiry, ctx.command) };
  const { client } = await ctx.connect();
  const topic = await client.createTopic({ streamId: toId(stream!), name: name!, partitionsCount, options });
  say(ctx, { created: 'topic', stream: stream!, id: topic.id, name: topic.name, partitions: topic.partitionsCount }, `created topic '${topic.name}' (id ${topic.id}) in stream ${quoteId(stream!)} with ${topic.partitionsCount} partition(s)`);
}

async function topicList(ctx: Context): Promise<void> {
  const [stream] = positionals(ctx.args, ['STREAM'], ctx.command);
  const { client } = await ctx.connect();
  // GetTopics answers an empty list for a missing stream on some servers: say so instead.
  if ((await client.getStream(toId(stream!))) === null) throw new CommandFailure(`stream ${quoteId(stream!)} does not exist`);
  const topics = [...(await client.getTopics(toId(stream!)))].sort((a, b) => a.id - b.id);
  let out = '';
  for (const t of topics) {
    const created = micros(t.createdAt);
    const expiry = formatExpiry(t.messageExpiry);
    if (ctx.args.flags.json === true) {
      out +=
        JSON.stringify({ id: t.id, name: t.name, partitions: t.partitionsCount, messages: Number(t.messagesCount), sizeBytes: Number(t.sizeBytes), messageExpiry: expiry, createdAt: created }) +
        '\n';
    } else {
      out += `${t.id}\t${t.name}\t${t.partitionsCount} partition(s)\t${t.messagesCount} message(s)\t${t.sizeBytes} B\texpiry=${expiry}\t${created}\n`;
    }
  }
  ctx.io.stdout(out);
}

/** The topic's details, or a CommandFailure naming what is missing: the stream, or the topic in it. */
async function requireTopic(client: IggyClient, stream: string, topic: string): Promise<NonNullable<Awaited<ReturnType<IggyClient['getTopic']>>>> {
  const found = await client.getTopic(toId(stream), toId(topic));
  if (found !== null) return found;
  // The server answers a missing stream with nothing before it checks permissions: a refusal (41,
  // a user with topic rights only) means the stream is there.
  const streamFound = await client.getStream(toId(stream)).then(
    (s) => s !== null,
    (err: unknown) => {
      if (err instanceof IggyError && err.codeName === 'unauthorized') return true;
      throw err;
    },
  );
  if (!streamFound) throw new CommandFailure(`stream ${quoteId(stream)} does not exist`);
  throw new CommandFailure(`topic ${quoteId(topic)} does not exist in stream ${quoteId(stream)}`);
}

async function topicDelete(ctx: Context): Promise<void> {
  const [stream, topic] = positionals(ctx.args, ['STREAM', 'TOPIC'], ctx.command);
  const { client } = await ctx.connect();
  const found = await requireTopic(client, stream!, topic!);
  await client.deleteTopic(toId(stream!), found.id);
  say(ctx, { deleted: 'topic', stream: stream!, id: found.id, name: found.name }, `deleted topic '${found.name}' (id ${found.id}) from stream ${quoteId(stream!)}`);
}

function quoteId(s: string): string {
  return /^\d+$/.test(s) ? s : `'${s}'`;
}

// ---------------------------------------------------------------------------------------------
// send

async function send(ctx: Context): Promise<void> {
  const { args, io, command } = ctx;
  if (args.positionals.length < 2) throw new UsageError('iggy send takes STREAM TOPIC [MESSAGE...]', command);
  const [stream, topic, ...messages] = args.positionals as [string, string, ...string[]];
  const partitionId = integerFlag(args, 'partition', command);
  const key = stringFlag(args, 'key');
  const headers = withKeyHeader(parseHeaders(stringFlag(args, 'headers'), command), key, command);
  // The key partitions (as Iggy's messages_key) unless --partition says where the messages go.
  const sendOptions: ProducerSendOptions = partitionId !== undefined ? { partitionId } : key !== undefined ? { key } : {};
  const progress = new Progress(io, args.flags.progress !== false);

  const { client } = await ctx.connect();
  const streamId = toId(stream);
  const topicId = toId(topic);
  // Check the topic first: a missing one is a clear message, not an error per batch.
  await requireTopic(client, stream, topic);
  const producer = new IggyProducer(client, { streamId, topicId, ...(partitionId !== undefined ? { partitioning: { partitionId } } : {}) });

  let sent = 0;
  const inflight = new Set<Promise<void>>();
  let failure: unknown = null;
  let signalFailure!: () => void;
  const failed = new Promise<'failed'>((resolve) => {
    signalFailure = () => resolve('failed');
  });
  const submit = async (chunk: string[]): Promise<void> => {
    const batch: Array<SendMessage | string> = headers === undefined ? chunk : chunk.map((payload) => ({ payload, headers }));
    const p = producer.send(batch, sendOptions).then(
      (receipt) => {
        sent += receipt.count;
        progress.update(sent);
      },
      (err: unknown) => {
        failure ??= err;
        signalFailure();
      },
    );
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
    // Bounded memory: wait for the oldest acknowledgements before reading further.
    while (inflight.size >= SENDS_IN_FLIGHT_MAX && failure === null) await Promise.race(inflight);
  };

  try {
    if (messages.length > 0) {
      for (let i = 0; i < messages.length && failure === null; i += SEND_CHUNK_MESSAGES) await submit(messages.slice(i, i + SEND_CHUNK_MESSAGES));
    } else {
      // Lines are sent in batches of SEND_CHUNK_MESSAGES, and what has come in is sent as soon as
      // its first line came in SEND_LINGER_MS ago: a slow or trickling source (`tail -f | quartet
      // iggy send`) is delivered as it goes, not when a batch fills or the input ends.
      let chunk: string[] = [];
      /** When the first line of `chunk` came in (performance.now()). */
      let chunkSince = 0;
      const source = io.stdinStream?.();
      const reads = stdinLineGroups(io, source)[Symbol.asyncIterator]();
      let next = reads.next();
      for (;;) {
        // A failed send ends the loop even while stdin is quiet.
        const lingerLeft = chunkSince + SEND_LINGER_MS - performance.now();
        const read = await Promise.race([chunk.length === 0 ? next : raceLinger(next, lingerLeft), failed]);
        if (read === 'failed') break;
        if (read !== 'linger-over') {
          if (read.done === true) break;
          next = reads.next();
          for (const line of read.value) {
            if (line === '') continue;
            if (chunk.length === 0) chunkSince = performance.now();
            chunk.push(line);
            if (chunk.length >= SEND_CHUNK_MESSAGES) {
              await submit(chunk);
              chunk = [];
            }
          }
        }
        if (chunk.length > 0 && performance.now() - chunkSince >= SEND_LINGER_MS) {
          await submit(chunk);
          chunk = [];
        }
        if (failure !== null) break;
      }
      if (failure !== null) {
        // A read may still be waiting on stdin: end it, so a quiet source does not keep the command alive.
        next.catch(() => undefined);
        (source as { destroy?: () => void } | undefined)?.destroy?.();
      }
      if (chunk.length > 0 && failure === null) await submit(chunk);
    }
    await Promise.allSettled([...inflight]);
    await producer.close();
  } finally {
    progress.end(sent);
  }
  if (failure !== null) {
    io.stderr(`quartet: sent ${sent} message(s) to ${stream}/${topic} before a failure\n`);
    throw failure;
  }
  say(ctx, { sent, stream, topic }, `sent ${sent} message${sent === 1 ? '' : 's'} to ${stream}/${topic}`);
}

/** The command's one result: as JSON with --json, else as the text line. */
function say(ctx: Context, json: Record<string, unknown>, text: string): void {
  ctx.io.stdout(ctx.args.flags.json === true ? JSON.stringify(json) + '\n' : text + '\n');
}

/**
 * stdin as lines (without \n or \r\n), decoded as UTF-8 one whole line at a time, yielded as the
 * group of whole lines each read of stdin completes.
 */
async function* stdinLineGroups(io: CliIo, source: AsyncIterable<Buffer | string> | undefined): AsyncGenerator<string[]> {
  if (source === undefined) {
    const text = await io.readStdin(STDIN_BYTES_MAX);
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    yield lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
    return;
  }
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of source) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let data = rest.length > 0 ? Buffer.concat([rest, buf]) : buf;
    const group: string[] = [];
    let nl: number;
    while ((nl = data.indexOf(0x0a)) !== -1) {
      const end = nl > 0 && data[nl - 1] === 0x0d ? nl - 1 : nl;
      group.push(data.toString('utf8', 0, end));
      data = data.subarray(nl + 1);
    }
    rest = Buffer.from(data);
    if (group.length > 0) yield group;
  }
  if (rest.length > 0) yield [rest.toString('utf8', 0, rest[rest.length - 1] === 0x0d ? rest.length - 1 : rest.length)];
}

/** `next`'s result, or 'linger-over' when it has not settled within `ms` (at once when ms <= 0). */
async function raceLinger<T>(next: Promise<T>, ms: number): Promise<T | 'linger-over'> {
  let timer: NodeJS.Timeout | undefined;
  const over = new Promise<'linger-over'>((resolve) => {
    timer = setTimeout(() => resolve('linger-over'), Math.max(0, ms));
  });
  try {
    return await Promise.race([next, over]);
  } finally {
    clearTimeout(timer);
  }
}

/** The "sent N messages" line on stderr: redrawn with \r on a terminal, plain lines otherwise. */
class Progress {
  private lastMs = performance.now();
  private lastCount = 0;
  private drawn = false;
  private readonly startMs = performance.now();

  constructor(
    private readonly io: CliIo,
    private readonly enabled: boolean,
  ) {}

  update(count: number): void {
    if (!this.enabled) return;
    const now = performance.now();
    const crossed = Math.floor(count / PROGRESS_EVERY_MESSAGES) > Math.floor(this.lastCount / PROGRESS_EVERY_MESSAGES);
    if (!crossed && now - this.lastMs < PROGRESS_INTERVAL_MS) return;
    this.lastMs = now;
    this.lastCount = count;
    this.draw(count, now);
  }

  end(count: number): void {
    if (this.drawn && this.io.stderrIsTTY === true) {
      if (count !== this.lastCount) this.draw(count, performance.now());
      this.io.stderr('\n');
    }
  }

  private draw(count: number, now: number): void {
    const seconds = (now - this.startMs) / 1000;
    const rate = seconds > 0 ? Math.round(count / seconds) : 0;
    const text = `sent ${count} messages (${rate} msg/s)`;
    this.io.stderr(this.io.stderrIsTTY === true ? `\r${text}\x1b[K` : `${text}\n`);
    this.drawn = true;
  }
}

// ---------------------------------------------------------------------------------------------
// poll

async function poll(ctx: Context): Promise<void> {
  const { args, io, command } = ctx;
  const [stream, topic] = positionals(args, ['STREAM', 'TOPIC'], command);
  const partitionId = integerFlag(args, 'partition', command);
  const count = integerFlag(args, 'count', command);
  if (count === 0) throw new UsageError('--count must be at least 1', command);
  const follow = args.flags.follow === true;
  const json = args.flags.json === true;
  const group = stringFlag(args, 'consumer-group');
  const fromFlag = stringFlag(args, 'from');
  if (group !== undefined && (fromFlag !== undefined || partitionId !== undefined)) {
    throw new UsageError('--consumer-group polls from the group\'s stored offsets and assigned partitions: drop --from and --partition', command);
  }
  const strategy = parseFrom(fromFlag, command);

  const { client } = await ctx.connect();
  const streamId = toId(stream!);
  const topicId = toId(topic!);
  const details = await requireTopic(client, stream!, topic!);
  const partitions = partitionId !== undefined ? [partitionId] : details.partitions.length > 0 ? details.partitions.map((p) => p.id) : [...Array(details.partitionsCount).keys()];
  if (partitionId !== undefined && partitionId >= Math.max(details.partitionsCount, ...details.partitions.map((p) => p.id + 1))) {
    throw new CommandFailure(`partition ${partitionId} does not exist (topic ${quoteId(topic!)} has ${details.partitionsCount})`);
  }

  let printed = 0;
  let stop = false;
  let wake: (() => void) | null = null;
  const offInterrupt = io.onInterrupt?.(() => {
    stop = true;
    wake?.();
  });
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });
  const remaining = (): number => (count === undefined ? POLL_BATCH_MAX : Math.min(POLL_BATCH_MAX, count - printed));
  /** Prints what fits under --count; returns the messages printed. */
  const print = (messages: readonly IggyMessage[]): IggyMessage[] => {
    const take = count === undefined ? messages : messages.slice(0, count - printed);
    if (take.length === 0) return [];
    io.stdout(take.map((m) => (json ? messageJson(m) : m.payload.toString('utf8')) + '\n').join(''));
    printed += take.length;
    return [...take];
  };
  const done = (): boolean => stop || (count !== undefined && printed >= count);

  try {
    if (group !== undefined) {
      // Group mode: the server picks the member's partitions and starts at the group's offsets;
      // the offset of each printed message is stored, so the next run continues after it.
      const consumer = new IggyConsumer(client, { streamId, topicId, group, batchSize: remaining(), autoCommit: false });
      try {
        let emptyInARow = 0;
        while (!done()) {
          const batch = await consumer.poll();
          const shown = print(batch);
          const last = new Map<number, IggyMessage>();
          for (const m of shown) last.set(m.partitionId, m);
          for (const m of last.values()) await consumer.commit(m);
          if (batch.length > 0) {
            emptyInARow = 0;
            continue;
          }
          // Each poll serves one assigned partition: caught up after a whole round came back empty.
          if (++emptyInARow < Math.max(1, details.partitionsCount)) continue;
          if (!follow) break;
          emptyInARow = 0;
          await sleep(FOLLOW_INTERVAL_MS);
        }
      } finally {
        await consumer.close();
      }
      return;
    }

    // Single consumer: each partition starts at --from, then continues after its last message.
    const next = new Map<number, bigint>();
    const caughtUp = new Set<number>();
    if (strategy === 'last' && partitions.length > 1) {
      // 'last' on several partitions means the newest --count messages (default 1) of the topic:
      // each partition's newest, merged by time, the last ones kept. A --follow goes on after them.
      const n = Math.min(POLL_BATCH_MAX, count ?? 1);
      const newest: IggyMessage[] = [];
      for (const p of partitions) {
        const polled = await client.pollMessages({ streamId, topicId, partitionId: p, strategy: 'last', count: n });
        newest.push(...polled.messages);
        next.set(p, (polled.messages.at(-1)?.offset ?? -1n) + 1n);
      }
      newest.sort(byTimeThenPartition);
      print(newest.slice(-n));
      if (!follow) return;
    }
    while (!done()) {
      let got = 0;
      for (const p of partitions) {
        if (done()) break;
        if (!follow && caughtUp.has(p)) continue;
        const offset = next.get(p);
        // 'last' means the last --count messages (default 1) of each partition.
        const first = offset === undefined;
        const n = first && strategy === 'last' ? Math.min(POLL_BATCH_MAX, count ?? 1) : remaining();
        const polled = await client.pollMessages({ streamId, topicId, partitionId: p, strategy: first ? strategy : { offset }, count: n });
        if (polled.messages.length === 0) {
          // Nothing yet: a partition that never answered keeps its --from for the next round.
          caughtUp.add(p);
          continue;
        }
        next.set(p, polled.messages[polled.messages.length - 1]!.offset + 1n);
        got += polled.messages.length;
        print(polled.messages);
      }
      if (got > 0) continue;
      if (!follow) break;
      await sleep(FOLLOW_INTERVAL_MS);
    }
  } finally {
    offInterrupt?.();
  }
}

function byTimeThenPartition(a: IggyMessage, b: IggyMessage): number {
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? -1 : 1;
  if (a.partitionId !== b.partitionId) return a.partitionId - b.partitionId;
  return a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0;
}

function messageJson(m: IggyMessage): string {
  const headers: Record<string, { kind: string; value: string | number | boolean }> = {};
  for (const h of m.headers) headers[headerText(h.key)] = { kind: h.value.kind, value: headerJson(h.value) };
  return JSON.stringify({
    partition: m.partitionId,
    offset: Number(m.offset),
    id: m.id.toString(),
    timestamp: micros(m.timestamp),
    timestampMicros: Number(m.timestamp),
    originTimestampMicros: Number(m.originTimestamp),
    headers,
    // User-header bytes that are not a TLV block (opaque to the server) are shown as they are.
    ...(m.headers.length === 0 && m.rawHeaders.length > 0 ? { rawHeaders: m.rawHeaders.toString('base64') } : {}),
    payload: m.payload.toString('base64'),
  });
}

function headerJson(v: HeaderValue): string | number | boolean {
  switch (v.kind) {
    case 'raw':
    case 'unknown':
      return v.value.toString('base64');
    case 'int64':
    case 'int128':
    case 'uint64':
    case 'uint128':
      return v.value.toString();
    default:
      return v.value;
  }
}

function headerText(v: HeaderValue): string {
  const j = headerJson(v);
  return typeof j === 'string' ? j : String(j);
}
