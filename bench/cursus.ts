// Cursus benchmark: Quartet's Cursus Wire v2 listener driven through the SDK (src/clients/cursus)
// with CBV2 batches, next to its Kafka listener measured in the same run the way bench/kafka.ts
// measures it. One broker (a child process) has both listeners; the ratio is Cursus / Kafka.
//
// 1. Publish: 1 KiB records, 500 per request, 4 requests in flight, one partition, acks=1 and
//    acks=all: CursusClient.publishBatch (a CBV2 batch per PUBLISH, the client's pool of 4
//    connections) against the faster of KafkaJS and @platformatic/kafka (500 per produce request,
//    4 in flight, acks 1 and -1). Context: CursusProducer.send() of the same records (the SDK's
//    batching; one batch in flight per partition).
// 2. Consume: the records published with acks=all read back from offset 0: CONSUME in batches of
//    10,000 (the reply is also capped at 8 MiB), and STREAM (one stream of a fresh group), against
//    `kcat -C -c <n>` of the Kafka topic (bench/kafka.ts's read-back).
// 3. Publish latency at a fixed 1,000 records/s with acks=all, one 1 KiB record per request, open
//    loop: PUBLISH of a one-record CBV2 batch against KafkaJS send() (as bench/kafka.ts), Cursus
//    once before and once after Kafka on the same broker (both printed; the order shows).
//
// Frames are not compressed (the client offers only `none`), as the Kafka clients send none.
// Each trial starts a fresh broker and warms both listeners and every client up untimed (10,000
// records each). Every loop is bounded in count and time; brokers run on 127.0.0.1 with fresh directories under
// benchDir() and are stopped at the end, also on error. Without kcat the Kafka read-back is skipped.
//
// Environment: QUARTET_BENCH_QUICK=1 (20,000 records per case, 1 trial, 3 s of latency),
// QUARTET_BENCH_CURSUS_RECORDS (default 200000), QUARTET_BENCH_CURSUS_TRIALS (3),
// QUARTET_BENCH_CURSUS_PARTS (a comma-separated subset of throughput, latency; default both),
// QUARTET_BENCH_CPU_PROF=<dir> (run the broker under `node --cpu-prof`, profiles in <dir>).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CursusClient, CursusProducer } from '../src/clients/cursus/index.js';
import type { Acks, CursusRecord } from '../src/protocols/cursus/codec/batch.js';
import { benchDir, cpuSecondsOf, fmt, percentile, printTable, quartetServeArgs, removeDir, stopChild, untilReady, waitForOutput, type Row } from './harness.js';
import { loadPlatformaticKafka, requirePlatformaticKafka } from '../test/peers/platformatic-kafka.js';

const repoRoot = new URL('..', import.meta.url).pathname;
const envInt = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};

const quick = process.env['QUARTET_BENCH_QUICK'] === '1';
const records = envInt('QUARTET_BENCH_CURSUS_RECORDS', quick ? 20_000 : 200_000);
const trials = envInt('QUARTET_BENCH_CURSUS_TRIALS', quick ? 1 : 3);
const recordBytes = 1024;
const perRequest = 500;
const inFlight = 4;
/** Time limit of one publish or read case. */
const caseSecondsMax = 30;
/** Records each client publishes (and Cursus reads back) untimed before a trial's cases. */
const warmupRecords = perRequest * 20;
/** CONSUME and STREAM: records per reply at most. */
const readBatch = 10_000;
/** Hard limit on one kcat run. */
const commandTimeoutMs = 120_000;

/** QUARTET_BENCH_CURSUS_PARTS: a comma-separated subset of throughput, latency (default both). */
const knownParts = ['throughput', 'latency'];
const parts = new Set((process.env['QUARTET_BENCH_CURSUS_PARTS'] ?? knownParts.join(',')).split(',').map((p) => p.trim()));

const latencyRate = 1000;
const latencySeconds = quick ? 3 : 10;
const latencyWarmupSeconds = 1;

// ---------------------------------------------------------------------------------------------
// The broker

