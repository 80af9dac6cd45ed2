// Streams, topics, partitions and segments end to end over a socket: reply layouts (result
// framing, empty bodies for "not found"), the topic options block (explicit/derived, validation,
// what reaches the core config), and the committed rejection codes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandCode, ConsumerKind, IggyErrorCode, option, u64Max } from '../../../../src/protocols/iggy/codec/index.js';
import { eventually, sendRequest, sid, startIggy } from '../harness.js';
import { holdPurgeStart } from '../../../core/helpers.js';

describe('iggy streams', () => {
  it('creates, gets, lists, renames, purges and deletes streams; `default` is a stream', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const created = await c.ok(CommandCode.createStream, { name: 'sensors', options: [] });
    assert.equal(created.name, 'sensors');
    assert.equal(created.topicsCount, 0);
    const list = await c.ok(CommandCode.getStreams, {});
    assert.deepEqual(list.map((s) => s.name).sort(), ['default', 'sensors']);
    const byName = await c.ok(CommandCode.getStream, { streamId: sid('sensors') });
    assert.equal(byName?.id, created.id);
    assert.equal(await c.ok(CommandCode.getStream, { streamId: sid(999) }), null);
    assert.deepEqual(await c.call(CommandCode.createStream, { name: 'sensors', options: [] }), { rejected: IggyErrorCode.streamNameAlreadyExists });
    assert.deepEqual(await c.call(CommandCode.createStream, { name: 'x', options: [option('retention', { kind: 'string', value: '1' })] }), { rejected: IggyErrorCode.unsupportedOptionKey });
    await c.ok(CommandCode.updateStream, { streamId: sid(created.id), name: 'sensors-2', options: [] });
    assert.equal(h.broker.catalog.getNamespace(created.id)?.name, 'sensors-2');
    await c.ok(CommandCode.createTopic, { streamId: sid(created.id), partitionsCount: 1, name: 't', options: [] });
    assert.ok('value' in (await c.call(CommandCode.sendMessages, sendRequest(sid(created.id), sid('t'), ['a', 'b']))));
    await c.ok(CommandCode.purgeStream, { streamId: sid(created.id) });
    const stats = h.broker.partition({ namespace: created.id, topic: 't' }, 0).stats();
    assert.equal(stats.highWatermark - stats.logStartOffset, 0);
    await c.ok(CommandCode.deleteStream, { streamId: sid(created.id) });
    assert.equal(h.broker.catalog.getNamespace(created.id), null);
    assert.deepEqual(await c.call(CommandCode.deleteStream, { streamId: sid(created.id) }), { rejected: IggyErrorCode.streamIdNotFound });
    assert.deepEqual(await c.call(CommandCode.deleteStream, { streamId: sid('default') }), { rejected: IggyErrorCode.invalidFormat });
  });
});

