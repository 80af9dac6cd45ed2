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

/** A logger writing JSON lines to `sink`; with a `tail`, it (and every child) also keeps the last lines there. */
export function createLogger(
  level: LogLevel = 'info',
  sink: (line: string) => void = (line) => process.stderr.write(line + '\n'),
  base: LogFields = {},
  tail: LogTail | null = null,
): Logger {
  const emit = (lvl: LogLevel, msg: string, fields?: LogFields): void => {
    if (rank[lvl] < rank[level]) return;
    const record: LogFields = { time: new Date().toISOString(), level: lvl, msg, ...base, ...fields };
    const line = JSON.stringify(record, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v instanceof Error ? { name: v.name, message: v.message } : v));
    sink(line);
    tail?.push(line);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, sink, { ...base, ...fields }, tail),
    recentLines: () => tail?.snapshot() ?? [],
  };
}

export const silentLogger: Logger = createLogger('silent');
