// Felix benchmark: Quartet's Felix listener (QUIC on UDP) next to its Kafka listener (KafkaJS)
// and its Iggy listener (the Iggy SDK, src/clients/iggy), all three on one broker (a child
// process) in the same run; every Felix figure is printed with its ratio to each.
//
// 1. Publish throughput through the Felix SDK (src/clients/felix): binary acked batches (0x0009,
//    per_batch acks) of 64 records of 256 B, 1 KiB, 4 KiB and 16 KiB, 4 batches in flight over the
//    client's publish pool (its defaults: 4 connections x 2 streams);
//    against KafkaJS send() of 64 records (acks=1, 4 in flight) and IggyClient.sendMessages of 64
//    messages (4 clients, one in flight each). Each case runs for a fixed time.
// 2. Fan-out: 10 subscribers, each on its own connection, read a topic of 1 KiB records from the
//    start (FelixClient.subscribe `earliest`, shared event batches with offsets); delivered MB/s over the
//    10, against 10 KafkaJS consumers (fetching from the start) and 10 Iggy clients polling from
//    offset 0 in polls of 1,000.
// 3. Publish latency: one 1 KiB record per acked request, one at a time, for a fixed time:
//    p50/p99/p999 of Felix (a binary acked batch of one), KafkaJS send (acks=1) and Iggy
//    sendMessages.
//
// The Felix SDK runs over the listener's QUIC transport (src/protocols/felix/quic.ts). Every loop is bounded in count and time; the
// broker runs on 127.0.0.1 with a fresh directory under benchDir() and is stopped at the end, also
// on error.
//
// Environment: QUARTET_BENCH_QUICK=1 (2 s per case, 2,000 fan-out records),
// QUARTET_BENCH_FELIX_SECONDS (seconds per throughput/latency case, default 5),
// QUARTET_BENCH_FELIX_FANOUT_RECORDS (records in the fan-out topic, default 10000).

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FelixClient, type EventBatch } from '../src/clients/felix/index.js';
import { IggyClient } from '../src/clients/iggy/index.js';
import { selfSignedCertificateFile } from '../src/protocols/felix/listener.js';
import { benchDir, cpuSecondsOf, fmt, percentile, printTable, quartetServeArgs, removeDir, stopChild, type Row } from './harness.js';

const repoRoot = new URL('..', import.meta.url).pathname;
const envInt = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};

const quick = process.env['QUARTET_BENCH_QUICK'] === '1';
const caseSeconds = envInt('QUARTET_BENCH_FELIX_SECONDS', quick ? 2 : 5);
const fanoutRecords = envInt('QUARTET_BENCH_FELIX_FANOUT_RECORDS', quick ? 2_000 : 10_000);
const payloadSizes = [256, 1024, 4096, 16384];
const batchRecords = 64;
const inFlight = 4;
const subscribers = 10;
const fanoutRecordBytes = 1024;
/** A fan-out case gives up after this long. */
const fanoutSecondsMax = 120;
const credentials = { username: 'bench', password: 'bench-root-password' };
const iggyStream = 'default';

// ---------------------------------------------------------------------------------------------
// The broker

