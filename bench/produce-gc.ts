// Garbage the broker makes per send: one broker (Kafka and Iggy listeners) runs under
// `--trace-gc-nvp`, and a bounded run of sends of one 1 KiB record each goes to it through the raw
// Kafka Produce client (bench/raw-kafka-producer.ts, acks=all, default fsync policy) and then
// through the Iggy SDK (sendMessages of one message). For each, per 10,000 sends: bytes the broker
// allocated, scavenges and mark-compacts with their pause time (its /metrics,
// nodejs_gc_duration_seconds), and bytes promoted to old space (the trace's promoted= figures).
//
// These figures barely move with the machine's load, unlike latency: they are the A/B measure for
// the GC pauses that make the Produce latency tail (docs/benchmarks.md, "Produce latency").
// Allocated bytes in a window are the heap in use at its end minus at its start, plus what every
// collection inside it freed (total_size_before - total_size_after of the trace lines). A first
// window with no sends gives what the broker allocates on its own per second; the figure in
// brackets takes that out, so that it compares across runs of different lengths.
//
// Environment: QUARTET_BENCH_GC_SENDS (sends per protocol after the warm-up, default 20000),
// QUARTET_BENCH_GC_RATE (sends per second, default 1000; 0 sends as fast as 64 in flight allow),
// QUARTET_BENCH_GC_NODE_FLAGS (more node flags for the broker, e.g. `--trace-gc` for each
// collection's reason), QUARTET_BENCH_GC_LOG (a file that receives the broker's output lines that
// are not JSON log lines: the traces).

import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { IggyClient } from '../src/clients/iggy/index.js';
import { benchDir, fmt, quartetServeArgs, removeDir, stopChild } from './harness.js';
import { RawKafkaProducer } from './raw-kafka-producer.js';

const repoRoot = new URL('..', import.meta.url).pathname;
const envInt = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v >= 0 && process.env[name] !== undefined && process.env[name] !== '' ? v : fallback;
};

