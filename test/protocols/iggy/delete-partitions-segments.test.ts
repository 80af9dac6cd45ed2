// DeleteSegments (503) and DeletePartitions (403) end to end through the SDK (src/clients/iggy)
// against the test harness: the reference server's rules (docs/iggy.md, handlers/partitions.ts).
// DeleteSegments removes the oldest sealed segments only, never the active one, never past a
// stored consumer offset; DeletePartitions removes the last partitions with their data, offsets
// and directories, and rebalances the consumer groups.

import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { IggyClient, IggyError } from '../../../src/clients/iggy/index.js';
import { CommandCode, IggyErrorCode } from '../../../src/protocols/iggy/codec/index.js';
import { rootPassword, sid, startIggy, type IggyHarness } from './harness.js';

/** Iggy's smallest segment_size: a segment is full once it holds it, so four 256 KiB messages fill one and the fifth starts the next. */
const segmentSize = 1024 * 1024;
const bigPayload = (i: number) => Buffer.alloc(256 * 1024, 97 + (i % 26));

async function sdk(t: { after(fn: () => Promise<void>): void }, h: IggyHarness): Promise<IggyClient> {
  const client = new IggyClient({ addr: `127.0.0.1:${h.port}`, credentials: { username: 'iggy', password: rootPassword }, pingIntervalMs: 0, requestTimeoutMs: 10_000 });
  await client.connect();
  t.after(() => client.close());
  return client;
}

function isIggyError(code: number) {
  return (e: unknown) => e instanceof IggyError && e.code === code;
}