describe('iggy on a fresh broker', () => {
  it('lists no streams, numbers the first stream, topic and partition 0, and makes `default` with its first topic', async (t) => {
    const h = await startIggy(t, { defaultStream: false });
    const c = await h.root();
    // What the Iggy BDD scenarios expect of a fresh server: no streams, then ids from 0.
    assert.deepEqual(await c.ok(CommandCode.getStreams, {}), []);
    assert.equal(await c.ok(CommandCode.getStream, { streamId: sid('default') }), null);
    const stream = await c.ok(CommandCode.createStream, { name: 'test-stream', options: [] });
    assert.equal(stream.id, 0);
    const topic = await c.ok(CommandCode.createTopic, { streamId: sid(0), partitionsCount: 3, name: 'test-topic', options: [] });
    assert.equal(topic.id, 0);
    assert.deepEqual(topic.partitions.map((p) => p.id), [0, 1, 2]);
    const sent = await c.ok(CommandCode.sendMessages, sendRequest(sid(0), sid(0), ['m'], { kind: 'partitionId', partitionId: 0 }));
    assert.deepEqual(sent.confirmations, [{ streamId: 0, topicId: 0, partitionId: 0, baseOffset: 0n }]);

    // No stream may be renamed to `default` (it would take Kafka's topics, and its grants with them).
    assert.deepEqual(await c.call(CommandCode.updateStream, { streamId: sid(0), name: 'default', options: [] }), { rejected: IggyErrorCode.invalidStreamName });
    // A user with per-stream permissions only cannot make `default` on demand.
    const perms = { manageServers: false, readServers: false, manageUsers: false, readUsers: false, manageStreams: false, readStreams: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: true };
    const streamOnly = { streamId: 0, manageStream: true, readStream: true, manageTopics: true, readTopics: true, pollMessages: true, sendMessages: true, topics: [] };
    await c.ok(CommandCode.createUser, { username: 'scoped', password: 'password-1', status: 1, permissions: { global: perms, streams: [streamOnly] }, options: [] });
    const scoped = await h.client();
    assert.ok('value' in (await scoped.login('scoped', 'password-1')));
    assert.deepEqual(await scoped.call(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'orders', options: [] }), { status: IggyErrorCode.unauthorized });
    assert.equal(h.broker.catalog.getNamespace('default'), null);

    // Kafka's topics live in stream `default`: creating a topic in it by name makes it, with the next id.
    const orders = await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'orders', options: [] });
    assert.equal(orders.id, 0);
    const streams = await c.ok(CommandCode.getStreams, {});
    assert.deepEqual(streams.map((s) => [s.id, s.name]), [[0, 'test-stream'], [1, 'default']]);
    assert.equal(h.broker.catalog.requireTopic({ topic: 'orders' }).namespaceId, 1);
    // Other streams are not made on demand.
    assert.deepEqual(await c.call(CommandCode.createTopic, { streamId: sid('elsewhere'), partitionsCount: 1, name: 'x', options: [] }), { rejected: IggyErrorCode.streamIdNotFound });
  });
});

