// The transaction commands (src/protocols/cursus/handlers/transactions.ts) at the handler level
// over a real Broker: the lifecycle and its replies, one transaction per epoch, fencing,
// idempotent TXN_PUBLISH retries, staged offsets committed only with the transaction, markers
// that a Kafka read_committed reader understands, and a restart.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchFlags, BatchFormat, type StoredBatch } from '../../../src/log/index.js';
import { batchRecords, validateRecordBatch } from '../../../src/protocols/kafka/codec/record-batch.js';
import { decodeBatch } from '../../../src/protocols/cursus/codec/batch.js';
import { CursusFailure } from '../../../src/protocols/cursus/handler.js';
import { cursusTransactionScope } from '../../../src/protocols/cursus/transactions.js';
import { cursusOffsetScope } from '../../../src/protocols/cursus/groups.js';
import { fnv1a64Mod } from '../../../src/protocols/cursus/routing.js';
import { tempDir } from '../../core/helpers.js';
import { openFixture, type Fixture } from './txn-event-fixtures.js';

async function init(f: Fixture, transactionalId: string): Promise<{ producerId: string; epoch: string }> {
  const r = await f.ok('INIT_PRODUCER_ID', { transactional_id: transactionalId });
  assert.equal(r.get('transactional_id'), transactionalId);
  return { producerId: r.get('producerId')!, epoch: r.get('epoch')! };
}

function session(transactionalId: string, p: { producerId: string; epoch: string }) {
  return { transactional_id: transactionalId, producerId: p.producerId, epoch: p.epoch };
}

async function readAll(f: Fixture, topic: string, partition: number): Promise<StoredBatch[]> {
  return f.broker.read({ topic }, partition, 0, { maxBytes: 1 << 20 });
}

test('a transaction from INIT_PRODUCER_ID to END_TXN, with the spec replies and idempotent finalization', async (t) => {
  const f = await openFixture(t);
  await f.broker.createTopic('default', 'orders', { partitions: 2 });
  const p = await init(f, 'tx-1');
  assert.match(p.producerId, /^[0-9]+$/, 'the producerId is the core id in decimal');
  const s = session('tx-1', p);
  assert.deepEqual([...(await f.ok('BEGIN_TXN', s))], [['transactional_id', 'tx-1'], ['state', 'open'], ['producerId', p.producerId], ['epoch', p.epoch]]);
  const pub = await f.ok('TXN_PUBLISH', { ...s, topic: 'orders', partition: '1', seqNum: '1', message: 'first order' });
  assert.deepEqual([...pub], [['transactional_id', 'tx-1'], ['appended', 'true'], ['topic', 'orders'], ['partition', '1'], ['state', 'open']]);
  await f.ok('TXN_PUBLISH', { ...s, topic: 'orders', partition: '1', seqNum: '2', message: 'second order' });
  // Sequences count per partition: the keyed record continues partition 1's if its key routes there.
  const keyedPartition = fnv1a64Mod(Buffer.from('customer-7'), 2);
  const keyed = await f.ok('TXN_PUBLISH', { ...s, topic: 'orders', key: 'customer-7', seqNum: keyedPartition === 1 ? '3' : '1', message: 'keyed' });
  assert.equal(Number(keyed.get('partition')), keyedPartition, 'routed by FNV-1a of the key');
  const status = await f.ok('TXN_STATUS', { transactional_id: 'tx-1' });
  const participants = keyedPartition === 1 ? '1' : '2';
  const messages = '3';
  assert.deepEqual([...status], [['transactional_id', 'tx-1'], ['mode', 'exactly_once'], ['state', 'open'], ['messages', messages], ['participants', participants], ['offsets', '0']]);
  const end = await f.ok('END_TXN', { ...s, result: 'commit' });
  assert.deepEqual([...end], [['transactional_id', 'tx-1'], ['state', 'committed'], ['messages', messages], ['offsets', '0']]);
  assert.deepEqual([...(await f.ok('END_TXN', { ...s, result: 'commit' }))], [...end], 'a retried commit answers the same');
  assert.equal((await f.fails('END_TXN', { ...s, result: 'abort' })).code, 'transaction_already_committed');
  const again = await f.fails('BEGIN_TXN', s);
  assert.deepEqual([again.code, again.fields.get('transactional_id'), again.fields.get('epoch')], ['producer_reinitialization_required', 'tx-1', p.epoch]);
  const p2 = await init(f, 'tx-1');
  assert.equal(p2.producerId, p.producerId, 'the same producerId');
  assert.equal(Number(p2.epoch), Number(p.epoch) + 1, 'a higher epoch');
  await f.ok('BEGIN_TXN', session('tx-1', p2));
  // The committed records carry the transaction in their CBV2 fields; the marker is a CBV2 control record.
  const stored = await readAll(f, 'orders', 1);
  const data = stored.filter((b) => (b.flags & BatchFlags.control) === 0).map((b) => decodeBatch(b.payload));
  assert.ok(data.every((d) => d.ok));
  const first = (data[0] as { ok: true; value: { records: Array<{ transactionalId?: string; seqNum?: number; producerId?: string; payload: Buffer }> } }).value.records[0]!;
  assert.deepEqual([first.transactionalId, first.seqNum, first.producerId, first.payload.toString()], ['tx-1', 1, p.producerId, 'first order']);
  const marker = stored.find((b) => (b.flags & BatchFlags.control) !== 0);
  assert.equal(marker?.format, BatchFormat.cursus);
  const m = decodeBatch(marker!.payload);
  assert.ok(m.ok);
  const mr = m.value.records[0]!;
  assert.deepEqual([mr.controlBatchType, mr.controlBatchVersion, mr.transactionMarker, mr.controlKey?.readInt16BE(2)], ['transaction', 2, 'commit', 0]);
});

