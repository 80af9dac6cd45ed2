// quartet serve: load the configuration, run the broker until SIGTERM/SIGINT, return its exit code.

import { LogTail, createLogger, defaultLogFormat } from '../base/logger.js';
import { ConfigError, configFlagSpecs, loadConfig } from '../server/config.js';
import { DataDirLockedError } from '../server/lock.js';
import { startServer } from '../server/server.js';
import { parseArgs, type FlagSpec } from './args.js';
import type { CliIo } from './io.js';

/** After a clean stop the process should exit by itself; if a stray handle keeps it alive, force it. */
export const EXIT_LINGER_MS = 2_000;

export function serveFlagSpec(): Record<string, FlagSpec> {
  return Object.fromEntries(configFlagSpecs().map(({ flag, boolean }) => [flag, { boolean }]));
}

export async function serveCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, serveFlagSpec(), 'serve');
  if (args.positionals.length > 0) throw new ConfigError([`serve takes no arguments, got "${args.positionals.join(' ')}"`]);
  // No serve flag is `multiple`: every value is a string or a boolean.
  const { config, warnings } = loadConfig({ flags: args.flags as Record<string, string | boolean>, env: io.env, cwd: io.cwd });
  // The last lines are also kept in memory, for the Iggy snapshot's server_logs.txt.
  const format = config.logFormat === 'auto' ? defaultLogFormat(io.stderrIsTTY) : config.logFormat;
  const logger = createLogger(config.logLevel, (line) => io.stderr(line + '\n'), {}, new LogTail(), { format });
  for (const warning of warnings) logger.warn(warning);
  let server;
  try {
    server = await startServer(config, { logger, stdout: io.stdout });
  } catch (err) {
    const reason = err instanceof DataDirLockedError ? 'data directory is locked' : 'start-up failed';
    logger.error(`cannot start: ${(err as Error).message}`, { reason, lockFile: err instanceof DataDirLockedError ? err.lockPath : undefined });
    return 1;
  }
  const code = await server.stopped;
  setTimeout(() => {
    logger.warn('process still running after stop; exiting', { lingerMs: EXIT_LINGER_MS });
    process.exit(code);
  }, EXIT_LINGER_MS).unref();
  return code;
}