describe('iggy topics', () => {
  it('honours preallocate_segments: the partitions\' logs preallocate new segments', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const s = await c.ok(CommandCode.createStream, { name: 'pre', options: [] });
    const make = (name: string, preallocate: boolean) =>
      c.ok(CommandCode.createTopic, { streamId: sid(s.id), partitionsCount: 2, name, options: [option('preallocate_segments', { kind: 'bool', value: preallocate })] });
    await make('reserved', true);
    await make('plain', false);
    assert.equal(h.broker.catalog.requireTopic({ namespace: s.id, topic: 'reserved' }).config.preallocate, 'true');
    assert.equal(h.broker.partition({ namespace: s.id, topic: 'reserved' }, 1).config.preallocate, true);
    assert.equal(h.broker.partition({ namespace: s.id, topic: 'plain' }, 0).config.preallocate, false);
  });

  it('creates a topic with options: explicit and derived, validated, honoured in the core config', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const s = await c.ok(CommandCode.createStream, { name: 'app', options: [] });
    const topic = await c.ok(CommandCode.createTopic, {
      streamId: sid(s.id),
      partitionsCount: 3,
      name: 'events',
      options: [
        option('enforce_fsync', { kind: 'bool', value: true }),
        option('segment_size', { kind: 'uint64', value: 1024n * 1024n * 4n }),
        option('message_expiry', { kind: 'string', value: '7 days' }),
        option('max_topic_size', { kind: 'string', value: '3 GiB' }),
      ],
    });
    assert.equal(topic.partitionsCount, 3);
    assert.equal(topic.partitions.length, 3);
    assert.equal(topic.messageExpiry, 7n * 86_400_000_000n);
    assert.equal(topic.maxTopicSize, 3n * 1024n ** 3n);
    // In key order, as the reference server serves a topic's options (whatever order they were sent in).
    assert.deepEqual(topic.explicitOptions.map((o) => o.key), ['enforce_fsync', 'max_topic_size', 'message_expiry', 'segment_size']);
    assert.equal(topic.explicitOptions[2]!.kind, 12, 'string values are re-encoded into their canonical kind');
    assert.deepEqual(topic.derivedOptions.map((o) => o.key), ['compression_algorithm', 'messages_required_to_save', 'preallocate_segments', 'size_of_messages_required_to_save']);
    const core = h.broker.catalog.requireTopic({ namespace: s.id, topic: 'events' }).config;
    assert.equal(core['quartet.fsync.policy'], 'always');
    assert.equal(core['segment.bytes'], 4 * 1024 * 1024);
    assert.equal(core['retention.ms'], 7 * 86_400_000);
    assert.equal(core['retention.bytes'], 1024 ** 3);
    const got = await c.ok(CommandCode.getTopic, { streamId: sid('app'), topicId: sid('events') });
    assert.equal(got?.id, topic.id);
    assert.equal(got?.partitions[0]!.segmentsCount, 1);
    const listed = await c.ok(CommandCode.getTopics, { streamId: sid(s.id) });
    assert.deepEqual(listed.map((x) => x.name), ['events']);
    assert.deepEqual(await c.ok(CommandCode.getTopics, { streamId: sid(12345) }), []);
    assert.equal(await c.ok(CommandCode.getTopic, { streamId: sid(s.id), topicId: sid(99) }), null);
  });

  it('leaves retention to the broker defaults when message_expiry and max_topic_size are left to the server, as for a Kafka topic', async (t) => {
    const day = 24 * 3600 * 1000;
    const h = await startIggy(t, { broker: { topicDefaults: { 'retention.ms': day, 'retention.bytes': -1 } } });
    const c = await h.root();
    const plain = await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'plain', options: [] });
    // 0 is the wire's ServerDefault.
    const zero = await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'zero', options: [option('message_expiry', { kind: 'uint64', value: 0n })] });
    for (const topic of [plain, zero]) {
      assert.equal(topic.messageExpiry, BigInt(day) * 1000n, 'the broker default, in µs');
      assert.equal(topic.maxTopicSize, u64Max);
      assert.equal(topic.explicitOptions.length, 0);
      assert.equal(topic.derivedOptions.length, 8);
    }
    const core = (name: string) => h.broker.catalog.requireTopic({ topic: name }).config;
    assert.equal(core('plain')['retention.ms'], undefined, 'no key of its own: the broker default applies');
    assert.equal(core('plain')['retention.bytes'], undefined);
    // Never (u64::MAX) said explicitly stays never.
    const never = await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'never', options: [option('message_expiry', { kind: 'uint64', value: u64Max })] });
    assert.equal(never.messageExpiry, u64Max);
    assert.equal(core('never')['retention.ms'], -1);
  });

  it('rejects bad options: unknown key 4041, bad values 4042, a size cap below the segment 1019, over 1,000 partitions 2015, duplicate names 2013', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const bad = async (opts: ReturnType<typeof option>[]) => c.call(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'bad', options: opts });
    assert.deepEqual(await bad([option('colour', { kind: 'string', value: 'red' })]), { rejected: IggyErrorCode.unsupportedOptionKey });
    assert.deepEqual(await bad([option('segment_size', { kind: 'uint64', value: 1000n })]), { rejected: IggyErrorCode.invalidOptionValue });
    assert.deepEqual(await bad([option('compression_algorithm', { kind: 'string', value: 'lz4' })]), { rejected: IggyErrorCode.invalidOptionValue });
    assert.deepEqual(await bad([option('messages_required_to_save', { kind: 'uint32', value: 0 })]), { rejected: IggyErrorCode.invalidOptionValue });
    // The static bounds are plain statuses, checked before the stream and the permission (the reference's pre-consensus denials).
    assert.deepEqual(await bad([option('max_topic_size', { kind: 'uint64', value: 1024n })]), { status: IggyErrorCode.invalidTopicSize });
    assert.deepEqual(await bad([option('enforce_fsync', { kind: 'uint8', value: 1 })]), { rejected: IggyErrorCode.invalidOptionValue });
    assert.deepEqual(
      await c.call(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 65, name: 'prealloc', options: [option('preallocate_segments', { kind: 'bool', value: true })] }),
      { rejected: IggyErrorCode.invalidOptionValue },
      '65 × 1 GiB exceeds the 64 GiB preallocation limit',
    );
    assert.ok('value' in (await bad([option('preallocate_segments', { kind: 'bool', value: true })])));
    assert.deepEqual(await c.call(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1001, name: 'many', options: [] }), { status: IggyErrorCode.tooManyPartitions });
    assert.deepEqual(await c.call(CommandCode.createTopic, { streamId: sid('nope'), partitionsCount: 10_000, name: 'many', options: [] }), { status: IggyErrorCode.tooManyPartitions });
    assert.deepEqual(
      await c.call(CommandCode.createTopic, { streamId: sid('nope'), partitionsCount: 1, name: 'tiny', options: [option('max_topic_size', { kind: 'uint64', value: 10_240n })] }),
      { status: IggyErrorCode.invalidTopicSize },
    );
    // 1,000 partition logs take seconds to create on a loaded machine: a longer deadline for this one.
    assert.ok('value' in (await c.call(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1000, name: 'most', options: [] }, { waitMs: 60_000 })), 'exactly 1,000 partitions');
    // Only those two bounds come first: other bad options are refused after the stream and the permission.
    const badValue = [option('segment_size', { kind: 'uint64', value: 1000n })];
    assert.deepEqual(await c.call(CommandCode.createTopic, { streamId: sid('nope'), partitionsCount: 1, name: 'x', options: badValue }), { rejected: IggyErrorCode.streamIdNotFound });
    await c.ok(CommandCode.createUser, { username: 'nobody', password: 'password-1', status: 1, permissions: null, options: [] });
    const nobody = await h.client();
    assert.ok('value' in (await nobody.login('nobody', 'password-1')));
    const asNobody = (partitionsCount: number, options: ReturnType<typeof option>[]) => nobody.call(CommandCode.createTopic, { streamId: sid('default'), partitionsCount, name: 'n', options });
    assert.deepEqual(await asNobody(1, badValue), { status: IggyErrorCode.unauthorized });
    assert.deepEqual(await asNobody(1, [option('max_topic_size', { kind: 'uint64', value: 1024n })]), { status: IggyErrorCode.invalidTopicSize });
    assert.deepEqual(await asNobody(1001, []), { status: IggyErrorCode.tooManyPartitions });
    assert.deepEqual(await c.call(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'bad', options: [] }), { rejected: IggyErrorCode.topicNameAlreadyExists });
    assert.deepEqual(await c.call(CommandCode.createTopic, { streamId: sid('nope'), partitionsCount: 1, name: 'x', options: [] }), { rejected: IggyErrorCode.streamIdNotFound });
  });

  it('updates (rename, patch of updatable options), purges and deletes topics', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'orders', options: [] });
    await c.ok(CommandCode.updateTopic, { streamId: sid('default'), topicId: sid('orders'), name: 'orders-v2', options: [option('message_expiry', { kind: 'uint64', value: 60_000_000n })] });
    const t2 = await c.ok(CommandCode.getTopic, { streamId: sid('default'), topicId: sid('orders-v2') });
    assert.equal(t2?.messageExpiry, 60_000_000n);
    assert.deepEqual(t2?.explicitOptions.map((o) => o.key), ['message_expiry']);
    assert.equal(h.broker.catalog.requireTopic({ topic: 'orders-v2' }).config['retention.ms'], 60_000);
    assert.deepEqual(
      await c.call(CommandCode.updateTopic, { streamId: sid('default'), topicId: sid('orders-v2'), name: 'orders-v2', options: [option('segment_size', { kind: 'uint64', value: 1048576n })] }),
      { rejected: IggyErrorCode.unsupportedOptionKey },
    );
    // A cap below the topic's segment size (1 GiB by default) is InvalidTopicSize, and nothing changes.
    assert.deepEqual(
      await c.call(CommandCode.updateTopic, { streamId: sid('default'), topicId: sid('orders-v2'), name: 'orders-v2', options: [option('max_topic_size', { kind: 'uint64', value: 4n * 1024n * 1024n })] }),
      { status: IggyErrorCode.invalidTopicSize },
    );
    assert.equal((await c.ok(CommandCode.getTopic, { streamId: sid('default'), topicId: sid('orders-v2') }))?.maxTopicSize, 2n ** 64n - 1n);
    // An update touches only what the options it sets map to: a topic made by another protocol keeps its batch limit, roll rule and size limit.
    await h.broker.createTopic('default', 'kafka-made', { partitions: 1, config: { 'max.message.bytes': 2_000_000 } });
    await c.ok(CommandCode.updateTopic, { streamId: sid('default'), topicId: sid('kafka-made'), name: 'kafka-made', options: [option('message_expiry', { kind: 'uint64', value: 5_000_000n })] });
    assert.deepEqual(h.broker.catalog.requireTopic({ topic: 'kafka-made' }).config, { 'max.message.bytes': 2_000_000, 'retention.ms': 5000 });
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('orders-v2'), ['x', 'y']));
    const offsetRef = { consumer: { kind: ConsumerKind.consumer, id: sid(7) }, streamId: sid('default'), topicId: sid('orders-v2'), partitionId: 0 };
    await c.ok(CommandCode.storeConsumerOffset, { ...offsetRef, offset: 1n, ack: 1 });
    await c.ok(CommandCode.purgeTopic, { streamId: sid('default'), topicId: sid('orders-v2') });
    const after = await c.ok(CommandCode.getTopic, { streamId: sid('default'), topicId: sid('orders-v2') });
    assert.equal(after?.messagesCount, 0n);
    // As the reference server: offsets start again at 0, and stored offsets are gone.
    assert.equal(await c.ok(CommandCode.getConsumerOffset, offsetRef), null);
    assert.equal((await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('orders-v2'), ['z']))).confirmations[0]?.baseOffset, 0n);
    await c.ok(CommandCode.deleteTopic, { streamId: sid('default'), topicId: sid('orders-v2') });
    assert.equal(h.broker.catalog.getTopic({ topic: 'orders-v2' }), null);
    assert.deepEqual(await c.call(CommandCode.deleteTopic, { streamId: sid('default'), topicId: sid(4242) }), { rejected: IggyErrorCode.topicIdNotFound });
  });

  it('spreads max_topic_size again over the partitions when they are added or deleted', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const ref = { streamId: sid('default'), topicId: sid('sized') };
    const options = [option('segment_size', { kind: 'uint64', value: 1024n * 1024n }), option('max_topic_size', { kind: 'uint64', value: 12n * 1024n * 1024n })];
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'sized', options });
    const perPartition = () => h.broker.catalog.requireTopic({ topic: 'sized' }).config['retention.bytes'];
    assert.equal(perPartition(), 12 * 1024 * 1024);
    await c.ok(CommandCode.createPartitions, { ...ref, partitionsCount: 2 });
    assert.equal(perPartition(), 4 * 1024 * 1024);
    await c.ok(CommandCode.deletePartitions, { ...ref, partitionsCount: 1 });
    assert.equal(perPartition(), 6 * 1024 * 1024);
    // Down to none: nothing to spread over, the last value stays.
    await c.ok(CommandCode.deletePartitions, { ...ref, partitionsCount: 2 });
    assert.equal(perPartition(), 6 * 1024 * 1024);
    assert.equal((await c.ok(CommandCode.getTopic, ref))?.maxTopicSize, 12n * 1024n * 1024n);
  });

  it('an update changes only the core keys of the options it sets: a change another protocol queued before it to the others stays', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const mib = 1024 * 1024;
    const ref = { streamId: sid('default'), topicId: sid('raced') };
    const options = [option('segment_size', { kind: 'uint64', value: BigInt(mib) }), option('max_topic_size', { kind: 'uint64', value: 64n * BigInt(mib) })];
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'raced', options });
    const core = () => h.broker.catalog.requireTopic({ topic: 'raced' }).config;
    // A purge holds the catalog; a Kafka alter of retention.bytes queues behind it, then the Iggy
    // update of message_expiry reads the options (before the alter is applied) and queues its step.
    const { inPurge, release } = holdPurgeStart(h.broker);
    const purge = h.broker.purgeTopic({ topic: 'raced' });
    await inPurge;
    const kafkaAlter = h.broker.updateTopicConfig({ topic: 'raced' }, { 'retention.bytes': mib });
    const update = c.ok(CommandCode.updateTopic, { ...ref, name: 'raced', options: [option('message_expiry', { kind: 'uint64', value: 60_000_000n })] });
    await eventually(() => h.frontend.topicOptions.get(h.broker.catalog.requireTopic({ topic: 'raced' }))?.explicit.includes('message_expiry') === true, 'the update stored its options');
    release();
    await Promise.all([purge, kafkaAlter, update]);
    assert.equal(core()['retention.ms'], 60_000);
    assert.equal(core()['retention.bytes'], mib, "Kafka's per-partition limit stays");
    const topic = await c.ok(CommandCode.getTopic, ref);
    assert.equal(topic?.messageExpiry, 60_000_000n);
    assert.equal(topic?.maxTopicSize, 2n * BigInt(mib), 'read back from the core config');
  });

  it('adds and deletes partitions; deletes segments (sealed only)', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 1, name: 'grow', options: [] });
    await c.ok(CommandCode.createPartitions, { streamId: sid('default'), topicId: sid('grow'), partitionsCount: 2 });
    assert.equal(h.broker.catalog.requireTopic({ topic: 'grow' }).partitions, 3);
    // 0 or more than 1,000 is TooManyPartitions (a status, before the topic is looked up); more than the topic has, a committed 2019.
    for (const code of [CommandCode.createPartitions, CommandCode.deletePartitions]) {
      for (const [count, topic] of [[0, 'grow'], [1001, 'grow'], [0, 'nope']] as const) {
        assert.deepEqual(await c.call(code, { streamId: sid('default'), topicId: sid(topic), partitionsCount: count }), { status: IggyErrorCode.tooManyPartitions });
      }
    }
    assert.equal(h.broker.catalog.requireTopic({ topic: 'grow' }).partitions, 3);
    await c.ok(CommandCode.deletePartitions, { streamId: sid('default'), topicId: sid('grow'), partitionsCount: 1 });
    assert.equal(h.broker.catalog.requireTopic({ topic: 'grow' }).partitions, 2);
    assert.deepEqual(await c.call(CommandCode.deletePartitions, { streamId: sid('default'), topicId: sid('grow'), partitionsCount: 3 }), { rejected: IggyErrorCode.invalidPartitionsCount });
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('grow'), ['a', 'b', 'c']));
    // One segment, the active one: nothing is deleted.
    await c.ok(CommandCode.deleteSegments, { streamId: sid('default'), topicId: sid('grow'), partitionId: 0, segmentsCount: 1 });
    const s = h.broker.partition({ topic: 'grow' }, 0).stats();
    assert.equal(s.logStartOffset, 0);
    // DeleteSegments is not result-framed (the SDKs' Operation::is_metadata leaves 138 out): errors
    // come as a status, success as an empty body.
    assert.deepEqual(await c.call(CommandCode.deleteSegments, { streamId: sid('default'), topicId: sid('grow'), partitionId: 9, segmentsCount: 1 }), { status: IggyErrorCode.partitionNotFound });
    const done = await c.raw(CommandCode.deleteSegments, { streamId: sid('default'), topicId: sid('grow'), partitionId: 0, segmentsCount: 1 });
    assert.ok(done.kind === 'reply' && done.header.status === 0 && done.body.length === 0);
  });
});
