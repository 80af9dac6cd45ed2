// Kafka benchmark: Quartet's Kafka listener against Redis Streams and NATS JetStream, measured in
// the same run, each figure printed next to its baseline as a ratio.
//
// 1. kcat (librdkafka batching) ingests 1,000,000 records of 100 B and of 1 KiB from a file into one
//    partition, and reads them back to /dev/null with `kcat -C -c 1000000` (exits after the last
//    record), once at librdkafka's default consumer settings (1 MiB per partition per fetch: the
//    target's figure) and once with tuned fetch settings (kcatFetchSettings), alternating which goes
//    first; then `kcat -C -e` (to the end of the partition, which librdkafka learns from one more
//    fetch that every broker holds for fetch.wait.max.ms, 500 ms: context). Baseline: redis-server
//    (appendonly yes, appendfsync everysec) fed by `redis-benchmark -P 64` pipelined XADD of the same
//    value sizes, and read back with XRANGE ... COUNT 1000.
//    Targets: ingest >= 1.5x Redis at 1 KiB; read-back at the defaults >= 1 GB/s. Each read-back
//    also prints, from the broker's /metrics and /proc, its Fetch count, the broker's time on them,
//    and its CPU time per Fetch and per GB (which moves far less with the machine's load).
// 2. A Node client (KafkaJS and @platformatic/kafka; the faster one counts) produces 1 KiB records
//    with acks=-1, against the `nats` client publishing to a JetStream file-storage stream, awaiting
//    every ack with a window of publishes in flight. Target: >= 3x JetStream's acknowledged rate.
// 3. Send latency at a fixed 1,000 sends/s of one 1 KiB record, p50/p99/p99.9, every client in
//    each trial, interleaved, against one broker (Kafka and Iggy listeners) and one nats-server:
//    JetStream publish + ack (the baseline); Kafka through a minimal raw Produce client
//    (raw-kafka-producer.ts, acks=all, default fsync policy: the target's figure); the Iggy SDK
//    (sendMessages of one message); KafkaJS (the same as the raw client, with its own cost); and
//    the raw client on a topic with quartet.fsync.policy=always against the disk's own
//    write + fdatasync. Target: p99 <= 2x JetStream's, p99.9 <= 3x.
//
// Every server is started here on 127.0.0.1 with a fresh directory under benchDir() (the project's
// disk, not tmpfs) and stopped at the end, also on error. A missing external tool skips its part
// with an install hint. Every loop is bounded in count and in time.
//
// Environment: QUARTET_BENCH_KAFKA_RECORDS (default 1000000), QUARTET_BENCH_KAFKA_TRIALS (3),
// QUARTET_BENCH_KAFKA_LATENCY_TRIALS (3), QUARTET_BENCH_KAFKA_PARTS (a comma-separated subset of kcat,
// node, latency; default all),
// QUARTET_BENCH_CPU_PROF=<dir> (run the Quartet broker under `node --cpu-prof`, profiles in <dir>),
// QUARTET_BENCH_TRACE_GC=1 (the broker's --trace-gc lines, with their reasons, on stderr),
// QUARTET_BENCH_BROKER_FLAGS (more node flags for the broker, space-separated).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { IggyClient } from '../src/clients/iggy/index.js';
import { benchDir, cpuSecondsOf, echoGcTrace, fmt, percentile, printTable, removeDir, quartetServeArgs, stopChild, untilReady, waitForOutput, type Row } from './harness.js';
import { RawKafkaProducer } from './raw-kafka-producer.js';
import { requirePlatformaticKafka } from '../test/peers/platformatic-kafka.js';

const repoRoot = new URL('..', import.meta.url).pathname;
const envInt = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};

const records = envInt('QUARTET_BENCH_KAFKA_RECORDS', 1_000_000);
const trials = envInt('QUARTET_BENCH_KAFKA_TRIALS', 3);
const sizes = [100, 1024];
/** Hard limit on one external command (kcat, redis-benchmark). */
const commandTimeoutMs = 180_000;

/** librdkafka producer settings for kcat ingest (acks left at librdkafka's default, all). */
const kcatProduceSettings = ['linger.ms=5', 'batch.num.messages=10000', 'batch.size=1000000'];
/**
 * librdkafka consumer settings for kcat read-back: 4 MiB per partition per fetch (default 1 MiB), and
 * a local queue large enough that librdkafka does not pause fetching at its default 100,000
 * queued messages (which made 100 B read-back 3x slower with large fetches).
 */
const kcatFetchSettings = ['fetch.message.max.bytes=4194304', 'fetch.max.bytes=67108864', 'queued.min.messages=1000000', 'queued.max.messages.kbytes=262144'];
/** redis-benchmark: pipeline depth and parallel connections (its default). */
const redisPipeline = 64;
const redisClients = 50;
/** XRANGE page size for the Redis read-back baseline. */
const redisRangeCount = 1000;

/** Node client section: 1 KiB records, bounded by count and time. */
const nodeRecordBytes = 1024;
const nodeRecords = 200_000;
const nodeSecondsMax = 30;
/** Kafka: records per produce request, and produce requests kept in flight. */
const nodeBatch = 500;
const nodeInFlight = 4;
/** JetStream: publishes awaiting their ack at once. */
const jsWindow = 256;

/** Latency section. */
const latencyRate = 1000;
const latencySeconds = 10;
const latencyWarmupSeconds = 1;
const latencyRecordBytes = 1024;
/** Each trial runs every latency client once, interleaved. */
const latencyTrials = envInt('QUARTET_BENCH_KAFKA_LATENCY_TRIALS', 3);

// ---------------------------------------------------------------------------------------------
// Processes: every child is tracked and stopped at the end, or killed when this process exits.

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}


/** Whether `cmd args` runs and exits 0. */
function available(cmd: string, args: string[]): boolean {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 10_000 });
  return r.error === undefined && r.status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

