// quartet log dump|verify: offline tools over a data directory's logs.
//
//   log dump <partition-dir> [--from OFFSET] [--limit N] [--records] [--json]
//   log dump <data-dir> --topic NAME [--partition N] ...
//   log verify <data-dir|topic-dir|partition-dir> [--topic NAME [--partition N]]
//
// A path must be a data directory (meta/quartet.db or logs/), a topic directory
// (logs/<topic-id>/) or a partition directory (logs/<topic-id>/<n>/, or one holding segments);
// anything else is a usage error. --topic takes a name as any protocol writes it: Kafka `orders`
// or `shop.events`, Iggy/catalog `shop/events`. Exit codes: 0 clean, 1 when a problem was found,
// 2 on a usage error.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { systemClock } from '../base/clock.js';
import { Catalog, type Topic } from '../core/catalog.js';
import { metadataDbPath, SqliteMetadataStore } from '../core/metadata-store.js';
import { BatchFlags, BatchFormat, dumpPartitionDir, verifyPartitionDir, type DumpedBatch, type FormatRegistry, type NeutralRecord } from '../log/index.js';
import { parseSegmentLogName } from '../log/segment.js';
import { resolveKafkaTopicName } from '../protocols/mapping.js';
import { builtinFormats } from '../server/listeners.js';
import { integerFlag, parseArgs, UsageError, type ParsedArgs } from './args.js';
import type { CliIo } from './io.js';
import { didYouMean } from './suggest.js';

/** Batches printed by `log dump` unless --limit says otherwise. */
export const DUMP_LIMIT_DEFAULT = 1000;

export async function logCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  const target = { topic: {}, partition: {}, 'data-dir': {} };
  switch (sub) {
    case 'dump':
      return logDump(parseArgs(rest, { ...target, from: {}, limit: {}, records: { boolean: true }, json: { boolean: true } }, 'log dump'), io);
    case 'verify':
      return logVerify(parseArgs(rest, { ...target, json: { boolean: true } }, 'log verify'), io);
    case undefined:
      throw new UsageError('log needs a subcommand: dump or verify', 'log');
    default:
      throw new UsageError(`unknown log subcommand "${sub}"${didYouMean(sub, ['dump', 'verify'])}`, 'log');
  }
}

export type LogPathKind = 'data' | 'topic' | 'partition';

const numeric = /^\d+$/;

