// The quartet command: a hand-written dispatcher over a few subcommands.
//
// Exit codes: 0 success; 1 the command ran and failed (a problem found, a lock held, a broker
// that stopped badly); 2 usage or configuration error.
//
// Each subcommand's module is imported when it runs: `quartet --help` or `version` loads this file,
// args.ts, io.ts and version.ts only, not the broker.

import type { ConfigError } from '../server/config.js';
import { quartetVersion } from '../base/version.js';
import { UsageError } from './args.js';
import { processIo, type CliIo } from './io.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

const topUsage = `Usage: quartet <command> [options]

Commands:
  serve [options]                      run the broker until SIGTERM/SIGINT (options: docs/configuration.md)
  log dump <partition-dir> [--from OFFSET] [--limit N] [--json]
                                       print one line per stored batch
  log verify <data-dir|partition-dir>  check every batch; exit 1 when a problem is found
  user create NAME [--password PW | --password-stdin] [--grant LIST] [--data-dir DIR]
  user list [--json] [--data-dir DIR]
  user delete NAME [--data-dir DIR]
  user permissions NAME LIST [--data-dir DIR]
                                       manage users offline (the broker must be stopped)
  iggy <subcommand> [--addr HOST:PORT] talk to a running broker's Iggy listener: ping, stream,
                                       topic, send, poll (quartet iggy --help)
  version                              print the version
  help [command]                       print this help, or a command's

Exit codes: 0 success, 1 failure, 2 usage or configuration error. See docs/cli.md.
`;

const commandUsage: Record<string, string> = {
  serve: `Usage: quartet serve [--config FILE] [--data-dir DIR] [--<listener>-addr HOST:PORT] [--<listener>-enabled[=false]] ...

Runs the broker. Settings come from defaults < config file (--config, QUARTET_CONFIG) <
QUARTET_* environment variables < flags; every setting is listed in docs/configuration.md.
Listeners: kafka, iggy, cursus, felix, http.
`,
  log: `Usage: quartet log dump <partition-dir> [--from OFFSET] [--limit N] [--json]
       quartet log verify <data-dir|partition-dir>

dump    one line per batch: offset range, format, record count, timestamps, producer
        id/epoch/sequence, flags, size. --from skips batches before OFFSET; --limit caps the lines.
verify  checks every segment of one partition, or of every partition under <data-dir>/logs;
        prints each problem as file:position: problem. Exit 0 clean, 1 problems, 2 usage.
`,
  user: `Usage: quartet user create NAME [--password PW | --password-stdin] [--grant LIST] [--data-dir DIR] [--config FILE]
       quartet user list [--json] [--data-dir DIR] [--config FILE]
       quartet user delete NAME [--data-dir DIR] [--config FILE]
       quartet user permissions NAME LIST [--data-dir DIR] [--config FILE]

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
  version: 'Usage: quartet version\n',
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
    if (command === 'version' || command === '--version' || command === '-V') {
      io.stdout(`quartet ${quartetVersion}\n`);
      return EXIT_OK;
    }
    if (rest.some((a) => helpFlags.has(a)) && commandNames.has(command)) return await help(command, io);
    switch (command) {
      case 'serve':
        return await (await import('./serve.js')).serveCommand(rest, io);
      case 'log':
        return await (await import('./log-commands.js')).logCommand(rest, io);
      case 'user':
        return await (await import('./user-commands.js')).userCommand(rest, io);
      case 'iggy':
        return await (await import('./iggy-commands.js')).iggyCommand(rest, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    return await reportError(err, io);
  }
}

const commandNames = new Set([...Object.keys(commandUsage), 'iggy']);

async function usageOf(command: string): Promise<string | undefined> {
  if (command === 'iggy') return (await import('./iggy-commands.js')).iggyUsage;
  return Object.hasOwn(commandUsage, command) ? commandUsage[command] : undefined;
}

async function help(command: string | undefined, io: CliIo): Promise<number> {
  if (command === undefined) {
    io.stdout(topUsage);
    return EXIT_OK;
  }
  const text = await usageOf(command);
  if (!text) return await reportError(new UsageError(`unknown command "${command}"`), io);
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

async function reportError(err: unknown, io: CliIo): Promise<number> {
  if (err instanceof UsageError) {
    const usage = (err.command && (await usageOf(err.command.split(' ')[0]!))) || topUsage;
    io.stderr(`quartet: ${err.message}\n\n${usage}`);
    return EXIT_USAGE;
  }
  if (isConfigError(err)) {
    io.stderr(`quartet: ${err.message}\n`);
    return EXIT_USAGE;
  }
  io.stderr(`quartet: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT_FAILURE;
}
