// Slow consumers: how much a broker's memory (RSS) grows while consumers ask for large replies and
// never read them, with the broker-wide memory budget (memoryBudgetBytes, core/memory-budget.ts)
// at its default and, as the baseline, with it out of the way (1 TiB: every reply held whole).
//
// For each protocol, a broker in a child process (`node bin/quartet.js serve`, one listener on
// 127.0.0.1:0) gets a topic of one partition holding 100 batches of 1,000 messages x 1,000 B
// (about 100 MB), written through the protocol. Then 20 connections each send their requests and
// read nothing:
//   - Iggy: log in, then 64 pipelined PollMessages of 100,000 messages from offset 0;
//   - Kafka: 32 pipelined Fetches of max_bytes = partition_max_bytes = 100 MiB from offset 0.
// The broker's RSS (/proc/<pid>/status VmRSS) is taken before they connect and sampled every
// 250 ms until it has not grown for 2 s (at most 20 s); the growth is the peak less the start.
// Target: under 256 MiB with the default budget.
//
// Environment: QUARTET_BENCH_SLOW_CONSUMERS (connections, default 20), QUARTET_BENCH_SLOW_BUDGETS
// (comma-separated budgets in bytes to run, default "default,1099511627776").

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { IggyClient } from '../src/clients/iggy/index.js';
import { ApiKey } from '../src/protocols/kafka/codec/api-keys.js';
import { Framer } from '../src/protocols/kafka/codec/framer.js';
import { encodeRequest } from '../src/protocols/kafka/codec/frames.js';
import { buildRecordBatch } from '../src/protocols/kafka/codec/record-batch.js';
import { CommandCode, IggyFramer, PollingKind, decodeReply, encodeRequestFrame, iggyProtocolVersion, stringId } from '../src/protocols/iggy/codec/index.js';
import { benchDir, fmt, printTable, quartetServeArgs, removeDir, stopChild, untilReady, waitForOutput, type Row } from './harness.js';

const repoRoot = new URL('..', import.meta.url).pathname;
const credentials = { username: 'bench', password: 'bench-password' };
const connections = Number(process.env['QUARTET_BENCH_SLOW_CONSUMERS'] ?? 20);
const budgets = (process.env['QUARTET_BENCH_SLOW_BUDGETS'] ?? 'default,1099511627776').split(',');
const batches = 100;
const messagesPerBatch = 1000;
const messageBytes = 1000;
const MiB = 1024 * 1024;
const settleMs = 2_000;
const sampleMs = 250;
const waitMsMax = 20_000;

function rssBytes(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Samples RSS until it has not grown for settleMs (at most waitMsMax); the peak. */
async function settledPeak(pid: number): Promise<number> {
  const start = Date.now();
  let peak = rssBytes(pid);
  let grewAt = start;
  while (Date.now() - grewAt < settleMs && Date.now() - start < waitMsMax) {
    await new Promise((resolve) => setTimeout(resolve, sampleMs));
    const now = rssBytes(pid);
    if (now > peak + MiB) grewAt = Date.now();
    peak = Math.max(peak, now);
  }
  return peak;
}

async function startBroker(protocol: 'kafka' | 'iggy', budget: string) {
  const dir = benchDir(`slow-${protocol}-`);
  const args = [...quartetServeArgs(join(repoRoot, 'bin/quartet.js'), join(dir, 'data'), protocol), ...(budget === 'default' ? [] : ['--memory-budget-bytes', budget])];
  const env = { ...process.env, QUARTET_ROOT_USERNAME: credentials.username, QUARTET_ROOT_PASSWORD: credentials.password };
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot });
  try {
    const match = await waitForOutput(child, 'quartet', untilReady(new RegExp(`"msg":"listening","listener":"${protocol}","address":"([^"]+)"`)));
    const [host, port] = [match[1]!.slice(0, match[1]!.lastIndexOf(':')), Number(match[1]!.slice(match[1]!.lastIndexOf(':') + 1))];
    return { pid: child.pid!, addr: match[1]!, host, port, stop: () => stopChild(child).finally(() => removeDir(dir)) };
  } catch (err) {
    await stopChild(child);
    removeDir(dir);
    throw err;
  }
}

async function open(host: string, port: number): Promise<Socket> {
  const socket = connect({ host, port });
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  return socket;
}

const payload = (i: number): Buffer => Buffer.alloc(messageBytes, 0x61 + (i % 26));

