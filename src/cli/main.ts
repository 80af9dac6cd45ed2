// The quartet command: a hand-written dispatcher over a few subcommands.
//
// Exit codes (docs/cli.md): 0 success; 1 the command ran and failed (a problem found, a lock
// held, a request the broker refused); 2 usage or configuration error; 3 the broker could not be
// reached; 4 the broker refused the credentials or the caller lacks the permission.
//
// Each subcommand's module is imported when it runs: `quartet --help` or `version` loads this file,
// args.ts, io.ts and version.ts only, not the broker.

import type { ConfigError } from '../server/config.js';
import { quartetVersion } from '../base/version.js';
import { UsageError } from './args.js';
import { processIo, type CliIo } from './io.js';
import { didYouMean } from './suggest.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_UNREACHABLE = 3;
export const EXIT_DENIED = 4;

const topUsage = `Usage: quartet <command> [options]

Commands for a running broker (over its HTTP admin API, default http://127.0.0.1:9080):
  topic list|create|describe|alter-config|delete|purge   topics, with their name under each protocol
  group list|describe|reset-offsets|delete               consumer groups, members and lag
  user list|create|delete|permissions|password|activate|deactivate
  token list|create|delete                               personal access tokens
  acl list                                               who may do what
  iggy <subcommand> [--addr HOST:PORT]                   ping, stream, topic, send, poll over Iggy

Other commands:
  serve [options]                      run the broker until SIGTERM/SIGINT (options: docs/configuration.md)
  log dump <partition-dir> | <data-dir> --topic NAME [--partition N] [--from OFFSET] [--limit N] [--records] [--json]
                                       print one line per stored batch (--records: and its records)
  log verify <data-dir|topic-dir|partition-dir> [--topic NAME [--partition N]] [--json]
                                       check every batch; exit 1 when a problem is found
  user <create|list|delete|permissions> --offline [--data-dir DIR]
                                       change users of a stopped broker's data directory
  completion bash|zsh                  print a shell completion script
  version [--json]                     print the version
  help [command]                       print this help, or a command's

Credentials: --user/--password (QUARTET_USER, QUARTET_PASSWORD) or --token (QUARTET_TOKEN);
--broker URL (QUARTET_BROKER). Every command that prints takes --json.
Exit codes: 0 success, 1 failure, 2 usage or configuration error, 3 broker unreachable,
4 not authenticated or not permitted. See docs/cli.md.
`;

const commandUsage: Record<string, string> = {
  serve: `Usage: quartet serve [--config FILE] [--data-dir DIR] [--<listener>-addr HOST:PORT] [--<listener>-enabled[=false]] ...

Runs the broker. Settings come from defaults < config file (--config, QUARTET_CONFIG) <
QUARTET_* environment variables < flags; every setting is listed in docs/configuration.md.
Listeners: kafka, iggy, cursus, felix, http.
`,
  log: `Usage: quartet log dump <partition-dir> [--from OFFSET] [--limit N] [--records] [--json]
       quartet log dump <data-dir> --topic NAME [--partition N] [--from OFFSET] [--limit N] [--records] [--json]
       quartet log verify <data-dir|topic-dir|partition-dir> [--topic NAME [--partition N]] [--json]

A path is a data directory, a topic directory (logs/<id>/) or a partition directory
(logs/<id>/<n>/); anything else is refused. --topic takes a Kafka name (orders, shop.events) or
namespace/topic (shop/events) and looks it up in the data directory (or --data-dir DIR).
dump    one line per batch: offset range, format, record count, timestamps, producer
        id/epoch/sequence, flags, size. --from skips batches before OFFSET; --limit caps the lines;
        --records adds one line per record: offset, time, key, headers, value (quoted text, or hex).
verify  checks every segment of the partitions named; prints each problem as
        file:position: problem (--json: one object with the totals and the problems).
        Exit 0 clean, 1 problems, 2 usage.
`,
  'user-offline': `Usage: quartet user create NAME --offline [--password PW | --password-stdin] [--grant LIST] [--data-dir DIR] [--config FILE]
       quartet user list --offline [--json] [--data-dir DIR] [--config FILE]
       quartet user delete NAME --offline [--data-dir DIR] [--config FILE]
       quartet user permissions NAME LIST --offline [--data-dir DIR] [--config FILE]

Changes users in a stopped broker's data directory (refused while a broker holds its lock).
Without a password, create generates one and prints it once. --password-stdin reads one line.
LIST is the user's global permissions, which every protocol checks (Kafka included): all, none,
or a comma-separated list of manage_servers, read_servers, manage_users, read_users,
manage_streams, read_streams, manage_topics, read_topics, poll_messages, send_messages. A user
made without --grant has none. permissions replaces the global ones and keeps the per-stream
grants set through Iggy.
The data directory comes from --data-dir, else the configuration (QUARTET_DATA_DIR, ./data).
`,
  // iggy: its usage lives with its subcommands (usageOf imports it).
  version: 'Usage: quartet version [--json]\n',
  completion: `Usage: quartet completion bash|zsh

Prints a completion script for the shell. bash: add \`source <(quartet completion bash)\` to
~/.bashrc. zsh: add \`source <(quartet completion zsh)\` to ~/.zshrc (after compinit).
`,
  help: 'Usage: quartet help [command]\n',
};