interface Quartet {
  kafka: string;
  iggy: string;
  felix: { host: string; port: number; ca: string };
  cpuSeconds(): number;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Waits (30 s at most) for the `listening` lines of every listener named; then keeps draining the output. */
function listeningAddresses(child: ChildProcess, names: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quartet did not start in 30 s: ${output.slice(-2000)}`)), 30_000);
    const onData = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-200_000);
      for (const m of output.matchAll(/"msg":"listening","listener":"(\w+)","address":"([^"]+)"/g)) found.set(m[1]!, m[2]!);
      // Root is created after the listeners are bound: the `ready` line follows.
      if (names.every((n) => found.has(n)) && output.includes('"msg":"ready"')) {
        clearTimeout(timer);
        output = '';
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve(found);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`quartet exited with ${code ?? signal}: ${output.slice(-2000)}`));
    });
  });
}

async function startQuartet(): Promise<Quartet> {
  const dir = benchDir('felix-');
  const dataDir = join(dir, 'data');
  const args = quartetServeArgs(join(repoRoot, 'bin/quartet.js'), dataDir, ['kafka', 'iggy', 'felix']);
  const env = { ...process.env, QUARTET_ROOT_USERNAME: credentials.username, QUARTET_ROOT_PASSWORD: credentials.password };
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => (stopped ??= stopChild(child).finally(() => removeDir(dir)));
  try {
    const addresses = await listeningAddresses(child, ['kafka', 'iggy', 'felix']);
    const felix = addresses.get('felix')!;
    const colon = felix.lastIndexOf(':');
    const ca = readFileSync(join(dataDir, selfSignedCertificateFile), 'utf8');
    return { kafka: addresses.get('kafka')!, iggy: addresses.get('iggy')!, felix: { host: felix.slice(0, colon), port: Number(felix.slice(colon + 1)), ca }, cpuSeconds: () => cpuSecondsOf(child.pid), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const felixClient = (q: Quartet): FelixClient => new FelixClient({ host: q.felix.host, port: q.felix.port, ca: q.felix.ca, tenantId: 'default', token: 'bench', requestTimeoutMs: 120_000 });

// ---------------------------------------------------------------------------------------------
// Cases

interface Rate {
  records: number;
  bytes: number;
  seconds: number;
}

const mbps = (r: Rate): number => r.bytes / r.seconds / 1e6;

/** Runs `workers` loops of `op` (each `perOp` records of `size` B) for caseSeconds. */
async function timedLoops(workers: number, perOp: number, size: number, op: (worker: number) => Promise<unknown>): Promise<Rate> {
  const start = performance.now();
  const deadline = start + caseSeconds * 1000;
  let records = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < deadline) {
        await op(w);
        records += perOp;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return { records, bytes: records * size, seconds };
}

type Kafka = import('kafkajs').Kafka;

async function kafkaOf(q: Quartet): Promise<Kafka> {
  const { Kafka, logLevel } = await import('kafkajs');
  return new Kafka({ clientId: 'quartet-bench-felix', brokers: [q.kafka], logLevel: logLevel.NOTHING });
}

async function createTopics(kafka: Kafka, names: string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: names.map((topic) => ({ topic, numPartitions: 1 })) });
  await admin.disconnect();
}

async function iggyClient(q: Quartet): Promise<IggyClient> {
  const c = new IggyClient({ addr: q.iggy, credentials, pingIntervalMs: 0, reconnect: false, requestTimeoutMs: 60_000 });
  await c.connect();
  return c;
}

async function felixPublish(q: Quartet, stream: string, size: number): Promise<Rate> {
  const c = felixClient(q);
  try {
    const publisher = c.publisher(stream);
    const payloads = Array.from({ length: batchRecords }, () => Buffer.alloc(size, 0x66));
    await publisher.sendBatch(payloads, { ack: 'per_batch' });
    return await timedLoops(inFlight, batchRecords, size, () => publisher.sendBatch(payloads, { ack: 'per_batch' }));
  } finally {
    await c.close();
  }
}

async function kafkaPublish(kafka: Kafka, topic: string, size: number): Promise<Rate> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const value = Buffer.alloc(size, 0x6b);
    const messages = Array.from({ length: batchRecords }, () => ({ value }));
    await producer.send({ topic, acks: 1, messages });
    return await timedLoops(inFlight, batchRecords, size, () => producer.send({ topic, acks: 1, messages }));
  } finally {
    await producer.disconnect();
  }
}

async function iggyPublish(q: Quartet, topic: string, size: number): Promise<Rate> {
  const clients = await Promise.all(Array.from({ length: inFlight }, () => iggyClient(q)));
  try {
    const messages = Array.from({ length: batchRecords }, () => Buffer.alloc(size, 0x69));
    const send = (w: number): Promise<unknown> => clients[w]!.sendMessages({ streamId: iggyStream, topicId: topic, partitioning: { partitionId: 0 }, messages });
    await send(0);
    return await timedLoops(inFlight, batchRecords, size, send);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/** 10 Felix subscribers (one client each) from the start of `stream` until each has `count` records. */
async function felixFanout(q: Quartet, stream: string, count: number): Promise<Rate> {
  const clients = Array.from({ length: subscribers }, () => felixClient(q));
  try {
    await Promise.all(clients.map((c) => c.connect()));
    const start = performance.now();
    const bytes = await Promise.all(
      clients.map(async (c) => {
        const sub = await c.subscribe(stream, { start: 'earliest' });
        return new Promise<number>((resolve, reject) => {
          let got = 0;
          let size = 0;
          const timer = setTimeout(() => reject(new Error(`felix fan-out: ${got} of ${count} records in ${fanoutSecondsMax} s`)), fanoutSecondsMax * 1000);
          sub.on('batch', (b: EventBatch) => {
            for (const p of b.payloads) {
              got++;
              size += p.length;
            }
            if (got >= count) {
              clearTimeout(timer);
              resolve(size);
            }
          });
        });
      }),
    );
    return { records: count * subscribers, bytes: bytes.reduce((a, b) => a + b, 0), seconds: (performance.now() - start) / 1000 };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

async function kafkaFanout(kafka: Kafka, topic: string, count: number): Promise<Rate> {
  const consumers = Array.from({ length: subscribers }, (_, i) => kafka.consumer({ groupId: `fanout-${topic}-${i}`, maxBytes: 8 << 20 }));
  try {
    await Promise.all(consumers.map((c) => c.connect()));
    await Promise.all(consumers.map((c) => c.subscribe({ topic, fromBeginning: true })));
    const start = performance.now();
    const bytes = await Promise.all(
      consumers.map(
        (c) =>
          new Promise<number>((resolve, reject) => {
            let got = 0;
            let size = 0;
            const timer = setTimeout(() => reject(new Error(`kafka fan-out: ${got} of ${count} records in ${fanoutSecondsMax} s`)), fanoutSecondsMax * 1000);
            void c.run({
              eachBatch: async ({ batch }) => {
                for (const m of batch.messages) {
                  got++;
                  size += m.value?.length ?? 0;
                }
                if (got >= count) {
                  clearTimeout(timer);
                  resolve(size);
                }
              },
            });
          }),
      ),
    );
    return { records: count * subscribers, bytes: bytes.reduce((a, b) => a + b, 0), seconds: (performance.now() - start) / 1000 };
  } finally {
    await Promise.all(consumers.map((c) => c.disconnect()));
  }
}

async function iggyFanout(q: Quartet, topic: string, count: number): Promise<Rate> {
  const clients = await Promise.all(Array.from({ length: subscribers }, () => iggyClient(q)));
  try {
    const start = performance.now();
    const deadline = start + fanoutSecondsMax * 1000;
    const bytes = await Promise.all(
      clients.map(async (c, i) => {
        let next = 0n;
        let size = 0;
        while (next < BigInt(count)) {
          if (performance.now() > deadline) throw new Error(`iggy fan-out: ${next} of ${count} records in ${fanoutSecondsMax} s`);
          const polled = await c.pollMessages({ streamId: iggyStream, topicId: topic, consumer: { consumer: i + 1 }, partitionId: 0, strategy: { offset: next }, count: 1000 });
          for (const m of polled.messages) size += m.payload.length;
          next += BigInt(polled.messages.length);
        }
        return size;
      }),
    );
    return { records: count * subscribers, bytes: bytes.reduce((a, b) => a + b, 0), seconds: (performance.now() - start) / 1000 };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/** Latencies (ms) of `op` run one at a time for caseSeconds. */
async function latencies(op: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 50; i++) await op();
  const out: number[] = [];
  const deadline = performance.now() + caseSeconds * 1000;
  while (performance.now() < deadline) {
    const t0 = performance.now();
    await op();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

// ---------------------------------------------------------------------------------------------
// The run

const ratio = (a: number, b: number): string => (b > 0 ? `${fmt(a / b, 2)}x` : 'n/a');

function versus(what: string, felix: Rate, kafka: Rate, iggy: Rate): Row[] {
  return [
    { case: `${what} vs Kafka (KafkaJS)`, value: `${fmt(mbps(felix), 2)} MB/s`, baseline: `${fmt(mbps(kafka), 2)} MB/s`, ratio: ratio(mbps(felix), mbps(kafka)) },
    { case: `${what} vs Iggy (SDK)`, value: `${fmt(mbps(felix), 2)} MB/s`, baseline: `${fmt(mbps(iggy), 2)} MB/s`, ratio: ratio(mbps(felix), mbps(iggy)) },
  ];
}

export async function runFelixBench(): Promise<void> {
  console.log(`\n# Felix (QUIC, the Felix SDK) vs Kafka and Iggy on one broker: ${caseSeconds} s per case, batches of ${batchRecords}, ${inFlight} in flight`);
  const q = await startQuartet();
  try {
    const kafka = await kafkaOf(q);
    const topics = [...payloadSizes.flatMap((s) => [`felix-${s}`, `kafka-${s}`, `iggy-${s}`]), 'fanout', 'lat-felix', 'lat-kafka', 'lat-iggy'];
    await createTopics(kafka, topics);

    const rows: Row[] = [];
    for (const size of payloadSizes) {
      const cpu0 = q.cpuSeconds();
      const felix = await felixPublish(q, `felix-${size}`, size);
      const felixCpu = q.cpuSeconds() - cpu0;
      const k = await kafkaPublish(kafka, `kafka-${size}`, size);
      const i = await iggyPublish(q, `iggy-${size}`, size);
      rows.push(...versus(`publish ${size} B x ${batchRecords}`, felix, k, i));
      console.log(`publish ${size} B: felix ${Math.round(felix.records / felix.seconds)} rec/s (broker ${fmt((felixCpu / felix.seconds) * 100, 0)}% CPU), kafka ${Math.round(k.records / k.seconds)} rec/s, iggy ${Math.round(i.records / i.seconds)} rec/s`);
    }
    printTable('Felix publish throughput (binary acked batches)', rows);

    // Fan-out: the topic filled once (through Kafka, the fastest writer), read by every protocol.
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const value = Buffer.alloc(fanoutRecordBytes, 0x6f);
    for (let n = 0; n < fanoutRecords; n += 500) await producer.send({ topic: 'fanout', acks: 1, messages: Array.from({ length: Math.min(500, fanoutRecords - n) }, () => ({ value })) });
    await producer.disconnect();
    const ff = await felixFanout(q, 'fanout', fanoutRecords);
    const kf = await kafkaFanout(kafka, 'fanout', fanoutRecords);
    const iff = await iggyFanout(q, 'fanout', fanoutRecords);
    printTable(`Fan-out to ${subscribers} subscribers (${fanoutRecords} x ${fanoutRecordBytes} B each, delivered MB/s)`, versus('fan-out', ff, kf, iff));

    const fc = felixClient(q);
    const one = [Buffer.alloc(1024, 0x6c)];
    const latencyPublisher = fc.publisher('lat-felix');
    const fl = await latencies(() => latencyPublisher.send(one[0]!));
    await fc.close();
    const producer1 = kafka.producer({ allowAutoTopicCreation: false });
    await producer1.connect();
    const kl = await latencies(() => producer1.send({ topic: 'lat-kafka', acks: 1, messages: [{ value: one[0]! }] }));
    await producer1.disconnect();
    const ic = await iggyClient(q);
    const il = await latencies(() => ic.sendMessages({ streamId: iggyStream, topicId: 'lat-iggy', partitioning: { partitionId: 0 }, messages: one }));
    await ic.close();
    const latencyRows: Row[] = [];
    for (const p of [50, 99, 99.9]) {
      const f = percentile(fl, p);
      latencyRows.push({ case: `p${p} vs Kafka (KafkaJS)`, value: `${fmt(f, 2)} ms`, baseline: `${fmt(percentile(kl, p), 2)} ms`, ratio: ratio(f, percentile(kl, p)) });
      latencyRows.push({ case: `p${p} vs Iggy (SDK)`, value: `${fmt(f, 2)} ms`, baseline: `${fmt(percentile(il, p), 2)} ms`, ratio: ratio(f, percentile(il, p)) });
    }
    printTable(`Publish latency, one 1 KiB record per acked request (${fl.length} Felix, ${kl.length} Kafka, ${il.length} Iggy requests; ratio > 1 = Felix slower)`, latencyRows);
  } finally {
    await q.stop();
  }
}
