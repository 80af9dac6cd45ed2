// A Kafka front-end around an in-memory Broker for the data-path handler tests (Produce, Fetch,
// Metadata, ListOffsets, OffsetForLeaderEpoch, DeleteRecords, ApiVersions). `call` encodes the
// request as a client would at the given version, decodes it as the connection would, runs the
// handler, and round-trips the answer through the response codec at the same version.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../../../src/core/broker.js';
import type { Replication } from '../../../../src/core/replication.js';
import type { WorkerSettings } from '../../../../src/core/offload.js';
import type { Clock } from '../../../../src/base/clock.js';
import { silentLogger } from '../../../../src/base/logger.js';
import { askHandler, callHandler } from './call-handler.js';
import type { RequestInputOf, ResponseOf, SchemaApiKey } from '../../../../src/protocols/kafka/codec/messages/index.js';
import { buildRecordBatch, splitBatches, batchRecords, readBatchHeader, type RecordInput, type BuildBatchOptions } from '../../../../src/protocols/kafka/codec/record-batch.js';
import { KafkaBrokerFrontend } from '../../../../src/protocols/kafka/frontend.js';
import type { KafkaHandler, KafkaSession, KafkaSettings } from '../../../../src/protocols/kafka/handlers/types.js';
import { builtinFormats } from '../../../../src/server/listeners.js';

export interface DataHarness {
  broker: Broker;
  frontend: KafkaBrokerFrontend;
  session: KafkaSession;
  /** Runs the handler; null when it sends no response (acks=0). */
  call<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, request: RequestInputOf<K>): Promise<ResponseOf<K> | null>;
  /** Like call, but fails on a null answer. */
  ask<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, request: RequestInputOf<K>): Promise<ResponseOf<K>>;
}

export async function dataHarness(
  t: { after(fn: () => Promise<void> | void): void },
  options: { topics?: Record<string, number>; settings?: Partial<KafkaSettings>; memory?: boolean; replication?: Replication; workers?: Partial<WorkerSettings>; clock?: Clock } = {},
): Promise<DataHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-kafka-data-'));
  const broker = await Broker.open({ formats: builtinFormats(), dataDir, memory: options.memory ?? true, maintenanceIntervalMs: 0, ...(options.replication ? { replication: options.replication } : {}), ...(options.workers ? { workers: options.workers } : {}), ...(options.clock ? { clock: options.clock } : {}) });
  const frontend = new KafkaBrokerFrontend({
    broker,
    logger: silentLogger,
    clusterId: 'test-cluster',
    persistGroups: false,
    advertisedAddr: { host: '127.0.0.1', port: 19092 },
    settings: { defaultPartitions: 2, ...options.settings },
  });
  t.after(async () => {
    await frontend.close();
    await broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  for (const [name, partitions] of Object.entries(options.topics ?? {})) await broker.createTopic('default', name, { partitions });
  const abort = new AbortController();
  t.after(() => abort.abort());
  const session: KafkaSession = { remote: '127.0.0.1:50123', clientId: 'test-client', principal: null, sasl: null, logger: silentLogger, signal: abort.signal };
  let correlationId = 0;

  async function call<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, input: RequestInputOf<K>): Promise<ResponseOf<K> | null> {
    return callHandler(handler, version, input, { frontend, session, correlationId: ++correlationId });
  }
  async function ask<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, input: RequestInputOf<K>): Promise<ResponseOf<K>> {
    return askHandler(handler, version, input, { frontend, session, correlationId: ++correlationId });
  }
  return { broker, frontend, session, call, ask };
}

export interface SimpleRecord {
  key: string | null;
  value: string | null;
  headers?: Record<string, string>;
  timestamp?: number;
}

/** One RecordBatch v2 holding `records` (as a producer would send it: baseOffset 0). */
export function batchOf(records: SimpleRecord[], options: BuildBatchOptions = {}): Buffer {
  const now = 1_700_000_000_000;
  const inputs: RecordInput[] = records.map((r, i) => ({
    timestamp: r.timestamp ?? now + i,
    key: r.key === null ? null : Buffer.from(r.key),
    value: r.value === null ? null : Buffer.from(r.value),
    headers: Object.entries(r.headers ?? {}).map(([key, value]) => ({ key, value: Buffer.from(value) })),
  }));
  return buildRecordBatch(inputs, { partitionLeaderEpoch: -1, ...options });
}

export interface DecodedRecord {
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
}

/** Decodes a Fetch records section into records with absolute offsets (and checks every batch). */
export function recordsOf(section: Buffer | null): DecodedRecord[] {
  if (section === null) return [];
  const split = splitBatches(section);
  if (split.reason !== null) throw new Error(split.reason);
  const out: DecodedRecord[] = [];
  for (const batch of split.batches) {
    const h = readBatchHeader(batch);
    const recs = batchRecords(batch, h);
    if (!recs.ok) throw new Error(recs.reason);
    for (const r of recs.value) {
      out.push({
        offset: h.baseOffset + r.offsetDelta,
        timestamp: h.baseTimestamp + r.timestampDelta,
        key: r.key === null ? null : r.key.toString(),
        value: r.value === null ? null : r.value.toString(),
        headers: Object.fromEntries(r.headers.map((x) => [x.key, x.value === null ? '' : x.value.toString()])),
      });
    }
  }
  return out;
}
