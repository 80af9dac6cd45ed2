// Event-loop stalls from transcoding and decompression: Kafka Fetches of a topic written through
// Iggy, and Kafka Produce requests of small zstd batches that decode to 16 MiB each, with a small
// request on another connection timed meanwhile, once with the broker's worker threads off
// (everything on the event loop) and once on (docs/configuration.md `workers.threads`).
//
// Setup: a broker in a child process (`node bin/quartet.js serve` on dist/, Kafka and Iggy
// listeners on 127.0.0.1:0) per case; through the Iggy SDK, `batches` batches of 1,000 messages x
// 1,000 B into stream `default`, topic `stalls` (Kafka topic `stalls`). Then 1, 8 and 20
// connections each send `rounds` Fetches (v12, from offset 0, 16 MiB per partition and request)
// one after the other, while one more connection sends ApiVersions back to back: the figure is
// the slowest and the median ApiVersions answer while the fetches run, and how long the fetches
// took. The produce case sends, from 1, 8 and 20 connections, `rounds` Produce requests each of one
// zstd batch of 16 records x 1 MiB of zeros (about 8 KB on the wire) to the same topic, empty.
// One request of each kind is sent before the clock starts. The clients count response frames
// by their size prefixes and keep none of their bytes (FrameCounter), so that what is timed is
// the broker's event loop, not the clients' copying of replies (the test runs them on the same
// loop as the broker). Every loop is bounded in count and in time (`secondsMax`).
//
// `measureStalls` is also what test/core/offload-stalls.test.ts runs against an in-process server.
//
// Environment: QUARTET_BENCH_QUICK=1 (fewer batches and rounds), QUARTET_BENCH_STALLS_FETCHES
// (connection counts, default 1,8,20), QUARTET_BENCH_STALLS_WORK (fetch,produce: the cases run),
// QUARTET_BENCH_STALLS_INLINE=0 (no baseline broker without worker threads),
// QUARTET_BENCH_CPU_PROF=<dir> (the brokers under --cpu-prof), QUARTET_BENCH_TRACE_GC=1 (the
// brokers' --trace-gc lines on stderr), QUARTET_BENCH_BROKER_FLAGS (more node flags for the
// brokers, space-separated). Every broker loads gc-window.mjs, which reports its main
// thread's GC pauses and allocation over the measured window: figures a loaded machine does not skew.

import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { IggyClient } from '../src/clients/iggy/index.js';
import { ApiKey } from '../src/protocols/kafka/codec/api-keys.js';
import { encodeRequest } from '../src/protocols/kafka/codec/frames.js';
import { buildRecordBatch } from '../src/protocols/kafka/codec/record-batch.js';
import { benchDir, brokerExtraNodeFlags, brokerNodeFlags, echoGcTrace, fmt, printTable, removeDir, stopChild, untilReady, waitForOutput, type Row } from './harness.js';

const repoRoot = new URL('..', import.meta.url).pathname;
const quick = process.env['QUARTET_BENCH_QUICK'] === '1';

export const stallsTopic = 'stalls';
const messageBytes = 1000;
const messagesPerBatch = 1000;

/** Writes `batches` batches of 1,000 messages x 1,000 B through Iggy into default/stalls (one partition). */
export async function writeIggyTopic(iggyAddr: string, password: string, batches: number): Promise<void> {
  const client = new IggyClient({ addr: iggyAddr, credentials: { username: 'root', password }, pingIntervalMs: 0, reconnect: false, requestTimeoutMs: 60_000 });
  await client.connect();
  try {
    await client.createTopic({ streamId: 'default', name: stallsTopic, partitionsCount: 1 });
    const messages = Array.from({ length: messagesPerBatch }, (_, i) => Buffer.alloc(messageBytes, 0x61 + (i % 26)));
    for (let b = 0; b < batches; b++) await client.sendMessages({ streamId: 'default', topicId: stallsTopic, partitioning: { partitionId: 0 }, messages });
  } finally {
    await client.close();
  }
}

/**
 * Kafka response frames counted by their size prefixes, their bytes never kept: the measuring
 * clients' own share of the event loop stays a kernel copy into one reused buffer per read (the
 * in-process test runs them on the broker's event loop, and a copy of every 4-16 MiB reply
 * there was most of the stall it measured).
 */
class FrameCounter {
  private readonly size = Buffer.alloc(4);
  private sizeHave = 0;
  private left = 0;