/** What a directory is in a data directory's layout, or null when it is none of them. */
export function logPathKind(dir: string): LogPathKind | null {
  if (existsSync(metadataDbPath(dir)) || isDirectory(join(dir, 'logs'))) return 'data';
  const name = basename(dir);
  const parent = dirname(dir);
  if (numeric.test(name) && numeric.test(basename(parent)) && basename(dirname(parent)) === 'logs') return 'partition';
  if (numeric.test(name) && basename(parent) === 'logs') return 'topic';
  if (readdirSync(dir).some((f) => parseSegmentLogName(f) !== null)) return 'partition';
  return null;
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

/** The directory named by the one positional argument or --data-dir, checked to exist. */
function directoryArg(args: ParsedArgs, command: string, io: CliIo): string {
  const given = typeof args.flags['data-dir'] === 'string' ? [args.flags['data-dir'], ...args.positionals] : args.positionals;
  if (given.length !== 1) throw new UsageError(`${command} takes exactly one directory`, command);
  const dir = resolve(io.cwd, given[0]!);
  if (!isDirectory(dir)) throw new UsageError(`${dir} is not a directory`, command);
  return dir;
}

/** The partition directories a command works on: of a data directory, a topic (by name or directory) or one partition. */
async function partitionDirsFor(args: ParsedArgs, command: string, io: CliIo): Promise<string[]> {
  const dir = directoryArg(args, command, io);
  const kind = logPathKind(dir);
  const topicName = args.flags.topic;
  const partition = integerFlag(args, 'partition', command);
  if (topicName !== undefined) {
    if (typeof topicName !== 'string' || topicName === '') throw new UsageError('--topic takes a topic name', command);
    if (kind !== 'data') throw new UsageError(`--topic needs a data directory; ${dir} is not one`, command);
    const topic = await findTopic(dir, topicName, command);
    const partitions = partition === undefined ? [...Array(topic.partitions).keys()] : [partition];
    if (partitions.some((p) => p >= topic.partitions)) throw new UsageError(`topic ${topicName} has ${topic.partitions} partition(s); there is no partition ${partition}`, command);
    return partitions.map((p) => join(dir, 'logs', String(topic.internalId), String(p)));
  }
  if (partition !== undefined) throw new UsageError('--partition needs --topic', command);
  switch (kind) {
    case 'data':
      return childDirs(join(dir, 'logs')).flatMap((topicDir) => childDirs(topicDir));
    case 'topic':
      return childDirs(dir);
    case 'partition':
      return [dir];
    case null:
      throw new UsageError(`${dir} is not a data directory, topic directory (logs/<id>/) or partition directory (logs/<id>/<n>/)`, command);
  }
}

/** Numbered subdirectories, in numeric order. */
function childDirs(dir: string): string[] {
  if (!isDirectory(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && numeric.test(e.name))
    .map((e) => e.name)
    .sort((a, b) => Number(a) - Number(b))
    .map((name) => join(dir, name));
}

/** Looks a topic up in the data directory's catalog: `namespace/topic`, or a Kafka name. */
async function findTopic(dataDir: string, name: string, command: string): Promise<Topic> {
  if (!existsSync(metadataDbPath(dataDir))) throw new UsageError(`${dataDir} has no catalog (meta/quartet.db)`, command);
  const store = SqliteMetadataStore.open({ path: metadataDbPath(dataDir) });
  try {
    const catalog = await Catalog.open(store, systemClock);
    const slash = name.indexOf('/');
    const topic =
      slash > 0
        ? catalog.getTopic({ namespace: name.slice(0, slash), topic: name.slice(slash + 1) })
        : resolveKafkaTopicName(name, (c) => catalog.getTopic({ namespace: c.namespace, topic: c.topic }));
    if (topic === null) throw new UsageError(`no topic ${name} in ${dataDir}`, command);
    return topic;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // A namespace that does not exist is not a topic either.
    throw new UsageError(`no topic ${name} in ${dataDir}: ${(err as Error).message}`, command);
  } finally {
    await store.close();
  }
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

function formatBatch(b: DumpedBatch, json: boolean, records: DecodedRecords | null): string {
  const format = formatNames.get(b.format) ?? `unknown(${b.format})`;
  if (json) {
    const { crc, payload: _payload, ...rest } = b;
    const withRecords = records === null ? {} : 'error' in records ? { recordsError: records.error } : { records: records.map(jsonRecord) };
    return JSON.stringify({ ...rest, format, flags: flagNames(b.flags), crc: crc >>> 0, ...withRecords }) + '\n';
  }
  const line =
    `offsets ${b.baseOffset}..${b.lastOffset} format=${format} records=${b.recordCount} ` +
    `first_ts=${isoTime(b.firstTimestamp)} max_ts=${isoTime(b.maxTimestamp)} ` +
    `producer=${b.producerId}/${b.producerEpoch}/${b.baseSequence} flags=${flagNames(b.flags)} ` +
    `payload_bytes=${b.payloadLength} position=${b.position}${b.checksumValid ? '' : ' CHECKSUM-MISMATCH'}\n`;
  if (records === null) return line;
  if ('error' in records) return `${line}  (records not shown: ${records.error})\n`;
  return line + records.map(textRecord).join('');
}

type DecodedRecords = NeutralRecord[] | { error: string };

function decodeRecords(batch: DumpedBatch, formats: FormatRegistry): DecodedRecords {
  const codec = formats.get(batch.format);
  if (codec === undefined) return { error: `no decoder for format ${batch.format}` };
  if (!batch.checksumValid) return { error: 'checksum mismatch' };
  try {
    const { format, flags, baseOffset, lastOffset, recordCount, firstTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence } = batch;
    const payload = batch.payload ?? Buffer.alloc(0);
    return codec.decode({ format, flags, baseOffset, lastOffset, recordCount, firstTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, payload });
  } catch (err) {
    return { error: `cannot decode: ${(err as Error).message}` };
  }
}

/** Bytes as quoted text when they are printable UTF-8, else as 0x-prefixed hex. */
export function showBytes(bytes: Buffer | null): string {
  if (bytes === null) return 'null';
  const text = bytes.toString('utf8');
  // eslint-disable-next-line no-control-regex
  const printable = Buffer.byteLength(text) === bytes.length && !text.includes('\ufffd') && !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(text);
  return printable ? JSON.stringify(text) : `0x${bytes.toString('hex')}`;
}

function textRecord(r: NeutralRecord): string {
  const headers = r.headers.map((h) => `${JSON.stringify(h.key)}=${showBytes(h.value)}`).join(',');
  return `  record offset=${r.offset} ts=${isoTime(r.timestamp)} key=${showBytes(r.key)} headers={${headers}} value=${showBytes(r.value)}\n`;
}

function jsonBytes(bytes: Buffer | null): { text: string } | { hex: string } | null {
  if (bytes === null) return null;
  const shown = showBytes(bytes);
  return shown.startsWith('0x') ? { hex: shown.slice(2) } : { text: bytes.toString('utf8') };
}

function jsonRecord(r: NeutralRecord): Record<string, unknown> {
  return { offset: r.offset, timestamp: r.timestamp, key: jsonBytes(r.key), headers: r.headers.map((h) => ({ key: h.key, value: jsonBytes(h.value) })), value: jsonBytes(r.value) };
}

async function logDump(args: ParsedArgs, io: CliIo): Promise<number> {
  const fromOffset = integerFlag(args, 'from', 'log dump') ?? 0;
  const limit = integerFlag(args, 'limit', 'log dump') ?? DUMP_LIMIT_DEFAULT;
  const dirs = await partitionDirsFor(args, 'log dump', io);
  if (dirs.length !== 1) throw new UsageError(`log dump reads one partition; this names ${dirs.length} (add --partition N)`, 'log dump');
  const json = args.flags.json === true;
  const formats = args.flags.records === true ? builtinFormats() : null;
  for await (const batch of dumpPartitionDir(dirs[0]!, { fromOffset, limit, payloads: formats !== null })) {
    io.stdout(formatBatch(batch, json, formats === null ? null : decodeRecords(batch, formats)));
  }
  return 0;
}

async function logVerify(args: ParsedArgs, io: CliIo): Promise<number> {
  const dirs = await partitionDirsFor(args, 'log verify', io);
  const json = args.flags.json === true;
  const totals = { partitions: 0, segments: 0, batches: 0, records: 0, problems: 0 };
  const problems: Array<{ file: string; position: number; problem: string }> = [];
  for (const partitionDir of dirs) {
    if (!isDirectory(partitionDir)) continue; // a partition that has never been written
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
