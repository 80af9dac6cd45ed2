// The event-loop stall of issue item 3, bounded: 20 connections fetch through Kafka a topic
// written through Iggy (every batch transcoded), or produce small batches that decode to 16 MiB,
// while another connection's ApiVersions is timed, against a whole server (startServer) with a
// worker thread. The figures are printed; the bench (bench/stalls.ts, `npm run bench -- stalls`)
// compares them with the pool off in one run. Large Cursus v1 batches, decoded on the worker pool
// as Wire v2 frames are, with a request on another v1 connection timed meanwhile.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { test, type TestContext } from 'node:test';
import { measureStalls, stallsTopic, writeIggyTopic, type StallsResult } from '../../bench/stalls.js';
import { silentLogger } from '../../src/base/logger.js';
import { loadConfig } from '../../src/server/config.js';
import { startServer, type QuartetServer } from '../../src/server/server.js';
import { decodeV1Batch, encodeV1Batch, type V1Record } from '../../src/protocols/cursus/v1/batch.js';
import { V1WireClient } from '../protocols/cursus/v1-wire-client.js';

/**
 * The median is the item's 50 ms. The slowest answer is printed with the load average: on a
 * shared machine the scheduler alone can hold the event loop that long; the bound catches a
 * return of the multi-second stalls of the inline path.
 */
const probeMedianMsMax = 50;
const probeMaxMsMax = 2_000;

/**
 * A server with one worker thread, Kafka and Iggy listeners on 127.0.0.1:0, `batches` Iggy batches
 * of 1,000 x 1 KB in the topic, stopped and removed when the test ends.
 */
async function stallsServer(t: TestContext, batches: number): Promise<{ server: QuartetServer; kafkaPort: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-stalls-'));
  const { config } = loadConfig({
    flags: {
      'data-dir': join(dir, 'data'), 'http-enabled': false, 'kafka-addr': '127.0.0.1:0', 'kafka-enabled': true, 'iggy-addr': '127.0.0.1:0', 'iggy-enabled': true,
      'worker-threads': '1', 'cursus-enabled': false, 'felix-enabled': false,
    },
    env: { QUARTET_ROOT_PASSWORD: 'root-password' },
    cwd: dir,
  });
  const server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
  t.after(async () => {
    await server.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });
  await server.ready;
  const iggy = server.listenerAddresses().get('iggy')!;
  await writeIggyTopic(`127.0.0.1:${iggy.port}`, 'root-password', batches);
  return { server, kafkaPort: server.listenerAddresses().get('kafka')!.port };
}

function report(t: TestContext, what: string, r: StallsResult): void {
  const load = loadavg()[0]!.toFixed(1);
  t.diagnostic(`ApiVersions while 20 ${what} ran: slowest ${r.probeMaxMs.toFixed(1)} ms, median ${r.probeMedianMs.toFixed(2)} ms over ${r.probes}; ${what} ${r.fetchesMs.toFixed(0)} ms; load average ${load}`);
  assert.ok(r.probeMedianMs < probeMedianMsMax, `median ApiVersions ${r.probeMedianMs} ms`);
  assert.ok(r.probeMaxMs < probeMaxMsMax, `slowest ApiVersions ${r.probeMaxMs} ms`);
}

test('a request on another connection is answered while 20 transcoding fetches run on the worker pool', { timeout: 120_000 }, async (t) => {
  const { kafkaPort } = await stallsServer(t, 4);
  const r = await measureStalls({ kafkaPort, fetches: 20, rounds: 1, fetchBytesMax: 8 << 20, secondsMax: 60 });
  assert.equal(r.fetchesDone, 20);
  assert.ok(r.fetchBytes > 1 << 20, `the fetches read the topic (${r.fetchBytes} bytes)`);
  report(t, 'fetches', r);
});

test('a request on another connection is answered while 20 connections produce small batches that decode to 16 MiB', { timeout: 120_000 }, async (t) => {
  const { server, kafkaPort } = await stallsServer(t, 0);
  const r = await measureStalls({ kafkaPort, work: 'produce', fetches: 20, rounds: 1, fetchBytesMax: 0, secondsMax: 60 });
  assert.equal(r.fetchesDone, 20);
  // 20 produces of 16 records, and the one that warmed the broker before the clock started.
  assert.equal(server.broker()!.partition({ topic: stallsTopic }, 0).stats().nextOffset, 21 * 16, 'every record appended');
  report(t, 'produces', r);
});