describe('iggy DeleteSegments', () => {
  it('deletes the oldest sealed segments, never the active one; polls from 0 start at the new first offset', async (t) => {
    const h = await startIggy(t);
    const client = await sdk(t, h);
    await client.createStream('seg');
    await client.createTopic({ streamId: 'seg', name: 't', partitionsCount: 1, options: { segmentSizeBytes: segmentSize } });
    for (let i = 0; i < 10; i++) await client.sendMessages({ streamId: 'seg', topicId: 't', partitioning: { partitionId: 0 }, messages: [bigPayload(i)] });
    const log = h.broker.partition({ namespace: 'seg', topic: 't' }, 0);
    assert.equal(log.stats().segmentCount, 3); // [0-3] [4-7] sealed, [8-9] active
    const poll = (offset: number) => client.pollMessages({ streamId: 'seg', topicId: 't', partitionId: 0, consumer: { consumer: 'reader' }, strategy: { offset }, count: 100 });

    await client.deleteSegments('seg', 't', 0, 0); // nothing
    assert.equal(log.stats().logStartOffset, 0);
    await client.deleteSegments('seg', 't', 0, 1);
    assert.equal(log.stats().logStartOffset, 4);
    assert.equal(log.stats().segmentCount, 2);
    const afterOne = await poll(0);
    assert.deepEqual(afterOne.messages.map((m) => m.offset), [4n, 5n, 6n, 7n, 8n, 9n]);
    assert.equal(afterOne.messages[0]!.payload[0], 97 + 4);
    assert.deepEqual((await client.pollMessages({ streamId: 'seg', topicId: 't', partitionId: 0, strategy: 'first', count: 1 })).messages.map((m) => m.offset), [4n]);

    // More than are sealed: the remaining sealed one goes, the active one stays.
    await client.deleteSegments('seg', 't', 0, 100);
    assert.deepEqual({ start: log.stats().logStartOffset, next: log.stats().nextOffset, segments: log.stats().segmentCount }, { start: 8, next: 10, segments: 1 });
    assert.deepEqual((await poll(0)).messages.map((m) => m.offset), [8n, 9n]);
    const topic = await client.getTopic('seg', 't');
    assert.equal(topic!.partitions[0]!.segmentsCount, 1);
    assert.equal(topic!.partitions[0]!.messagesCount, 2n);
    // Offsets are unchanged: the next message is 10.
    const sent = await client.sendMessages({ streamId: 'seg', topicId: 't', partitioning: { partitionId: 0 }, messages: ['after'] });
    assert.equal(sent.baseOffset, 10n);

    await assert.rejects(client.deleteSegments('seg', 't', 7, 1), isIggyError(IggyErrorCode.partitionNotFound));
    await assert.rejects(client.deleteSegments('seg', 'nope', 0, 1), isIggyError(IggyErrorCode.topicIdNotFound));
    await assert.rejects(client.deleteSegments('nope', 't', 0, 1), isIggyError(IggyErrorCode.streamIdNotFound));
  });

  it('never deletes past the lowest stored consumer offset', async (t) => {
    const h = await startIggy(t);
    const client = await sdk(t, h);
    await client.createStream('bar');
    await client.createTopic({ streamId: 'bar', name: 't', partitionsCount: 1, options: { segmentSizeBytes: segmentSize } });
    for (let i = 0; i < 10; i++) await client.sendMessages({ streamId: 'bar', topicId: 't', partitioning: { partitionId: 0 }, messages: [bigPayload(i)] });
    const log = h.broker.partition({ namespace: 'bar', topic: 't' }, 0);
    const base = { streamId: 'bar', topicId: 't', partitionId: 0 } as const;
    // Segments [0-3] [4-7] sealed, [8-9] active.
    await client.storeConsumerOffset({ ...base, consumer: { consumer: 'fast' }, offset: 8 });
    await client.storeConsumerOffset({ ...base, consumer: { consumer: 'slow' }, offset: 2 });
    // 'slow' has consumed up to 2: [0-3] holds 3, not yet consumed by it.
    await client.deleteSegments('bar', 't', 0, 100);
    assert.equal(log.stats().logStartOffset, 0);
    await client.storeConsumerOffset({ ...base, consumer: { consumer: 'slow' }, offset: 4 });
    await client.deleteSegments('bar', 't', 0, 100);
    assert.equal(log.stats().logStartOffset, 4, "'slow' consumed 4: [0-3] goes, [4-7] stays");
    await client.deleteConsumerOffset({ ...base, consumer: { consumer: 'slow' } });
    await client.deleteSegments('bar', 't', 0, 100);
    assert.equal(log.stats().logStartOffset, 8, "'fast' consumed 8: every sealed segment may go");
  });

  it('seals a segment once it holds segment_size, as the reference server (the Python SDK test_segment numbers)', async (t) => {
    const h = await startIggy(t);
    const client = await sdk(t, h);
    await client.createStream('py');
    // One 220,000-byte message per send into 1 MiB segments: five fill one (the fifth takes it past 1 MiB).
    const sendAll = async (topic: string, n: number) => {
      await client.createTopic({ streamId: 'py', name: topic, partitionsCount: 1, options: { segmentSizeBytes: segmentSize } });
      for (let i = 0; i < n; i++) await client.sendMessages({ streamId: 'py', topicId: topic, partitioning: { partitionId: 0 }, messages: [Buffer.alloc(220_000, i)] });
    };
    const offsets = async (topic: string) => (await client.pollMessages({ streamId: 'py', topicId: topic, partitionId: 0, strategy: 'first', count: 100 })).messages.map((m) => Number(m.offset));
    await sendAll('one', 10);
    // [0-4] [5-9] sealed as each filled, and an empty active segment at 10: the reference's layout.
    assert.equal((await client.getTopic('py', 'one'))!.partitions[0]!.segmentsCount, 3);
    await client.deleteSegments('py', 'one', 0, 1);
    assert.deepEqual(await offsets('one'), [5, 6, 7, 8, 9]);
    await sendAll('all', 12);
    await client.deleteSegments('py', 'all', 0, 100);
    assert.deepEqual(await offsets('all'), [10, 11]);
    // 25 messages fill five segments: deleting every sealed one leaves nothing to poll (the consumer-barrier-free case of the reference's delete_segments scenario).
    await sendAll('full', 25);
    assert.equal((await client.getTopic('py', 'full'))!.partitions[0]!.segmentsCount, 6);
    await client.deleteSegments('py', 'full', 0, 0xffff_ffff);
    assert.deepEqual(await offsets('full'), []);
    // A topic made by another protocol keeps Kafka's rule: the batch that would overflow starts the next segment.
    await h.broker.createTopic('py', 'kafka-made', { partitions: 1, config: { 'segment.bytes': segmentSize, 'max.message.bytes': 1_000_000 } });
    for (let i = 0; i < 10; i++) await client.sendMessages({ streamId: 'py', topicId: 'kafka-made', partitioning: { partitionId: 0 }, messages: [Buffer.alloc(220_000, i)] });
    assert.equal(h.broker.partition({ namespace: 'py', topic: 'kafka-made' }, 0).stats().segmentCount, 3, '4 + 4 + 2');
  });
});

