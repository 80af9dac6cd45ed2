// Iggy benchmark (iggy-bench-like): Quartet's Iggy 0.11 listener driven through the SDK in this
// process, each figure printed next to the raw loopback-TCP limit measured in the same run.
//
// Setup: the broker runs in a child process (`node bin/quartet.js serve`, Iggy listener on
// 127.0.0.1:0, Kafka off), the SDK clients here, one IggyClient (one connection) per producer and
// per consumer. The raw baseline has the same shape: a child-process Node TCP server, and this
// process writing or reading 1 MiB chunks (about one batch frame) on the same number of sockets,
// reading with `onread` into one reused 1 MiB buffer (see ByteCounter).
//
// 1. Ingest: a stream with a topic of 4 partitions; 4 producers, each sending `batches` batches of
//    1,000 messages x 1,000 B to its own partition with IggyClient.sendMessages, one batch in
//    flight each (as iggy-bench's pinned producers); per-batch latency = call -> confirmation.
//    Baseline: 1 MiB writes client -> server-process sink (1 and 4 sockets; the faster counts).
//    Target: >= 25% of it.
// 2. Read-back: 4 consumers, each polling its partition from offset 0 (strategy offset) in polls
//    of 1,000 messages until it has read every message; per-poll latency. Before it, each consumer
//    makes 1,000 untimed polls of the warm-up topic (see readWarmupPolls).
//    Baseline: server-process source -> client, 1 MiB writes (1 and 4 sockets). Target: >= 50%.
// 3. Latency: p50/p99/p99.9 of send and poll, next to a raw 1 MiB write -> 8 B ack (and an 8 B
//    request -> 1 MiB reply) round trip on 4 sockets at once. Target: send p99 < 10 ms. The same
//    ingest is also run on a fresh broker into a topic created with preallocate_segments=true
//    (docs/topic-config.md `preallocate`), and its send latency printed beside it.
//
// 4. Context: raw TCP with 1 vs 4 sockets; a plain store (this process writes 1 MiB chunks on 4
//    sockets, as much as the Quartet ingest sends, and the raw server appends each socket's bytes
//    to a file of its own in whole 1 MiB writes, never synced: storing the ingest with no protocol,
//    no checksums and no index, which shows what new page-cache pages cost on this machine in this
//    run; the files are kept until the end of the run, so that no page cache freed by them makes a
//    later phase faster); the read-back floor (the raw server preads each 1 MiB
//    from a 1 GiB file written (and synced) just before, so in the page cache, and writes it to 4 sockets; this
//    process receives each 1 MiB in place and verifies its 1,000 frame checksums: the least work
//    serving stored messages takes, with no protocol); CPU of the broker and of this process per
//    batch in each phase; and the SDK's own CPU per batch measured alone in this process (send: encodeMessages
//    into a pooled buffer, as IggyClient.sendMessages, and prepareMessage x 1,000 + encodeSendBatch, as the
//    producer; poll: decodePolledRecords, as
//    pollMessages) next to the floor the protocol imposes (one XXH3-64 per message + one copy).
//
// MB/s counts message payload (1,000 B per message); each message also carries a 48-byte frame
// header on the wire, so the wire rate is ~4.9% higher (printed as well).
//
// Environment: QUARTET_BENCH_QUICK=1 (a short validation run: 25 batches per producer, 1 trial,
// 0.5 s baselines), QUARTET_BENCH_IGGY_BATCHES (batches per producer, default 250),
// QUARTET_BENCH_IGGY_TRIALS (default 3), QUARTET_BENCH_CPU_PROF=<dir> (run the broker under
// `node --cpu-prof`, profiles in <dir>).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { connect, type OnReadOpts, type Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BufferLease } from '../src/base/buffer-pool.js';
import { xxh3Frames } from '../src/base/native.js';
import { IggyClient, prepareMessage, type IggyCredentials } from '../src/clients/iggy/index.js';
import { decodePolledRecords, encodeMessages, encodeSendBatch } from '../src/clients/iggy/messages.js';
import { encodeBatchBytes } from '../src/protocols/iggy/codec/message-batch.js';
import { benchDir, cpuSecondsOf, fmt, percentile, printTable, removeDir, quartetServeArgs, stopChild, untilReady, waitForOutput, type Row } from './harness.js';

const repoRoot = new URL('..', import.meta.url).pathname;
const envInt = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};

const quick = process.env['QUARTET_BENCH_QUICK'] === '1';
/** Producers, consumers and partitions (one partition per producer and per consumer). */
const clients = 4;
const messagesPerBatch = 1000;
const messageBytes = 1000;
/** Per-message frame header on the wire (codec frameHeaderBytes). */
const messageFrameBytes = 48;
const batchesPerProducer = envInt('QUARTET_BENCH_IGGY_BATCHES', quick ? 25 : 250);
const trials = envInt('QUARTET_BENCH_IGGY_TRIALS', quick ? 1 : 3);
/** Batches each producer sends to a separate topic before the timed run (JIT, allocations). */
const warmupBatches = quick ? 3 : 10;
/**
 * Polls each consumer makes of that topic (its warm-up batches, round and round) before the timed
 * read-back. The poll path needs far more than the send path: its per-request functions run once
 * per poll (no per-message loop inside them to fill V8's tier-up budget), and in a fresh broker and
 * SDK the first ~500 polls per consumer ran in V8's baseline tiers, paying for TurboFan compiles
 * besides: without it, 1,000 timed polls measured mostly that warm-up.
 */
