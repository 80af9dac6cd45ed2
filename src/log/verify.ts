// Offline checks of a partition directory: every envelope's checksum, offset continuity and
// monotonicity, and every index entry against the data. Pure read-only: it never repairs (the
// log does that at open); `quartet log verify` / `quartet log dump` print what it finds.

import { checkEnvelope, envelopeBytes, envelopeHeaderBytes, type EnvelopeHeader } from './envelope.js';
import { nodeFileSystem, type LogFileSystem } from './fs.js';
import { OffsetIndex } from './offset-index.js';
import { readFully, scanEnvelopes } from './scan.js';
import { cleanedSuffix, parseSegmentLogName, segmentPaths } from './segment.js';
import { TimeIndex } from './time-index.js';

export interface VerifyProblem {
  file: string;
  /** Byte position in the file (0 for whole-file problems). */
  position: number;
  problem: string;
}

export interface VerifyReport {
  segments: number;
  batches: number;
  records: number;
  problems: VerifyProblem[];
}

/** One batch header as `quartet log dump` prints it. */
export interface DumpedBatch extends EnvelopeHeader {
  file: string;
  position: number;
  lastOffset: number;
  /** Whether the CRC32C over header and payload matches. */
  checksumValid: boolean;
  /** The batch's payload (a copy), when the dump asked for payloads. */
  payload?: Buffer;
}

async function segmentBases(fsys: LogFileSystem, dir: string): Promise<number[]> {
  const names = await fsys.readdir(dir);
  return names.map(parseSegmentLogName).filter((b): b is number => b !== null).sort((a, b) => a - b);
}

async function readWhole(fsys: LogFileSystem, path: string): Promise<Buffer | null> {
  if (!(await fsys.exists(path))) return null;
  const fd = await fsys.open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe((await fsys.fstat(fd)).size);
    return buf.subarray(0, await readFully(fsys, fd, buf, 0));
  } finally {
    await fsys.close(fd);
  }
}

/** What verification remembers of a segment's batches to check the indexes against. */
interface SegmentFacts {
  baseOffsetAt: Map<number, number>;
  /** Running max timestamp at each batch's last offset. */
  runningMaxAt: Map<number, number>;
  size: number;
  /** One past the last offset of the last batch (the base while empty). */
  end: number;
}

export async function verifyPartitionDir(dir: string, fsys: LogFileSystem = nodeFileSystem): Promise<VerifyReport> {
  const report: VerifyReport = { segments: 0, batches: 0, records: 0, problems: [] };
  for (const name of await fsys.readdir(dir)) {
    if (name.endsWith(cleanedSuffix) || name.endsWith('.tmp')) report.problems.push({ file: name, position: 0, problem: 'leftover temporary file' });
  }
  let previousEnd = 0;
  for (const base of await segmentBases(fsys, dir)) {
    report.segments++;
    const paths = segmentPaths(dir, base);
    const problem = (file: string, position: number, text: string): void => {
      report.problems.push({ file, position, problem: text });
    };
    if (base < previousEnd) problem(paths.log, 0, `segment base ${base} below the previous segment's end ${previousEnd}`);
    const facts = await verifySegmentData(fsys, paths.log, base, report, problem);
    previousEnd = Math.max(previousEnd, facts.end);
    await verifyOffsetIndex(fsys, paths.index, base, facts, problem);
    await verifyTimeIndex(fsys, paths.timeIndex, base, facts, problem);
  }
  return report;
}

async function verifySegmentData(
  fsys: LogFileSystem,
  path: string,
  base: number,
  report: VerifyReport,
  problem: (file: string, position: number, text: string) => void,
): Promise<SegmentFacts> {
  const facts: SegmentFacts = { baseOffsetAt: new Map(), runningMaxAt: new Map(), size: 0, end: base };
  const fd = await fsys.open(path, 'r');
  try {
    facts.size = (await fsys.fstat(fd)).size;
    let runningMax = -Infinity;
    const scan = scanEnvelopes(fsys, fd, 0, facts.size, { verifyChecksum: true, minOffset: base }, (stop) => problem(path, stop.position, stop.problem));
    for await (const { header, position } of scan) {
      report.batches++;
      report.records += header.recordCount;
      runningMax = Math.max(runningMax, header.maxTimestamp);
      facts.baseOffsetAt.set(position, header.baseOffset);
      facts.runningMaxAt.set(header.baseOffset + header.recordCount - 1, runningMax);
      facts.end = header.baseOffset + header.recordCount;
    }
  } finally {
    await fsys.close(fd);
  }
  return facts;
}

async function verifyOffsetIndex(
  fsys: LogFileSystem,
  path: string,
  base: number,
  facts: SegmentFacts,
  problem: (file: string, position: number, text: string) => void,
): Promise<void> {
  const bytes = await readWhole(fsys, path);
  if (bytes === null) return problem(path, 0, 'missing offset index');
  const index = OffsetIndex.decode(base, bytes, facts.size);
  if (typeof index === 'string') return problem(path, 0, index);
  for (let i = 0; i < index.entryCount; i++) {
    const entry = index.entryAt(i);
    if (facts.baseOffsetAt.get(entry.position) !== entry.offset) {
      problem(path, i * 8, `entry (${entry.offset}, ${entry.position}) does not point at the batch with that base offset`);
    }
  }
}

async function verifyTimeIndex(
  fsys: LogFileSystem,
  path: string,
  base: number,
  facts: SegmentFacts,
  problem: (file: string, position: number, text: string) => void,
): Promise<void> {
  const bytes = await readWhole(fsys, path);
  if (bytes === null) return problem(path, 0, 'missing time index');
  const index = TimeIndex.decode(base, bytes);
  if (typeof index === 'string') return problem(path, 0, index);
  for (let i = 0; i < index.entryCount; i++) {
    const entry = index.entryAt(i);
    if (facts.runningMaxAt.get(entry.offset) !== entry.timestamp) {
      problem(path, i * 12, `entry (${entry.timestamp}, ${entry.offset}) is not the max timestamp at that batch`);
    }
  }
}

/**
 * Yields batch headers from `fromOffset` on, at most `limit` of them, across segments, stopping
 * at the first undecodable envelope of a segment. Read-only.
 */
export async function* dumpPartitionDir(
  dir: string,
  options: { fromOffset?: number; limit?: number; payloads?: boolean } = {},
  fsys: LogFileSystem = nodeFileSystem,
): AsyncGenerator<DumpedBatch> {
  const fromOffset = options.fromOffset ?? 0;
  let left = options.limit ?? Infinity;
  const bases = await segmentBases(fsys, dir);
  for (let i = 0; i < bases.length && left > 0; i++) {
    if (i + 1 < bases.length && bases[i + 1]! <= fromOffset) continue;
    const path = segmentPaths(dir, bases[i]!).log;
    const fd = await fsys.open(path, 'r');
    try {
      const size = (await fsys.fstat(fd)).size;
      for await (const { header, position, buffer, at } of scanEnvelopes(fsys, fd, 0, size, { verifyChecksum: false }, () => undefined)) {
        const lastOffset = header.baseOffset + header.recordCount - 1;
        if (lastOffset < fromOffset) continue;
        const checksumValid = typeof checkEnvelope(buffer.subarray(at, at + envelopeBytes(header))) !== 'string';
        const dumped: DumpedBatch = { ...header, file: path, position, lastOffset, checksumValid };
        if (options.payloads === true) dumped.payload = Buffer.from(buffer.subarray(at + envelopeHeaderBytes, at + envelopeBytes(header)));
        yield dumped;
        if (--left <= 0) return;
      }
    } finally {
      await fsys.close(fd);
    }
  }
}
