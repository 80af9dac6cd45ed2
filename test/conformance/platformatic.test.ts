// @platformatic/kafka 2.12.1 against Quartet (Produce v9, Fetch v12, Metadata v12, ListOffsets
// v7: the flexible versions): a producer sends keyed records with headers to several partitions,
// and a consumer reads them all back from the earliest offset. Exact match on count,
// per-partition order, keys, values and headers. A batch with records a compacted topic refuses
// comes back with each one named by its index (Produce v9 record_errors, KIP-467).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { platformaticKafkaPeer } from '../peers/platformatic-kafka.js';
import { startBroker, type StartedBroker } from './helpers.js';

const peer = await platformaticKafkaPeer();

describe('@platformatic/kafka', { timeout: 60_000, skip: peer.skip }, () => {
  const { Consumer, Producer, ProduceAcks, stringDeserializers, stringSerializers } = peer.kafka!;
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('produces to several partitions and consumes exactly the same records back', async () => {
    const topic = 'platformatic-events';
    const partitions = 3;
    await b.broker!.createTopic('default', topic, { partitions });
    const producer = new Producer({ clientId: 'quartet-conformance', bootstrapBrokers: [b.bootstrap], serializers: stringSerializers, autocreateTopics: false });
    const sent: Array<{ partition: number; key: string; value: string; headers: Map<string, string> }> = [];
    try {
      for (let round = 0; round < 3; round++) {
        const messages = Array.from({ length: 5 }, (_, i) => {
          const n = round * 5 + i;
          const m = { topic, partition: n % partitions, key: `k${n}`, value: `value-${n}`, headers: new Map([['source', 'platformatic'], ['n', String(n)]]) };
          sent.push(m);
          return m;
        });
        const result = await producer.send({ messages, acks: ProduceAcks.LEADER });
        assert.ok(result.offsets && result.offsets.length > 0);
      }
    } finally {
      await producer.close();
    }

    const consumer = new Consumer({ groupId: 'platformatic-conformance', clientId: 'quartet-conformance', bootstrapBrokers: [b.bootstrap], deserializers: stringDeserializers, maxWaitTime: 200 });
    const received: Array<{ partition: number; offset: bigint; key: string; value: string; headers: Map<string, string> }> = [];
    try {
      const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, sessionTimeout: 10_000, heartbeatInterval: 500 });
      for await (const message of stream) {
        received.push({ partition: message.partition, offset: message.offset, key: message.key, value: message.value, headers: message.headers as Map<string, string> });
        if (received.length === sent.length) break;
      }
      await stream.close();
    } finally {
      await consumer.close(true);
    }

    assert.equal(received.length, sent.length);
    for (let p = 0; p < partitions; p++) {
      const got = received.filter((r) => r.partition === p);
      const want = sent.filter((m) => m.partition === p);
      assert.deepEqual(
        got.map((r) => ({ offset: Number(r.offset), key: r.key, value: r.value, headers: Object.fromEntries(r.headers) })),
        want.map((m, i) => ({ offset: i, key: m.key, value: m.value, headers: Object.fromEntries(m.headers) })),
        `partition ${p}`,
      );
    }
  });

  it('hears which records of a refused batch were bad (record_errors)', async () => {
    const topic = 'platformatic-compact';
    await b.broker!.createTopic('default', topic, { partitions: 1, config: { 'cleanup.policy': 'compact' } });
    const producer = new Producer({ clientId: 'quartet-conformance', bootstrapBrokers: [b.bootstrap], serializers: stringSerializers, autocreateTopics: false, retries: 0 });
    let failure: unknown = null;
    try {
      const messages = Array.from({ length: 6 }, (_, i) => ({ topic, partition: 0, ...(i === 1 || i === 4 ? {} : { key: `k${i}` }), value: `v${i}` }));
      await producer.send({ messages, acks: ProduceAcks.LEADER });
    } catch (err) {
      failure = err;
    } finally {
      await producer.close();
    }
    assert.ok(failure instanceof Error, 'the send fails');
    // The client wraps the response's errors (AggregateError → ResponseError, which keeps the
    // decoded response, → one ProtocolError per path in it, with the server's message).
    const messages: string[] = [];
    const batchIndexes: number[] = [];
    const collect = (err: unknown, depth: number): void => {
      if (!(err instanceof Error) || depth > 4) return;
      const e = err as Error & { errors?: unknown[]; serverErrorMessage?: string; response?: { responses?: { partitionResponses?: { recordErrors?: { batchIndex: number }[] }[] }[] } };
      if (typeof e.serverErrorMessage === 'string') messages.push(e.serverErrorMessage);
      for (const r of e.response?.responses ?? []) for (const p of r.partitionResponses ?? []) for (const re of p.recordErrors ?? []) batchIndexes.push(re.batchIndex);
      for (const inner of e.errors ?? []) collect(inner, depth + 1);
    };
    collect(failure, 0);
    assert.deepEqual(batchIndexes, [1, 4], 'the two records without a key, by their index in the batch');
    assert.ok(messages.includes('Compacted topic cannot accept message without key in topic partition platformatic-compact-0.'), messages.join('\n'));
    assert.equal(b.broker!.partition({ topic }, 0).stats().nextOffset, 0);
  });
});
