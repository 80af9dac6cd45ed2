// Structured logs: one JSON object per line on stderr (or a sink the caller gives), filtered by
// level. Fields are plain data; secrets never go in.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(rank, value);
}

export function createLogger(
  level: LogLevel = 'info',
  sink: (line: string) => void = (line) => process.stderr.write(line + '\n'),
  base: LogFields = {},
): Logger {
  const emit = (lvl: LogLevel, msg: string, fields?: LogFields): void => {
    if (rank[lvl] < rank[level]) return;
    const record: LogFields = { time: new Date().toISOString(), level: lvl, msg, ...base, ...fields };
    sink(JSON.stringify(record, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v instanceof Error ? { name: v.name, message: v.message } : v)));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, sink, { ...base, ...fields }),
  };
}

export const silentLogger: Logger = createLogger('silent');
