// Kafka benchmark: Quartet's Kafka listener against Redis Streams and NATS JetStream, measured in
// the same run, each figure printed next to its baseline as a ratio.
//
// 1. kcat (librdkafka batching) ingests 1,000,000 records of 100 B and of 1 KiB from a file into one
//    partition, and reads them back to /dev/null: `kcat -C -c 1000000` (exits after the last record;
//    the target's figure), then `kcat -C -e` (to the end of the partition, which librdkafka learns
//    from one more fetch that every broker holds for fetch.wait.max.ms, 500 ms: context). Baseline: redis-server
//    (appendonly yes, appendfsync everysec) fed by `redis-benchmark -P 64` pipelined XADD of the same
//    value sizes, and read back with XRANGE ... COUNT 1000.
//    Targets: ingest >= 1.5x Redis at 1 KiB; read-back >= 1 GB/s.
// 2. A Node client (KafkaJS and @platformatic/kafka; the faster one counts) produces 1 KiB records
//    with acks=-1, against the `nats` client publishing to a JetStream file-storage stream, awaiting
//    every ack with a window of publishes in flight. Target: >= 3x JetStream's acknowledged rate.
// 3. Produce latency at a fixed 1,000 records/s with acks=all (KafkaJS, one record per send),
//    p50/p99/p99.9, on a topic with the default fsync policy (interval; baseline: JetStream publish
//    latency at the same rate) and on one with quartet.fsync.policy=always (baseline: the disk's own
//    write + fdatasync latency).
//
// Every server is started here on 127.0.0.1 with a fresh directory under benchDir() (the project's
// disk, not tmpfs) and stopped at the end, also on error. A missing external tool skips its part
// with an install hint. Every loop is bounded in count and in time.
//
// Environment: QUARTET_BENCH_KAFKA_RECORDS (default 1000000), QUARTET_BENCH_KAFKA_TRIALS (3),
// QUARTET_BENCH_KAFKA_PARTS (a comma-separated subset of kcat, node, latency; default all),
// QUARTET_BENCH_CPU_PROF=<dir> (run the Quartet broker under `node --cpu-prof`, profiles in <dir>).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, createWriteStream, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchDir, cpuSecondsOf, fmt, percentile, printTable, removeDir, quartetServeArgs, stopChild, waitForOutput, type Row } from './harness.js';
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

async function startQuartet(): Promise<Service> {
  const dir = benchDir('kafka-quartet-');
  const args = quartetServeArgs(join(repoRoot, 'bin/quartet.js'), join(dir, 'data'), 'kafka');
  const s = await startService('quartet', process.execPath, args, /"msg":"listening","listener":"kafka","address":"([^"]+)"/, dir, { QUARTET_ROOT_PASSWORD: 'bench-root-password' });
  return { name: 'quartet', address: s.match[1]!, cpuSeconds: cpuOf(s.child), stop: s.stop };
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

async function quartetKcatTrial(file: string, size: number): Promise<{ ingest: Throughput; read: Throughput; readToEnd: Throughput }> {
  const q = await startQuartet();
  try {
    const topic = `bench-${size}`;
    const x = (settings: string[]): string[] => settings.flatMap((s) => ['-X', s]);
    const cpu0 = q.cpuSeconds();
    const produced = await timeCommand('kcat', ['-P', '-b', q.address, '-t', topic, '-p', '0', '-z', 'none', ...x(kcatProduceSettings), '-l', file]);
    if (produced.code !== 0) {
      const note = `kcat -P exited ${produced.code}: ${produced.stderr.slice(0, 300)}`;
      return { ingest: failed(note), read: failed('no data'), readToEnd: failed('no data') };
    }
    const cpu1 = q.cpuSeconds();
    const consume = (until: string[]): Promise<CommandResult> =>
      timeCommand('kcat', ['-C', '-b', q.address, '-t', topic, '-p', '0', '-o', 'beginning', ...until, '-f', '%s\\n', ...x(kcatFetchSettings)], { stdout: 'devnull' });
    // Read-back: kcat exits once it has consumed the records written (-c); -e only guards against
    // a shortfall, which ends the read at the end of the partition with its offset on stderr.
    const counted = await consume(['-c', String(records), '-e']);
    const cpu2 = q.cpuSeconds();
    // To the end of the partition (-e): librdkafka reports the end only from one more fetch at the
    // high watermark, which any broker holds for fetch.wait.max.ms (500 ms) before answering empty.
    const toEnd = await consume(['-e']);
    const cpu3 = q.cpuSeconds();
    const short = counted.stderr.match(/Reached end of topic \S+ \[0\] at offset (\d+)/);
    const end = toEnd.stderr.match(/Reached end of topic \S+ \[0\] at offset (\d+)/);
    const endOffset = end ? Number(end[1]) : NaN;
    const shortfall = short !== null && Number(short[1]) < records;
    if (counted.code !== 0 || shortfall || toEnd.code !== 0 || endOffset !== records) {
      const note = `read back ${short ? short[1] : counted.code === 0 ? records : '?'} / ${endOffset} of ${records} records (kcat -C exits ${counted.code} / ${toEnd.code}: ${(counted.stderr + toEnd.stderr).slice(0, 300)})`;
      return { ingest: failed(note), read: failed(note), readToEnd: failed(note) };
    }
    return {
      ingest: throughput(records, size, produced.seconds, cpu1 - cpu0),
      read: throughput(records, size, counted.seconds, cpu2 - cpu1),
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
      const q: Array<{ ingest: Throughput; read: Throughput; readToEnd: Throughput }> = [];
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
          `  trial ${t + 1}/${trials} ${sizeName(size)}: Quartet ingest ${recS(last.ingest.recordsPerSecond)} (${cpu(last.ingest)}), read ${mbS(last.read.mbPerSecond)} (${cpu(last.read)}), to the end ${mbS(last.readToEnd.mbPerSecond)} (${cpu(last.readToEnd)})` +
            (haveRedis ? `; Redis XADD ${recS(r.at(-1)!.ingest.recordsPerSecond)} (${cpu(r.at(-1)!.ingest)}), XRANGE ${mbS(r.at(-1)!.read.mbPerSecond)} (${cpu(r.at(-1)!.read)})` : '') +
            [q.at(-1), r.at(-1)].map((x) => x?.ingest.note ?? x?.read.note).filter((n) => n).map((n) => ` [${n}]`).join(''),
        );
      }
      removeDir(file);
      const qi = median(q.map((x) => x.ingest.recordsPerSecond));
      const qiMb = median(q.map((x) => x.ingest.mbPerSecond));
      const qr = median(q.map((x) => x.read.mbPerSecond));
      const qrRec = median(q.map((x) => x.read.recordsPerSecond));
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
        case: `read-back ${int(records)} x ${sizeName(size)} (kcat -C -c ${int(records)} vs XRANGE COUNT ${redisRangeCount})`,
        value: `${mbS(qr)} (${recS(qrRec)})`,
        baseline: haveRedis ? `${mbS(rr)} (${recS(rrRec)})` : 'skipped',
        ratio: ratio(qr, rr),
        target: `>= 1,000 MB/s: ${verdict(qr >= 1000)}`,
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

async function kafkaLatency(bootstrap: string): Promise<{ interval: Latencies; always: Latencies }> {
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({ clientId: 'quartet-bench-latency', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
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
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const value = Buffer.alloc(latencyRecordBytes, 0x6c);
  try {
    const interval = await fixedRate(() => producer.send({ topic: 'latency-interval', acks: -1, messages: [{ value }] }));
    const always = await fixedRate(() => producer.send({ topic: 'latency-always', acks: -1, messages: [{ value }] }));
    return { interval, always };
  } finally {
    await producer.disconnect();
  }
}

async function jetstreamLatency(address: string): Promise<Latencies> {
  const { connect, StorageType } = await import('nats');
  const nc = await connect({ servers: address });
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'LATENCY', subjects: ['latency'], storage: StorageType.File });
    const js = nc.jetstream();
    const value = Buffer.alloc(latencyRecordBytes, 0x6c);
    return await fixedRate(() => js.publish('latency', value));
  } finally {
    await nc.close();
  }
}

