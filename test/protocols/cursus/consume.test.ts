// CONSUME and LIST_OFFSETS at the handler level over a real broker, and records crossing between
// CBV2 and the Kafka and Iggy formats in both directions through the core read service.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchFlags, BatchFormat, type StoredBatch } from '../../../src/base/batch.js';
import type { Broker, Topic } from '../../../src/core/broker.js';
import type { ReadChunk } from '../../../src/core/reads.js';
import { cursusAppendRequest, encodeBatch } from '../../../src/protocols/cursus/codec/index.js';
import { kafkaBatchFormatCodec, appendRequestFromBatch as kafkaAppendRequest } from '../../../src/protocols/kafka/codec/kafka-format.js';
import { buildRecordBatch } from '../../../src/protocols/kafka/codec/record-batch.js';
import { encodeBatch as encodeIggyBatch, iggyFormatCodec, appendRequestFromBatch as iggyAppendRequest, isBatchRejection } from '../../../src/protocols/iggy/codec/index.js';
import { validateSendMessagesBatch } from '../../../src/protocols/iggy/codec/commands/messages.js';
import { consumed, dataFixture, eventually, failure, fieldsOf, handle, payloads, request, text, type DataFixture } from './data-harness.js';

function publish(fx: DataFixture, topic: string, messages: readonly string[], fields: Record<string, string> = {}): Promise<void> {
  return messages.reduce<Promise<void>>((p, message) => p.then(() => handle(fx, request('PUBLISH', { topic, producerId: 'p', message, partition: '0', ...fields })).then(() => undefined)), Promise.resolve());
}

function consume(fx: DataFixture, fields: Record<string, string>) {
  return handle(fx, request('CONSUME', { topic: 'orders', partition: '0', member: 'm-1', ...fields }));
}

/** The records of read chunks of another format, decoded with its codec. */
function decodeAs(format: 'kafka' | 'iggy', chunks: readonly ReadChunk[]): Array<{ offset: number; value: string; key: string | null }> {
  return chunks.flatMap((c) => {
    const payload = c as Buffer;
    const baseOffset = format === 'kafka' ? Number(payload.readBigInt64BE(0)) : Number(payload.readBigUInt64LE(8));
    const codec = format === 'kafka' ? kafkaBatchFormatCodec : iggyFormatCodec;
    return codec.decode({ payload, baseOffset } as StoredBatch).map((r) => ({ offset: r.offset, value: r.value!.toString(), key: r.key?.toString() ?? null }));
  });
}

async function readAs(broker: Broker, topic: Topic, format: 'kafka' | 'iggy'): Promise<ReadChunk[]> {
  const reader = broker.reads.open(topic, 0);
  const read = await reader.readRecords({ from: 0, end: reader.position().highWatermark, recordsMax: 100, bytesMax: 1 << 20, format: format === 'kafka' ? BatchFormat.kafka : BatchFormat.iggy, isolation: 'read_committed' });
  return read.chunks;
}

