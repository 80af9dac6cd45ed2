// A byte flipped in the middle of a segment while the broker is stopped: after a restart, a
// consumer reading through the core read service never receives a record of the corrupt batch
// (it gets every record before it, then corrupt_batch at it), the batch is counted in
// quartet_corrupt_batches_total and GET /ready answers 503 storage_corrupt until the log start
// passes it; the scrubber finds the same batch where nobody reads.

import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isQuartetError } from '../../src/base/errors.js';
import { silentLogger } from '../../src/base/logger.js';
import type { Broker } from '../../src/core/broker.js';
import type { Topic } from '../../src/core/catalog.js';
import { decodeEnvelopeHeader, envelopeBytes, envelopeHeaderBytes } from '../../src/log/envelope.js';
import { decodeNeutralPayload, encodeNeutralBatch } from '../../src/log/neutral-format.js';
import { BatchFormat } from '../../src/log/types.js';
import { loadConfig, type QuartetConfig } from '../../src/server/config.js';
import { startServer, type QuartetServer } from '../../src/server/server.js';

const root = mkdtempSync(join(tmpdir(), 'quartet-corrupt-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const batches = 20;
const perBatch = 5;

function config(dataDir: string, scrubBytesPerSec = 0): QuartetConfig {
  const flags = { 'data-dir': dataDir, 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'kafka-enabled': 'false', 'iggy-enabled': 'false', 'log-scrub-bytes-per-sec': String(scrubBytesPerSec) };
  return loadConfig({ flags, env: {}, available: new Set(['http', 'kafka', 'iggy']) }).config;
}

async function serve(dataDir: string): Promise<{ server: QuartetServer; broker: Broker }> {
  const server = await startServer(config(dataDir), { logger: silentLogger, handleSignals: false, stdout: () => undefined });
  await server.ready;
  return { server, broker: server.broker()! };
}

function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

/** Writes `batches` batches of `perBatch` records (values rec-<offset>) and stops the server; returns the partition's directory. */
async function writeAndStop(dataDir: string): Promise<string> {
  const { server, broker } = await serve(dataDir);
  const topic = await broker.createTopic('default', 'events', { partitions: 1 });
  for (let b = 0; b < batches; b++) {
    await broker.append(topic, 0, encodeNeutralBatch(Array.from({ length: perBatch }, (_, i) => ({ key: null, value: `rec-${b * perBatch + i}`.padEnd(200, '.') }))));
  }
  const dir = join(dataDir, 'logs', String(topic.internalId), '0');
  assert.equal(await server.stop(), 0);
  return dir;
}

/**
 * Flips a byte of the batch in the middle of the partition's (only) segment, in the middle of its
 * payload (a header byte is caught as well: test/log/integrity.test.ts); returns its offsets.
 */
function flipMiddle(dir: string): { baseOffset: number; lastOffset: number } {
  const file = join(dir, readdirSync(dir).find((name) => name.endsWith('.log'))!);
  const middle = Math.floor(statSync(file).size / 2);
  const fd = openSync(file, 'r+');
  try {
    const head = Buffer.alloc(envelopeHeaderBytes);
    for (let position = 0; readSync(fd, head, 0, envelopeHeaderBytes, position) === envelopeHeaderBytes; ) {
      const h = decodeEnvelopeHeader(head);
      assert.ok(typeof h !== 'string');
      if (middle < position + envelopeBytes(h)) {
        const at = position + envelopeHeaderBytes + Math.floor(h.payloadLength / 2);
        const byte = Buffer.alloc(1);
        readSync(fd, byte, 0, 1, at);
        byte[0] = byte[0]! ^ 0x01;
        writeSync(fd, byte, 0, 1, at);
        return { baseOffset: h.baseOffset, lastOffset: h.baseOffset + h.recordCount - 1 };
      }
      position += envelopeBytes(h);
    }
    assert.fail('no batch in the middle of the segment');
  } finally {
    closeSync(fd);
  }
}

/** A consumer through the core read service: reads on from 0 until the end or an error. */
async function consume(broker: Broker, topic: Topic): Promise<{ values: string[]; failedAt: number | null; error: unknown }> {
  const reader = broker.reads.open(topic, 0);
  const end = reader.position().highWatermark;
  const values: string[] = [];
  let next = 0;
  for (let round = 0; round < 100 && next < end; round++) {
    try {
      const read = await reader.readRecords({ from: next, end, recordsMax: 2 * perBatch, bytesMax: 1 << 20, format: BatchFormat.neutral, isolation: 'read_uncommitted' });
      for (const chunk of read.chunks) for (const r of decodeNeutralPayload(chunk as Buffer, 0)) values.push(r.value!.toString().replace(/\.+$/, ''));
      next = read.next;
    } catch (error) {
      return { values, failedAt: next, error };
    }
  }
  return { values, failedAt: null, error: null };
}

test('after a restart, a consumer never receives the records of a batch with a flipped byte; the metric and /ready report it', async () => {
  const dataDir = join(root, `d${n++}`);
  const dir = await writeAndStop(dataDir);
  const bad = flipMiddle(dir);
  assert.ok(bad.baseOffset > 0 && bad.lastOffset < batches * perBatch - 1, 'the middle of the segment is inside a middle batch');

  const { server, broker } = await serve(dataDir);
  try {
    const port = server.httpAddress()!.port;
    const topic = broker.catalog.requireTopic({ topic: 'events' });
    const consumed = await consume(broker, topic);
    assert.deepEqual(consumed.values, Array.from({ length: bad.baseOffset }, (_, i) => `rec-${i}`), 'every record before the corrupt batch, in order, and nothing else');
    assert.equal(consumed.failedAt, bad.baseOffset);
    assert.ok(isQuartetError(consumed.error) && consumed.error.code === 'corrupt_batch', String(consumed.error));
    // However often asked, never served.
    const again = await consume(broker, topic);
    assert.deepEqual(again.values, consumed.values);
    const metrics = server.metrics.render();
    assert.match(metrics, /quartet_corrupt_batches_total\{namespace="default",partition="0",topic="events"\} 1/);
    assert.match(metrics, /quartet_storage_corrupt_batches 1/);
    assert.deepEqual(await httpGet(port, '/ready'), { status: 503, body: 'storage_corrupt\n' });
    // Giving the batch up (Kafka DeleteRecords past it) makes the broker ready again; the rest is read.
    await broker.partition(topic, 0).deleteRecordsBefore(bad.lastOffset + 1);
    assert.deepEqual(await httpGet(port, '/ready'), { status: 200, body: 'ready\n' });
    const rest = await broker.reads.open(topic, 0).readRecords({ from: bad.lastOffset + 1, end: batches * perBatch, recordsMax: 1_000, bytesMax: 1 << 20, format: BatchFormat.neutral, isolation: 'read_uncommitted' });
    assert.equal(rest.records, batches * perBatch - bad.lastOffset - 1);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('the scrubber finds a flipped byte nobody reads and reports it', async () => {
  const dataDir = join(root, `d${n++}`);
  const dir = await writeAndStop(dataDir);
  const bad = flipMiddle(dir);
  const { server, broker } = await serve(dataDir);
  try {
    const port = server.httpAddress()!.port;
    assert.deepEqual(await httpGet(port, '/ready'), { status: 200, body: 'ready\n' }, 'nothing known before the scrub');
    const checked = await broker.scrubber.step(1 << 30);
    assert.ok(checked > batches * perBatch * 200, `${checked} bytes checked`);
    assert.match(server.metrics.render(), /quartet_corrupt_batches_total\{namespace="default",partition="0",topic="events"\} 1/);
    assert.match(server.metrics.render(), /quartet_scrubbed_bytes_total \d+/);
    assert.deepEqual(await httpGet(port, '/ready'), { status: 503, body: 'storage_corrupt\n' });
    const topic = broker.catalog.requireTopic({ topic: 'events' });
    assert.equal((await consume(broker, topic)).failedAt, bad.baseOffset);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});