/**
 * The disk's own floor: append 1 KiB + fdatasync on a file of the bench directory, at the same
 * rate, through libuv's thread pool (as the broker's appends are), one at a time as the log would.
 */
async function fdatasyncLatency(): Promise<Latencies> {
  const dir = benchDir('kafka-fsync-');
  const file = await open(join(dir, 'f'), 'w');
  const buf = Buffer.alloc(latencyRecordBytes, 0x66);
  let tail: Promise<unknown> = Promise.resolve();
  try {
    return await fixedRate(() => {
      const done = tail.then(async () => {
        await file.write(buf);
        await file.datasync();
      });
      tail = done.catch(() => {});
      return done;
    });
  } finally {
    await file.close();
    removeDir(dir);
  }
}

const pcts = (l: Latencies): string => (l.sorted.length === 0 ? 'n/a' : [50, 99, 99.9].map((p) => fmt(percentile(l.sorted, p), 2)).join(' / ') + ' ms');
const pctRatio = (a: Latencies, b: Latencies): string =>
  a.sorted.length === 0 || b.sorted.length === 0 ? 'n/a' : [50, 99, 99.9].map((p) => fmt(percentile(a.sorted, p) / percentile(b.sorted, p), 2)).join(' / ');
const notes = (l: Latencies): string => (l.errors > 0 || l.late > 0 ? ` (${l.errors} errors, ${l.late} late sends)` : '');

async function latency(): Promise<void> {
  const haveNats = available('nats-server', ['--version']);
  spawnSync('sync');
  const q = await startQuartet();
  let kafka: { interval: Latencies; always: Latencies };
  try {
    kafka = await kafkaLatency(q.address);
  } finally {
    await q.stop();
  }
  let js: Latencies | null = null;
  if (haveNats) {
    spawnSync('sync');
    const n = await startNats();
    try {
      js = await jetstreamLatency(n.address);
    } finally {
      await n.stop();
    }
  } else {
    skipped('JetStream latency baseline', 'apt-get install nats-server');
  }
  spawnSync('sync');
  const disk = await fdatasyncLatency();
  const n = latencyRate * latencySeconds;
  printTable(`Produce latency p50 / p99 / p99.9 at ${int(latencyRate)} records/s x ${latencySeconds} s (${int(n)} sends of ${sizeName(latencyRecordBytes)}, KafkaJS, acks=-1, one record per send; ratio = Quartet / baseline per percentile)`, [
    {
      case: `quartet.fsync.policy=interval (default) vs JetStream publish + ack at the same rate${notes(kafka.interval)}`,
      value: pcts(kafka.interval),
      baseline: js ? `${pcts(js)}${notes(js)}` : 'skipped',
      ratio: js ? pctRatio(kafka.interval, js) : 'n/a',
    },
    {
      case: `quartet.fsync.policy=always vs write + fdatasync of 1 KiB at the same rate${notes(kafka.always)}`,
      value: pcts(kafka.always),
      baseline: `${pcts(disk)}${notes(disk)}`,
      ratio: pctRatio(kafka.always, disk),
    },
  ]);
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