describe('CONSUME', () => {
  it('returns one CBV2 batch of the records from the offset, cut at `batch`, zero records at the end', async (t) => {
    const fx = await dataFixture(t);
    await fx.broker.createTopic('default', 'orders', { partitions: 2 });
    await publish(fx, 'orders', ['a', 'b', 'c', 'd']);
    const all = consumed(await consume(fx, { offset: '0' }));
    assert.deepEqual([all.topic, all.partition, all.acks, all.idempotent, all.batchStart, all.batchEnd], ['orders', 0, '1', false, 0, 0]);
    assert.deepEqual(all.records.map((r) => [r.offset, r.payload.toString(), r.producerId]), [[0, 'a', 'p'], [1, 'b', 'p'], [2, 'c', 'p'], [3, 'd', 'p']]);
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '1', batch: '2' }))), ['b', 'c']);
    const end = consumed(await consume(fx, { offset: '4' }));
    assert.deepEqual([end.records.length, end.topic], [0, 'orders'], 'zero records at the end');
    assert.equal(consumed(await consume(fx, { offset: '0', partition: '1' })).records.length, 0);
  });

  it('a CBV2 batch published whole is cut inside under a new header', async (t) => {
    const fx = await dataFixture(t);
    await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    const records = ['r0', 'r1', 'r2', 'r3'].map((p) => ({ topic: 'orders', partition: -1, offset: 0, payload: Buffer.from(p), key: Buffer.from(`k-${p}`) }));
    const bytes = Buffer.concat(encodeBatch({ idempotent: false, topic: 'orders', partition: -1, acks: '1', batchStart: 0, batchEnd: 0, records }));
    const appended = cursusAppendRequest(bytes, { partition: 0, now: fx.clock.now() });
    assert.ok(appended.ok);
    await fx.broker.append({ topic: 'orders' }, 0, appended.value);
    const cut = consumed(await consume(fx, { offset: '1', batch: '2' }));
    assert.deepEqual(cut.records.map((r) => [r.offset, r.payload.toString(), r.key?.toString()]), [[1, 'r1', 'k-r1'], [2, 'r2', 'k-r2']]);
  });

  it('the committed offset takes priority over a lower offset=; offset=-1 follows autoOffsetReset', async (t) => {
    const committed = new Map<string, number>([['g1/orders/0', 2]]);
    const asked: string[] = [];
    const fx = await dataFixture(t, {
      committedOffset: (group, topic, partition) => {
        asked.push(`${group}/${topic}/${partition}`);
        return committed.get(`${group}/${topic}/${partition}`) ?? null;
      },
    });
    await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'orders', ['a', 'b', 'c', 'd']);
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '0', group: 'g1' }))), ['c', 'd'], 'the committed offset wins over a lower offset=');
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '3', group: 'g1' }))), ['d'], 'a higher offset= is where the consumer got to');
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '-1', group: 'g1', autoOffsetReset: 'latest' }))), ['c', 'd'], 'offset=-1 with a committed offset: the committed one');
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '0' }))), ['a', 'b', 'c', 'd'], 'default-group has nothing committed');
    assert.ok(asked.includes('default-group/orders/0'));
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '-1' }))), ['a', 'b', 'c', 'd'], 'earliest by default');
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '-1', autoOffsetReset: 'latest' }))), [], 'latest: the end');
    assert.equal((await failure(fx, request('CONSUME', { topic: 'orders', partition: '0', member: 'm', offset: '-1', autoOffsetReset: 'middle' }))).code, 'invalid_autoOffsetReset');
  });

  it('OFFSET_OUT_OF_RANGE below the retained start and past the end, with earliest and latest', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'orders', ['a', 'b', 'c', 'd']);
    await fx.broker.partition(topic, 0).deleteRecordsBefore(2);
    const below = await failure(fx, request('CONSUME', { topic: 'orders', partition: '0', member: 'm', offset: '1' }));
    assert.deepEqual([below.code, below.class, below.retryable, fieldsOf(below)], ['OFFSET_OUT_OF_RANGE', 'conflict', false, { requested: '1', earliest: '2', latest: '4' }]);
    const beyond = await failure(fx, request('CONSUME', { topic: 'orders', partition: '0', member: 'm', offset: '9' }));
    assert.deepEqual(fieldsOf(beyond), { requested: '9', earliest: '2', latest: '4' });
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '2' }))), ['c', 'd']);
  });

  it('wait_ms: an empty read waits for an append and answers with it; with none, it answers empty at the deadline', async (t) => {
    const fx = await dataFixture(t);
    await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'orders', ['a']);
    const started = Date.now();
    const polling = consume(fx, { offset: '1', wait_ms: '30000' });
    await eventually(() => fx.data.waiters.size === 1, 'the CONSUME to wait');
    await publish(fx, 'orders', ['b']);
    assert.deepEqual(payloads(consumed(await polling)), ['b']);
    assert.ok(Date.now() - started < 25_000, 'woken by the append, not the deadline');
    assert.equal(fx.data.waiters.size, 0);
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '2', wait_ms: '20' }))), []);
  });

  it('read_committed (the default) hides an open transaction written through the core; read_uncommitted shows it', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'orders', ['before']);
    const { producerId, epoch } = await fx.broker.transactions.initProducerId({ scope: 'cursus', transactionalId: 'tx-1', transactionTimeoutMs: 60_000 });
    const id = { scope: 'cursus', transactionalId: 'tx-1', producerId, producerEpoch: epoch };
    await fx.broker.transactions.addPartitions(id, [{ topic, partition: 0 }]);
    const bytes = Buffer.concat(encodeBatch({ idempotent: false, topic: 'orders', partition: 0, acks: 'all', batchStart: 0, batchEnd: 0, records: [{ topic: 'orders', partition: 0, offset: 0, payload: Buffer.from('in-txn') }] }));
    const txn = cursusAppendRequest(bytes, { partition: 0, now: fx.clock.now(), producer: { producerId, producerEpoch: epoch, baseSequence: 0 }, flags: BatchFlags.transactional });
    assert.ok(txn.ok);
    await fx.broker.append(topic, 0, txn.value, { transaction: id });
    await publish(fx, 'orders', ['after']);

    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '0' }))), ['before'], 'nothing at or past the open transaction');
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '0', isolation: 'read_committed' }))), ['before']);
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '0', isolation: 'read_uncommitted' }))), ['before', 'in-txn', 'after']);
    assert.deepEqual(text(await handle(fx, request('LIST_OFFSETS', { topic: 'orders' }))).offsets, 'P0:earliest=0:latest=1:leo=3:hwm=3', 'latest is the last stable offset');

    await fx.broker.transactions.endTxn(id, true);
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '0' }))), ['before', 'in-txn', 'after'], 'committed: visible, the marker passed over');
    assert.equal((await failure(fx, request('CONSUME', { topic: 'orders', partition: '0', member: 'm', offset: '0', isolation: 'dirty' }))).code, 'invalid_isolation');
  });

  it('refuses missing fields, unknown topics and partitions, and what authorization denies', async (t) => {
    const fx = await dataFixture(t, {
      authorize: (_ctx, view, operation) => {
        if (view.name === 'locked') throw new Error(`no ${operation}`);
      },
    });
    await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await fx.broker.createTopic('default', 'locked', { partitions: 1 });
    for (const [fields, code] of [
      [{ partition: '0', offset: '0', member: 'm' }, 'missing_topic'],
      [{ topic: 'orders', offset: '0', member: 'm' }, 'missing_partition'],
      [{ topic: 'orders', partition: '0', member: 'm' }, 'missing_offset'],
      [{ topic: 'orders', partition: '0', offset: '0' }, 'missing_member'],
      [{ topic: 'orders', partition: '-1', offset: '0', member: 'm' }, 'invalid_partition'],
      [{ topic: 'orders', partition: '0', offset: '0', member: 'm', batch: '0' }, 'invalid_batch'],
      [{ topic: 'orders', partition: '1', offset: '0', member: 'm' }, 'partition_not_found'],
      [{ topic: 'nope', partition: '0', offset: '0', member: 'm' }, 'topic_not_found'],
    ] as const) {
      assert.equal((await failure(fx, request('CONSUME', fields))).code, code, JSON.stringify(fields));
    }
    await assert.rejects(handle(fx, request('CONSUME', { topic: 'locked', partition: '0', offset: '0', member: 'm' })), /no read/);
  });
});

