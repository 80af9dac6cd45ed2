// What a command may touch of the process: output streams, stdin, environment and working
// directory. Tests run commands in-process with a captured CliIo.

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Reads stdin up to `maxBytes`; rejects when there is more. */
  readStdin(maxBytes: number): Promise<string>;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Stdin as a stream, for commands that read it line by line (absent: readStdin is used). */
  stdinStream?(): AsyncIterable<Buffer | string>;
  /** Whether stderr is a terminal (progress lines are then redrawn in place with \r). */
  stderrIsTTY?: boolean;
  /** Calls `listener` on SIGINT/SIGTERM until the returned function is called (absent: never). */
  onInterrupt?(listener: () => void): () => void;
}

let pipeGuarded = false;

/**
 * What a closed output pipe does, instead of an unhandled EPIPE error: a command whose reader goes
 * away (`quartet log dump … | head`) ends quietly with exit code 0, as SIGPIPE ends a C program;
 * a long-running one (`serve`, whose log reader died) goes on, its output dropped.
 */
function guardClosedPipes(longRunning: boolean): void {
  if (pipeGuarded) return;
  pipeGuarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      if (!longRunning) process.exit(0);
    });
  }
}

/** The real process's streams; `longRunning` for the broker (see guardClosedPipes). */
export function processIo(longRunning = false): CliIo {
  guardClosedPipes(longRunning);
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    readStdin: (maxBytes) => readStream(process.stdin, maxBytes),
    env: process.env,
    cwd: process.cwd(),
    stdinStream: () => process.stdin,
    stderrIsTTY: process.stderr.isTTY === true,
    onInterrupt: (listener) => {
      process.on('SIGINT', listener);
      process.on('SIGTERM', listener);
      return () => {
        process.off('SIGINT', listener);
        process.off('SIGTERM', listener);
      };
    },
  };
}

export async function readStream(stream: AsyncIterable<Buffer | string>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += buf.length;
    if (total > maxBytes) throw new Error(`stdin is longer than ${maxBytes} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}
