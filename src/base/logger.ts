// Structured logs: one line per event on stderr (or a sink the caller gives), filtered by level,
// as a JSON object or as human-readable text (`time LEVEL message key=value ...`). Fields are
// plain data; secrets never go in. LogRateLimiter keeps a noisy kind of event (failed logins) to
// one line per interval, counting the lines it drops.

import type { Clock } from './clock.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** json: one JSON object per line (for collectors); text: `time LEVEL message key=value ...` (for people). */
export type LogFormat = 'json' | 'text';

export const logFormats: readonly LogFormat[] = ['json', 'text'];

/** Text on a terminal, JSON otherwise (a file, a pipe, journald, a collector). */
export function defaultLogFormat(isTTY: boolean | undefined): LogFormat {
  return isTTY === true ? 'text' : 'json';
}

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  /** The last lines written through this logger's root and its children, oldest first (a LogTail), or none. */
  recentLines?(): string[];
}

/**
 * The last lines a logger wrote, bounded in count and characters, for diagnostics served over a
 * protocol (the Iggy snapshot's server_logs.txt): the process log itself goes to stderr.
 */
export class LogTail {
  private lines: string[] = [];
  private start = 0;
  private chars = 0;

  constructor(
    readonly linesMax = 2000,
    readonly charsMax = 1 << 20,
  ) {
    if (!(linesMax >= 1 && charsMax >= 1)) throw new RangeError('a log tail keeps at least one line and one character');
  }

  push(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    while (this.lines.length - this.start > this.linesMax || (this.chars > this.charsMax && this.lines.length - this.start > 1)) {
      this.chars -= this.lines[this.start]!.length;
      // Let go of the dropped line now, not at the next compaction.
      this.lines[this.start] = '';
      this.start++;
    }
    if (this.start >= 1024 && this.start * 2 >= this.lines.length) {
      this.lines = this.lines.slice(this.start);
      this.start = 0;
    }
  }

  /** Characters held, dropped lines included (what the tail costs in memory, about). */
  heldChars(): number {
    let n = 0;
    for (const line of this.lines) n += line.length;
    return n;
  }

  /** The kept lines, oldest first. */
  snapshot(): string[] {
    return this.lines.slice(this.start);
  }
}

export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(rank, value);
}

/** JSON.stringify's replacer for log fields: bigints as text, errors as name and message. */
function plain(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

/** A value as text: bare when it has no space, quote or '=', else JSON-quoted; objects as JSON. */
function textValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === 'string') return value !== '' && !/[\s"=]/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'object' && value !== null) return JSON.stringify(value, plain);
  return String(value);
}

/** One log line in `format`. */
export function formatLogLine(format: LogFormat, time: Date, level: LogLevel, msg: string, fields: LogFields): string {
  if (format === 'json') return JSON.stringify({ time: time.toISOString(), level, msg, ...fields }, plain);
  let line = `${time.toISOString()} ${level.toUpperCase().padEnd(5)} ${msg}`;
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) line += ` ${key}=${textValue(value)}`;
  return line;
}

export interface LoggerOptions {
  /** Default 'json'. */
  format?: LogFormat;
  /** Where the time of each line comes from (tests pin it). */
  now?: () => Date;
}

/** A logger writing lines to `sink`; with a `tail`, it (and every child) also keeps the last lines there. */
export function createLogger(
  level: LogLevel = 'info',
  sink: (line: string) => void = (line) => process.stderr.write(line + '\n'),
  base: LogFields = {},
  tail: LogTail | null = null,
  options: LoggerOptions = {},
): Logger {
  const format = options.format ?? 'json';
  const now = options.now ?? ((): Date => new Date());
  const emit = (lvl: LogLevel, msg: string, fields?: LogFields): void => {
    if (rank[lvl] < rank[level]) return;
    const line = formatLogLine(format, now(), lvl, msg, { ...base, ...fields });
    sink(line);
    tail?.push(line);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, sink, { ...base, ...fields }, tail, options),
    recentLines: () => tail?.snapshot() ?? [],
  };
}

/** Lines of one kind of event written at most once per interval unless said otherwise. */
export const LOG_RATE_INTERVAL_MS_DEFAULT = 1_000;

/**
 * At most one line per `intervalMs` for each kind of event (a failed login, a refused
 * connection): the others are counted, and the next line written says how many were dropped
 * (`dropped`). Kinds are few and fixed by the callers, so the map stays small.
 */
export class LogRateLimiter {
  private readonly kinds = new Map<string, { lastMs: number; dropped: number }>();

  constructor(
    private readonly clock: Clock,
    readonly intervalMs = LOG_RATE_INTERVAL_MS_DEFAULT,
  ) {}

  /** Writes the line unless a line of this kind was written less than intervalMs ago. Returns whether it wrote. */
  log(logger: Logger, level: Exclude<LogLevel, 'silent'>, kind: string, msg: string, fields: LogFields = {}): boolean {
    const nowMs = this.clock.now();
    const state = this.kinds.get(kind);
    if (state !== undefined && nowMs - state.lastMs < this.intervalMs) {
      state.dropped++;
      return false;
    }
    const dropped = state?.dropped ?? 0;
    this.kinds.set(kind, { lastMs: nowMs, dropped: 0 });
    logger[level](msg, dropped > 0 ? { ...fields, dropped } : fields);
    return true;
  }

  /** Lines of `kind` dropped since its last written line. */
  dropped(kind: string): number {
    return this.kinds.get(kind)?.dropped ?? 0;
  }
}

export const silentLogger: Logger = createLogger('silent');