test('re-initializing aborts the open transaction and fences the previous epoch', async (t) => {
  const f = await openFixture(t);
  await f.broker.createTopic('default', 'fenced', { partitions: 1 });
  const old = await init(f, 'tx-f');
  const s = session('tx-f', old);
  await f.ok('BEGIN_TXN', s);
  await f.ok('TXN_PUBLISH', { ...s, topic: 'fenced', partition: '0', seqNum: '1', message: 'zombie' });
  const fresh = await init(f, 'tx-f');
  assert.ok(Number(fresh.epoch) > Number(old.epoch));
  const begin = await f.fails('BEGIN_TXN', s);
  assert.deepEqual([begin.code, begin.fields.get('current'), begin.fields.get('got')], ['producer_fenced', fresh.epoch, old.epoch]);
  const publish = await f.fails('TXN_PUBLISH', { ...s, topic: 'fenced', partition: '0', seqNum: '2', message: 'late' });
  assert.deepEqual([publish.code, publish.fields.get('producer'), publish.fields.get('current'), publish.fields.get('got')], ['stale_producer_epoch', old.producerId, fresh.epoch, old.epoch]);
  assert.equal((await f.fails('END_TXN', { ...s, result: 'commit' })).code, 'producer_fenced');
  assert.equal((await f.fails('BEGIN_TXN', { ...s, producerId: '999' })).code, 'producer_fenced', 'another producer id');
  assert.equal((await f.fails('BEGIN_TXN', { ...s, producerId: 'abc' })).code, 'producer_fenced');
  assert.equal((await f.fails('TXN_STATUS', { transactional_id: 'nope' })).code, 'transaction_not_found');
  // The zombie's record was aborted: read_committed readers never see it.
  const reader = f.broker.reads.open(f.broker.catalog.requireTopic({ topic: 'fenced' }), 0);
  const read = await reader.readRecords({ from: 0, end: reader.position().lastStableOffset, recordsMax: 10, bytesMax: 1 << 20, format: BatchFormat.cursus, isolation: 'read_committed' });
  assert.equal(read.records, 0);
  assert.equal(f.broker.transactions.abortedTransactions({ topic: 'fenced' }, 0, 0, 10).length, 1);
});

