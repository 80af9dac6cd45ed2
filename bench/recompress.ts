// The append cost of a topic's compression.type: Produce (v9, acks=1) of batches of 1,000 records
// x 1,000 B (text-like values, about 4:1 compressible) through the Kafka Produce handler into an
// in-memory broker, each awaited before the next, to a topic with compression.type=producer (the
// baseline: the batch is stored as sent) and to topics whose codec differs from the batch's
// (recompressed on append). Figures: the fastest and the median time per append (the fastest
// says more on a loaded machine), the uncompressed MB/s at the fastest, and the event loop's
// busy time per append (performance.eventLoopUtilization), with
// the broker's worker threads off (everything on the event loop) and on (the compression half
// on a worker: the event loop then only walks the records and copies the batch out).
//
// Every loop is bounded in count. QUARTET_BENCH_QUICK=1 sends fewer batches.

import { performance } from 'node:perf_hooks';
import { silentLogger } from '../src/base/logger.js';
import { Broker } from '../src/core/broker.js';
import { buildRecordBatch, type RecordInput } from '../src/protocols/kafka/codec/record-batch.js';
import { CompressionCodec } from '../src/protocols/kafka/codec/compression.js';
import { KafkaBrokerFrontend } from '../src/protocols/kafka/frontend.js';
import { produceHandler } from '../src/protocols/kafka/handlers/produce.js';
import type { KafkaRequestContext } from '../src/protocols/kafka/handlers/types.js';
import { builtinFormats } from '../src/server/listeners.js';
import { benchDir, fmt, percentile, printTable, removeDir, type Row } from './harness.js';

const quick = process.env['QUARTET_BENCH_QUICK'] === '1';
const batches = quick ? 30 : 150;
const recordsPerBatch = 1000;
const valueBytes = 1000;

/** Values of words drawn from a small vocabulary: compressible about as much as log lines. */
function batchOf(codec: number, seed: number): Buffer {
  const words = ['order', 'created', 'customer', 'amount', 'EUR', 'shipped', 'warehouse', 'status', 'pending', 'id'];
  let x = seed * 2654435761;
  const records: RecordInput[] = [];
  for (let i = 0; i < recordsPerBatch; i++) {
    let value = '';
    while (value.length < valueBytes) {
      x = (x * 1103515245 + 12345) >>> 0;
      value += `${words[x % words.length]}=${x % 100000} `;
    }
    records.push({ timestamp: 1_700_000_000_000 + i, key: Buffer.from(`k${i}`), value: Buffer.from(value.slice(0, valueBytes)) });
  }
  return buildRecordBatch(records, { compression: codec });
}

interface Case {
  name: string;
  source: number;
  topicCodec: string;
}

const cases: Case[] = [
  { name: 'none → producer (stored as sent)', source: CompressionCodec.none, topicCodec: 'producer' },
  { name: 'lz4 → producer (stored as sent)', source: CompressionCodec.lz4, topicCodec: 'producer' },
  { name: 'none → lz4', source: CompressionCodec.none, topicCodec: 'lz4' },
  { name: 'none → snappy', source: CompressionCodec.none, topicCodec: 'snappy' },
  { name: 'none → zstd', source: CompressionCodec.none, topicCodec: 'zstd' },
  { name: 'none → gzip', source: CompressionCodec.none, topicCodec: 'gzip' },
  { name: 'lz4 → zstd', source: CompressionCodec.lz4, topicCodec: 'zstd' },
  { name: 'zstd → uncompressed', source: CompressionCodec.zstd, topicCodec: 'uncompressed' },
];

/** Fastest and median ms per append of `batches` appends of the case's batch, one after the other. */
async function measure(threads: number, c: Case, dataDir: string): Promise<{ minMs: number; p50Ms: number; loopMs: number }> {
  const broker = await Broker.open({ formats: builtinFormats(), dataDir, memory: true, maintenanceIntervalMs: 0, workers: { threads, offloadBytesMin: 64 * 1024, queueMax: 64 } });
  const frontend = new KafkaBrokerFrontend({ broker, logger: silentLogger, clusterId: 'bench', persistGroups: false, advertisedAddr: { host: '127.0.0.1', port: 9092 } });
  try {
    await broker.createTopic('default', 'r', { partitions: 1, config: { 'compression.type': c.topicCodec, 'retention.bytes': String(64 << 20) } });
    const template = batchOf(c.source, 1);
    const abort = new AbortController();
    const context: KafkaRequestContext = {
      frontend,
      session: { remote: '127.0.0.1:1', clientId: 'bench', principal: null, sasl: null, logger: silentLogger, signal: abort.signal },
      header: { apiKey: 0, apiVersion: 9, correlationId: 1, clientId: 'bench', headerVersion: 2 },
      version: 9,
    };
    const times: number[] = [];
    let elu = performance.eventLoopUtilization();
    for (let i = 0; i < batches + 5; i++) {
      if (i === 5) elu = performance.eventLoopUtilization();
      // A fresh copy per request, as each arrives in its own buffer (the handler patches it).
      const records = Buffer.from(template);
      const start = performance.now();
      const out = await produceHandler.handle({ transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'r', partitionData: [{ index: 0, records }] }] }, context);
      const ms = performance.now() - start;
      const code = out?.responses?.[0]?.partitionResponses?.[0]?.errorCode;
      if (code !== 0) throw new Error(`produce failed with ${code}`);
      if (i >= 5) times.push(ms); // the first few warm the codecs up
    }
    abort.abort();
    const loopMs = performance.eventLoopUtilization(elu).active / batches;
    times.sort((a, b) => a - b);
    return { minMs: times[0]!, p50Ms: percentile(times, 50), loopMs };
  } finally {
    await frontend.close();
    await broker.close();
  }
}

export async function runRecompressBench(): Promise<void> {
  const dir = benchDir('quartet-bench-recompress-');
  const mb = (recordsPerBatch * valueBytes) / 1e6;
  try {
    const rows: Row[] = [];
    for (const threads of [0, 2]) {
      let baseline = 0;
      for (const c of cases) {
        const { minMs, p50Ms, loopMs } = await measure(threads, c, dir);
        if (c.topicCodec === 'producer' && c.source === CompressionCodec.none) baseline = minMs;
        rows.push({
          case: `${c.name}, ${threads === 0 ? 'no workers' : `${threads} workers`}`,
          value: `${fmt(minMs, 2)} ms fastest, ${fmt(p50Ms, 2)} ms median (${fmt(mb / (minMs / 1000), 0)} MB/s); event loop busy ${fmt(loopMs, 2)} ms/append`,
          baseline: `${fmt(baseline, 2)} ms (none → producer)`,
          ratio: `${fmt(minMs / baseline, 1)}x`,
        });
      }
    }
    printTable(`Produce append cost of compression.type (${batches} batches of ${recordsPerBatch} x ${valueBytes} B)`, rows);
  } finally {
    removeDir(dir);
  }
}