  /** Calls `done` with each frame's size (bytes after its size prefix) completed by chunk[0, length). */
  push(chunk: Buffer, length: number, done: (bytes: number) => void): void {
    let at = 0;
    while (at < length) {
      if (this.sizeHave < 4) {
        const n = Math.min(4 - this.sizeHave, length - at);
        chunk.copy(this.size, this.sizeHave, at, at + n);
        this.sizeHave += n;
        at += n;
        if (this.sizeHave < 4) return;
        // (A negative size, which no broker sends, counts as an empty frame.)
        this.left = Math.max(0, this.size.readInt32BE(0));
      }
      const n = Math.min(this.left, length - at);
      this.left -= n;
      at += n;
      if (this.left === 0) {
        this.sizeHave = 0;
        done(this.size.readInt32BE(0));
      }
    }
  }
}

/** Socket reads land in this much memory, one buffer per connection, reused. */
const readBufferBytes = 64 * 1024;

/** A raw Kafka connection that sends one request at a time and counts whole response frames. */
class RawKafka {
  private readonly counter = new FrameCounter();
  private waiting: ((bytes: number) => void) | null = null;
  private failed: Error | null = null;
  private correlationId = 0;
  private socket!: Socket;

  private received(bytes: number): void {
    const w = this.waiting;
    this.waiting = null;
    w?.(bytes);
  }

  static open(port: number): Promise<RawKafka> {
    const raw = new RawKafka();
    const done = (bytes: number) => raw.received(bytes);
    const onread = { buffer: Buffer.allocUnsafe(readBufferBytes), callback: (n: number, buf: Uint8Array) => (raw.counter.push(buf as Buffer, n, done), true) };
    return new Promise((resolve, reject) => {
      raw.socket = connect({ host: '127.0.0.1', port, noDelay: true, onread }, () => resolve(raw));
      raw.socket.once('error', reject);
      raw.socket.on('error', (err) => (raw.failed = err));
    });
  }

  /** Sends the request and resolves with its response frame's size. */
  ask(frame: Buffer[]): Promise<number> {
    if (this.failed !== null) return Promise.reject(this.failed);
    return new Promise((resolve) => {
      this.waiting = resolve;
      for (const c of frame) this.socket.write(c);
    });
  }

  apiVersions(): Promise<number> {
    return this.ask(encodeRequest(ApiKey.ApiVersions, 3, ++this.correlationId, 'stalls-probe', { clientSoftwareName: 'stalls', clientSoftwareVersion: '1' }));
  }