test('TXN_PUBLISH: seqNum above 0, a retry appends nothing, a gap is refused; nothing outside an open transaction', async (t) => {
  const f = await openFixture(t);
  await f.broker.createTopic('default', 'seq', { partitions: 1 });
  const p = await init(f, 'tx-s');
  const s = session('tx-s', p);
  const pub = (seqNum: string, message = 'm') => ({ ...s, topic: 'seq', partition: '0', seqNum, message });
  assert.equal((await f.fails('TXN_PUBLISH', pub('1'))).code, 'invalid_transaction_state', 'BEGIN_TXN first');
  await f.ok('BEGIN_TXN', s);
  assert.equal((await f.fails('TXN_PUBLISH', pub('0'))).code, 'invalid_seqNum');
  assert.equal((await f.fails('TXN_PUBLISH', pub('2'))).code, 'invalid_sequence', 'a new epoch starts at 1');
  await f.ok('TXN_PUBLISH', pub('1'));
  await f.ok('TXN_PUBLISH', pub('1'));
  await f.ok('TXN_PUBLISH', pub('2'));
  assert.equal((await f.fails('TXN_PUBLISH', pub('4'))).code, 'invalid_sequence');
  assert.equal(f.broker.partition({ topic: 'seq' }, 0).stats().nextOffset, 2, 'the retry appended nothing');
  assert.equal((await f.ok('TXN_STATUS', { transactional_id: 'tx-s' })).get('messages'), '2');
  assert.equal((await f.fails('TXN_PUBLISH', { ...pub('3'), topic: 'missing' })).code, 'topic_not_found');
  assert.equal((await f.fails('TXN_PUBLISH', { ...pub('3'), partition: '5' })).code, 'partition_not_found');
  const aborted = await f.ok('END_TXN', { ...s, result: 'abort' });
  assert.deepEqual([aborted.get('state'), aborted.get('messages')], ['aborted', '2']);
  assert.equal((await f.fails('END_TXN', { ...s, result: 'commit' })).code, 'transaction_aborted');
  assert.equal((await f.fails('END_TXN', { ...s, result: 'maybe' })).code, 'invalid_result');
});