/** A Cursus v1 0xBA7C batch of `count` records of `bytes` each, with a producer id and a key on every record. */
function v1LargeBatch(topic: string, count: number, bytes: number): Buffer {
  const records: V1Record[] = Array.from({ length: count }, (_, i) => ({
    offset: 0n, seqNum: 0n, producerId: Buffer.from('v1-producer'), key: Buffer.from(`k${i}`), epoch: 7n,
    payload: Buffer.alloc(bytes, 0x61 + (i % 26)), eventType: Buffer.alloc(0), schemaVersion: 0, aggregateVersion: 0n, metadata: Buffer.alloc(0),
  }));
  return Buffer.concat(encodeV1Batch({ topic: Buffer.from(topic), partition: 0, acks: Buffer.from('1'), idempotent: false }, records));
}

test('large Cursus v1 batches are decoded on the worker pool while a request on another connection is answered', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-stalls-v1-'));
  const { config } = loadConfig({
    flags: {
      'data-dir': join(dir, 'data'), 'http-enabled': false, 'kafka-enabled': false, 'iggy-enabled': false, 'felix-enabled': false,
      'cursus-addr': '127.0.0.1:0', 'cursus-v1-compat': true, 'worker-threads': '1',
    },
    env: { QUARTET_ROOT_PASSWORD: 'root-password' },
    cwd: dir,
  });
  const server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
  t.after(async () => {
    await server.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });
  await server.ready;
  // Count the v1 batches handed to the worker pool (the main thread decodes the rest).
  const transcoder = server.broker()!.transcoder;
  const offload = transcoder.offloadTask.bind(transcoder);
  let offloaded = 0;
  transcoder.offloadTask = <T>(...args: Parameters<typeof offload>): Promise<T> | null => {
    const run = offload<T>(...args);
    if (run !== null && args[1] === 'prepareV1BatchTask') offloaded++;
    return run;
  };
  const port = server.listenerAddresses().get('cursus')!.port;
  const probe = await V1WireClient.connect(port);
  t.after(() => probe.destroy());
  assert.match(await probe.line('CREATE topic=big partitions=1'), /^OK topic=big /);
  // 4 connections, each 4 batches of 4,000 records x 150 B (about 0.85 MB a body, under the
  // topic's largest batch: the cost is in the many records).
  const records = 4_000;
  const rounds = 4;
  const batch = v1LargeBatch('big', records, 150);
  const producers = await Promise.all(Array.from({ length: 4 }, () => V1WireClient.connect(port)));
  t.after(() => producers.forEach((p) => p.destroy()));
  let running = true;
  const acks: number[] = [];
  const producing = Promise.all(
    producers.map(async (p) => {
      for (let r = 0; r < rounds; r++) {
        const line = await p.line(batch);
        assert.match(line, /^\{/);
        const reply = JSON.parse(line) as { status: string; last_offset: number; producer_id: string; producer_epoch: number };
        assert.equal(reply.status, 'OK');
        assert.equal(reply.producer_id, 'v1-producer');
        assert.equal(reply.producer_epoch, 7);
        acks.push(reply.last_offset);
      }
    }),
  ).finally(() => (running = false));
  const latencies: number[] = [];
  const deadline = Date.now() + 60_000;
  while (running && Date.now() < deadline) {
    const t0 = performance.now();
    assert.match(await probe.line('LIST'), /^OK /);
    latencies.push(performance.now() - t0);
  }
  await producing;
  assert.equal(offloaded, 4 * rounds, 'every large batch was decoded on the worker');
  assert.deepEqual(acks.sort((a, b) => a - b), Array.from({ length: 4 * rounds }, (_, i) => (i + 1) * records - 1), 'every record appended');
  // The records read back as sent.
  probe.send('CONSUME topic=big partition=0 offset=0 batch=2 member=m');
  const served = decodeV1Batch(await probe.next());
  assert.ok(served.ok, served.ok ? '' : served.reason);
  assert.deepEqual(served.value.records.map((r) => [r.key.toString(), r.payload.length, r.producerId.toString()]), [['k0', 150, 'v1-producer'], ['k1', 150, 'v1-producer']]);
  latencies.sort((a, b) => a - b);
  const slowest = latencies.at(-1) ?? 0;
  const median = latencies[Math.floor(latencies.length / 2)] ?? 0;
  t.diagnostic(`LIST on another v1 connection while 4 connections published ${4 * rounds} batches of ${batch.length} B: slowest ${slowest.toFixed(1)} ms, median ${median.toFixed(2)} ms over ${latencies.length}; load average ${loadavg()[0]!.toFixed(1)}`);
  assert.ok(median < probeMedianMsMax, `median LIST ${median} ms`);
  assert.ok(slowest < probeMaxMsMax, `slowest LIST ${slowest} ms`);
});
