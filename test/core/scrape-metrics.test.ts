import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Broker } from '../../src/core/broker.js';
import { MetricsRegistry } from '../../src/core/metrics.js';
import { encodeNeutralBatch } from '../../src/log/index.js';
import { registerProcessMetrics } from '../../src/server/process-metrics.js';

const root = mkdtempSync(join(tmpdir(), 'quartet-scrape-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** The value of the one series of `name` whose label text contains every one of `labels`. */
function value(text: string, name: string, labels: string[] = []): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `) ? labels.every((x) => l.includes(x)) : false);
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('consumer lag and committed offsets per group and partition, and disk bytes, computed at scrape time with neutral topic labels', async () => {
  const metrics = new MetricsRegistry();
  const broker = await Broker.open({ dataDir: root, rootUser: null, metrics });
  try {
    await broker.createNamespace('shop');
    const orders = await broker.createTopic('default', 'orders', { partitions: 2 });
    const events = await broker.createTopic('shop', 'events', { partitions: 1 });
    for (let i = 0; i < 5; i++) await broker.append(orders, 1, encodeNeutralBatch([{ value: `v${i}` }]));
    await broker.append(events, 0, encodeNeutralBatch([{ value: 'a' }, { value: 'b' }]));
    await broker.offsets.commit('kafka', 'billing', [{ topicInternalId: orders.internalId, partition: 1, offset: 2 }]);
    await broker.offsets.commit('iggy', 'reader', [{ topicInternalId: events.internalId, partition: 0, offset: 2 }]);

    await metrics.collect();
    let text = metrics.render();
    const billing = ['protocol="kafka"', 'group="billing"', 'namespace="default"', 'topic="orders"', 'partition="1"'];
    assert.equal(value(text, 'quartet_group_committed_offset', billing), 2);
    assert.equal(value(text, 'quartet_group_lag', billing), 3);
    assert.equal(value(text, 'quartet_group_lag', ['protocol="iggy"', 'group="reader"', 'namespace="shop"', 'topic="events"']), 0);
    assert.ok(value(text, 'quartet_partition_disk_bytes', ['namespace="default"', 'topic="orders"', 'partition="1"'])! > 0);
    assert.equal(value(text, 'quartet_partition_disk_bytes', ['namespace="default"', 'topic="orders"', 'partition="0"']), 0);

    // More records: the lag grows at the next scrape; a deleted topic's series go.
    await broker.append(orders, 1, encodeNeutralBatch([{ value: 'x' }, { value: 'y' }]));
    await broker.deleteTopic(events);
    await metrics.collect();
    text = metrics.render();
    assert.equal(value(text, 'quartet_group_lag', billing), 5);
    assert.equal(value(text, 'quartet_group_lag', ['group="reader"']), undefined);
    assert.equal(value(text, 'quartet_partition_disk_bytes', ['topic="events"']), undefined);
  } finally {
    await broker.close();
  }
});

test('process metrics: CPU, memory and event-loop delay at scrape time; GC pauses as a histogram', async () => {
  const metrics = new MetricsRegistry();
  const stop = registerProcessMetrics(metrics);
  try {
    await metrics.collect();
    const text = metrics.render();
    assert.ok(value(text, 'process_resident_memory_bytes')! > 1_000_000);
    assert.ok(value(text, 'nodejs_heap_size_used_bytes')! > 0);
    assert.ok(value(text, 'process_cpu_user_seconds_total')! > 0);
    assert.ok(value(text, 'nodejs_eventloop_lag_seconds', ['quantile="0.99"'])! >= 0);
    assert.match(text, /# TYPE nodejs_gc_duration_seconds histogram/);
  } finally {
    stop();
  }
});

test('a collector that fails is counted and the scrape goes on', async () => {
  const metrics = new MetricsRegistry();
  metrics.onCollect(() => {
    throw new Error('boom');
  });
  metrics.onCollect(() => metrics.gauge('after', 'set after the failing one').set({}, 1));
  await metrics.collect();
  const text = metrics.render();
  assert.equal(value(text, 'quartet_metrics_collector_errors_total'), 1);
  assert.equal(value(text, 'after'), 1);
});