test('a Kafka read_committed read of the same partition sees the committed Cursus records and not the aborted ones', async (t) => {
  const f = await openFixture(t);
  const topic = await f.broker.createTopic('default', 'shared', { partitions: 1 });
  const run = async (s: Record<string, string>, prefix: string, outcome: 'commit' | 'abort') => {
    await f.ok('BEGIN_TXN', s);
    await f.ok('TXN_PUBLISH', { ...s, topic: 'shared', partition: '0', seqNum: '1', message: `${prefix}-1` });
    await f.ok('TXN_PUBLISH', { ...s, topic: 'shared', partition: '0', seqNum: '2', message: `${prefix}-2` });
    await f.ok('END_TXN', { ...s, result: outcome });
  };
  await run(session('tx-a', await init(f, 'tx-a')), 'a', 'commit');
  await run(session('tx-b', await init(f, 'tx-b')), 'b', 'abort');
  // The same producer id again, in its next epoch: a Kafka client stops skipping it at the ABORT marker.
  await run(session('tx-b', await init(f, 'tx-b')), 'c', 'commit');
  const open = session('tx-open', await init(f, 'tx-open'));
  await f.ok('BEGIN_TXN', open);
  await f.ok('TXN_PUBLISH', { ...open, topic: 'shared', partition: '0', seqNum: '1', message: 'pending' });

  const reader = f.broker.reads.open(topic, 0);
  const read = await reader.readBatches({ offset: 0, isolation: 'read_committed', format: BatchFormat.kafka, bytesMax: 1 << 20, firstBatchWhole: true });
  assert.equal(read.position.lastStableOffset, 9, 'three transactions of two records and a marker each; the open one bounds the LSO');
  const producerB = Number(f.broker.transactions.describe(cursusTransactionScope, 'tx-b')!.producerId);
  assert.deepEqual(read.abortedTransactions?.map((a) => [a.producerId, a.firstOffset]), [[producerB, 3]]);
  // What a Kafka consumer does (Java's Fetcher, librdkafka): a producer is skipped from the first
  // offset of its aborted transaction until its ABORT control batch; control batches carry no records.
  const pending = [...read.abortedTransactions!];
  const skipping = new Set<number>();
  const visible: string[] = [];
  const controls: Array<[number, number, string]> = [];
  for (const chunk of read.chunks ?? []) {
    const batch = chunk as Buffer;
    const v = validateRecordBatch(batch);
    assert.ok(v.ok, 'a valid Kafka RecordBatch');
    const h = v.header;
    const producer = Number(h.producerId);
    for (const a of pending.filter((x) => x.firstOffset <= Number(h.baseOffset))) {
      skipping.add(a.producerId);
      pending.splice(pending.indexOf(a), 1);
    }
    const records = batchRecords(batch, h);
    assert.ok(records.ok);
    if (h.isControl) {
      const type = records.value[0]!.key!.readInt16BE(2) === 0 ? 'ABORT' : 'COMMIT';
      controls.push([Number(h.baseOffset), producer, type]);
      if (type === 'ABORT') skipping.delete(producer);
      continue;
    }
    assert.ok(h.isTransactional, 'transcoded with its transactional flag');
    if (!skipping.has(producer)) for (const r of records.value) visible.push(r.value!.toString());
  }
  assert.deepEqual(visible, ['a-1', 'a-2', 'c-1', 'c-2']);
  const producerA = Number(f.broker.transactions.describe(cursusTransactionScope, 'tx-a')!.producerId);
  assert.deepEqual(controls, [[2, producerA, 'COMMIT'], [5, producerB, 'ABORT'], [8, producerB, 'COMMIT']], 'the Cursus markers, served as Kafka control batches at their offsets');
  // A reader that does not filter itself (read_committed through the core) gets the same.
  const records = await reader.readRecords({ from: 0, end: read.position.lastStableOffset, recordsMax: 10, bytesMax: 1 << 20, format: BatchFormat.kafka, isolation: 'read_committed' });
  assert.equal(records.records, 4);
  const uncommitted = await reader.readRecords({ from: 0, end: reader.position().highWatermark, recordsMax: 10, bytesMax: 1 << 20, format: BatchFormat.cursus, isolation: 'read_uncommitted' });
  assert.equal(uncommitted.records, 7, 'every data record, markers left out');
});

test('SEND_OFFSETS_TO_TXN stages group offsets that commit with the transaction and go with an abort', async (t) => {
  const denied = new Set<string>();
  const f = await openFixture(t, {
    validateOwnership: (group, member, generation, topic, partitions) =>
      partitions.some((p) => denied.has(`${group}/${topic}/${p}`)) ? CursusFailure.of('NOT_OWNER', [['partition', String(partitions[0])], ['member', member], ['group', group], ['generation', String(generation)]]) : null,
  });
  const topic = await f.broker.createTopic('default', 'in', { partitions: 3 });
  const fetch = async (group: string, partition: number) => (await f.broker.offsets.fetch(cursusOffsetScope, group, topic.internalId, partition))?.offset ?? null;
  const send = (s: Record<string, string>, offsets: string, group = 'g') => ({ ...s, topic: 'in', group, member: 'm-1', generation: '3', offsets });

  const s1 = session('tx-o', await init(f, 'tx-o'));
  assert.equal((await f.fails('SEND_OFFSETS_TO_TXN', send(s1, 'P0:10'))).code, 'invalid_transaction_state', 'BEGIN_TXN first');
  await f.ok('BEGIN_TXN', s1);
  assert.deepEqual([...(await f.ok('SEND_OFFSETS_TO_TXN', send(s1, 'P0:10,P1:20')))], [['transactional_id', 'tx-o'], ['staged_offsets', '2']]);
  assert.equal((await f.ok('SEND_OFFSETS_TO_TXN', send(s1, 'P1:25,P2:5'))).get('staged_offsets'), '3');
  assert.equal((await f.fails('SEND_OFFSETS_TO_TXN', send(s1, 'P1:21'))).code, 'offset_regression', 'a staged offset only advances');
  assert.equal((await f.fails('SEND_OFFSETS_TO_TXN', send(s1, 'P0:11,P0:12'))).code, 'duplicate_partition');
  assert.equal((await f.fails('SEND_OFFSETS_TO_TXN', send(s1, '0:11'))).code, 'invalid_offsets');
  assert.equal((await f.fails('SEND_OFFSETS_TO_TXN', send(s1, ''))).code, 'missing_offsets');
  assert.equal((await f.fails('SEND_OFFSETS_TO_TXN', send(s1, 'P7:1'))).code, 'partition_not_found');
  denied.add('g/in/2');
  assert.equal((await f.fails('SEND_OFFSETS_TO_TXN', send(s1, 'P2:6'))).code, 'NOT_OWNER', "the groups service's answer");
  assert.equal(await fetch('g', 0), null, 'nothing is committed before the transaction');
  assert.equal((await f.fails('END_TXN', { ...s1, result: 'commit' })).code, 'NOT_OWNER', 'ownership is checked again before the commit');
  denied.clear();
  const end = await f.ok('END_TXN', { ...s1, result: 'commit' });
  assert.deepEqual([end.get('state'), end.get('offsets')], ['committed', '3']);
  assert.deepEqual([await fetch('g', 0), await fetch('g', 1), await fetch('g', 2)], [10, 25, 5]);

  const s2 = session('tx-o', await init(f, 'tx-o'));
  await f.ok('BEGIN_TXN', s2);
  assert.equal((await f.fails('SEND_OFFSETS_TO_TXN', send(s2, 'P0:9'))).code, 'offset_regression', 'below the committed offset');
  await f.ok('SEND_OFFSETS_TO_TXN', send(s2, 'P0:50'));
  await f.ok('END_TXN', { ...s2, result: 'abort' });
  assert.equal(await fetch('g', 0), 10, 'an aborted transaction commits no offset');
});