interface Service {
  name: string;
  address: string;
  /** CPU seconds (user + system, all threads) the server has used so far; NaN without /proc. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

/** Spawns a server and waits (bounded) until a line of its output matches `ready`. */
async function startService(name: string, cmd: string, args: string[], ready: RegExp, dir: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; match: RegExpMatchArray; stop(): Promise<void> }> {
  const child = track(spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd: dir }));
  const match = await waitForOutput(child, name, ready).catch(async (err: unknown) => {
    await stopChild(child);
    removeDir(dir);
    throw err;
  });
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopped ??= stopChild(child).finally(() => removeDir(dir));
    return stopped;
  };
  return { child, match, stop };
}

const cpuOf = (child: ChildProcess) => (): number => cpuSecondsOf(child.pid);

const quartetRootPassword = 'bench-root-password';

/**
 * Quartet with the Kafka listener (and the Iggy one when asked); the Kafka address is `address`.
 * With `http`, the HTTP endpoint too (its /metrics give the broker's own view of a run).
 */
async function startQuartet(protocols: ReadonlyArray<'kafka' | 'iggy'> = ['kafka'], http = false): Promise<Service & { iggyAddress?: string; httpAddress?: string }> {
  const dir = benchDir('kafka-quartet-');
  const args = quartetServeArgs(join(repoRoot, 'bin/quartet.js'), join(dir, 'data'), protocols, { http });
  // The listeners log in the order http, kafka, iggy.
  const line = (name: string): string => `"msg":"listening","listener":"${name}","address":"([^"]+)"`;
  const listening = new RegExp([...(http ? ['http'] : []), ...protocols].map(line).join(String.raw`[\s\S]*`));
  const s = await startService('quartet', process.execPath, args, untilReady(listening), dir, { QUARTET_ROOT_PASSWORD: quartetRootPassword });
  echoGcTrace(s.child);
  const groups = s.match.slice(1);
  const httpAddress = http ? groups.shift() : undefined;
  const [address, iggyAddress] = groups;
  return { name: 'quartet', address: address!, ...(iggyAddress ? { iggyAddress } : {}), ...(httpAddress ? { httpAddress } : {}), cpuSeconds: cpuOf(s.child), stop: s.stop };
}

async function startRedis(): Promise<Service> {
  const dir = benchDir('kafka-redis-');
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--daemonize', 'no'];
  const s = await startService('redis-server', 'redis-server', args, /Ready to accept connections/, dir);
  return { name: 'redis', address: String(port), cpuSeconds: cpuOf(s.child), stop: s.stop };
}

async function startNats(): Promise<Service> {
  const dir = benchDir('kafka-nats-');
  const port = await freePort();
  const s = await startService('nats-server', 'nats-server', ['-js', '-sd', dir, '-a', '127.0.0.1', '-p', String(port)], /Server is ready/, dir);
  return { name: 'nats', address: `127.0.0.1:${port}`, cpuSeconds: cpuOf(s.child), stop: s.stop };
}