describe('iggy DeletePartitions', () => {
  it('removes the last partitions: fewer partitions, sends fail with 20 and polls with 3007, directories and offsets gone', async (t) => {
    const h = await startIggy(t);
    const client = await sdk(t, h);
    await client.createStream('parts');
    await client.createTopic({ streamId: 'parts', name: 't', partitionsCount: 4 });
    for (const p of [0, 1, 2, 3]) await client.sendMessages({ streamId: 'parts', topicId: 't', partitioning: { partitionId: p }, messages: [`m${p}`, `n${p}`] });
    await client.storeConsumerOffset({ streamId: 'parts', topicId: 't', partitionId: 3, consumer: { consumer: 'c' }, offset: 1 });
    const internalId = h.broker.catalog.requireTopic({ namespace: 'parts', topic: 't' }).internalId;
    const partitionDir = (p: number) => join(h.dataDir, 'logs', String(internalId), String(p));
    assert.ok(existsSync(partitionDir(3)));

    await client.deletePartitions('parts', 't', 2);
    const topic = await client.getTopic('parts', 't');
    assert.equal(topic!.partitionsCount, 2);
    assert.deepEqual(topic!.partitions.map((p) => p.id), [0, 1]);
    assert.equal(existsSync(partitionDir(2)), false);
    assert.equal(existsSync(partitionDir(3)), false);
    assert.deepEqual(readdirSync(join(h.dataDir, 'logs', String(internalId))).sort(), ['0', '1']);
    await assert.rejects(
      client.sendMessages({ streamId: 'parts', topicId: 't', partitioning: { partitionId: 3 }, messages: ['x'] }),
      isIggyError(IggyErrorCode.resourceNotFound),
    );
    await assert.rejects(
      client.pollMessages({ streamId: 'parts', topicId: 't', partitionId: 2, strategy: 'first', count: 1 }),
      isIggyError(IggyErrorCode.partitionNotFound),
    );
    // The kept partitions keep their data.
    assert.deepEqual((await client.pollMessages({ streamId: 'parts', topicId: 't', partitionId: 1, strategy: 'first', count: 10 })).messages.map((m) => m.payload.toString()), ['m1', 'n1']);

    // More than the topic has is InvalidPartitionsCount; none at all, TooManyPartitions (as the reference).
    await assert.rejects(client.deletePartitions('parts', 't', 3), isIggyError(IggyErrorCode.invalidPartitionsCount));
    await assert.rejects(client.deletePartitions('parts', 't', 0), isIggyError(IggyErrorCode.tooManyPartitions));
    await assert.rejects(client.deletePartitions('parts', 'nope', 1), isIggyError(IggyErrorCode.topicIdNotFound));

    // Partitions created again under the removed numbers start empty, without the old offsets.
    await client.createPartitions('parts', 't', 2);
    const regrown = await client.getTopic('parts', 't');
    assert.equal(regrown!.partitionsCount, 4);
    assert.equal(regrown!.partitions[3]!.messagesCount, 0n);
    assert.equal(await client.getConsumerOffset({ streamId: 'parts', topicId: 't', partitionId: 3, consumer: { consumer: 'c' } }), null);
    const sent = await client.sendMessages({ streamId: 'parts', topicId: 't', partitioning: { partitionId: 3 }, messages: ['fresh'] });
    assert.equal(sent.baseOffset, 0n);

    // Down to zero partitions: sends fail with ResourceNotFound.
    await client.deletePartitions('parts', 't', 4);
    assert.equal((await client.getTopic('parts', 't'))!.partitionsCount, 0);
    await assert.rejects(client.sendMessages({ streamId: 'parts', topicId: 't', partitioning: 'balanced', messages: ['x'] }), isIggyError(IggyErrorCode.resourceNotFound));
  });

  it('rebalances the consumer groups over the remaining partitions', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const other = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 4, name: 'g', options: [] });
    await c.ok(CommandCode.createConsumerGroup, { streamId: sid('default'), topicId: sid('g'), name: 'workers' });
    await c.ok(CommandCode.joinConsumerGroup, { streamId: sid('default'), topicId: sid('g'), groupId: sid('workers') });
    await other.ok(CommandCode.joinConsumerGroup, { streamId: sid('default'), topicId: sid('g'), groupId: sid('workers') });
    const before = await c.ok(CommandCode.getConsumerGroup, { streamId: sid('default'), topicId: sid('g'), groupId: sid('workers') });
    assert.deepEqual(before!.members.map((m) => m.partitions), [[0, 1], [2, 3]]);
    const generation = (await c.ok(CommandCode.syncConsumerGroup, { streamId: sid('default'), topicId: sid('g'), groupId: sid('workers') }))!.generation;

    await c.ok(CommandCode.deletePartitions, { streamId: sid('default'), topicId: sid('g'), partitionsCount: 1 });
    const after = await c.ok(CommandCode.getConsumerGroup, { streamId: sid('default'), topicId: sid('g'), groupId: sid('workers') });
    assert.equal(after!.partitionsCount, 3);
    // Balanced and sticky: the member that lost partition 3 keeps partition 2, the other keeps both of its own.
    assert.deepEqual(after!.members.map((m) => m.partitions), [[0, 1], [2]]);
    const synced = await other.ok(CommandCode.syncConsumerGroup, { streamId: sid('default'), topicId: sid('g'), groupId: sid('workers') });
    assert.ok(synced!.generation > generation);
    assert.deepEqual(synced!.partitions, [2]);
  });
});