  fetch(topic: string, bytesMax: number): Promise<number> {
    const partitions = [{ partition: 0, fetchOffset: 0, partitionMaxBytes: bytesMax, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }];
    return this.ask(
      encodeRequest(ApiKey.Fetch, 12, ++this.correlationId, 'stalls-fetch', {
        replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: bytesMax, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic, partitions }], forgottenTopicsData: [], rackId: '',
      }),
    );
  }

  produce(topic: string, records: Buffer): Promise<number> {
    return this.ask(
      encodeRequest(ApiKey.Produce, 9, ++this.correlationId, 'stalls-produce', {
        transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
      }),
    );
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A zstd batch of 16 records of 1 MiB of zeros: a few KB that decode to 16 MiB. */
export function inflatingBatch(): Buffer {
  const value = Buffer.alloc(1 << 20);
  return buildRecordBatch(Array.from({ length: 16 }, (_, i) => ({ timestamp: Date.now(), key: Buffer.from(`k${i}`), value })), { compression: 4 });
}

export interface StallsOptions {
  kafkaPort: number;
  /** What the busy connections send: Fetches of `stallsTopic` (default), or Produce requests of inflatingBatch() to it. */
  work?: 'fetch' | 'produce';
  /** Connections fetching (or producing) at once, each `rounds` requests one after the other. */
  fetches: number;
  rounds: number;
  fetchBytesMax: number;
  /** Bound on the whole measurement; fetches not sent by then are not sent. */
  secondsMax: number;
  /** Called as the clock starts (after the warming requests) and once the fetches are all answered. */
  window?: { open(): void; close(): void };
}

export interface StallsResult {
  /** The slowest and the median ApiVersions answer while the fetches ran (ms). */
  probeMaxMs: number;
  probeMedianMs: number;
  probes: number;
  /** From the first Fetch sent to the last answered (ms). */
  fetchesMs: number;
  fetchesDone: number;
  /** Bytes of the largest Fetch response (the fetches read something). */
  fetchBytes: number;
  /** The longest the bench process's own event loop was held meanwhile (ms; 1 ms resolution): the client's share of a slow answer. */
  clientLoopMsMax: number;
}

/** Runs `fetches` connections of Fetches while timing ApiVersions on another connection. */
export async function measureStalls(options: StallsOptions): Promise<StallsResult> {
  const probe = await RawKafka.open(options.kafkaPort);
  const fetchers = await Promise.all(Array.from({ length: options.fetches }, () => RawKafka.open(options.kafkaPort)));
  try {
    const batch = options.work === 'produce' ? inflatingBatch() : null;
    // Warm: one of each before the clock starts (the worker threads load their modules and the
    // broker's code is compiled once, as on any broker that has served such a request before).
    await probe.apiVersions();
    await (batch === null ? fetchers[0]!.fetch(stallsTopic, options.fetchBytesMax) : fetchers[0]!.produce(stallsTopic, batch));
    const deadline = performance.now() + options.secondsMax * 1000;
    let fetchesDone = 0;
    let fetchBytes = 0;
    let running = true;
    options.window?.open();
    const clientLoop = monitorEventLoopDelay({ resolution: 1 });
    clientLoop.enable();
    const start = performance.now();
    const fetching = Promise.all(
      fetchers.map(async (c) => {
        for (let r = 0; r < options.rounds && performance.now() < deadline; r++) {
          fetchBytes = Math.max(fetchBytes, batch === null ? await c.fetch(stallsTopic, options.fetchBytesMax) : await c.produce(stallsTopic, batch));
          fetchesDone++;
        }
      }),
    ).finally(() => (running = false));
    const latencies: number[] = [];
    while (running && performance.now() < deadline) {
      const t0 = performance.now();
      await probe.apiVersions();
      latencies.push(performance.now() - t0);
    }
    await fetching;
    const fetchesMs = performance.now() - start;
    clientLoop.disable();
    options.window?.close();
    latencies.sort((a, b) => a - b);
    const clientLoopMsMax = clientLoop.max / 1e6;
    return { probeMaxMs: latencies.at(-1) ?? 0, probeMedianMs: latencies[Math.floor(latencies.length / 2)] ?? 0, probes: latencies.length, fetchesMs, fetchesDone, fetchBytes, clientLoopMsMax };
  } finally {
    probe.close();
    for (const c of fetchers) c.close();
  }
}

const password = 'bench-root-password';

/** A broker child process, and its main thread's garbage collection over the measured window (gc-window.mjs). */
interface BrokerChild {
  child: ChildProcess;
  kafkaPort: number;
  iggyAddr: string;
  dir: string;
  gc: GcWindow;
}

/** What gc-window.mjs reports of the broker's main thread over one window. */
export interface GcFigures {
  collections: number;
  majors: number;
  pauseMsTotal: number;
  pauseMsMax: number;
  heapMbAllocated: number;
  /** The longest the broker's event loop was held (monitorEventLoopDelay, 1 ms resolution). */
  loopDelayMsMax: number;
}

/** Opens and closes the broker's GC window by SIGUSR2, and reads its report from the broker's stderr. */
class GcWindow {
  private reported: ((f: GcFigures) => void) | null = null;
  private text = '';

  constructor(private readonly child: ChildProcess) {
    child.stderr!.on('data', (chunk: Buffer) => {
      this.text = (this.text + chunk.toString()).slice(-100_000);
      const m = /gc-window (\{[^\n]*\})\n/.exec(this.text);
      if (m === null) return;
      this.text = this.text.slice(m.index + m[0].length);
      const r = this.reported;
      this.reported = null;
      r?.(JSON.parse(m[1]!) as GcFigures);
    });
  }

  open(): void {
    this.child.kill('SIGUSR2');
  }

  /** Closes the window; resolves with the report (null when the broker gave none within 10 s). */
  close(): Promise<GcFigures | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => ((this.reported = null), resolve(null)), 10_000);
      this.reported = (f) => (clearTimeout(timer), resolve(f));
      this.child.kill('SIGUSR2');
    });
  }
}