interface CommandResult {
  seconds: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (bounded); resolves with its wall time, exit code and stderr. */
function timeCommand(cmd: string, args: string[], options: { stdout?: 'ignore' | 'devnull' | 'pipe' } = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const devNull = options.stdout === 'devnull' ? openSync('/dev/null', 'w') : null;
    const start = performance.now();
    const child = track(spawn(cmd, args, { stdio: ['ignore', devNull ?? (options.stdout === 'pipe' ? 'pipe' : 'ignore'), 'pipe'] }));
    if (devNull !== null) closeSync(devNull);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stderr!.on('data', (c: Buffer) => {
      if (err.length < 1000) err.push(c);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), commandTimeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ seconds: (performance.now() - start) / 1000, code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The 1-minute load average (other work on the machine moves every figure). */
const loadAverage = (): string => fmt(loadavg()[0] ?? NaN, 2);

// ---------------------------------------------------------------------------------------------
// Formatting

const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const recS = (n: number): string => `${int(n)} rec/s`;
const mbS = (n: number): string => `${fmt(n)} MB/s`;
const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${fmt(a / b, 2)}x` : 'n/a');
const verdict = (met: boolean): string => (met ? 'met' : 'MISSED');
const sizeName = (size: number): string => (size >= 1024 ? `${size / 1024} KiB` : `${size} B`);
const median = (xs: number[]): number => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};

function skipped(what: string, install: string): void {
  console.log(`\n${what}: skipped: ${install}`);
}

// ---------------------------------------------------------------------------------------------
// 1. kcat ingest and read-back vs Redis Streams

/** One input line: a 10-digit record number, filler up to `size` bytes, then '\n'. */
async function writeInput(path: string, size: number, count: number): Promise<void> {
  const linesPerChunk = Math.max(1, Math.floor((1 << 20) / (size + 1)));
  const filler = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.repeat(Math.ceil(size / 62) + 1);
  const out = createWriteStream(path);
  for (let i = 0; i < count; i += linesPerChunk) {
    const n = Math.min(linesPerChunk, count - i);
    const chunk = Buffer.allocUnsafe(n * (size + 1));
    for (let j = 0; j < n; j++) {
      const at = j * (size + 1);
      chunk.write(String(i + j).padStart(10, '0'), at, 'latin1');
      chunk.write(filler.slice((i + j) % 62, (i + j) % 62 + size - 10), at + 10, 'latin1');
      chunk[at + size] = 0x0a;
    }
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

interface Throughput {
  /** records per second and payload (value) MB per second; NaN when the step failed. */
  recordsPerSecond: number;
  mbPerSecond: number;
  seconds: number;
  /** CPU seconds the server (all its threads) used during the step. */
  serverCpu: number;
  note?: string;
}

const failed = (note: string): Throughput => ({ recordsPerSecond: NaN, mbPerSecond: NaN, seconds: NaN, serverCpu: NaN, note });

function throughput(count: number, size: number, seconds: number, serverCpu: number): Throughput {
  return { recordsPerSecond: count / seconds, mbPerSecond: (count * size) / seconds / 1e6, seconds, serverCpu };
}

interface KcatTrial {
  ingest: Throughput;
  /** kcat -C -c with kcatFetchSettings. */
  read: Throughput;
  /** kcat -C -c with librdkafka's default consumer settings. */
  readDefaults: Throughput;
  readToEnd: Throughput;
}

/**
 * A command run under GNU time (`/usr/bin/time`, Debian's `time` package) when it is there, so
 * that its CPU time is printed on its stderr's last line: kcat's own share of a read-back.
 */
function withCpuTime(cmd: string, args: string[]): [string, string[]] {
  return existsSync('/usr/bin/time') ? ['/usr/bin/time', ['-f', 'client cpu %U %S', cmd, ...args]] : [cmd, args];
}

/** The client's CPU time and its share of the wall time, from withCpuTime's line (n/a without it). */
function clientCpu(r: CommandResult): string {
  const m = r.stderr.match(/client cpu ([\d.]+) ([\d.]+)\s*$/);
  if (m === null) return 'kcat CPU n/a';
  const cpu = Number(m[1]) + Number(m[2]);
  return `kcat CPU ${fmt(cpu, 2)} s (${fmt((100 * cpu) / r.seconds, 0)}% of its wall time)`;
}

/**
 * Fetch requests the broker answered between two scrapes of its /metrics, its time on them
 * (framed → written), and the broker's CPU time (all threads) per Fetch and per GB of payload
 * read back: a figure that moves far less with the machine's load than the wall time does.
 */
function fetchesBetween(before: string, after: string, cpuSeconds: number, payloadBytes: number): string {
  if (before === '' || after === '') return 'fetches n/a';
  const series = (what: string): string => `quartet_request_duration_seconds_${what}{listener="kafka",operation="Fetch"}`;
  const count = sample(after, series('count')) - sample(before, series('count'));
  const seconds = sample(after, series('sum')) - sample(before, series('sum'));
  const cpu = `broker CPU ${fmt((cpuSeconds * 1000) / count, 2)} ms per Fetch, ${fmt(cpuSeconds / (payloadBytes / 1e9), 2)} s per GB`;
  return `${int(count)} fetches, broker time on them ${fmt(seconds, 2)} s, ${cpu}`;
}

async function quartetKcatTrial(file: string, size: number): Promise<KcatTrial> {
  // The HTTP endpoint too: its /metrics count the Fetch requests of each read-back.
  const q = await startQuartet(['kafka'], true);
  try {
    const topic = `bench-${size}`;
    const x = (settings: string[]): string[] => settings.flatMap((s) => ['-X', s]);
    const cpu0 = q.cpuSeconds();
    const produced = await timeCommand('kcat', ['-P', '-b', q.address, '-t', topic, '-p', '0', '-z', 'none', ...x(kcatProduceSettings), '-l', file]);
    if (produced.code !== 0) {
      const note = `kcat -P exited ${produced.code}: ${produced.stderr.slice(0, 300)}`;
      return { ingest: failed(note), read: failed('no data'), readDefaults: failed('no data'), readToEnd: failed('no data') };
    }
    const cpu1 = q.cpuSeconds();
    const consume = (until: string[], settings: string[]): Promise<CommandResult> =>
      timeCommand(...withCpuTime('kcat', ['-C', '-b', q.address, '-t', topic, '-p', '0', '-o', 'beginning', ...until, '-f', '%s\\n', ...x(settings)]), { stdout: 'devnull' });
    // Read-back: kcat exits once it has consumed the records written (-c); -e only guards against
    // a shortfall, which ends the read at the end of the partition with its offset on stderr.
    // Tuned settings and librdkafka's defaults alternate which goes first from trial to trial.
    const reads: Array<{ settings: string[]; result?: CommandResult; cpu?: number; fetches?: string }> = [{ settings: kcatFetchSettings }, { settings: [] }];
    for (const r of readOrder++ % 2 === 0 ? reads : [...reads].reverse()) {
      const [before, metrics] = [q.cpuSeconds(), await scrapeMetrics(q.httpAddress)];
      r.result = await consume(['-c', String(records), '-e'], r.settings);
      r.cpu = q.cpuSeconds() - before;
      r.fetches = `${fetchesBetween(metrics, await scrapeMetrics(q.httpAddress), r.cpu, records * size)}, ${clientCpu(r.result)}`;
    }
    console.log(`    read-back fetches: tuned ${reads[0]!.fetches}; librdkafka's defaults ${reads[1]!.fetches}`);
    const [tuned, defaults] = reads as Array<{ result: CommandResult; cpu: number }>;
    const cpu2 = q.cpuSeconds();
    // To the end of the partition (-e): librdkafka reports the end only from one more fetch at the
    // high watermark, which any broker holds for fetch.wait.max.ms (500 ms) before answering empty.
    const toEnd = await consume(['-e'], kcatFetchSettings);
    const cpu3 = q.cpuSeconds();
    const endOf = (r: CommandResult): RegExpMatchArray | null => r.stderr.match(/Reached end of topic \S+ \[0\] at offset (\d+)/);
    const end = endOf(toEnd);
    const endOffset = end ? Number(end[1]) : NaN;
    const shortfall = [tuned!.result, defaults!.result].some((r) => r.code !== 0 || (endOf(r) !== null && Number(endOf(r)![1]) < records));
    if (shortfall || toEnd.code !== 0 || endOffset !== records) {
      const note = `read back short: end offset ${endOffset} of ${records} records (kcat -C exits ${tuned!.result.code} / ${defaults!.result.code} / ${toEnd.code}: ${(tuned!.result.stderr + defaults!.result.stderr + toEnd.stderr).slice(0, 300)})`;
      return { ingest: failed(note), read: failed(note), readDefaults: failed(note), readToEnd: failed(note) };
    }
    return {
      ingest: throughput(records, size, produced.seconds, cpu1 - cpu0),
      read: throughput(records, size, tuned!.result.seconds, tuned!.cpu),
      readDefaults: throughput(records, size, defaults!.result.seconds, defaults!.cpu),
      readToEnd: throughput(records, size, toEnd.seconds, cpu3 - cpu2),
    };
  } finally {
    await q.stop();
  }
}

function redisCsvRps(stdout: string): number {
  // --csv: a header line, then "<command>","<rps>",...; the command contains no '"' here.
  const line = stdout.trim().split('\n').at(-1) ?? '';
  const m = line.match(/^"[^"]*","([\d.]+)"/);
  return m ? Number(m[1]) : NaN;
}

async function redisTrial(size: number): Promise<{ ingest: Throughput; read: Throughput }> {
  const r = await startRedis();
  try {
    const stream = `bench-${size}`;
    const value = 'v'.repeat(size);
    const cpu0 = r.cpuSeconds();
    const add = await timeCommand('redis-benchmark', ['-h', '127.0.0.1', '-p', r.address, '-n', String(records), '-c', String(redisClients), '-P', String(redisPipeline), '--csv', 'XADD', stream, '*', 'f', value], { stdout: 'pipe' });
    if (add.code !== 0) return { ingest: failed(`redis-benchmark exited ${add.code}: ${add.stderr.slice(0, 300)}`), read: failed('no data') };
    // With -c and -P, redis-benchmark may send a few more than -n commands: count what the stream holds.
    const len = await timeCommand('redis-cli', ['-p', r.address, 'XLEN', stream], { stdout: 'pipe' });
    const count = Number(len.stdout.trim());
    if (!(count >= records)) return { ingest: failed(`XLEN ${len.stdout.trim()}, expected ${records}`), read: failed('no data') };
    const cpu1 = r.cpuSeconds();
    const ingest = { ...throughput(count, size, add.seconds, cpu1 - cpu0), note: `redis-benchmark's own figure: ${int(redisCsvRps(add.stdout))} rec/s` };
    // Read-back baseline: one connection, XRANGE pages of redisRangeCount entries, as many pages as
    // the stream holds (XRANGE by id costs O(log N + M) wherever the page is).
    const pages = Math.ceil(records / redisRangeCount);
    const range = await timeCommand('redis-benchmark', ['-h', '127.0.0.1', '-p', r.address, '-n', String(pages), '-c', '1', '-P', '1', '--csv', 'XRANGE', stream, '-', '+', 'COUNT', String(redisRangeCount)], { stdout: 'pipe' });
    const read = range.code === 0 ? throughput(pages * redisRangeCount, size, range.seconds, r.cpuSeconds() - cpu1) : failed(`redis-benchmark XRANGE exited ${range.code}`);
    return { ingest, read };
  } finally {
    await r.stop();
  }
}

/** Which kcat read-back goes first in the next trial (tuned first on even counts). */
let readOrder = 0;

async function kcatVsRedis(): Promise<void> {
  const haveKcat = available('kcat', ['-V']);
  const haveRedis = available('redis-server', ['--version']) && available('redis-benchmark', ['--version']) && available('redis-cli', ['--version']);
  if (!haveKcat) return skipped('kcat ingest and read-back', 'apt-get install kcat');
  if (!haveRedis) console.log('\nRedis Streams baseline: skipped: apt-get install redis-server redis-tools');
  const inputDir = benchDir('kafka-input-');
  try {
    const rows: Row[] = [];
    for (const size of sizes) {
      const file = join(inputDir, `records-${size}.txt`);
      await writeInput(file, size, records);
      const q: KcatTrial[] = [];
      const r: Array<{ ingest: Throughput; read: Throughput }> = [];
      for (let t = 0; t < trials; t++) {
        // Alternate, each after a full sync so that one's dirty pages do not slow the other.
        spawnSync('sync');
        q.push(await quartetKcatTrial(file, size));
        if (haveRedis) {
          spawnSync('sync');
          r.push(await redisTrial(size));
        }
        const last = q.at(-1)!;
        const cpu = (x: Throughput): string => `${fmt(x.seconds, 2)} s, server CPU ${fmt(x.serverCpu, 2)} s`;
        console.log(
          `  trial ${t + 1}/${trials} ${sizeName(size)} (load ${loadAverage()}): Quartet ingest ${recS(last.ingest.recordsPerSecond)} (${cpu(last.ingest)}), read ${mbS(last.read.mbPerSecond)} (${cpu(last.read)}), at librdkafka's defaults ${mbS(last.readDefaults.mbPerSecond)} (${cpu(last.readDefaults)}), to the end ${mbS(last.readToEnd.mbPerSecond)} (${cpu(last.readToEnd)})` +
            (haveRedis ? `; Redis XADD ${recS(r.at(-1)!.ingest.recordsPerSecond)} (${cpu(r.at(-1)!.ingest)}), XRANGE ${mbS(r.at(-1)!.read.mbPerSecond)} (${cpu(r.at(-1)!.read)})` : '') +
            [q.at(-1), r.at(-1)].map((x) => x?.ingest.note ?? x?.read.note).filter((n) => n).map((n) => ` [${n}]`).join(''),
        );
      }
      removeDir(file);
      const qi = median(q.map((x) => x.ingest.recordsPerSecond));
      const qiMb = median(q.map((x) => x.ingest.mbPerSecond));
      const qr = median(q.map((x) => x.read.mbPerSecond));
      const qrRec = median(q.map((x) => x.read.recordsPerSecond));
      const qd = median(q.map((x) => x.readDefaults.mbPerSecond));
      const qdRec = median(q.map((x) => x.readDefaults.recordsPerSecond));
      const qe = median(q.map((x) => x.readToEnd.mbPerSecond));
      const qeRec = median(q.map((x) => x.readToEnd.recordsPerSecond));
      const ri = haveRedis ? median(r.map((x) => x.ingest.recordsPerSecond)) : NaN;
      const riMb = haveRedis ? median(r.map((x) => x.ingest.mbPerSecond)) : NaN;
      const rr = haveRedis ? median(r.map((x) => x.read.mbPerSecond)) : NaN;
      const rrRec = haveRedis ? median(r.map((x) => x.read.recordsPerSecond)) : NaN;
      const ingestTarget = size === 1024 ? `>= 1.5x Redis: ${Number.isFinite(ri) ? verdict(qi / ri >= 1.5) : 'n/a'}` : undefined;
      rows.push({
        case: `ingest ${int(records)} x ${sizeName(size)} (kcat -P vs redis-benchmark XADD -P ${redisPipeline})`,
        value: `${recS(qi)} (${mbS(qiMb)})`,
        baseline: haveRedis ? `${recS(ri)} (${mbS(riMb)})` : 'skipped',
        ratio: ratio(qi, ri),
        ...(ingestTarget ? { target: ingestTarget } : {}),
      });
      rows.push({
        case: `read-back ${int(records)} x ${sizeName(size)}, librdkafka's default consumer settings (kcat -C -c ${int(records)} vs XRANGE COUNT ${redisRangeCount})`,
        value: `${mbS(qd)} (${recS(qdRec)})`,
        baseline: haveRedis ? `${mbS(rr)} (${recS(rrRec)})` : 'skipped',
        ratio: ratio(qd, rr),
        target: `>= 1,000 MB/s: ${verdict(qd >= 1000)}`,
      });
      rows.push({
        case: `read-back ${int(records)} x ${sizeName(size)}, tuned: ${kcatFetchSettings.join(' ')} (kcat -C -c ${int(records)} vs XRANGE COUNT ${redisRangeCount})`,
        value: `${mbS(qr)} (${recS(qrRec)})`,
        baseline: haveRedis ? `${mbS(rr)} (${recS(rrRec)})` : 'skipped',
        ratio: ratio(qr, rr),
      });
      rows.push({
        case: `read-back to the end, ${int(records)} x ${sizeName(size)} (kcat -C -e: one more fetch, held 500 ms at the high watermark)`,
        value: `${mbS(qe)} (${recS(qeRec)})`,
        baseline: haveRedis ? `${mbS(rr)} (${recS(rrRec)})` : 'skipped',
        ratio: ratio(qe, rr),
      });
    }
    printTable(`Kafka with kcat vs Redis Streams (median of ${trials}; payload bytes; ratio = Quartet / Redis)`, rows);
  } finally {
    removeDir(inputDir);
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Node client (acks=-1) vs NATS JetStream acknowledged publish

interface Rate {
  count: number;
  seconds: number;
}

const rateOf = (r: Rate): number => r.count / r.seconds;

async function kafkajsProduce(bootstrap: string, topic: string): Promise<Rate> {
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({ clientId: 'quartet-bench', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const value = Buffer.alloc(nodeRecordBytes, 0x61);
  const messages = Array.from({ length: nodeBatch }, () => ({ value }));
  try {
    return await pipeline(nodeInFlight, nodeBatch, () => producer.send({ topic, acks: -1, messages }));
  } finally {
    await producer.disconnect();
  }
}

async function platformaticProduce(bootstrap: string, topic: string): Promise<Rate> {
  const { Admin, Producer, ProduceAcks } = await requirePlatformaticKafka();
  const admin = new Admin({ clientId: 'quartet-bench', bootstrapBrokers: [bootstrap] });
  try {
    await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
  } finally {
    await admin.close();
  }
  const producer = new Producer({ clientId: 'quartet-bench', bootstrapBrokers: [bootstrap], autocreateTopics: false });
  const value = Buffer.alloc(nodeRecordBytes, 0x61);
  const messages = Array.from({ length: nodeBatch }, () => ({ topic, partition: 0, value }));
  try {
    return await pipeline(nodeInFlight, nodeBatch, () => producer.send({ messages, acks: ProduceAcks.ALL }));
  } finally {
    await producer.close();
  }
}

/**
 * Keeps `window` operations of `perOp` records in flight until nodeRecords records are sent or
 * nodeSecondsMax passes; the count is of acknowledged records.
 */
async function pipeline(window: number, perOp: number, op: () => Promise<unknown>): Promise<Rate> {
  const start = performance.now();
  const deadline = start + nodeSecondsMax * 1000;
  let started = 0;
  let count = 0;
  let failure: unknown = null;
  const worker = async (): Promise<void> => {
    while (failure === null && started < nodeRecords && performance.now() < deadline) {
      started += perOp;
      try {
        await op();
        count += perOp;
      } catch (err) {
        failure = err;
      }
    }
  };
  await Promise.all(Array.from({ length: window }, worker));
  if (failure !== null) throw failure;
  return { count, seconds: (performance.now() - start) / 1000 };
}

async function jetstreamPublish(address: string): Promise<Rate> {
  const { connect, StorageType } = await import('nats');
  const nc = await connect({ servers: address });
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'BENCH', subjects: ['bench'], storage: StorageType.File });
    const js = nc.jetstream();
    const value = Buffer.alloc(nodeRecordBytes, 0x61);
    const rate = await pipeline(jsWindow, 1, () => js.publish('bench', value));
    const info = await jsm.streams.info('BENCH');
    if (info.state.messages !== rate.count) throw new Error(`JetStream holds ${info.state.messages} messages, ${rate.count} acknowledged`);
    return rate;
  } finally {
    await nc.close();
  }
}

async function nodeVsJetstream(): Promise<void> {
  const haveNats = available('nats-server', ['--version']);
  if (!haveNats) skipped('Node client vs NATS JetStream', 'apt-get install nats-server');
  let natsClient = true;
  try {
    await import('nats');
  } catch {
    natsClient = false;
    skipped('Node client vs NATS JetStream', 'npm install (the `nats` devDependency)');
  }
  const clients: Array<{ name: string; run: (bootstrap: string, topic: string) => Promise<Rate> }> = [
    { name: 'KafkaJS 2.2.4', run: kafkajsProduce },
    { name: '@platformatic/kafka', run: platformaticProduce },
  ];
  const results: Array<{ name: string; rates: number[]; error?: string }> = clients.map((c) => ({ name: c.name, rates: [] }));
  const jsRates: number[] = [];
  for (let t = 0; t < trials; t++) {
    for (let i = 0; i < clients.length; i++) {
      spawnSync('sync');
      const q = await startQuartet();
      try {
        results[i]!.rates.push(rateOf(await clients[i]!.run(q.address, `node-${t}`)));
      } catch (err) {
        results[i]!.error = String(err);
      } finally {
        await q.stop();
      }
    }
    if (haveNats && natsClient) {
      spawnSync('sync');
      const n = await startNats();
      try {
        jsRates.push(rateOf(await jetstreamPublish(n.address)));
      } finally {
        await n.stop();
      }
    }
    console.log(`  trial ${t + 1}/${trials}: ${results.map((r) => `${r.name} ${recS(r.rates.at(-1) ?? NaN)}`).join(', ')}, JetStream ${recS(jsRates.at(-1) ?? NaN)}`);
  }
  const js = median(jsRates);
  const best = Math.max(...results.map((r) => median(r.rates)).filter(Number.isFinite));
  const rows: Row[] = results.map((r) => {
    const q = median(r.rates);
    return {
      case: `${r.name}, ${int(nodeRecords)} x 1 KiB, acks=-1, ${nodeBatch}/request, ${nodeInFlight} in flight${r.error ? ` (error: ${r.error.slice(0, 120)})` : ''}`,
      value: `${recS(q)} (${mbS((q * nodeRecordBytes) / 1e6)})`,
      baseline: `${recS(js)} (${mbS((js * nodeRecordBytes) / 1e6)})`,
      ratio: ratio(q, js),
      target: q === best ? `>= 3x JetStream: ${Number.isFinite(js) ? verdict(q / js >= 3) : 'n/a'}` : '(slower client)',
    };
  });
  printTable(`Node client vs NATS JetStream acknowledged publish (median of ${trials}; baseline = nats client, file storage, ${jsWindow} publishes in flight; ratio = Quartet / JetStream)`, rows);
}

// ---------------------------------------------------------------------------------------------
// 3. Produce latency at a fixed rate

interface Latencies {
  sorted: number[];
  errors: number;
  /** Sends issued more than 10 ms after their slot (the client fell behind). */
  late: number;
  /** The bench process's own event-loop delay over the run, p99 and max in ms (1 ms resolution): the client's share of a slow send. */
  clientLoopMs?: { p99: number; max: number };
}

/**
 * Open loop: send i is issued at start + i / rate, whether or not earlier sends were acknowledged
 * (no coordinated omission); each latency is from the call to its acknowledgement. The first
 * warmup seconds are not recorded.
 */
async function fixedRate(send: () => Promise<unknown>): Promise<Latencies> {
  const total = latencyRate * (latencyWarmupSeconds + latencySeconds);
  const warmup = latencyRate * latencyWarmupSeconds;
  const interval = 1000 / latencyRate;
  const samples: number[] = [];
  const pending = new Set<Promise<void>>();
  let errors = 0;
  let late = 0;
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0.5) await sleep(Math.floor(wait));
    if (performance.now() - due > 10) late++;
    const t0 = performance.now();
    const p: Promise<void> = send().then(
      () => {
        if (i >= warmup) samples.push(performance.now() - t0);
      },
      () => {
        errors++;
      },
    );
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }
  // Bounded drain of what is still in flight.
  await Promise.race([Promise.all(pending), sleep(10_000)]);
  errors += pending.size;
  return { sorted: samples.sort((a, b) => a - b), errors, late };
}

