// KafkaJS 2.2.4 against Quartet: a producer sends keyed records with headers to several partitions
// (explicit partitions and the default partitioner), the admin reads the offsets (ListOffsets),
// and one consumer (a single-member group) reads everything back. The records must match
// exactly: count, per-partition order, keys, values, headers.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type EachMessagePayload } from 'kafkajs';
import { startBroker, type StartedBroker } from './helpers.js';

describe('KafkaJS', { timeout: 60_000 }, () => {
  let b: StartedBroker;
  let kafka: Kafka;
  before(async () => {
    b = await startBroker();
    kafka = new Kafka({ clientId: 'quartet-conformance', brokers: [b.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
  });
  after(async () => {
    await b?.stop();
  });

  it('produces to several partitions and consumes exactly the same records back', async () => {
    const topic = 'kafkajs-orders';
    const partitions = 3;
    const admin = kafka.admin();
    await admin.connect();
    try {
      await b.broker!.createTopic('default', topic, { partitions });

      const producer = kafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      const sent: Array<{ partition: number; key: string; value: string; headers: Record<string, string> }> = [];
      for (let round = 0; round < 4; round++) {
        const messages = Array.from({ length: 6 }, (_, i) => {
          const n = round * 6 + i;
          const m = { partition: n % partitions, key: `k${n}`, value: `value ${n} ${'é'.repeat(n)}`, headers: { 'trace-id': `t${n}`, kind: n % 2 === 0 ? 'even' : 'odd' } };
          sent.push(m);
          return m;
        });
        const results = await producer.send({ topic, acks: -1, messages });
        for (const r of results) assert.equal(r.errorCode, 0);
      }
      await producer.disconnect();

      const offsets = await admin.fetchTopicOffsets(topic);
      const expectedCounts = [0, 1, 2].map((p) => sent.filter((m) => m.partition === p).length);
      assert.deepEqual(
        offsets.sort((x, y) => x.partition - y.partition).map((o) => [o.partition, Number(o.low), Number(o.high)]),
        expectedCounts.map((c, p) => [p, 0, c]),
      );

      const consumer = kafka.consumer({ groupId: 'kafkajs-conformance', sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 200 });
      await consumer.connect();
      const received: EachMessagePayload[] = [];
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        const all = new Promise<void>((resolve) => {
          void consumer.run({
            eachMessage: async (payload) => {
              received.push(payload);
              if (received.length === sent.length) resolve();
            },
          });
        });
        await all;
      } finally {
        await consumer.disconnect();
      }

      assert.equal(received.length, sent.length);
      for (let p = 0; p < partitions; p++) {
        const got = received.filter((r) => r.partition === p);
        const want = sent.filter((m) => m.partition === p);
        assert.deepEqual(
          got.map((r) => ({ offset: r.message.offset, key: r.message.key?.toString(), value: r.message.value?.toString(), headers: Object.fromEntries(Object.entries(r.message.headers ?? {}).map(([k, v]) => [k, String(v)])) })),
          want.map((m, i) => ({ offset: String(i), key: m.key, value: m.value, headers: m.headers })),
          `partition ${p}`,
        );
      }
    } finally {
      await admin.disconnect();
    }
  });

  it('produces to a topic created on first use (Metadata auto-creation) with the default partitioner', async () => {
    const producer = kafka.producer();
    await producer.connect();
    try {
      const results = await producer.send({ topic: 'kafkajs-auto', messages: [{ key: 'a', value: '1' }, { key: 'b', value: '2' }, { value: 'no key' }] });
      assert.ok(results.every((r) => r.errorCode === 0));
      const log = b.broker!.partition({ topic: 'kafkajs-auto' }, 0);
      assert.equal(log.stats().highWatermark, 3);
    } finally {
      await producer.disconnect();
    }
  });
});
