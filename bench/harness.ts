// Shared benchmark plumbing: timing, bounded loops, temporary directories and the printed table.
// Every figure is printed next to a baseline measured in the same run, as a ratio.

import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface Measurement {
  name: string;
  bytes: number;
  ops: number;
  seconds: number;
}

export const mbPerSecond = (m: Measurement): number => m.bytes / m.seconds / 1e6;
export const opsPerSecond = (m: Measurement): number => m.ops / m.seconds;

/** A directory on the same disk as the project (not tmpfs), removed by the caller. */
export function benchDir(prefix: string): string {
  const base = process.env['QUARTET_BENCH_DIR'] ?? join(process.cwd(), '.bench-tmp');
  mkdirSync(base, { recursive: true });
  return mkdtempSync(join(base, prefix));
}

export function removeDir(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

/** Runs `step` until `bytesMax` bytes or `secondsMax` seconds, whichever comes first. */
export async function timed(
  name: string,
  bytesPerOp: number,
  limits: { bytesMax: number; secondsMax: number },
  step: () => Promise<void> | void,
): Promise<Measurement> {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(limits.secondsMax * 1e9));
  let ops = 0;
  let bytes = 0;
  while (bytes < limits.bytesMax) {
    await step();
    ops++;
    bytes += bytesPerOp;
    if ((ops & 7) === 0 && process.hrtime.bigint() > deadline) break;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { name, bytes, ops, seconds };
}

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  const i = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[i]!;
}

export interface Row {
  case: string;
  value: string;
  baseline: string;
  ratio: string;
  target?: string;
}

export function printTable(title: string, rows: Row[]): void {
  console.log(`\n## ${title}\n`);
  console.log('| case | Quartet | baseline | ratio | target |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.case} | ${r.value} | ${r.baseline} | ${r.ratio} | ${r.target ?? ''} |`);
}

export const fmt = (n: number, digits = 1): string => n.toFixed(digits);

/** SIGTERM, then SIGKILL after `timeoutMs`; resolves once the child has exited. */
export function stopChild(child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Waits (30 s at most) until the child's stdout or stderr matches `ready`; rejects if it exits
 * first. Afterwards its output keeps being drained, so it never blocks on a full pipe.
 */
export async function waitForOutput(child: ChildProcess, name: string, ready: RegExp): Promise<RegExpMatchArray> {
  let output = '';
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
    if (output.length > 1_000_000) output = output.slice(-100_000);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  try {
    return await new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} did not start in 30 s: ${output.slice(-2000)}`)), 30_000);
      const check = (): void => {
        const m = output.match(ready);
        if (m) {
          clearTimeout(timer);
          resolve(m);
        }
      };
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited with ${code ?? signal}: ${output.slice(-2000)}`));
      });
    });
  } finally {
    child.stdout!.removeAllListeners('data');
    child.stderr!.removeAllListeners('data');
    child.stdout!.resume();
    child.stderr!.resume();
  }
}

/** Linux: utime + stime of a process from /proc/<pid>/stat, in seconds (USER_HZ 100); NaN elsewhere. */
export function cpuSecondsOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * The tail of a readiness pattern: the broker's `ready` log line, which follows every `listening`
 * line. Root is created between the two (src/server/server.ts), so a bench that logs in as root
 * waits for this line, not for the listener's.
 */
const thenReady = String.raw`[\s\S]*"msg":"ready"`;

/** `listening` (a pattern matching the listening lines, with its groups) followed by the ready line. */
export const untilReady = (listening: RegExp): RegExp => new RegExp(listening.source + thenReady);

export type BenchProtocol = 'kafka' | 'iggy' | 'cursus' | 'felix';

/** The V8 flags `npm start` runs the broker with (docs/configuration.md, "Node flags"). */
export const brokerNodeFlags: readonly string[] = ['--max-semi-space-size=32', '--min-semi-space-size=32', '--no-memory-reducer'];

/**
 * More node flags for a bench's brokers, from the environment: QUARTET_BENCH_TRACE_GC=1 adds
 * `--trace-gc` (see `echoGcTrace`), QUARTET_BENCH_BROKER_FLAGS adds its space-separated flags.
 */
export function brokerExtraNodeFlags(): string[] {
  return [
    ...(process.env['QUARTET_BENCH_TRACE_GC'] === '1' ? ['--trace-gc'] : []),
    ...(process.env['QUARTET_BENCH_BROKER_FLAGS'] ?? '').split(' ').filter((f) => f !== ''),
  ];
}

/**
 * With QUARTET_BENCH_TRACE_GC=1, copies a started broker's `--trace-gc` lines (each with its
 * reason, e.g. "allocation failure" or "external memory pressure") to the bench's stderr,
 * prefixed `broker`, so that they fall between the bench's own lines where they happened.
 */
export function echoGcTrace(child: ChildProcess): void {
  if (process.env['QUARTET_BENCH_TRACE_GC'] !== '1') return;
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = chunk.toString().split('\n').filter((l) => / ms: /.test(l));
    if (lines.length > 0) process.stderr.write(lines.map((l) => `broker ${l}\n`).join(''));
  });
}

/**
 * node arguments for `quartet serve` with only the listeners of `protocol` (one or several), each
 * on a free loopback port, the HTTP endpoint off (unless `http`), data in `dataDir`, and the broker under
 * `--cpu-prof` when QUARTET_BENCH_CPU_PROF names a directory. The bound addresses are in the
 * `listening` log lines.
 */
export function quartetServeArgs(binPath: string, dataDir: string, protocol: BenchProtocol | readonly BenchProtocol[], options: { http?: boolean } = {}): string[] {
  const profDir = process.env['QUARTET_BENCH_CPU_PROF'];
  const wanted: readonly string[] = typeof protocol === 'string' ? [protocol] : protocol;
  const others = (['kafka', 'iggy', 'cursus', 'felix'] as const).filter((p) => !wanted.includes(p));
  return [
    ...brokerNodeFlags,
    ...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []),
    ...brokerExtraNodeFlags(),
    binPath,
    'serve',
    '--data-dir',
    dataDir,
    ...wanted.flatMap((p) => [`--${p}-addr`, '127.0.0.1:0']),
    // With `http`, the HTTP endpoint (/metrics) on a free loopback port; its `listening` line comes first.
    ...(options.http === true ? ['--http-addr', '127.0.0.1:0'] : ['--http-enabled=false']),
    ...others.map((p) => `--${p}-enabled=false`),
    '--log-level',
    'info',
  ];
}