/** The two latency topics: the default fsync policy, and quartet.fsync.policy=always (checked). */
async function createLatencyTopics(bootstrap: string): Promise<void> {
  const { Kafka, logLevel } = await import('kafkajs');
  const admin = new Kafka({ clientId: 'quartet-bench-latency', brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [
        { topic: 'latency-interval', numPartitions: 1 },
        { topic: 'latency-always', numPartitions: 1, configEntries: [{ name: 'quartet.fsync.policy', value: 'always' }] },
      ],
    });
    const described = await admin.describeConfigs({ resources: [{ type: 2, name: 'latency-always', configNames: ['quartet.fsync.policy'] }], includeSynonyms: false });
    const policy = described.resources[0]?.configEntries.find((e) => e.configName === 'quartet.fsync.policy')?.configValue;
    if (policy !== 'always') throw new Error(`latency-always has quartet.fsync.policy=${policy}`);
  } finally {
    await admin.disconnect();
  }
}

/** A sender for fixedRate and how to let it go. */
interface LatencyClient {
  send(): Promise<unknown>;
  close(): Promise<void>;
}

async function rawKafkaClient(bootstrap: string, topic: string): Promise<LatencyClient> {
  const producer = await RawKafkaProducer.open(bootstrap);
  const value = Buffer.alloc(latencyRecordBytes, 0x6c);
  return { send: () => producer.send(topic, value, -1), close: async () => producer.close() };
}