describe('LIST_OFFSETS', () => {
  it('earliest, latest, leo and hwm of every partition, or of one', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 2 });
    await publish(fx, 'orders', ['a', 'b', 'c']);
    await fx.broker.partition(topic, 0).deleteRecordsBefore(1);
    assert.deepEqual(text(await handle(fx, request('LIST_OFFSETS', { topic: 'orders' }))), {
      topic: 'orders',
      partitions: '2',
      offsets: 'P0:earliest=1:latest=3:leo=3:hwm=3,P1:earliest=0:latest=0:leo=0:hwm=0',
    });
    assert.deepEqual(text(await handle(fx, request('LIST_OFFSETS', { topic: 'orders', partition: '1' }))).offsets, 'P1:earliest=0:latest=0:leo=0:hwm=0');
    const errors = [
      [{}, 'missing_topic', { command: 'LIST_OFFSETS' }],
      [{ topic: 'nope' }, 'topic_not_found', { topic: 'nope' }],
      [{ topic: 'orders', partition: 'x' }, 'invalid_partition', { command: 'LIST_OFFSETS' }],
      [{ topic: 'orders', partition: '2' }, 'partition_not_found', { partition: '2' }],
    ] as const;
    for (const [fields, code, details] of errors) {
      const e = await failure(fx, request('LIST_OFFSETS', fields));
      assert.deepEqual([e.code, fieldsOf(e)], [code, details]);
    }
  });
});

