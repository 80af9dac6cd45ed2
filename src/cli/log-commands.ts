// quartet log dump|verify: offline tools over partition directories.
//
//   log dump <partition-dir> [--from OFFSET] [--limit N] [--json]   one line per batch
//   log verify <data-dir|partition-dir>                              checksums and layout
//
// verify walks <data-dir>/logs/*/*/ when given a data directory. Exit codes: 0 clean, 1 when any
// problem was found, 2 on a usage error (including a path that is not a directory).

import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { BatchFlags, BatchFormat, dumpPartitionDir, verifyPartitionDir, type DumpedBatch } from '../log/index.js';
import { integerFlag, parseArgs, UsageError, type ParsedArgs } from './args.js';
import type { CliIo } from './io.js';
import { didYouMean } from './suggest.js';

/** Batches printed by `log dump` unless --limit says otherwise. */
export const DUMP_LIMIT_DEFAULT = 1000;

export async function logCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'dump':
      return logDump(parseArgs(rest, { from: {}, limit: {}, json: { boolean: true } }, 'log dump'), io);
    case 'verify':
      return logVerify(parseArgs(rest, { json: { boolean: true } }, 'log verify'), io);
    case undefined:
      throw new UsageError('log needs a subcommand: dump or verify', 'log');
    default:
      throw new UsageError(`unknown log subcommand "${sub}"${didYouMean(sub, ['dump', 'verify'])}`, 'log');
  }
}

function directoryArg(args: ParsedArgs, command: string, io: CliIo): string {
  if (args.positionals.length !== 1) throw new UsageError(`${command} takes exactly one directory`, command);
  const dir = resolve(io.cwd, args.positionals[0]!);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a directory`, command);
  return dir;
}

const formatNames = new Map<number, string>(Object.entries(BatchFormat).map(([name, tag]) => [tag, name]));

function flagNames(flags: number): string {
  const names = Object.entries(BatchFlags).flatMap(([name, bit]) => ((flags & bit) !== 0 ? [name] : []));
  return names.length > 0 ? names.join(',') : '-';
}

/** A timestamp as ISO text, or the raw number when it is not a valid date. */
function isoTime(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

function formatBatch(b: DumpedBatch, json: boolean): string {
  const format = formatNames.get(b.format) ?? `unknown(${b.format})`;
  if (json) {
    const { crc, ...rest } = b;
    return JSON.stringify({ ...rest, format, flags: flagNames(b.flags), crc: crc >>> 0 }) + '\n';
  }
  return (
    `offsets ${b.baseOffset}..${b.lastOffset} format=${format} records=${b.recordCount} ` +
    `first_ts=${isoTime(b.firstTimestamp)} max_ts=${isoTime(b.maxTimestamp)} ` +
    `producer=${b.producerId}/${b.producerEpoch}/${b.baseSequence} flags=${flagNames(b.flags)} ` +
    `payload_bytes=${b.payloadLength} position=${b.position}${b.checksumValid ? '' : ' CHECKSUM-MISMATCH'}\n`
  );
}

async function logDump(args: ParsedArgs, io: CliIo): Promise<number> {
  const dir = directoryArg(args, 'log dump', io);
  const fromOffset = integerFlag(args, 'from', 'log dump') ?? 0;
  const limit = integerFlag(args, 'limit', 'log dump') ?? DUMP_LIMIT_DEFAULT;
  const json = args.flags.json === true;
  for await (const batch of dumpPartitionDir(dir, { fromOffset, limit })) {
    io.stdout(formatBatch(batch, json));
  }
  return 0;
}

/** Partition directories under a data directory (logs/<topic>/<partition>/), or the directory itself. */
export function partitionDirsOf(dir: string): string[] {
  const logs = join(dir, 'logs');
  if (!existsSync(logs) || !statSync(logs).isDirectory()) return [dir];
  const out: string[] = [];
  for (const topic of readdirSync(logs, { withFileTypes: true })) {
    if (!topic.isDirectory()) continue;
    for (const partition of readdirSync(join(logs, topic.name), { withFileTypes: true })) {
      if (partition.isDirectory()) out.push(join(logs, topic.name, partition.name));
    }
  }
  return out.sort();
}

async function logVerify(args: ParsedArgs, io: CliIo): Promise<number> {
  const dir = directoryArg(args, 'log verify', io);
  const json = args.flags.json === true;
  const totals = { partitions: 0, segments: 0, batches: 0, records: 0, problems: 0 };
  const problems: Array<{ file: string; position: number; problem: string }> = [];
  for (const partitionDir of partitionDirsOf(dir)) {
    const report = await verifyPartitionDir(partitionDir);
    totals.partitions++;
    totals.segments += report.segments;
    totals.batches += report.batches;
    totals.records += report.records;
    totals.problems += report.problems.length;
    for (const p of report.problems) {
      const file = isAbsolute(p.file) ? p.file : join(partitionDir, p.file);
      if (json) problems.push({ file, position: p.position, problem: p.problem });
      else io.stdout(`${file}:${p.position}: ${p.problem}\n`);
    }
  }
  const summary =
    `verified ${totals.partitions} partition(s): ${totals.segments} segment(s), ${totals.batches} batch(es), ` +
    `${totals.records} record(s), ${totals.problems} problem(s)\n`;
  io.stdout(json ? JSON.stringify({ ...totals, problems }) + '\n' : summary);
  return totals.problems === 0 ? 0 : 1;
}