const readWarmupPolls = quick ? 50 : 1000;
/** Time bounds of the Quartet phases and of each raw baseline measurement. */
const phaseSecondsMax = 120;
const rawSeconds = quick ? 0.5 : 2;
const rawBytesMax = 16 * 2 ** 30;
const chunkBytes = 2 ** 20;
const credentials = { username: 'root', password: 'bench-root-password' } satisfies IggyCredentials;
const stream = 'bench';
const topic = 'bench';

// ---------------------------------------------------------------------------------------------
// Child processes: tracked, stopped at the end, killed if this process exits first.

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});


/** Spawns `node args` and waits (30 s at most) for a line of its output matching `ready`. */
async function spawnNode(name: string, args: string[], ready: RegExp, env: Record<string, string> = {}): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot });
  children.add(child);
  child.once('exit', () => children.delete(child));
  try {
    return { child, match: await waitForOutput(child, name, ready) };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

const selfCpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

// ---------------------------------------------------------------------------------------------
// Raw loopback TCP: a Node server in a child process. The first byte of a connection picks the
// mode: S = sink (counts bytes; on end replies with the u64 count), O = source (writes 1 MiB
// chunks as fast as the socket takes them), A = ack (8 B ack per 1 MiB received), F = fetch
// (1 MiB reply per 8 B request), P = file source (like O, but each 1 MiB chunk is first read with
// pread from the file named on the command line, each connection starting at its own quarter of
// it and wrapping at the end: the least work a broker can do to serve stored bytes, for the
// read-back floor; like O, P writes one chunk at a time per socket, the next once it drains),
// W = file sink (like S, but what arrives is copied into 1 MiB buffers, and each full one is
// appended to a new file of the connection's own in the directory named on the command line with
// fs.write on the thread pool, one write in flight per connection, the socket paused while 4 full
// buffers wait, buffers reused; so receiving and writing overlap: storing what arrives with no
// protocol, for the plain store; the files stay until the bench removes the directory).

const rawServerSource = `
const net = require('node:net');
const CHUNK = ${chunkBytes};
const BLOCK = Buffer.alloc(CHUNK, 0x71);
const ACK = Buffer.alloc(8, 0x61);
const fs = require('node:fs');
const file = process.argv[1] ? fs.openSync(process.argv[1], 'r') : -1;
const fileBytes = file >= 0 ? fs.fstatSync(file).size : 0;
let fileConns = 0;
const sinkDir = process.argv[2];
let sinkConns = 0;
// allowHalfOpen: W replies once its last write is done, after the client's end.
const server = net.createServer({ allowHalfOpen: true }, (s) => {
  s.setNoDelay(true);
  s.on('error', () => {});
  let mode = null;
  let count = 0;
  const pump = () => { while (!s.destroyed && s.writable && s.write(BLOCK)) {} };
  // P: four chunk buffers, each reused once its write has completed.
  const free = [];
  let position = 0;
  const pumpFile = () => {
    while (!s.destroyed && s.writable && free.length > 0) {
      const buf = free.pop();
      if (fs.readSync(file, buf, 0, CHUNK, position) !== CHUNK) throw new Error('short read of the floor file at ' + position);
      position = (position + CHUNK) % fileBytes;
      if (!s.write(buf, () => { free.push(buf); if (!s.writableNeedDrain) setImmediate(pumpFile); })) return;
    }
  };
  // W: the buffer being filled, full ones waiting for their write, free ones, the file.
  let stage = null;
  let staged = 0;
  let sink = -1;
  let sinkOffset = 0;
  let writing = false;
  let ended = false;
  const full = [];
  const spare = [];
  // S and W: the byte count, as the reply to the client's end.
  const endWithCount = () => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(count));
    s.end(b);
  };
  const finishSink = () => {
    fs.closeSync(sink);
    endWithCount();
  };
  const writeNext = () => {
    if (writing) return;
    const next = full.shift();
    if (next === undefined) { if (ended) finishSink(); return; }
    writing = true;
    fs.write(sink, next.buf, 0, next.length, sinkOffset, (err, written) => {
      if (err) throw err;
      if (written !== next.length) throw new Error('short write to the plain store at ' + sinkOffset);
      writing = false;
      sinkOffset += next.length;
      spare.push(next.buf);
      if (s.isPaused() && full.length < 4) s.resume();
      writeNext();
    });
  };
  const takeBuffer = () => spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK);
  s.on('drain', () => { if (mode === 'O') pump(); else if (mode === 'P') pumpFile(); });
  s.on('data', (d) => {
    let n = d.length;
    if (mode === null) {
      mode = String.fromCharCode(d[0]);
      n -= 1;
      if (mode === 'O') pump();
      if (mode === 'P') {
        for (let i = 0; i < 4; i++) free.push(Buffer.allocUnsafeSlow(CHUNK));
        position = ((fileConns++ % 4) * fileBytes) / 4;
        pumpFile();
      }
      if (mode === 'W') {
        stage = takeBuffer();
        sink = fs.openSync(sinkDir + '/sink-' + sinkConns++ + '.bin', 'w');
      }
    }
    count += n;
    if (mode === 'A') while (count >= CHUNK) { count -= CHUNK; s.write(ACK); }
    else if (mode === 'F') while (count >= 8) { count -= 8; s.write(BLOCK); }
    else if (mode === 'W') {
      for (let at = d.length - n; at < d.length; ) {
        const take = Math.min(CHUNK - staged, d.length - at);
        d.copy(stage, staged, at, at + take);
        staged += take;
        at += take;
        if (staged === CHUNK) {
          full.push({ buf: stage, length: CHUNK });
          staged = 0;
          stage = takeBuffer();
          if (full.length >= 4) s.pause();
          writeNext();
        }
      }
    }
  });
  s.on('end', () => {
    if (mode === 'W') {
      if (staged > 0) full.push({ buf: stage, length: staged });
      ended = true;
      writeNext();
    } else if (mode === 'S') endWithCount();
    else s.end();
  });
});
server.listen(0, '127.0.0.1', () => console.log('raw-tcp port ' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

/**
 * Counts the bytes a socket receives; `until(n)` resolves once n bytes in total arrived. The raw
 * client reads the fastest way Node offers: `onread` into one reused 1 MiB buffer (no allocation
 * and no copy per read; 'data' events, a fresh 64 KiB buffer per read, measured 1.4-1.9 GB/s down
 * where this reads 2-3 GB/s), so the baseline is the limit a Node client can reach.
 */
class ByteCounter {
  received = 0;
  /** Copies of what arrives, while set (the sink's 8-byte count reply). */
  capture: Buffer[] | null = null;
  private waiter: { n: number; resolve: () => void } | null = null;
  readonly onread = {
    buffer: Buffer.allocUnsafe(chunkBytes),
    callback: (n: number, buf: Uint8Array): boolean => {
      this.received += n;
      this.capture?.push(Buffer.from(buf.subarray(0, n)));
      if (this.waiter !== null && this.received >= this.waiter.n) {
        const w = this.waiter;
        this.waiter = null;
        w.resolve();
      }
      return true;
    },
  };
  until(n: number): Promise<void> {
    if (this.received >= n) return Promise.resolve();
    return new Promise((resolve) => (this.waiter = { n, resolve }));
  }
}

/** Connects to the raw server with `onread` as the socket's read buffer and picks `mode`. */
function connectRaw(port: number, mode: 'S' | 'O' | 'A' | 'F' | 'P' | 'W', onread: OnReadOpts): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, onread });
    socket.setNoDelay(true);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.write(mode);
      resolve(socket);
    });
  });
}

async function openRaw(port: number, mode: 'S' | 'O' | 'A' | 'F' | 'W'): Promise<{ socket: Socket; counter: ByteCounter }> {
  const counter = new ByteCounter();
  return { socket: await connectRaw(port, mode, counter.onread), counter };
}

const drained = (s: Socket): Promise<void> => new Promise((resolve) => s.once('drain', resolve));

// The read-back floor: the least work serving stored messages takes, with no protocol at all. The
// raw server (mode P) reads each 1 MiB chunk of a file in the page cache with pread and writes it;
// the client reads each chunk in place and verifies its 1,000 frame checksums, as the SDK must.

/** The floor's file: 1 MiB chunks, each starting with 1,000 frames of 1,048 B (an XXH3-64 of the rest first). */
const floorFileBytes = quick ? 256 * 2 ** 20 : 2 ** 30;
const floorFrameBytes = messageBytes + messageFrameBytes;
const floorBounds = Uint32Array.from({ length: messagesPerBatch + 1 }, (_, i) => i * floorFrameBytes);

function writeFloorFile(path: string): void {
  const chunk = Buffer.alloc(chunkBytes, 0x5a);
  for (let i = 0; i < messagesPerBatch; i++) chunk.writeUInt32LE(i, i * floorFrameBytes + 8);
  xxh3Frames(chunk, floorBounds, messagesPerBatch, true);
  const fd = openSync(path, 'w');
  try {
    for (let written = 0; written < floorFileBytes; written += chunkBytes) writeSync(fd, chunk);
    // On the disk before the trials start (its write-back would otherwise overlap the first
    // trial), and still in the page cache.
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Receives whole 1 MiB chunks in place (the stream is chunk-aligned) and verifies each one's frames. */
class VerifyingReader {
  chunks = 0;
  bad = 0;
  private readonly chunk = Buffer.allocUnsafe(chunkBytes);
  private filled = 0;
  readonly onread = {
    buffer: (): Buffer => this.chunk.subarray(this.filled),
    callback: (n: number): boolean => {
      this.filled += n;
      if (this.filled === chunkBytes) {
        if (xxh3Frames(this.chunk, floorBounds, messagesPerBatch, false) !== -1) this.bad++;
        this.chunks++;
        this.filled = 0;
      }
      return true;
    },
  };
}

interface FloorRate extends RawRate {
  /** CPU per MiB of the raw server process and of this process. */
  serverMs: number;
  clientMs: number;
}

/** Server (pread + write) -> `clients` verifying readers for rawSeconds. */
async function rawFloorRead(port: number, serverCpu: () => number): Promise<FloorRate> {
  const readers = Array.from({ length: clients }, () => new VerifyingReader());
  const sockets = await Promise.all(readers.map((reader) => connectRaw(port, 'P', reader.onread)));
  const counted = (): number => readers.reduce((sum, r) => sum + r.chunks, 0);
  const chunks0 = counted();
  const server0 = serverCpu();
  const client0 = selfCpuSeconds();
  const start = performance.now();
  await new Promise((r) => setTimeout(r, rawSeconds * 1000));
  const chunks = counted() - chunks0;
  const seconds = (performance.now() - start) / 1000;
  const serverSeconds = serverCpu() - server0;
  const clientSeconds = selfCpuSeconds() - client0;
  for (const s of sockets) s.destroy();
  if (chunks === 0) throw new Error('read-back floor: nothing arrived');
  const bad = readers.reduce((sum, r) => sum + r.bad, 0);
  if (bad > 0) throw new Error(`read-back floor: ${bad} chunks failed their checksums`);
  return { bytes: chunks * chunkBytes, seconds, serverMs: (serverSeconds * 1000) / chunks, clientMs: (clientSeconds * 1000) / chunks };
}

interface RawRate {
  bytes: number;
  seconds: number;
}
const mbOf = (r: RawRate): number => r.bytes / r.seconds / 1e6;

/**
 * Client -> server: `sockets` writers of 1 MiB chunks for `seconds` or `bytesPerSocket` each,
 * whichever ends first; ends when the sink (S, or the file sink W) counted it all.
 */
async function rawIngest(port: number, sockets: number, mode: 'S' | 'W' = 'S', bytesPerSocket = rawBytesMax / sockets, seconds = rawSeconds): Promise<RawRate> {
  const conns = await Promise.all(Array.from({ length: sockets }, () => openRaw(port, mode)));
  const block = Buffer.alloc(chunkBytes, 0x70);
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const counts = await Promise.all(
    conns.map(async ({ socket, counter }) => {
      let written = 0;
      while (performance.now() < deadline && written < bytesPerSocket) {
        written += chunkBytes;
        if (!socket.write(block)) await drained(socket);
      }
      const reply: Buffer[] = [];
      counter.capture = reply;
      socket.end();
      await counter.until(8);
      socket.destroy();
      const counted = Number(Buffer.concat(reply).readBigUInt64LE(0));
      if (counted !== written) throw new Error(`raw sink counted ${counted} of ${written} bytes`);
      return counted;
    }),
  );
  return { bytes: counts.reduce((a, b) => a + b, 0), seconds: (performance.now() - start) / 1000 };
}

/** Server -> client: `sockets` readers of the source for rawSeconds. */
async function rawRead(port: number, sockets: number): Promise<RawRate> {
  const conns = await Promise.all(Array.from({ length: sockets }, () => openRaw(port, 'O')));
  const start = performance.now();
  const base = conns.map((c) => c.counter.received);
  await new Promise((r) => setTimeout(r, rawSeconds * 1000));
  const bytes = conns.reduce((sum, c, i) => sum + c.counter.received - base[i]!, 0);
  const seconds = (performance.now() - start) / 1000;
  for (const c of conns) c.socket.destroy();
  return { bytes, seconds };
}

/** Round trips on `sockets` connections at once for rawSeconds: A = 1 MiB up, 8 B ack; F = 8 B up, 1 MiB back. */
async function rawRoundTrips(port: number, mode: 'A' | 'F', sockets: number): Promise<number[]> {
  const conns = await Promise.all(Array.from({ length: sockets }, () => openRaw(port, mode)));
  const up = mode === 'A' ? Buffer.alloc(chunkBytes, 0x70) : Buffer.alloc(8, 0x66);
  const down = mode === 'A' ? 8 : chunkBytes;
  const samples: number[] = [];
  const deadline = performance.now() + rawSeconds * 1000;
  await Promise.all(
    conns.map(async ({ socket, counter }) => {
      let expected = 0;
      for (let i = 0; i < 100_000 && performance.now() < deadline; i++) {
        const t0 = performance.now();
        expected += down;
        socket.write(up);
        await counter.until(expected);
        samples.push(performance.now() - t0);
      }
      socket.destroy();
    }),
  );
  return samples;
}

/**
 * The plain store: `clients` sockets each send as many 1 MiB chunks as a producer sends batches,
 * and the raw server appends them to files (mode W). CPU per MiB of the raw server.
 */
async function rawPlainStore(port: number, serverCpu: () => number): Promise<RawRate & { serverMs: number }> {
  const server0 = serverCpu();
  const r = await rawIngest(port, clients, 'W', batchesPerProducer * chunkBytes, phaseSecondsMax);
  return { ...r, serverMs: ((serverCpu() - server0) * 1000 * chunkBytes) / r.bytes };
}

interface RawBaseline {
  ingest1: RawRate;
  ingest4: RawRate;
  plainStore: RawRate & { serverMs: number };
  read1: RawRate;
  read4: RawRate;
  ackRtt: number[];
  fetchRtt: number[];
  floor: FloorRate;
}

async function rawBaseline(port: number, serverCpu: () => number): Promise<RawBaseline> {
  return {
    ingest1: await rawIngest(port, 1),
    ingest4: await rawIngest(port, clients),
    read1: await rawRead(port, 1),
    read4: await rawRead(port, clients),
    plainStore: await rawPlainStore(port, serverCpu),
    ackRtt: await rawRoundTrips(port, 'A', clients),
    fetchRtt: await rawRoundTrips(port, 'F', clients),
    floor: await rawFloorRead(port, serverCpu),
  };
}

// ---------------------------------------------------------------------------------------------
// Quartet

interface Broker {
  addr: string;
  cpuSeconds(): number;
  stop(): Promise<void>;
}

async function startBroker(): Promise<Broker> {
  const dir = benchDir('iggy-');
  const args = quartetServeArgs(join(repoRoot, 'bin/quartet.js'), join(dir, 'data'), 'iggy');
  const env = { QUARTET_ROOT_USERNAME: credentials.username, QUARTET_ROOT_PASSWORD: credentials.password };
  let started: { child: ChildProcess; match: RegExpMatchArray };
  try {
    started = await spawnNode('quartet', args, untilReady(/"msg":"listening","listener":"iggy","address":"([^"]+)"/), env);
  } catch (err) {
    removeDir(dir);
    throw err;
  }
  const { child, match } = started;
  let stopped: Promise<void> | null = null;
  return {
    addr: match[1]!,
    cpuSeconds: () => cpuSecondsOf(child.pid),
    stop: () => (stopped ??= stopChild(child).finally(() => removeDir(dir))),
  };
}

function newClient(addr: string): IggyClient {
  return new IggyClient({ addr, credentials, pingIntervalMs: 0, reconnect: false, requestTimeoutMs: 60_000 });
}

/** 1,000 payloads of 1,000 B; bytes 0..3 hold the message's index in its batch (checked on read-back). */
const payloads = Array.from({ length: messagesPerBatch }, (_, i) => {
  const b = Buffer.alloc(messageBytes, 0x61 + (i % 26));
  b.writeUInt32LE(i, 0);
  return b;
});

interface Phase {
  messages: number;
  /** Messages per partition (ingest: confirmed; read-back: read). */
  perPartition: number[];
  seconds: number;
  latencies: number[];
  brokerCpu: number;
  benchCpu: number;
}

/** Resolves every caller once `n` callers arrived: the clients start their timed loops together. */
function barrier(n: number): { arrive(): Promise<number> } {
  let waiting = 0;
  let release: (t: number) => void = () => {};
  const all = new Promise<number>((r) => (release = r));
  return {
    arrive(): Promise<number> {
      if (++waiting === n) release(performance.now());
      return all;
    },
  };
}

async function produce(broker: Broker, preallocateSegments = false): Promise<Phase> {
  const admin = newClient(broker.addr);
  await admin.connect();
  await admin.createStream(stream);
  await admin.createTopic({ streamId: stream, name: topic, partitionsCount: clients, options: { preallocateSegments } });
  await admin.createTopic({ streamId: stream, name: 'warmup', partitionsCount: clients });
  await admin.close();

  const gate = barrier(clients);
  const latencies: number[] = [];
  let cpu0 = { broker: 0, bench: 0 };
  const ends = await Promise.all(
    Array.from({ length: clients }, async (_, p) => {
      const c = newClient(broker.addr);
      await c.connect();
      try {
        for (let i = 0; i < warmupBatches; i++) await c.sendMessages({ streamId: stream, topicId: 'warmup', partitioning: { partitionId: p }, messages: payloads });
        const start = await gate.arrive();
        if (p === 0) cpu0 = { broker: broker.cpuSeconds(), bench: selfCpuSeconds() };
        const deadline = start + phaseSecondsMax * 1000;
        let sent = 0;
        for (let b = 0; b < batchesPerProducer && performance.now() < deadline; b++) {
          const t0 = performance.now();
          const r = await c.sendMessages({ streamId: stream, topicId: topic, partitioning: { partitionId: p }, messages: payloads });
          latencies.push(performance.now() - t0);
          if (r.partitionId !== p || r.baseOffset !== BigInt(b * messagesPerBatch)) {
            throw new Error(`batch ${b} of producer ${p}: confirmed partition ${r.partitionId} offset ${r.baseOffset}`);
          }
          sent++;
        }
        return { start, end: performance.now(), count: sent * messagesPerBatch };
      } finally {
        await c.close();
      }
    }),
  );
  const seconds = (Math.max(...ends.map((e) => e.end)) - ends[0]!.start) / 1000;
  return { messages: latencies.length * messagesPerBatch, perPartition: ends.map((e) => e.count), seconds, latencies, brokerCpu: broker.cpuSeconds() - cpu0.broker, benchCpu: selfCpuSeconds() - cpu0.bench };
}

/** Consumer p reads partition p from offset 0 up to `expected[p]` messages (after its warm-up polls). */
async function consume(broker: Broker, expected: number[]): Promise<Phase> {
  const gate = barrier(clients);
  const latencies: number[] = [];
  let cpu0 = { broker: 0, bench: 0 };
  let messages = 0;
  const ends = await Promise.all(
    Array.from({ length: clients }, async (_, p) => {
      const c = newClient(broker.addr);
      await c.connect();
      try {
        const consumer = { consumer: p + 1 };
        for (let i = 0; i < readWarmupPolls; i++) {
          const offset = (i % warmupBatches) * messagesPerBatch;
          const r = await c.pollMessages({ streamId: stream, topicId: 'warmup', partitionId: p, consumer, strategy: { offset }, count: messagesPerBatch });
          if (r.messages.length !== messagesPerBatch) throw new Error(`warm-up poll of partition ${p} at offset ${offset}: ${r.messages.length} messages`);
        }
        const start = await gate.arrive();
        if (p === 0) cpu0 = { broker: broker.cpuSeconds(), bench: selfCpuSeconds() };
        const deadline = start + phaseSecondsMax * 1000;
        const perPartition = expected[p]!;
        let offset = 0;
        for (let polls = 0; offset < perPartition && polls < perPartition && performance.now() < deadline; polls++) {
          const t0 = performance.now();
          const r = await c.pollMessages({ streamId: stream, topicId: topic, partitionId: p, consumer, strategy: { offset }, count: messagesPerBatch });
          latencies.push(performance.now() - t0);
          const first = r.messages[0];
          if (first === undefined || first.offset !== BigInt(offset) || first.payload.length !== messageBytes || first.payload.readUInt32LE(0) !== offset % messagesPerBatch) {
            throw new Error(`partition ${p} poll at offset ${offset}: unexpected reply (${r.messages.length} messages, first offset ${first?.offset})`);
          }
          offset += r.messages.length;
          messages += r.messages.length;
        }
        if (offset < perPartition) throw new Error(`partition ${p}: read ${offset} of ${perPartition} messages within ${phaseSecondsMax} s`);
        return { start, end: performance.now(), count: offset };
      } finally {
        await c.close();
      }
    }),
  );
  const seconds = (Math.max(...ends.map((e) => e.end)) - ends[0]!.start) / 1000;
  return { messages, perPartition: ends.map((e) => e.count), seconds, latencies, brokerCpu: broker.cpuSeconds() - cpu0.broker, benchCpu: selfCpuSeconds() - cpu0.bench };
}

async function quartetTrial(): Promise<{ ingest: Phase; read: Phase; preallocated: Phase }> {
  spawnSync('sync');
  const broker = await startBroker();
  let ingest: Phase;
  let read: Phase;
  try {
    ingest = await produce(broker);
    read = await consume(broker, ingest.perPartition);
  } finally {
    await broker.stop();
  }
  // The same ingest into a topic created with preallocate_segments=true, on a fresh broker.
  spawnSync('sync');
  const second = await startBroker();
  try {
    return { ingest, read, preallocated: await produce(second, true) };
  } finally {
    await second.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// SDK CPU per batch, alone in this process (no I/O)

/** CPU ms per call of `f`, after 3 warm-up calls; bounded to `runs` calls and 3 s. */
function cpuMsPerCall(runs: number, f: () => unknown): number {
  for (let i = 0; i < 3; i++) f();
  const c0 = process.cpuUsage();
  const deadline = performance.now() + 3000;
  let n = 0;
  while (n < runs && performance.now() < deadline) {
    f();
    n++;
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / n;
}

interface SdkCpu {
  encode: number;
  encodePrepared: number;
  decode: number;
  floor: number;
}

function sdkCpu(): SdkCpu {
  const runs = quick ? 20 : 100;
  const nowMs = Date.now();
  const now = BigInt(nowMs) * 1000n;
  // As IggyClient.sendMessages: the messages encoded straight into a pooled buffer.
  const encode = cpuMsPerCall(runs, () => {
    const lease = new BufferLease();
    encodeMessages(payloads, now, nowMs, lease);
    lease.release();
  });
  // As IggyProducer: prepare every message once (its retries resend the same ids), then encode.
  const encodePrepared = cpuMsPerCall(runs, () => {
    const lease = new BufferLease();
    encodeSendBatch(
      payloads.map((m) => prepareMessage(m, now, nowMs)),
      lease,
    );
    lease.release();
  });
  const stored = encodeBatchBytes(payloads.map((m) => prepareMessage(m, now).input), { partitionId: 0n, baseOffset: 0n, baseTimestamp: now });
  // As IggyClient.pollMessages: verify and decode the batch records of a reply.
  const decode = cpuMsPerCall(runs, () => decodePolledRecords(0, [stored]));
  // The protocol's floor: one XXH3-64 per message over its bytes (all in one xxh3Frames call, the
  // fastest the build has), and one copy of the batch.
  const bounds = new Uint32Array(payloads.length + 1);
  const joined = Buffer.concat(payloads);
  for (let i = 0; i <= payloads.length; i++) bounds[i] = i * messageBytes;
  const floor = cpuMsPerCall(runs, () => {
    xxh3Frames(joined, bounds, payloads.length, false);
    return Buffer.concat(payloads);
  });
  return { encode, encodePrepared, decode, floor };
}

// ---------------------------------------------------------------------------------------------
// Report

const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const mbS = (n: number): string => `${fmt(n)} MB/s`;
const median = (xs: number[]): number => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};
const verdict = (met: boolean): string => (met ? 'met' : 'MISSED');
const payloadMb = (p: Phase): number => (p.messages * messageBytes) / p.seconds / 1e6;
const wireMb = (p: Phase): number => (p.messages * (messageBytes + messageFrameBytes)) / p.seconds / 1e6;
const rate = (p: Phase): number => p.messages / p.seconds;
const pcts = [50, 99, 99.9];
const pctText = (sorted: number[]): string => pcts.map((q) => fmt(percentile(sorted, q), 2)).join(' / ') + ' ms';
const pctRatio = (a: number[], b: number[]): string => pcts.map((q) => `${fmt(percentile(a, q) / percentile(b, q), 1)}x`).join(' / ');

export async function runIggyBench(): Promise<void> {
  const total = clients * batchesPerProducer * messagesPerBatch;
  console.log(
    `\n# Iggy (${clients} producers x ${batchesPerProducer} batches x ${messagesPerBatch} messages x ${messageBytes} B = ${int(total)} messages, ` +
      `${fmt((total * messageBytes) / 1e9, 2)} GB per trial, then ${clients} consumers; ${trials} trial${trials === 1 ? '' : 's'}${quick ? '; QUARTET_BENCH_QUICK' : ''})`,
  );
  const floorDir = benchDir('iggy-floor-');
  const floorFile = join(floorDir, 'floor.bin');
  let raw: Awaited<ReturnType<typeof spawnNode>>;
  try {
    writeFloorFile(floorFile);
    raw = await spawnNode('raw tcp server', ['-e', rawServerSource, floorFile, floorDir], /raw-tcp port (\d+)/);
  } catch (err) {
    removeDir(floorDir);
    throw err;
  }
  const port = Number(raw.match[1]);
  const bases: RawBaseline[] = [];
  const runs: Array<{ ingest: Phase; read: Phase; preallocated: Phase }> = [];
  try {
    for (let t = 0; t < trials; t++) {
      const base = await rawBaseline(port, () => cpuSecondsOf(raw.child.pid));
      bases.push(base);
      const run = await quartetTrial();
      runs.push(run);
      console.log(
        `  trial ${t + 1}/${trials}: raw TCP up ${mbS(Math.max(mbOf(base.ingest1), mbOf(base.ingest4)))}, down ${mbS(Math.max(mbOf(base.read1), mbOf(base.read4)))}, plain store ${mbS(mbOf(base.plainStore))}, read-back floor ${mbS(mbOf(base.floor))}; ` +
          `ingest ${mbS(payloadMb(run.ingest))} in ${fmt(run.ingest.seconds, 2)} s, read-back ${mbS(payloadMb(run.read))} in ${fmt(run.read.seconds, 2)} s; ` +
          `ingest with preallocate_segments ${mbS(payloadMb(run.preallocated))}`,
      );
    }
  } finally {
    await stopChild(raw.child);
    removeDir(floorDir);
  }
  const cpu = sdkCpu();

  const up1 = median(bases.map((b) => mbOf(b.ingest1)));
  const up4 = median(bases.map((b) => mbOf(b.ingest4)));
  const down1 = median(bases.map((b) => mbOf(b.read1)));
  const down4 = median(bases.map((b) => mbOf(b.read4)));
  const upLimit = Math.max(up1, up4);
  const downLimit = Math.max(down1, down4);
  const ingestMb = median(runs.map((r) => payloadMb(r.ingest)));
  const plainStoreMb = median(bases.map((b) => mbOf(b.plainStore)));
  const readMb = median(runs.map((r) => payloadMb(r.read)));
  const sendLat = runs.flatMap((r) => r.ingest.latencies).sort((a, b) => a - b);
  const pollLat = runs.flatMap((r) => r.read.latencies).sort((a, b) => a - b);
  const ackRtt = bases.flatMap((b) => b.ackRtt).sort((a, b) => a - b);
  const fetchRtt = bases.flatMap((b) => b.fetchRtt).sort((a, b) => a - b);
  const sendP99 = percentile(sendLat, 99);
  const preallocatedLat = runs.flatMap((r) => r.preallocated.latencies).sort((a, b) => a - b);

  printTable(`Iggy through the SDK vs raw loopback TCP (median of ${trials}; MB/s of payload; baseline = the faster of 1 and ${clients} raw sockets, 1 MiB writes; ratio = Quartet / raw)`, [
    {
      case: `ingest: ${clients} producers, batches of ${messagesPerBatch} x ${messageBytes} B, 1 in flight each (baseline: client -> server-process sink)`,
      value: `${mbS(ingestMb)}, ${int(median(runs.map((r) => rate(r.ingest))))} msg/s (wire ${mbS(median(runs.map((r) => wireMb(r.ingest))))})`,
      baseline: mbS(upLimit),
      ratio: `${fmt((ingestMb / upLimit) * 100, 0)}%`,
      target: `>= 25%: ${verdict(ingestMb / upLimit >= 0.25)}`,
    },
    {
      case: `read-back: ${clients} consumers, polls of ${messagesPerBatch} from offset, after ${int(readWarmupPolls)} warm-up polls each (baseline: server-process source -> client)`,
      value: `${mbS(readMb)}, ${int(median(runs.map((r) => rate(r.read))))} msg/s (wire ${mbS(median(runs.map((r) => wireMb(r.read))))})`,
      baseline: mbS(downLimit),
      ratio: `${fmt((readMb / downLimit) * 100, 0)}%`,
      target: `>= 50%: ${verdict(readMb / downLimit >= 0.5)}`,
    },
  ]);

  printTable(`Iggy batch latency p50 / p99 / p99.9 (all trials pooled; baseline = raw round trip on ${clients} sockets at once; ratio per percentile)`, [
    {
      case: `send 1 batch (${int(sendLat.length)} sends) vs raw 1 MiB write -> 8 B ack (${int(ackRtt.length)})`,
      value: pctText(sendLat),
      baseline: pctText(ackRtt),
      ratio: pctRatio(sendLat, ackRtt),
      target: `p99 < 10 ms: ${verdict(sendP99 < 10)}`,
    },
    {
      case: `send 1 batch to a topic with preallocate_segments=true (${int(preallocatedLat.length)} sends; ingest ${mbS(median(runs.map((r) => payloadMb(r.preallocated))))}) vs the same raw round trip`,
      value: pctText(preallocatedLat),
      baseline: pctText(ackRtt),
      ratio: pctRatio(preallocatedLat, ackRtt),
    },
    {
      case: `poll ${messagesPerBatch} messages (${int(pollLat.length)} polls) vs raw 8 B request -> 1 MiB reply (${int(fetchRtt.length)})`,
      value: pctText(pollLat),
      baseline: pctText(fetchRtt),
      ratio: pctRatio(pollLat, fetchRtt),
    },
  ]);

  const cpuRow = (name: string, phase: (r: { ingest: Phase; read: Phase; preallocated: Phase }) => Phase): Row => {
    const batches = (p: Phase): number => p.messages / messagesPerBatch;
    const seconds = median(runs.map((r) => phase(r).seconds));
    const broker = median(runs.map((r) => (phase(r).brokerCpu * 1000) / batches(phase(r))));
    const bench = median(runs.map((r) => (phase(r).benchCpu * 1000) / batches(phase(r))));
    const busy = median(runs.map((r) => (phase(r).brokerCpu + phase(r).benchCpu) / phase(r).seconds));
    return {
      case: `${name}: CPU ms per batch, broker process + this process (SDK clients), over ${fmt(seconds, 2)} s`,
      value: `${fmt(broker, 2)} + ${fmt(bench, 2)} ms`,
      baseline: `floor ${fmt(cpu.floor, 2)} ms`,
      ratio: `${fmt(busy, 2)} of 2 cores busy`,
    };
  };
  printTable('Iggy context: raw TCP with 1 socket, and CPU per 1,000-message batch (floor = 1,000 x XXH3-64 of 1,000 B + one copy of the batch, in this process)', [
    { case: 'raw client -> server, 1 socket', value: mbS(up1), baseline: `${clients} sockets: ${mbS(up4)}`, ratio: `${fmt((up1 / up4) * 100, 0)}%` },
    { case: 'raw server -> client, 1 socket', value: mbS(down1), baseline: `${clients} sockets: ${mbS(down4)}`, ratio: `${fmt((down1 / down4) * 100, 0)}%` },
    {
      case: `plain store, no protocol: ${clients} clients send as many 1 MiB chunks as the ingest, the raw server appends each socket's bytes to a new file in 1 MiB writes on the thread pool, never synced (what new page-cache pages cost here; CPU per MiB: server ${fmt(median(bases.map((b) => b.plainStore.serverMs)), 2)} ms)`,
      value: mbS(plainStoreMb),
      baseline: `raw limit: ${mbS(upLimit)}`,
      ratio: `${fmt((plainStoreMb / upLimit) * 100, 0)}%`,
    },
    { case: 'ingest (above) against the plain store', value: mbS(ingestMb), baseline: mbS(plainStoreMb), ratio: `${fmt((ingestMb / plainStoreMb) * 100, 0)}%` },
    {
      case: `read-back floor, no protocol: the raw server preads each 1 MiB from a file in the page cache and writes it, ${clients} clients receive in place and verify its 1,000 frame checksums (CPU per MiB: server ${fmt(median(bases.map((b) => b.floor.serverMs)), 2)} ms, clients ${fmt(median(bases.map((b) => b.floor.clientMs)), 2)} ms)`,
      value: mbS(median(bases.map((b) => mbOf(b.floor)))),
      baseline: `raw limit: ${mbS(downLimit)}`,
      ratio: `${fmt((median(bases.map((b) => mbOf(b.floor))) / downLimit) * 100, 0)}%`,
    },
    cpuRow('ingest', (r) => r.ingest),
    cpuRow('read-back', (r) => r.read),
    { case: 'SDK send path alone: encodeMessages x 1,000 into a pooled buffer (sendMessages)', value: `${fmt(cpu.encode, 2)} ms`, baseline: `${fmt(cpu.floor, 2)} ms`, ratio: `${fmt(cpu.encode / cpu.floor, 1)}x` },
    { case: 'SDK send path alone: prepareMessage x 1,000 + encodeSendBatch (the producer, which prepares once for its retries)', value: `${fmt(cpu.encodePrepared, 2)} ms`, baseline: `${fmt(cpu.floor, 2)} ms`, ratio: `${fmt(cpu.encodePrepared / cpu.floor, 1)}x` },
    { case: 'SDK poll path alone: decodePolledRecords (verify + decode 1,000 messages)', value: `${fmt(cpu.decode, 2)} ms`, baseline: `${fmt(cpu.floor, 2)} ms`, ratio: `${fmt(cpu.decode / cpu.floor, 1)}x` },
  ]);
}