describe('records cross between CBV2 and the Kafka and Iggy formats', () => {
  it('records Kafka and Iggy wrote are consumed as CBV2, with the topic and partition of the reader', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    const kafka = kafkaAppendRequest(buildRecordBatch([{ timestamp: 1000, key: Buffer.from('k1'), value: Buffer.from('from-kafka-1') }, { timestamp: 1001, key: null, value: Buffer.from('from-kafka-2') }]));
    assert.ok(kafka.ok);
    await fx.broker.append(topic, 0, kafka.request);
    const iggyBatch = Buffer.concat(encodeIggyBatch([{ id: 1n, originTimestamp: 1_700_000_000_000_000n, payload: Buffer.from('from-iggy'), userHeaders: Buffer.alloc(0), offsetDelta: 0 }]));
    const validated = validateSendMessagesBatch({ streamId: { kind: 'numeric', value: 1 }, topicId: { kind: 'numeric', value: 1 }, partitioning: { kind: 'partitionId', partitionId: 0 }, messagesCount: 1, batch: iggyBatch } as Parameters<typeof validateSendMessagesBatch>[0]);
    assert.ok(!isBatchRejection(validated));
    await fx.broker.append(topic, 0, iggyAppendRequest(validated, { partitionId: 0 }));
    await publish(fx, 'orders', ['from-cursus']);

    const b = consumed(await consume(fx, { offset: '0' }));
    assert.deepEqual([b.topic, b.partition], ['orders', 0]);
    assert.deepEqual(
      b.records.map((r) => [r.topic, r.partition, r.offset, r.payload.toString(), r.key?.toString()]),
      [
        ['orders', 0, 0, 'from-kafka-1', 'k1'],
        ['orders', 0, 1, 'from-kafka-2', undefined],
        ['orders', 0, 2, 'from-iggy', undefined],
        ['orders', 0, 3, 'from-cursus', undefined],
      ],
    );
    assert.equal(b.records[0]!.timestamp, 1000);
    assert.deepEqual(payloads(consumed(await consume(fx, { offset: '1', batch: '2' }))), ['from-kafka-2', 'from-iggy'], 'cut inside the Kafka batch');
  });

  it('records published through Cursus are read through the Kafka and Iggy formats', async (t) => {
    const fx = await dataFixture(t);
    const topic = await fx.broker.createTopic('default', 'orders', { partitions: 1 });
    await publish(fx, 'orders', ['c-1'], { key: 'key-1' });
    await publish(fx, 'orders', ['c-2']);
    assert.deepEqual(decodeAs('kafka', await readAs(fx.broker, topic, 'kafka')), [
      { offset: 0, value: 'c-1', key: 'key-1' },
      { offset: 1, value: 'c-2', key: null },
    ]);
    assert.deepEqual(decodeAs('iggy', await readAs(fx.broker, topic, 'iggy')).map((r) => [r.offset, r.value]), [
      [0, 'c-1'],
      [1, 'c-2'],
    ]);
  });
});