/** Iggy: the data through the SDK, then connections that log in, poll and read nothing. */
async function iggyGrowth(budget: string): Promise<{ before: number; peak: number }> {
  const broker = await startBroker('iggy', budget);
  const sockets: Socket[] = [];
  try {
    const client = new IggyClient({ addr: broker.addr, credentials, pingIntervalMs: 0, reconnect: false, requestTimeoutMs: 60_000 });
    await client.connect();
    await client.createStream('slow');
    await client.createTopic({ streamId: 'slow', name: 't', partitionsCount: 1 });
    const messages = Array.from({ length: messagesPerBatch }, (_, i) => payload(i));
    for (let b = 0; b < batches; b++) await client.sendMessages({ streamId: 'slow', topicId: 't', partitioning: { partitionId: 0 }, messages });
    await client.close();
    const before = await settledPeak(broker.pid);
    for (let k = 0; k < connections; k++) {
      const socket = await open(broker.host, broker.port);
      sockets.push(socket);
      const clientId = BigInt(10_000 + k);
      const framer = new IggyFramer();
      const reply = new Promise<Buffer>((resolve) => {
        socket.on('data', (chunk: Buffer) => {
          for (const r of framer.push(chunk)) if (r.ok) resolve(r.frame.body);
        });
      });
      socket.write(Buffer.concat(encodeRequestFrame(CommandCode.loginRegister, { versionInfo: { protocolVersion: iggyProtocolVersion, sdkName: 'slow-bench', sdkVersion: '1' }, username: credentials.username, password: credentials.password, context: null }, { client: clientId, request: 0n, session: 0n })));
      const login = decodeReply(CommandCode.loginRegister, await reply);
      if (!login.ok || login.value.rejected) throw new Error('login failed');
      socket.removeAllListeners('data');
      socket.pause();
      const session = login.value.value.session;
      const polls = Array.from({ length: 64 }, (_, p) =>
        encodeRequestFrame(CommandCode.pollMessages, { consumer: { kind: 1, id: stringId(`c${k}`) }, streamId: stringId('slow'), topicId: stringId('t'), partitionId: 0, strategy: { kind: PollingKind.offset, value: 0n }, count: 100_000, autoCommit: false }, { client: clientId, request: BigInt(p + 1), session }),
      );
      socket.write(Buffer.concat(polls.flat()));
    }
    return { before, peak: await settledPeak(broker.pid) };
  } finally {
    for (const s of sockets) s.destroy();
    await broker.stop();
  }
}

/** Kafka: the data through Produce, then connections that pipeline Fetches and read nothing. */
async function kafkaGrowth(budget: string): Promise<{ before: number; peak: number }> {
  const broker = await startBroker('kafka', budget);
  const sockets: Socket[] = [];
  try {
    const producer = await open(broker.host, broker.port);
    sockets.push(producer);
    const framer = new Framer({ frameBytesMax: 1 << 26 });
    let answered = 0;
    let wake: () => void = () => undefined;
    producer.on('data', (chunk: Buffer) => {
      answered += framer.push(chunk).frames.length;
      wake();
    });
    producer.write(Buffer.concat(encodeRequest(ApiKey.CreateTopics, 7, 0, 'slow-bench', { topics: [{ name: 'slow', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 30_000 })));
    while (answered < 1) await new Promise<void>((resolve) => (wake = resolve));
    const records = buildRecordBatch(Array.from({ length: messagesPerBatch }, (_, i) => ({ timestamp: Date.now(), key: null, value: payload(i), headers: [] })), { partitionLeaderEpoch: -1 });
    for (let b = 0; b < batches; b++) {
      producer.write(Buffer.concat(encodeRequest(ApiKey.Produce, 9, b + 1, 'slow-bench', { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: 'slow', partitionData: [{ index: 0, records }] }] })));
      while (answered <= b + 1) await new Promise<void>((resolve) => (wake = resolve));
    }
    const before = await settledPeak(broker.pid);
    const fetch = (id: number) =>
      encodeRequest(ApiKey.Fetch, 12, id, 'slow-bench', {
        replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 100 * MiB, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: 'slow', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 100 * MiB, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
        forgottenTopicsData: [], rackId: '',
      });
    for (let k = 0; k < connections; k++) {
      const socket = await open(broker.host, broker.port);
      sockets.push(socket);
      socket.pause();
      socket.write(Buffer.concat(Array.from({ length: 32 }, (_, f) => fetch(f + 1)).flat()));
    }
    return { before, peak: await settledPeak(broker.pid) };
  } finally {
    for (const s of sockets) s.destroy();
    await broker.stop();
  }
}

export async function runSlowConsumersBench(): Promise<void> {
  const rows: Row[] = [];
  const mib = (bytes: number): string => `${fmt(bytes / MiB, 0)} MiB`;
  for (const [name, growth] of [['Iggy', iggyGrowth], ['Kafka', kafkaGrowth]] as const) {
    const results = new Map<string, { before: number; peak: number }>();
    for (const budget of budgets) results.set(budget, await growth(budget));
    const baseline = results.get(budgets[budgets.length - 1]!)!;
    for (const [budget, r] of results) {
      const label = budget === 'default' ? 'default budget (128 MiB)' : `budget ${mib(Number(budget))}`;
      rows.push({
        case: `${name}: ${connections} non-reading consumers, ${label}: RSS ${mib(r.before)} → ${mib(r.peak)}`,
        value: `+${mib(r.peak - r.before)}`,
        baseline: `+${mib(baseline.peak - baseline.before)}`,
        ratio: fmt((r.peak - r.before) / Math.max(1, baseline.peak - baseline.before), 2),
        target: budget === 'default' ? '< +256 MiB' : '',
      });
    }
  }
  printTable(`Slow consumers: broker RSS growth (baseline: budget ${budgets[budgets.length - 1]} bytes)`, rows);
}