const sends = Math.max(1, envInt('QUARTET_BENCH_GC_SENDS', 20_000));
const rate = envInt('QUARTET_BENCH_GC_RATE', 1000);
const warmupSends = 2000;
const recordBytes = 1024;
/** Sends in flight at most when unpaced. */
const window = 64;
/** Hard limit on one run of sends. */
const runSecondsMax = 120;
/** The window that measures what the broker allocates with no sends. */
const idleSeconds = 5;
const rootPassword = 'bench-root-password';
const extraNodeFlags = (process.env['QUARTET_BENCH_GC_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== '');
const traceLog = process.env['QUARTET_BENCH_GC_LOG'];

/** Running totals of the broker's --trace-gc-nvp lines. */
interface GcTrace {
  freed: number;
  promoted: number;
  lines: number;
}

interface Broker {
  kafka: string;
  iggy: string;
  http: string;
  trace: GcTrace;
  stop(): Promise<void>;
}

/** One field of a --trace-gc-nvp line, or 0. */
function nvp(line: string, name: string): number {
  const at = line.indexOf(` ${name}=`);
  if (at < 0) return 0;
  const start = at + name.length + 2;
  const end = line.indexOf(' ', start);
  return Number(line.slice(start, end < 0 ? undefined : end)) || 0;
}

async function startBroker(): Promise<Broker> {
  const dir = benchDir('produce-gc-');
  const args = quartetServeArgs(join(repoRoot, 'bin/quartet.js'), join(dir, 'data'), ['kafka', 'iggy'], { http: true });
  const child: ChildProcess = spawn(process.execPath, ['--trace-gc-nvp', ...extraNodeFlags, ...args], { env: { ...process.env, QUARTET_ROOT_PASSWORD: rootPassword }, stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  const trace: GcTrace = { freed: 0, promoted: 0, lines: 0 };
  const listening = new Map<string, string>();
  const stop = (): Promise<void> => stopChild(child).finally(() => removeDir(dir));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the broker did not start in 30 s')), 30_000);
    child.once('exit', (code) => reject(new Error(`the broker exited with ${code}`)));
    const onLine = (line: string): void => {
      if (traceLog !== undefined && !line.startsWith('{')) appendFileSync(traceLog, line + '\n');
      if (line.includes(' gc=')) {
        trace.lines++;
        trace.freed += nvp(line, 'total_size_before') - nvp(line, 'total_size_after');
        trace.promoted += nvp(line, 'promoted');
        return;
      }
      const m = line.match(/"msg":"listening","listener":"([a-z]+)","address":"([^"]+)"/);
      if (m) listening.set(m[1]!, m[2]!);
      if (line.includes('"msg":"ready"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    createInterface({ input: child.stdout! }).on('line', onLine);
    createInterface({ input: child.stderr! }).on('line', onLine);
  });
  try {
    await ready;
  } catch (err) {
    await stop();
    throw err;
  }
  return { kafka: listening.get('kafka')!, iggy: listening.get('iggy')!, http: listening.get('http')!, trace, stop };
}

/** The value of the sample `series` in a /metrics text, or 0. */
function sample(metrics: string, series: string): number {
  const at = metrics.indexOf(`\n${series} `);
  return at < 0 ? 0 : Number(metrics.slice(at + series.length + 2, metrics.indexOf('\n', at + 1)));
}

interface Snapshot {
  metrics: string;
  trace: GcTrace;
}

async function snapshot(broker: Broker): Promise<Snapshot> {
  const response = await fetch(`http://${broker.http}/metrics`);
  if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
  const metrics = await response.text();
  // The trace lines of collections before the scrape have been read by now (same pipe, earlier).
  return { metrics, trace: { ...broker.trace } };
}

interface GcFigures {
  allocated: number;
  promoted: number;
  scavenges: number;
  scavengeMs: number;
  markCompacts: number;
  markCompactMs: number;
}

function between(a: Snapshot, b: Snapshot): GcFigures {
  const gc = (kind: string, what: 'count' | 'sum'): number => sample(b.metrics, `nodejs_gc_duration_seconds_${what}{kind="${kind}"}`) - sample(a.metrics, `nodejs_gc_duration_seconds_${what}{kind="${kind}"}`);
  const heapUsed = (s: Snapshot): number => sample(s.metrics, 'nodejs_heap_size_used_bytes');
  return {
    allocated: heapUsed(b) - heapUsed(a) + (b.trace.freed - a.trace.freed),
    promoted: b.trace.promoted - a.trace.promoted,
    scavenges: gc('minor', 'count'),
    scavengeMs: gc('minor', 'sum') * 1000,
    markCompacts: gc('major', 'count'),
    markCompactMs: gc('major', 'sum') * 1000,
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `count` sends, paced at `rate` per second (open loop) or `window` in flight; bounded in time. */
async function drive(send: () => Promise<unknown>, count: number): Promise<{ seconds: number; errors: number }> {
  const pending = new Set<Promise<unknown>>();
  let errors = 0;
  const start = performance.now();
  const deadline = start + runSecondsMax * 1000;
  for (let i = 0; i < count && performance.now() < deadline; i++) {
    if (rate > 0) {
      const wait = start + (i * 1000) / rate - performance.now();
      if (wait > 0.5) await sleep(Math.floor(wait));
    } else if (pending.size >= window) {
      await Promise.race(pending);
    }
    const p = send().catch(() => {
      errors++;
    });
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }
  await Promise.race([Promise.all(pending), sleep(10_000)]);
  return { seconds: (performance.now() - start) / 1000, errors: errors + pending.size };
}

async function createKafkaTopic(bootstrap: string, topic: string): Promise<void> {
  const { Kafka, logLevel } = await import('kafkajs');
  const admin = new Kafka({ clientId: 'quartet-bench-gc', brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  } finally {
    await admin.disconnect();
  }
}

interface Sender {
  send(): Promise<unknown>;
  close(): Promise<void>;
}

async function kafkaSender(broker: Broker): Promise<Sender> {
  await createKafkaTopic(broker.kafka, 'gc-kafka');
  const producer = await RawKafkaProducer.open(broker.kafka);
  const value = Buffer.alloc(recordBytes, 0x6c);
  return { send: () => producer.send('gc-kafka', value, -1), close: async () => producer.close() };
}

async function iggySender(broker: Broker): Promise<Sender> {
  const client = new IggyClient({ addr: broker.iggy, credentials: { username: 'root', password: rootPassword }, pingIntervalMs: 0, reconnect: false, requestTimeoutMs: 30_000 });
  await client.connect();
  await client.createStream('gc-iggy');
  await client.createTopic({ streamId: 'gc-iggy', name: 'gc-iggy', partitionsCount: 1 });
  const messages = [Buffer.alloc(recordBytes, 0x6c)];
  return { send: () => client.sendMessages({ streamId: 'gc-iggy', topicId: 'gc-iggy', partitioning: { partitionId: 0 }, messages }), close: () => client.close() };
}

const perTenK = (n: number, count: number): number => (n * 10_000) / count;

/** Bytes per second the broker allocates with no sends (timers, the scrubber, metrics). */
async function idleAllocationRate(broker: Broker): Promise<number> {
  const before = await snapshot(broker);
  const start = performance.now();
  await sleep(idleSeconds * 1000);
  const after = await snapshot(broker);
  return between(before, after).allocated / ((performance.now() - start) / 1000);
}

function report(name: string, f: GcFigures, count: number, run: { seconds: number; errors: number }, idleRate: number): void {
  const mib = (bytes: number): string => fmt(bytes / 2 ** 20, 1);
  const perSend = (f.allocated - idleRate * run.seconds) / count;
  console.log(
    `| ${name} | ${fmt(f.allocated / count / 1024, 1)} KiB (${fmt(perSend / 1024, 1)}) | ${mib(perTenK(f.allocated, count))} MiB | ${fmt(perTenK(f.scavenges, count), 1)} (${fmt(perTenK(f.scavengeMs, count), 1)} ms) | ` +
      `${fmt(perTenK(f.markCompacts, count), 1)} (${fmt(perTenK(f.markCompactMs, count), 1)} ms) | ${fmt(perTenK(f.scavengeMs + f.markCompactMs, count), 1)} ms | ${mib(perTenK(f.promoted, count))} MiB | ` +
      `${fmt(run.seconds, 1)} s${run.errors > 0 ? `, ${run.errors} errors` : ''} |`,
  );
}

async function measure(broker: Broker, name: string, open: (b: Broker) => Promise<Sender>, idleRate: number): Promise<void> {
  const sender = await open(broker);
  try {
    await drive(() => sender.send(), warmupSends);
    const before = await snapshot(broker);
    const run = await drive(() => sender.send(), sends);
    const after = await snapshot(broker);
    report(name, between(before, after), sends, run, idleRate);
  } finally {
    await sender.close();
  }
}

export async function runProduceGcBench(): Promise<void> {
  const load0 = fmt(loadavg()[0] ?? NaN, 2);
  const broker = await startBroker();
  try {
    console.log(
      `\n## Broker GC per send: ${sends.toLocaleString('en-US')} sends of one ${recordBytes / 1024} KiB record per protocol after ${warmupSends.toLocaleString('en-US')} of warm-up, ` +
        `${rate > 0 ? `${rate.toLocaleString('en-US')}/s` : `unpaced, ${window} in flight`}, acks=all, default fsync policy\n`,
    );
    const idleRate = await idleAllocationRate(broker);
    console.log(`The broker idle: ${fmt(idleRate / 1024, 0)} KiB allocated per second (in brackets: allocated per send less that)\n`);
    console.log('| sends | allocated per send | allocated per 10k | scavenges per 10k (pause) | mark-compacts per 10k (pause) | GC pause per 10k | promoted to old space per 10k | run |');
    console.log('|---|---|---|---|---|---|---|---|');
    await measure(broker, 'Kafka, raw Produce client', kafkaSender, idleRate);
    await measure(broker, 'Iggy SDK, sendMessages', iggySender, idleRate);
    if (broker.trace.lines === 0) console.log('\n(no --trace-gc-nvp lines read: the allocated and promoted figures are incomplete)');
    console.log(`\nload average ${load0} before, ${fmt(loadavg()[0] ?? NaN, 2)} after`);
  } finally {
    await broker.stop();
  }
}
