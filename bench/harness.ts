// Shared benchmark plumbing: timing, bounded loops, temporary directories and the printed table.
// Every figure is printed next to a baseline measured in the same run, as a ratio.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