interface Quartet {
  kafka: string;
  cursus: string;
  cpuSeconds(): number;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Both `listening` lines, in either order. */
const listening = /"listener":"(kafka|cursus)","address":"([^"]+)"[\s\S]*?"listener":"(kafka|cursus)","address":"([^"]+)"/;

async function startQuartet(): Promise<Quartet> {
  const dir = benchDir('cursus-quartet-');
  const args = quartetServeArgs(join(repoRoot, 'bin/quartet.js'), join(dir, 'data'), ['kafka', 'cursus']);
  const child = spawn(process.execPath, args, { env: { ...process.env, QUARTET_ROOT_PASSWORD: 'bench-root-password' }, stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => (stopped ??= stopChild(child).finally(() => removeDir(dir)));
  try {
    const m = await waitForOutput(child, 'quartet', untilReady(listening));
    const addresses = new Map([[m[1]!, m[2]!], [m[3]!, m[4]!]]);
    return { kafka: addresses.get('kafka')!, cursus: addresses.get('cursus')!, cpuSeconds: () => cpuSecondsOf(child.pid), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const newCursusClient = (addr: string): CursusClient => new CursusClient({ addr, compression: ['none'], poolSize: inFlight, reconnect: false });

// ---------------------------------------------------------------------------------------------
// Publish

interface Rate {
  count: number;
  seconds: number;
}

const rateOf = (r: Rate): number => r.count / r.seconds;

/** Keeps `window` operations of `perOp` records in flight until `total` are sent or the time limit passes. */
async function pipeline(window: number, perOp: number, op: () => Promise<unknown>, total = records): Promise<Rate> {
  const start = performance.now();
  const deadline = start + caseSecondsMax * 1000;
  let started = 0;
  let count = 0;
  let failure: unknown = null;
  const worker = async (): Promise<void> => {
    while (failure === null && started < total && performance.now() < deadline) {
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

const value = Buffer.alloc(recordBytes, 0x61);

async function cursusPublish(client: CursusClient, topic: string, acks: Acks, total = records): Promise<Rate> {
  await client.createTopic(topic, { partitions: 1 });
  const batchRecords: CursusRecord[] = Array.from({ length: perRequest }, () => ({ topic, partition: 0, offset: 0, payload: value }));
  const batch = { idempotent: false, topic, partition: 0, acks, batchStart: 0, batchEnd: 0, records: batchRecords };
  return pipeline(inFlight, perRequest, () => client.publishBatch(batch), total);
}

/** CursusProducer.send() of every record; `inFlight` x `perRequest` sends awaited at a time. */
async function cursusProducerPublish(client: CursusClient, topic: string): Promise<Rate> {
  await client.createTopic(topic, { partitions: 1 });
  const producer = new CursusProducer(client, { topic, acks: 'all', batchRecordsMax: perRequest });
  try {
    return await pipeline(1, perRequest * inFlight, () => Promise.all(Array.from({ length: perRequest * inFlight }, () => producer.send(value, { partition: 0 }))));
  } finally {
    await producer.close();
  }
}

async function kafkajsPublish(bootstrap: string, topic: string, acks: 1 | -1, total = records): Promise<Rate> {
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({ clientId: 'quartet-bench', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const messages = Array.from({ length: perRequest }, () => ({ value }));
  try {
    return await pipeline(inFlight, perRequest, () => producer.send({ topic, acks, messages }), total);
  } finally {
    await producer.disconnect();
  }
}

async function platformaticPublish(bootstrap: string, topic: string, acks: 1 | -1, total = records): Promise<Rate> {
  const { Admin, Producer, ProduceAcks } = await requirePlatformaticKafka();
  const admin = new Admin({ clientId: 'quartet-bench', bootstrapBrokers: [bootstrap] });
  try {
    await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
  } finally {
    await admin.close();
  }
  const producer = new Producer({ clientId: 'quartet-bench', bootstrapBrokers: [bootstrap], autocreateTopics: false });
  const messages = Array.from({ length: perRequest }, () => ({ topic, partition: 0, value }));
  try {
    return await pipeline(inFlight, perRequest, () => producer.send({ messages, acks: acks === 1 ? ProduceAcks.LEADER : ProduceAcks.ALL }), total);
  } finally {
    await producer.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Consume

/** CONSUME from offset 0 in batches of readBatch until `count` records are read. */
async function cursusConsume(client: CursusClient, topic: string, count: number): Promise<Rate> {
  const start = performance.now();
  const deadline = start + caseSecondsMax * 1000;
  let offset = 0;
  let read = 0;
  while (read < count && performance.now() < deadline) {
    const batch = await client.consume({ topic, partition: 0, offset, member: 'bench', batch: readBatch });
    const last = batch.records.at(-1);
    if (last === undefined) throw new Error(`CONSUME at offset ${offset} returned nothing (${read} of ${count} read)`);
    read += batch.records.length;
    offset = last.offset + 1;
  }
  return { count: read, seconds: (performance.now() - start) / 1000 };
}

/** One STREAM of a fresh group (from the log start) until `count` records have arrived. */
async function cursusStream(client: CursusClient, topic: string, count: number): Promise<Rate> {
  const start = performance.now();
  const stream = client.stream({ topic, partition: 0, member: 'bench', group: `bench-${Math.round(start)}`, batch: readBatch }, { idleTimeoutMs: caseSecondsMax * 1000 });
  let read = 0;
  try {
    for await (const event of stream) {
      if (event.type === 'close') throw new Error(`the stream closed (${event.close.reason}) after ${read} of ${count} records`);
      if (event.type === 'batch') read += event.batch.records.length;
      if (read >= count || performance.now() - start > caseSecondsMax * 1000) break;
    }
  } finally {
    stream.stop();
  }
  return { count: read, seconds: (performance.now() - start) / 1000 };
}

/** `kcat -C -c <count>` of partition 0 to /dev/null, timed from start to exit (bench/kafka.ts's read-back). */
function kcatConsume(bootstrap: string, topic: string, count: number): Promise<Rate> {
  const settings = ['fetch.message.max.bytes=4194304', 'fetch.max.bytes=67108864', 'queued.min.messages=1000000', 'queued.max.messages.kbytes=262144'];
  const args = ['-C', '-b', bootstrap, '-t', topic, '-p', '0', '-o', 'beginning', '-c', String(count), '-e', '-f', '%s\\n', ...settings.flatMap((s) => ['-X', s])];
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn('kcat', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), commandTimeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      const seconds = (performance.now() - start) / 1000;
      const short = stderr.match(/Reached end of topic \S+ \[0\] at offset (\d+)/);
      if (code !== 0 || (short !== null && Number(short[1]) < count)) reject(new Error(`kcat -C exited ${code}: ${stderr.slice(0, 300)}`));
      else resolve({ count, seconds });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Latency

interface Latencies {
  sorted: number[];
  errors: number;
  /** Sends issued more than 10 ms after their slot. */
  late: number;
}

/** Open loop at latencyRate (no coordinated omission); the warm-up second is not recorded. */
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
  await Promise.race([Promise.all(pending), sleep(10_000)]);
  errors += pending.size;
  return { sorted: samples.sort((a, b) => a - b), errors, late };
}

async function cursusLatency(addr: string, topic: string): Promise<Latencies> {
  const client = newCursusClient(addr);
  try {
    await client.createTopic(topic, { partitions: 1 });
    const payload = Buffer.alloc(recordBytes, 0x6c);
    const records = [{ topic, partition: 0, offset: 0, payload }];
    const batch = { idempotent: false, topic, partition: 0, acks: 'all' as const, batchStart: 0, batchEnd: 0, records };
    return await fixedRate(() => client.publishBatch(batch));
  } finally {
    await client.close();
  }
}

async function kafkaLatency(bootstrap: string): Promise<Latencies> {
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({ clientId: 'quartet-bench-latency', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: 'latency-kafka', numPartitions: 1 }] });
  } finally {
    await admin.disconnect();
  }
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const payload = Buffer.alloc(recordBytes, 0x6c);
  try {
    return await fixedRate(() => producer.send({ topic: 'latency-kafka', acks: -1, messages: [{ value: payload }] }));
  } finally {
    await producer.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const recS = (n: number): string => `${int(n)} rec/s`;
const mbS = (recordsPerSecond: number): string => `${fmt((recordsPerSecond * recordBytes) / 1e6)} MB/s`;
const both = (r: number): string => (Number.isFinite(r) ? `${recS(r)} (${mbS(r)})` : 'failed');
const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${fmt(a / b, 2)}x` : 'n/a');
const median = (xs: number[]): number => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};
const pcts = (l: Latencies): string => (l.sorted.length === 0 ? 'n/a' : [50, 99, 99.9].map((p) => fmt(percentile(l.sorted, p), 2)).join(' / ') + ' ms');
const pctRatio = (a: Latencies, b: Latencies): string =>
  a.sorted.length === 0 || b.sorted.length === 0 ? 'n/a' : [50, 99, 99.9].map((p) => fmt(percentile(a.sorted, p) / percentile(b.sorted, p), 2)).join(' / ');
const notes = (l: Latencies): string => (l.errors > 0 || l.late > 0 ? ` (${l.errors} errors, ${l.late} late sends)` : '');

/** Runs `step`, recording its rate under `name`, or NaN and the error. */
async function measure(results: Map<string, number[]>, errors: Map<string, string>, name: string, step: () => Promise<Rate>): Promise<void> {
  let rate = NaN;
  try {
    rate = rateOf(await step());
  } catch (err) {
    errors.set(name, String(err).slice(0, 200));
  }
  results.set(name, [...(results.get(name) ?? []), rate]);
}

function haveKcat(): boolean {
  const r = spawnSync('kcat', ['-V'], { stdio: 'ignore', timeout: 10_000 });
  return r.error === undefined && r.status === 0;
}

async function throughputTrial(t: number, results: Map<string, number[]>, errors: Map<string, string>, kcat: boolean): Promise<void> {
  spawnSync('sync');
  const q = await startQuartet();
  const client = newCursusClient(q.cursus);
  const m = (name: string, step: () => Promise<Rate>): Promise<void> => measure(results, errors, name, step);
  try {
    // Untimed warm-up of both listeners and the three clients (JIT, first allocations).
    await cursusPublish(client, 'warmup-cursus', '1', warmupRecords);
    await kafkajsPublish(q.kafka, 'warmup-kafkajs', 1, warmupRecords);
    if ((await loadPlatformaticKafka()) !== null) await platformaticPublish(q.kafka, 'warmup-platformatic', 1, warmupRecords);
    await cursusConsume(client, 'warmup-cursus', warmupRecords);
    await m('cursus publish acks=1', () => cursusPublish(client, 'cursus-acks1', '1'));
    await m('kafkajs publish acks=1', () => kafkajsPublish(q.kafka, 'kafkajs-acks1', 1));
    await m('platformatic publish acks=1', () => platformaticPublish(q.kafka, 'platformatic-acks1', 1));
    await m('cursus publish acks=all', () => cursusPublish(client, 'cursus-acksall', 'all'));
    await m('kafkajs publish acks=all', () => kafkajsPublish(q.kafka, 'kafkajs-acksall', -1));
    await m('platformatic publish acks=all', () => platformaticPublish(q.kafka, 'platformatic-acksall', -1));
    await m('cursus producer acks=all', () => cursusProducerPublish(client, 'cursus-producer'));
    await m('cursus consume', () => cursusConsume(client, 'cursus-acksall', records));
    await m('cursus stream', () => cursusStream(client, 'cursus-acksall', records));
    if (kcat) await m('kcat consume', () => kcatConsume(q.kafka, 'platformatic-acksall', records));
  } finally {
    await client.close();
    await q.stop();
  }
  const last = (name: string): string => recS(results.get(name)?.at(-1) ?? NaN);
  console.log(`  trial ${t + 1}/${trials}: ${[...results.keys()].map((k) => `${k} ${last(k)}`).join(', ')}`);
}

async function throughput(): Promise<void> {
  const kcat = haveKcat();
  if (!kcat) console.log('\nKafka read-back with kcat: skipped: apt-get install kcat');
  const results = new Map<string, number[]>();
  const errors = new Map<string, string>();
  for (let t = 0; t < trials; t++) await throughputTrial(t, results, errors, kcat);
  const med = (name: string): number => median(results.get(name) ?? []);
  const err = (name: string): string => (errors.has(name) ? ` (error: ${errors.get(name)})` : '');
  const fasterKafka = (acks: string): { name: string; rate: number } => {
    const kjs = med(`kafkajs publish ${acks}`);
    const plat = med(`platformatic publish ${acks}`);
    return Number.isFinite(plat) && !(kjs > plat) ? { name: '@platformatic/kafka', rate: plat } : { name: 'KafkaJS', rate: kjs };
  };
  const rows: Row[] = [];
  for (const acks of ['acks=1', 'acks=all']) {
    const kafka = fasterKafka(acks);
    const c = med(`cursus publish ${acks}`);
    rows.push({ case: `publish ${int(records)} x 1 KiB, ${acks}: publishBatch (CBV2, ${perRequest}/request, ${inFlight} in flight) vs ${kafka.name}${err(`cursus publish ${acks}`)}`, value: both(c), baseline: both(kafka.rate), ratio: ratio(c, kafka.rate) });
  }
  const kafkaAll = fasterKafka('acks=all');
  const p = med('cursus producer acks=all');
  rows.push({ case: `publish, acks=all: CursusProducer.send() per record (batches of ${perRequest}, one in flight per partition) vs ${kafkaAll.name}${err('cursus producer acks=all')}`, value: both(p), baseline: both(kafkaAll.rate), ratio: ratio(p, kafkaAll.rate) });
  const k = med('kcat consume');
  for (const [name, label] of [['cursus consume', `CONSUME batch=${int(readBatch)}`], ['cursus stream', `STREAM batch=${int(readBatch)}`]] as const) {
    const c = med(name);
    rows.push({ case: `read back ${int(records)} x 1 KiB: ${label} vs kcat -C -c ${int(records)}${err(name)}${err('kcat consume')}`, value: both(c), baseline: kcat ? both(k) : 'skipped', ratio: ratio(c, k) });
  }
  printTable(`Cursus through the SDK vs the Kafka listener (median of ${trials}; payload bytes; ratio = Cursus / Kafka)`, rows);
}

/** Cursus, then Kafka, then Cursus again, on one broker: both Cursus runs are printed. */
async function latency(): Promise<void> {
  spawnSync('sync');
  const q = await startQuartet();
  let cursus: Latencies[];
  let kafka: Latencies;
  try {
    cursus = [await cursusLatency(q.cursus, 'latency-cursus-1')];
    kafka = await kafkaLatency(q.kafka);
    cursus.push(await cursusLatency(q.cursus, 'latency-cursus-2'));
  } finally {
    await q.stop();
  }
  printTable(`Publish latency p50 / p99 / p99.9 at ${int(latencyRate)} records/s x ${latencySeconds} s (1 KiB, acks=all, one record per request; Cursus before and after Kafka on one broker; ratio = Cursus / Kafka per percentile)`, cursus.map((c, i) => ({
    case: `PUBLISH of a one-record CBV2 batch (${i === 0 ? 'before' : 'after'} Kafka) vs KafkaJS send()${notes(c)}`,
    value: pcts(c),
    baseline: `${pcts(kafka)}${notes(kafka)}`,
    ratio: pctRatio(c, kafka),
  })));
}

export async function runCursusBench(): Promise<void> {
  const unknown = [...parts].filter((p) => !knownParts.includes(p));
  if (unknown.length > 0) throw new Error(`QUARTET_BENCH_CURSUS_PARTS: unknown ${unknown.join(', ')} (known: ${knownParts.join(', ')})`);
  console.log(`\n# Cursus (${int(records)} records of 1 KiB per case, ${trials} trial${trials === 1 ? '' : 's'}${quick ? '; QUARTET_BENCH_QUICK' : ''})`);
  try {
    if (parts.has('throughput')) await throughput();
    if (parts.has('latency')) await latency();
  } finally {
    await Promise.all([...children].map((c) => stopChild(c)));
  }
}