async function startBroker(workerThreads: number): Promise<BrokerChild> {
  const dir = benchDir('stalls-');
  const profDir = process.env['QUARTET_BENCH_CPU_PROF'];
  const args = [
    ...brokerNodeFlags, '--import', './bench/gc-window.mjs', ...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []),
    ...brokerExtraNodeFlags(), 'bin/quartet.js', 'serve', '--data-dir', dir,
    '--kafka-addr', '127.0.0.1:0', '--iggy-addr', '127.0.0.1:0', '--http-enabled=false', '--cursus-enabled=false', '--felix-enabled=false',
    '--worker-threads', String(workerThreads), '--log-level', 'info',
  ];
  const child = spawn(process.execPath, args, { env: { ...process.env, QUARTET_ROOT_PASSWORD: password }, stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot });
  try {
    // The listeners start in the order kafka, iggy.
    const m = await waitForOutput(child, 'broker', untilReady(/"listener":"kafka","address":"127\.0\.0\.1:(\d+)"[\s\S]*"listener":"iggy","address":"(127\.0\.0\.1:\d+)"/));
    echoGcTrace(child);
    return { child, kafkaPort: Number(m[1]), iggyAddr: m[2]!, dir, gc: new GcWindow(child) };
  } catch (err) {
    await stopChild(child);
    removeDir(dir);
    throw err;
  }
}

/** The pool the server starts by default (docs/configuration.md `workers.threads`), at least one. */
const workerThreads = Math.max(1, Math.min(2, availableParallelism() - 1));

/** A case's figures: the wall clock (stalls) and the broker's garbage collection meanwhile. */
function figures(r: StallsResult, gc: GcFigures | null): string {
  const gcText = gc === null ? 'no GC report' : `broker's event loop held at most ${fmt(gc.loopDelayMsMax)} ms; GC max ${fmt(gc.pauseMsMax)} ms, total ${fmt(gc.pauseMsTotal)} ms (${gc.majors} major), heap ${fmt(gc.heapMbAllocated, 0)} MB`;
  return `${fmt(r.probeMaxMs)} ms (${fmt(r.probeMedianMs, 2)}), ${fmt(r.fetchesMs, 0)} ms, ${r.probes} probes; ${gcText}; the bench's own event loop held at most ${fmt(r.clientLoopMsMax)} ms; load ${loadavg()[0]!.toFixed(1)}`;
}

export async function runStallsBench(): Promise<void> {
  const batches = quick ? 8 : 32;
  const counts = (process.env['QUARTET_BENCH_STALLS_FETCHES'] ?? '1,8,20').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  const works = (process.env['QUARTET_BENCH_STALLS_WORK'] ?? 'fetch,produce').split(',').filter((w): w is 'fetch' | 'produce' => w === 'fetch' || w === 'produce');
  const threadCounts = process.env['QUARTET_BENCH_STALLS_INLINE'] === '0' ? [workerThreads] : [0, workerThreads];
  for (const work of works) {
    const rows: Row[] = [];
    for (const fetches of counts) {
      const results: string[] = [];
      for (const threads of threadCounts) {
        const broker = await startBroker(threads);
        try {
          await writeIggyTopic(broker.iggyAddr, password, work === 'fetch' ? batches : 0);
          let gc: Promise<GcFigures | null> = Promise.resolve(null);
          const window = { open: () => broker.gc.open(), close: () => void (gc = broker.gc.close()) };
          const r = await measureStalls({ kafkaPort: broker.kafkaPort, work, fetches, rounds: quick ? 1 : 2, fetchBytesMax: 16 << 20, secondsMax: 120, window });
          results.push(figures(r, await gc));
        } finally {
          await stopChild(broker.child);
          removeDir(broker.dir);
        }
      }
      rows.push({
        case: `${fetches} ${work} connection(s): slowest ApiVersions (median), the ${work === 'fetch' ? 'fetches' : 'produces'}' time; the broker's longest event-loop hold, GC pauses and main-thread allocation; the bench process's longest hold; 1-minute load average`,
        value: results.at(-1)!,
        baseline: results.length > 1 ? results[0]! : 'not run',
        ratio: '',
        target: 'slowest < 50 ms',
      });
    }
    const what = work === 'fetch'
      ? `Kafka Fetch of an Iggy-written topic (${batches} batches of 1,000 x 1 KB, 16 MiB fetches)`
      : 'Kafka Produce of zstd batches that decode to 16 MiB (16 x 1 MiB of zeros, ~8 KB sent)';
    printTable(`Event-loop stalls: ${what}, worker threads ${workerThreads} (baseline: 0)`, rows);
  }
}