async function kafkajsClient(bootstrap: string, topic: string): Promise<LatencyClient> {
  const { Kafka, logLevel } = await import('kafkajs');
  const producer = new Kafka({ clientId: 'quartet-bench-latency', brokers: [bootstrap], logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const value = Buffer.alloc(latencyRecordBytes, 0x6c);
  return { send: () => producer.send({ topic, acks: -1, messages: [{ value }] }), close: () => producer.disconnect() };
}

/** The Iggy SDK: sendMessages of one message to partition 0 of a topic with default settings (interval fsync). */
async function iggyClient(address: string): Promise<LatencyClient> {
  const client = new IggyClient({ addr: address, credentials: { username: 'root', password: quartetRootPassword }, pingIntervalMs: 0, reconnect: false, requestTimeoutMs: 30_000 });
  await client.connect();
  const name = `latency-${Math.random().toString(36).slice(2, 8)}`;
  await client.createStream(name);
  await client.createTopic({ streamId: name, name, partitionsCount: 1 });
  const messages = [Buffer.alloc(latencyRecordBytes, 0x6c)];
  return { send: () => client.sendMessages({ streamId: name, topicId: name, partitioning: { partitionId: 0 }, messages }), close: () => client.close() };
}

async function jetstreamClient(address: string): Promise<LatencyClient> {
  const { connect, StorageType } = await import('nats');
  const nc = await connect({ servers: address });
  const jsm = await nc.jetstreamManager();
  const subject = `latency-${Math.random().toString(36).slice(2, 8)}`;
  await jsm.streams.add({ name: subject.toUpperCase(), subjects: [subject], storage: StorageType.File });
  const js = nc.jetstream();
  const value = Buffer.alloc(latencyRecordBytes, 0x6c);
  return { send: () => js.publish(subject, value), close: () => nc.close() };
}

/**
 * The disk's own floor: append 1 KiB + fdatasync on a file of the bench directory, through
 * libuv's thread pool (as the broker's appends are), one at a time as the log would.
 */
async function fdatasyncClient(): Promise<LatencyClient> {
  const dir = benchDir('kafka-fsync-');
  const file = await open(join(dir, 'f'), 'w');
  const buf = Buffer.alloc(latencyRecordBytes, 0x66);
  let tail: Promise<unknown> = Promise.resolve();
  return {
    send: () => {
      const done = tail.then(async () => {
        await file.write(buf);
        await file.datasync();
      });
      tail = done.catch(() => {});
      return done;
    },
    close: async () => {
      await file.close();
      removeDir(dir);
    },
  };
}

/** The broker's /metrics text (HTTP endpoint on); empty when it cannot be read. */
async function scrapeMetrics(httpAddress: string | undefined): Promise<string> {
  if (httpAddress === undefined) return '';
  try {
    const response = await fetch(`http://${httpAddress}/metrics`);
    return response.ok ? await response.text() : '';
  } catch {
    return '';
  }
}

/** The value of the sample `series` (name and labels exactly as printed), or 0. */
function sample(metrics: string, series: string): number {
  const at = metrics.indexOf(`\n${series} `);
  return at < 0 ? 0 : Number(metrics.slice(at + series.length + 2, metrics.indexOf('\n', at + 1)));
}

/**
 * What the broker saw of one run, from two scrapes of its /metrics: its own time per Produce
 * request (framed request to written reply) as histogram bucket bounds, the GC pauses, and the
 * event-loop delay (the delay figures start over at every scrape, so the second covers the run).
 */
function brokerView(before: string, after: string, cpuSeconds: number): string {
  if (before === '' || after === '') return 'n/a';
  const bounds = ['0.0001', '0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];
  const bucket = (m: string, le: string): number => sample(m, `quartet_request_duration_seconds_bucket{listener="kafka",operation="Produce",le="${le}"}`);
  const counts = bounds.map((le) => bucket(after, le) - bucket(before, le));
  const total = counts.at(-1)!;
  const atMost = (q: number): string => {
    const i = counts.findIndex((c) => c >= q * total);
    return bounds[i] === '+Inf' ? '> 10 s' : `≤ ${fmt(Number(bounds[i]) * 1000, Number(bounds[i]) < 0.001 ? 1 : 0)} ms`;
  };
  const gc = (kind: string, what: 'count' | 'sum'): number => sample(after, `nodejs_gc_duration_seconds_${what}{kind="${kind}"}`) - sample(before, `nodejs_gc_duration_seconds_${what}{kind="${kind}"}`);
  const lag = (quantile: string): string => fmt(sample(after, `nodejs_eventloop_lag_seconds{quantile="${quantile}"}`) * 1000, 0);
  return (
    `Produce p50 ${atMost(0.5)}, p99 ${atMost(0.99)}, p99.9 ${atMost(0.999)} (${int(total)} requests, ${fmt((cpuSeconds / Math.max(1, total)) * 1e6, 0)} µs of broker CPU each); ` +
    `${gc('minor', 'count')} scavenges (${fmt(gc('minor', 'sum') * 1000, 0)} ms), ${gc('major', 'count')} mark-compacts (${fmt(gc('major', 'sum') * 1000, 0)} ms); ` +
    `event-loop delay p99 ${lag('0.99')} ms, max ${lag('max')} ms (20 ms sampler)`
  );
}

/** Runs one client at the fixed rate (after a sync, so that no earlier run's dirty pages are written meanwhile). */
async function latencyRun(open: () => Promise<LatencyClient>): Promise<Latencies> {
  spawnSync('sync');
  const client = await open();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  try {
    loop.enable();
    const result = await fixedRate(() => client.send());
    loop.disable();
    return { ...result, clientLoopMs: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 } };
  } finally {
    loop.disable();
    await client.close();
  }
}

const pcts = (l: Latencies): string => (l.sorted.length === 0 ? 'n/a' : [50, 99, 99.9].map((p) => fmt(percentile(l.sorted, p), 2)).join(' / ') + ' ms');
const pctRatio = (a: Latencies, b: Latencies): string =>
  a.sorted.length === 0 || b.sorted.length === 0 ? 'n/a' : [50, 99, 99.9].map((p) => fmt(percentile(a.sorted, p) / percentile(b.sorted, p), 2)).join(' / ');
const notes = (l: Latencies): string => (l.errors > 0 || l.late > 0 ? ` (${l.errors} errors, ${l.late} late sends)` : '');
/** Every trial's samples in one distribution. */
function pooled(runs: Latencies[]): Latencies {
  return { sorted: runs.flatMap((r) => r.sorted).sort((a, b) => a - b), errors: runs.reduce((n, r) => n + r.errors, 0), late: runs.reduce((n, r) => n + r.late, 0) };
}
/** Each trial's p99 ratio, for the spread. */
const trialP99s = (a: Latencies[], b: Latencies[]): string => a.map((r, i) => fmt(percentile(r.sorted, 99) / percentile(b[i]!.sorted, 99), 2)).join(', ');

/**
 * Produce latency at a fixed rate. One Quartet (Kafka and Iggy listeners) and one nats-server run
 * through the whole part; each trial runs every client once, interleaved, each on a fresh
 * connection: JetStream, the raw Kafka producer, the Iggy SDK, KafkaJS, then with
 * quartet.fsync.policy=always the raw producer and the disk's fdatasync floor.
 */
async function latency(): Promise<void> {
  const haveNats = available('nats-server', ['--version']);
  if (!haveNats) skipped('JetStream latency baseline', 'apt-get install nats-server');
  const load0 = loadAverage();
  spawnSync('sync');
  const q = await startQuartet(['kafka', 'iggy'], true);
  const n = haveNats ? await startNats() : null;
  /** The broker's own view of each raw-client run (brokerView). */
  const views: string[] = [];
  /** nats-server's CPU seconds in each JetStream run, for the broker's CPU per request beside it. */
  const jsCpu: number[] = [];
  const runs = { js: [] as Latencies[], raw: [] as Latencies[], iggy: [] as Latencies[], kafkajs: [] as Latencies[], always: [] as Latencies[], disk: [] as Latencies[] };
  try {
    await createLatencyTopics(q.address);
    for (let t = 0; t < latencyTrials; t++) {
      if (n !== null) {
        const cpuBefore = n.cpuSeconds();
        runs.js.push(await latencyRun(() => jetstreamClient(n.address)));
        jsCpu.push(n.cpuSeconds() - cpuBefore);
      }
      const [before, cpuBefore] = [await scrapeMetrics(q.httpAddress), q.cpuSeconds()];
      runs.raw.push(await latencyRun(() => rawKafkaClient(q.address, 'latency-interval')));
      views.push(brokerView(before, await scrapeMetrics(q.httpAddress), q.cpuSeconds() - cpuBefore));
      runs.iggy.push(await latencyRun(() => iggyClient(q.iggyAddress!)));
      runs.kafkajs.push(await latencyRun(() => kafkajsClient(q.address, 'latency-interval')));
      runs.always.push(await latencyRun(() => rawKafkaClient(q.address, 'latency-always')));
      runs.disk.push(await latencyRun(fdatasyncClient));
      const p99 = (l: Latencies | undefined): string => (l === undefined ? 'n/a' : fmt(percentile(l.sorted, 99), 2));
      console.log(`  trial ${t + 1}/${latencyTrials} (load ${loadAverage()}) p99 (ms): JetStream ${p99(runs.js.at(-1))}, raw Kafka ${p99(runs.raw.at(-1))}, Iggy SDK ${p99(runs.iggy.at(-1))}, KafkaJS ${p99(runs.kafkajs.at(-1))}, raw Kafka always ${p99(runs.always.at(-1))}, fdatasync ${p99(runs.disk.at(-1))}`);
      console.log(`    the broker during the raw Kafka run: ${views.at(-1)}`);
      const loopOf = (l: Latencies | undefined): string => (l?.clientLoopMs === undefined ? 'n/a' : `${fmt(l.clientLoopMs.p99, 1)}/${fmt(l.clientLoopMs.max, 1)}`);
      console.log(`    the bench process's own event-loop delay p99/max (ms; 1 ms resolution): JetStream ${loopOf(runs.js.at(-1))}, raw Kafka ${loopOf(runs.raw.at(-1))}, Iggy SDK ${loopOf(runs.iggy.at(-1))}, KafkaJS ${loopOf(runs.kafkajs.at(-1))}`);
    }
  } finally {
    await Promise.all([q.stop(), n?.stop()]);
  }
  const load1 = loadAverage();
  const js = haveNats ? pooled(runs.js) : null;
  const raw = pooled(runs.raw);
  const vsJs = (l: Latencies, trialsOf: Latencies[]): Pick<Row, 'baseline' | 'ratio'> =>
    js ? { baseline: `${pcts(js)}${notes(js)}`, ratio: `${pctRatio(l, js)} (p99 by trial: ${trialP99s(trialsOf, runs.js)})` } : { baseline: 'skipped', ratio: 'n/a' };
  const target = (): string => {
    if (!js) return 'n/a';
    const met = percentile(raw.sorted, 99) <= 2 * percentile(js.sorted, 99) && percentile(raw.sorted, 99.9) <= 3 * percentile(js.sorted, 99.9);
    return `p99 <= 2x, p99.9 <= 3x JetStream: ${verdict(met)}`;
  };
  const count = latencyTrials * latencyRate * latencySeconds;
  printTable(
    `Produce latency p50 / p99 / p99.9 at ${int(latencyRate)} sends/s x ${latencySeconds} s x ${latencyTrials} trials (${int(count)} sends of one ${sizeName(latencyRecordBytes)} record per client, acks=all, all trials pooled; ratio = Quartet / baseline per percentile; load average ${load0} before, ${load1} after)`,
    [
      { case: `Kafka, raw Produce client (bench/raw-kafka-producer.ts), default fsync policy vs JetStream publish + ack${notes(raw)}`, value: pcts(raw), ...vsJs(raw, runs.raw), target: target() },
      { case: `Iggy SDK sendMessages of one message, default settings vs JetStream publish + ack${notes(pooled(runs.iggy))}`, value: pcts(pooled(runs.iggy)), ...vsJs(pooled(runs.iggy), runs.iggy) },
      { case: `Kafka, KafkaJS 2.2.4 send() (client cost included) vs JetStream publish + ack${notes(pooled(runs.kafkajs))}`, value: pcts(pooled(runs.kafkajs)), ...vsJs(pooled(runs.kafkajs), runs.kafkajs) },
      { case: `Kafka, raw Produce client, quartet.fsync.policy=always vs write + fdatasync of 1 KiB${notes(pooled(runs.always))}`, value: pcts(pooled(runs.always)), baseline: `${pcts(pooled(runs.disk))}${notes(pooled(runs.disk))}`, ratio: `${pctRatio(pooled(runs.always), pooled(runs.disk))} (p99 by trial: ${trialP99s(runs.always, runs.disk)})` },
    ],
  );
  console.log('\nThe broker during the raw Kafka runs (its /metrics: time from a framed Produce request to its written reply, GC pauses, event-loop delay):');
  views.forEach((v, i) => console.log(`- trial ${i + 1}: ${v}; nats-server in the JetStream run: ${jsCpu[i] === undefined ? 'n/a' : `${fmt((jsCpu[i]! / (latencyRate * (latencySeconds + latencyWarmupSeconds))) * 1e6, 0)} µs of CPU per publish`}`));
}

// ---------------------------------------------------------------------------------------------

/** QUARTET_BENCH_KAFKA_PARTS: a comma-separated subset of kcat, node, latency (default all). */
const knownParts = ['kcat', 'node', 'latency'];
const parts = new Set((process.env['QUARTET_BENCH_KAFKA_PARTS'] ?? knownParts.join(',')).split(',').map((p) => p.trim()));
const unknownParts = [...parts].filter((p) => !knownParts.includes(p));

export async function runKafkaBench(): Promise<void> {
  if (unknownParts.length > 0) throw new Error(`QUARTET_BENCH_KAFKA_PARTS: unknown ${unknownParts.join(', ')} (known: ${knownParts.join(', ')})`);
  console.log(`\n# Kafka (${int(records)} records per kcat case, ${trials} trials)`);
  try {
    if (parts.has('kcat')) await kcatVsRedis();
    if (parts.has('node')) await nodeVsJetstream();
    if (parts.has('latency')) await latency();
  } finally {
    await Promise.all([...children].map((c) => stopChild(c)));
  }
}