const helpFlags = new Set(['--help', '-h']);

export async function main(argv: string[], io: CliIo = processIo(argv[0] === 'serve')): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined) {
      io.stderr(topUsage);
      return EXIT_USAGE;
    }
    if (helpFlags.has(command) || command === 'help') return await help(rest[0], io);
    if (command === 'version' || command === '--version' || command === '-V') return version(rest, io);
    if (rest.some((a) => helpFlags.has(a)) && commandNames.has(command)) return await help(command, io);
    switch (command) {
      case 'serve':
        return await (await import('./serve.js')).serveCommand(rest, io);
      case 'log':
        return await (await import('./log-commands.js')).logCommand(rest, io);
      case 'user':
        // Offline (a stopped broker's data directory) only when asked: the default is the running broker.
        if (rest.includes('--offline')) return await (await import('./user-commands.js')).userCommand(rest.filter((a) => a !== '--offline'), io);
        return await (await import('./account-commands.js')).onlineUserCommand(rest, io);
      case 'token':
        return await (await import('./account-commands.js')).tokenCommand(rest, io);
      case 'acl':
        return await (await import('./account-commands.js')).aclCommand(rest, io);
      case 'topic':
        return await (await import('./topic-commands.js')).topicCommand(rest, io);
      case 'group':
        return await (await import('./group-commands.js')).groupCommand(rest, io);
      case 'iggy':
        return await (await import('./iggy-commands.js')).iggyCommand(rest, io);
      case 'completion':
        return await (await import('./completion.js')).completionCommand(rest, io);
      default:
        throw new UsageError(`unknown command "${command}"${didYouMean(command, commandNames)}`);
    }
  } catch (err) {
    return await reportError(err, io);
  }
}

/** Commands whose usage lives with their module. */
const moduleUsage: Record<string, () => Promise<string>> = {
  iggy: async () => (await import('./iggy-commands.js')).iggyUsage,
  topic: async () => (await import('./topic-commands.js')).topicUsage,
  group: async () => (await import('./group-commands.js')).groupUsage,
  user: async () => (await import('./account-commands.js')).userUsage,
  token: async () => (await import('./account-commands.js')).tokenUsage,
  acl: async () => (await import('./account-commands.js')).aclUsage,
};

export const commandNames = new Set([...Object.keys(commandUsage), ...Object.keys(moduleUsage)].filter((c) => c !== 'user-offline'));

async function usageOf(command: string): Promise<string | undefined> {
  if (Object.hasOwn(moduleUsage, command)) return moduleUsage[command]!();
  return Object.hasOwn(commandUsage, command) ? commandUsage[command] : undefined;
}

function version(argv: readonly string[], io: CliIo): number {
  const json = argv.includes('--json');
  const unknown = argv.find((a) => a !== '--json');
  if (unknown !== undefined) throw new UsageError(`version takes only --json, not "${unknown}"`, 'version');
  io.stdout(json ? JSON.stringify({ version: quartetVersion }) + '\n' : `quartet ${quartetVersion}\n`);
  return EXIT_OK;
}

async function help(command: string | undefined, io: CliIo): Promise<number> {
  if (command === undefined) {
    io.stdout(topUsage);
    return EXIT_OK;
  }
  const text = await usageOf(command);
  if (!text) return await reportError(new UsageError(`unknown command "${command}"${didYouMean(command, commandNames)}`), io);
  io.stdout(text);
  return EXIT_OK;
}

/**
 * server/config.ts's ConfigError, known by its name and code: importing the class here would load
 * the broker for every command's errors (config.ts imports core/broker.ts).
 */
function isConfigError(err: unknown): err is ConfigError {
  return err instanceof Error && err.name === 'ConfigError' && (err as Partial<ConfigError>).code === 'invalid_config';
}

/** The admin client's error (admin-client.ts), known by its name so that this file stays light. */
function isAdminCallError(err: unknown): err is Error & { status: number; code: string } {
  return err instanceof Error && err.name === 'AdminCallError';
}

async function reportError(err: unknown, io: CliIo): Promise<number> {
  if (err instanceof UsageError) {
    // One line: what is wrong (with a did-you-mean hint where one is close), and where the usage is.
    const topic = err.command?.split(' ')[0];
    const help = topic && (await usageOf(topic)) ? `quartet help ${topic}` : 'quartet help';
    io.stderr(`quartet: ${err.message}; see '${help}'\n`);
    return EXIT_USAGE;
  }
  if (isAdminCallError(err)) {
    io.stderr(`quartet: ${err.message}${err.code === 'unreachable' || err.code === 'bad_reply' ? '' : ` (${err.code})`}\n`);
    if (err.code === 'unreachable') return EXIT_UNREACHABLE;
    return err.status === 401 || err.status === 403 ? EXIT_DENIED : EXIT_FAILURE;
  }
  if (isConfigError(err)) {
    io.stderr(`quartet: ${err.message}\n`);
    return EXIT_USAGE;
  }
  io.stderr(`quartet: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT_FAILURE;
}