test('transactions survive a restart: an open one can still be committed, a committed one reports the same', async (t) => {
  const dataDir = tempDir(t, 'quartet-cursus-txn-');
  let f = await openFixture(t, { dataDir });
  await f.broker.createTopic('default', 'durable', { partitions: 1 });
  const open = session('tx-open', await init(f, 'tx-open'));
  await f.ok('BEGIN_TXN', open);
  await f.ok('TXN_PUBLISH', { ...open, topic: 'durable', partition: '0', seqNum: '1', message: 'a' });
  const done = session('tx-done', await init(f, 'tx-done'));
  await f.ok('BEGIN_TXN', done);
  await f.ok('TXN_PUBLISH', { ...done, topic: 'durable', partition: '0', seqNum: '1', message: 'b' });
  await f.ok('TXN_PUBLISH', { ...done, topic: 'durable', partition: '0', seqNum: '2', message: 'c' });
  await f.ok('END_TXN', { ...done, result: 'commit' });
  const committedBefore = await f.ok('TXN_STATUS', { transactional_id: 'tx-done' });
  await f.close();

  f = await openFixture(t, { dataDir });
  assert.deepEqual([...(await f.ok('TXN_STATUS', { transactional_id: 'tx-done' }))], [...committedBefore]);
  const status = await f.ok('TXN_STATUS', { transactional_id: 'tx-open' });
  assert.deepEqual([status.get('state'), status.get('messages'), status.get('participants')], ['open', '1', '1']);
  assert.equal(f.broker.transactions.lastStableOffset({ topic: 'durable' }, 0), 0, 'the open transaction still bounds the LSO');
  await f.ok('TXN_PUBLISH', { ...open, topic: 'durable', partition: '0', seqNum: '1', message: 'a' });
  assert.equal((await f.ok('TXN_STATUS', { transactional_id: 'tx-open' })).get('messages'), '1', 'the retry after the restart is recognised');
  await f.ok('END_TXN', { ...open, result: 'commit' });
  assert.equal((await f.fails('BEGIN_TXN', done)).code, 'producer_reinitialization_required');
  assert.equal(f.broker.transactions.lastStableOffset({ topic: 'durable' }, 0), f.broker.partition({ topic: 'durable' }, 0).stats().highWatermark);
  await f.close();
});
