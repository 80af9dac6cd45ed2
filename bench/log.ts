// Log benchmark (issue 2): appends of 1 KiB-record batches of 16 KiB, 256 KiB and 1 MiB to one
// partition, with and without fsync-before-ack, and sequential reads — each next to a raw baseline
// measured in the same run on the same disk: plain sequential write() calls of the same sizes
// (with and without fdatasync), and plain sequential read() calls.
//
// Targets: appends without fsync >= 80% of the raw baseline at 256 KiB; group-committed appends
// from 64 concurrent appenders >= 5x the throughput of one fsync per append.
//
// Environment: QUARTET_BENCH_QUICK=1 (a short run: a quarter of the volumes, no 1.25 GiB roll run;
// still three trials, so that the ratios keep their meaning).

import { crc32c } from '../src/base/native.js';
import { execFileSync } from 'node:child_process';
import { closeSync, fdatasyncSync, openSync, readSync, writeSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import { defaultDirectWriteGate, openFileLog } from '../src/log/index.js';
import { decodeEnvelopeHeader, encodeEnvelopeHeader, envelopeBytes, envelopeHeaderBytes, envelopeHeadValid, envelopePayloadValid } from '../src/log/envelope.js';
import { BatchFormat, defaultLogConfig, type AppendRequest, type LogConfig, type PartitionLog } from '../src/log/types.js';
import { benchDir, fmt, mbPerSecond, printTable, removeDir, timed, type Measurement, type Row } from './harness.js';

const recordBytes = 1024;
const kib = 1024;
const sizes = [16 * kib, 256 * kib, 1024 * kib];
const quick = process.env['QUARTET_BENCH_QUICK'] === '1';
/** Bytes written per no-fsync trial; bounded in time as well. */
const volumeBytes = (quick ? 64 : 256) * 1024 * 1024;
/** A stream longer than the default 1 GiB segment: its roll happens inside the timed run. */
const rollVolumeBytes = 1280 * 1024 * 1024;
const fsyncVolumeBytes = (quick ? 16 : 64) * 1024 * 1024;
const secondsMax = 8;
/** Each case runs this many times, alternating with its baseline; the median is printed. */
const trials = 3;
/** Appends kept in flight by the no-fsync appender (a producer pipeline). */
const pipelineDepth = 16;

/**
 * `crc`: the CRC32C a front-end has already verified (as Kafka's handler does for the batch's own
 * CRC), so the log stores it rather than checksumming the payload again.
 */
function request(payload: Buffer, crc: number | null): AppendRequest {
  const now = Date.now();
  // One object shape either way (a conditional spread here cost this loop ~6 µs per append once
  // both shapes had passed: the "CRC supplied" case measured the spread, not the log).
  return {
    payloadCrc32c: crc === null ? undefined : { from: 0, value: crc },
    format: BatchFormat.neutral,
    recordCount: payload.length / recordBytes,
    firstTimestamp: now,
    maxTimestamp: now,
    producerId: -1,
    producerEpoch: -1,
    baseSequence: -1,
    flags: 0,
    payload,
  };
}

/**
 * Plain sequential writes of `size` bytes. With `layout: 'log'` each write is a `writev` of a
 * 64-byte header and the `size` bytes, the shape of the log's file (an envelope header before each
 * batch), so the writes no longer start or end on page boundaries; MB/s still counts `size` bytes
 * per write, as the log's figures count payload bytes.
 */
function rawWrites(dir: string, size: number, sync: boolean, bytesMax: number, layout: 'plain' | 'log' = 'plain'): Promise<Measurement> {
  const fd = openSync(join(dir, `raw-${size}-${sync}-${layout}.bin`), 'w');
  const buf = Buffer.alloc(size, 7);
  const chunks = [Buffer.alloc(envelopeHeaderBytes, 1), buf];
  const write = layout === 'log' ? () => writevSync(fd, chunks) : () => writeSync(fd, buf);
  return timed(`raw write ${size / kib} KiB${layout === 'log' ? ' in the log layout' : ''}${sync ? ' + fdatasync' : ''}`, size, { bytesMax, secondsMax }, () => {
    write();
    if (sync) fdatasyncSync(fd);
  }).finally(() => closeSync(fd));
}

function rawReads(path: string, size: number, totalBytes: number): Promise<Measurement> {
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(size);
  let position = 0;
  return timed(`raw read ${size / kib} KiB`, size, { bytesMax: totalBytes, secondsMax }, () => {
    const n = readSync(fd, buf, 0, size, position);
    position = n < size ? 0 : position + n;
  }).finally(() => closeSync(fd));
}

async function openLog(dir: string, overrides: Partial<LogConfig>): Promise<PartitionLog> {
  return openFileLog(dir, { ...defaultLogConfig, maxBatchBytes: 2 * 1024 * kib, ...overrides });
}

/** Appends with `concurrency` appenders, each awaiting its own append before the next. */
async function logAppends(
  dir: string,
  size: number,
  config: Partial<LogConfig>,
  concurrency: number,
  bytesMax: number,
  suppliedCrc = false,
): Promise<Measurement> {
  const log = await openLog(dir, config);
  const payload = Buffer.alloc(size, 9);
  const crc = suppliedCrc ? crc32c(payload) : null;
  let bytes = 0;
  let ops = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(secondsMax * 1e9);
  const appender = async (): Promise<void> => {
    while (bytes < bytesMax && process.hrtime.bigint() < deadline) {
      bytes += size;
      ops++;
      // No stamp hook is given, so the log never writes into the payload and one buffer can be
      // appended again and again without a copy in the timed loop.
      await log.append(request(payload, crc));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, appender));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await log.close();
  return { name: `append ${size / kib} KiB`, bytes, ops, seconds };
}

/** `verify`: ReadOptions.verify (false: no checksum is checked, as before reads checked them). */
async function logReads(dir: string, size: number, totalBytes: number, verify = true): Promise<Measurement> {
  const log = await openLog(dir, {});
  let offset = log.stats().logStartOffset;
  const end = log.stats().highWatermark;
  let bytes = 0;
  let ops = 0;
  const start = process.hrtime.bigint();
  while (offset < end && bytes < totalBytes) {
    const batches = await log.read(offset, { maxBytes: size, verify });
    for (const b of batches) bytes += b.payload.length;
    offset = batches[batches.length - 1]!.lastOffset + 1;
    ops++;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await log.close();
  return { name: `read ${size / kib} KiB${verify ? '' : ' unchecked'}`, bytes, ops, seconds };
}

/** `trials`: each trial's ratio against its own baseline run, printed after the medians' ratio. */
function ratioRow(name: string, q: Measurement, base: Measurement, target?: string, trials?: string): Row {
  return {
    case: name,
    value: `${fmt(mbPerSecond(q))} MB/s`,
    baseline: `${fmt(mbPerSecond(base))} MB/s`,
    ratio: `${fmt((mbPerSecond(q) / mbPerSecond(base)) * 100, 0)}%${trials ? ` (trials ${trials}%)` : ''}`,
    ...(target ? { target } : {}),
  };
}

/**
 * Dirty pages left by one trial slow the next one down (the kernel throttles writers while it
 * writes back), so every trial starts after a full `sync`, and the baseline and Quartet alternate.
 */
function settle(): void {
  execFileSync('sync');
}

function median(ms: Measurement[]): Measurement {
  return [...ms].sort((a, b) => mbPerSecond(a) - mbPerSecond(b))[Math.floor(ms.length / 2)]!;
}

/** Runs `baseline` and each of `cases` `trials` times, interleaved; returns medians. */
async function interleaved(baseline: () => Promise<Measurement>, cases: Array<() => Promise<Measurement>>): Promise<{ base: Measurement; results: Measurement[]; trials: string[] }> {
  const base: Measurement[] = [];
  const results: Measurement[][] = cases.map(() => []);
  for (let t = 0; t < trials; t++) {
    settle();
    base.push(await baseline());
    for (let i = 0; i < cases.length; i++) {
      settle();
      results[i]!.push(await cases[i]!());
    }
  }
  // Each trial's ratio to the baseline run just before it: the spread the median hides.
  const trialRatios = results.map((rs) => rs.map((r, t) => fmt((mbPerSecond(r) / mbPerSecond(base[t]!)) * 100, 0)).join(' / '));
  return { base: median(base), results: results.map(median), trials: trialRatios };
}

export async function runLogBench(): Promise<void> {
  const root = benchDir('log-');
  let n = 0;
  const fresh = (label: string): string => join(root, `${label}-${n++}`);
  /** Appends into a new directory that is removed afterwards, so trials do not fill the disk. */
  const throwaway = (label: string, size: number, config: Partial<LogConfig>, concurrency: number, bytesMax: number, suppliedCrc = false) => async () => {
    const dir = fresh(label);
    try {
      return await logAppends(dir, size, config, concurrency, bytesMax, suppliedCrc);
    } finally {
      removeDir(dir);
    }
  };
  /** Raw writes into a new directory that is removed afterwards. */
  const rawThrowaway = (size: number, sync: boolean, bytesMax: number, layout: 'plain' | 'log' = 'plain') => async () => {
    const dir = benchDir('raw-');
    try {
      return await rawWrites(dir, size, sync, bytesMax, layout);
    } finally {
      removeDir(dir);
    }
  };
  try {
    const rows: Row[] = [];
    for (const size of sizes) {
      const target = size === 256 * kib ? '>= 80%' : undefined;
      const writes = await interleaved(
        rawThrowaway(size, false, volumeBytes),
        [
          throwaway('nofsync', size, { fsyncPolicy: 'interval' }, 1, volumeBytes),
          throwaway('nofsync-p', size, { fsyncPolicy: 'interval' }, pipelineDepth, volumeBytes),
          throwaway('nofsync-crc', size, { fsyncPolicy: 'interval' }, 1, volumeBytes, true),
          rawThrowaway(size, false, volumeBytes, 'log'),
        ],
      );
      rows.push(ratioRow(`append ${size / kib} KiB, no fsync, 1 appender`, writes.results[0]!, writes.base, target, writes.trials[0]));
      rows.push(ratioRow(`append ${size / kib} KiB, no fsync, ${pipelineDepth} in flight`, writes.results[1]!, writes.base, target, writes.trials[1]));
      rows.push(ratioRow(`append ${size / kib} KiB, no fsync, 1 appender, CRC supplied by the front-end`, writes.results[2]!, writes.base, target, writes.trials[2]));
      // Context: what the kernel itself gives writes of the log's shape, and the log against that.
      const shaped = writes.results[3]!;
      rows.push(ratioRow(`context: raw writev of a ${envelopeHeaderBytes} B header + ${size / kib} KiB (the log's layout; plain write() is the baseline)`, shaped, writes.base, undefined, writes.trials[3]));
      rows.push(ratioRow(`context: append ${size / kib} KiB, no fsync, 1 appender, against raw writes in the log's layout`, writes.results[0]!, shaped));
      if (size === 256 * kib && !quick) {
        // The same appender for 1.25 GiB: the log rolls its 1 GiB segment inside the timed run.
        const long = await interleaved(
          rawThrowaway(size, false, rollVolumeBytes),
          [throwaway('roll', size, { fsyncPolicy: 'interval' }, 1, rollVolumeBytes)],
        );
        rows.push(ratioRow(`append ${size / kib} KiB, no fsync, 1 appender, 1.25 GiB (a segment roll inside the run)`, long.results[0]!, long.base, target, long.trials[0]));
      }

      // Reads: one log and one raw file of the same bytes, both warm in the page cache.
      const rawDir = benchDir('raw-');
      const rawWrite = await rawWrites(rawDir, size, false, volumeBytes);
      const logDir = fresh('read');
      const logWrite = await logAppends(logDir, size, { fsyncPolicy: 'interval' }, pipelineDepth, volumeBytes);
      const reads = await interleaved(
        () => rawReads(join(rawDir, `raw-${size}-false-plain.bin`), size, rawWrite.bytes),
        [() => logReads(logDir, size, logWrite.bytes), () => logReads(logDir, size, logWrite.bytes, false)],
      );
      rows.push(ratioRow(`sequential read, ${size / kib} KiB reads`, reads.results[0]!, reads.base));
      // The cost of the checksum checks on read (src/log/integrity.ts): the same reads, unchecked.
      rows.push(ratioRow(`context: sequential read, ${size / kib} KiB reads, against the same reads with no checksum checked`, reads.results[0]!, reads.results[1]!));
      removeDir(rawDir);
      removeDir(logDir);
    }
    printTable(`Log appends and reads without fsync (median of ${trials}; ratio = Quartet / raw of the medians, then for appends each trial against the raw run just before it)`, rows);
    // Each one sent every write of the process to the thread pool for a while (src/log/direct-write.ts).
    console.log(`\nsynchronous writes over 20 ms (direct writes paused): ${defaultDirectWriteGate.slowWrites}`);

    const syncRows: Row[] = [];
    for (const size of sizes) {
      const { base, results } = await interleaved(
        rawThrowaway(size, true, fsyncVolumeBytes),
        [
          throwaway('always-1', size, { fsyncPolicy: 'always' }, 1, fsyncVolumeBytes),
          throwaway('always-64', size, { fsyncPolicy: 'always' }, 64, fsyncVolumeBytes * 4),
        ],
      );
      const [one, many] = results as [Measurement, Measurement];
      syncRows.push(ratioRow(`append ${size / kib} KiB, fsync before ack, 1 appender`, one, base));
      syncRows.push(ratioRow(`append ${size / kib} KiB, fsync before ack, 64 appenders (group commit)`, many, base));
      syncRows.push({
        case: `group commit gain at ${size / kib} KiB (64 appenders / 1 appender)`,
        value: `${fmt(mbPerSecond(many))} MB/s`,
        baseline: `${fmt(mbPerSecond(one))} MB/s`,
        ratio: `${fmt(mbPerSecond(many) / mbPerSecond(one), 1)}x`,
        target: '>= 5x',
      });
    }
    printTable(`Log appends with fsync before acknowledge (median of ${trials}; baseline = raw write + fdatasync per write)`, syncRows);
    printTable('Checksum checks on read alone (CPU time, best of 7; baseline = parsing the same headers unchecked)', readCheckRows());
  } finally {
    removeDir(root);
  }
}

/**
 * What the checks a read makes (src/log/integrity.ts: each header against its own CRC, each
 * payload against its CRC) cost by themselves, in CPU time per GB of envelopes, next to walking
 * the same envelopes' headers unchecked: measured apart from the reads, whose wall-clock time on a
 * busy machine varies more than the checks cost. 64 MiB of envelopes, so they come from memory.
 */
function readCheckRows(): Row[] {
  const rows: Row[] = [];
  for (const size of [1 * kib, 16 * kib, 256 * kib, 1024 * kib]) {
    const buf = envelopesOf(size, 64 * 1024 * kib);
    const walk = (check: boolean) => (): void => {
      for (let at = 0; at < buf.length; ) {
        const h = decodeEnvelopeHeader(buf, at);
        if (typeof h === 'string') throw new Error(`bad envelope: ${h}`);
        if (check && (envelopeHeadValid(buf, at, h) !== true || !envelopePayloadValid(buf.subarray(at + envelopeHeaderBytes, at + envelopeBytes(h)), h))) throw new Error('checksum mismatch');
        at += envelopeBytes(h);
      }
    };
    const checked = bestCpuSeconds(walk(true));
    const unchecked = bestCpuSeconds(walk(false));
    const gb = buf.length / 1e9;
    rows.push({
      case: `checks of ${size / kib} KiB batches, per GB`,
      value: `${fmt((checked / gb) * 1000)} ms CPU`,
      baseline: `${fmt((unchecked / gb) * 1000)} ms CPU`,
      ratio: `checks alone ${fmt(gb / (checked - unchecked), 1)} GB/s`,
    });
  }
  return rows;
}

function envelopesOf(size: number, total: number): Buffer {
  const payload = Buffer.alloc(size, 9);
  const parts: Buffer[] = [];
  for (let bytes = 0, offset = 0; bytes < total; bytes += size, offset += size / recordBytes) {
    parts.push(encodeEnvelopeHeader(request(payload, null), offset, payload), payload);
  }
  return Buffer.concat(parts);
}

function bestCpuSeconds(run: () => void): number {
  let best = Infinity;
  for (let t = 0; t < 7; t++) {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1e6);
  }
  return best;
}
