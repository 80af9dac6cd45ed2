// Property round trips for every command's request and reply codecs, grouped as the source files
// are (system, users, login, tokens, streams, topics, partitions, segments, messages, consumer
// offsets, consumer groups), plus command resolution and hostile input.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CommandCode,
  EvictionReason,
  Operation,
  commandName,
  decodeReply,
  decodeRequest,
  decodeRequestHeader,
  encodeBatch,
  encodeReply,
  encodeRequest,
  encodeRequestFrame,
  encodeRequestHeader,
  encodeResultError,
  iggyProtocolVersion,
  option,
  resolveCommand,
  splitResultFramed,
  verifyRequestChecksum,
  type Identifier,
  type Permissions,
} from '../../../../../src/protocols/iggy/codec/index.js';

// fc.record builds null-prototype objects; deepStrictEqual compares prototypes.
function rec<T extends Record<string, fc.Arbitrary<unknown>>>(model: T): fc.Arbitrary<{ [K in keyof T]: T[K] extends fc.Arbitrary<infer U> ? U : never }> {
  return fc.record(model).map((o) => ({ ...o }) as { [K in keyof T]: T[K] extends fc.Arbitrary<infer U> ? U : never });
}

const u8 = fc.integer({ min: 0, max: 255 });
const u16 = fc.integer({ min: 0, max: 0xffff });
const u32 = fc.integer({ min: 0, max: 0xffff_ffff });
const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const f32 = fc.float({ noNaN: true, noDefaultInfinity: true });
const name = fc.string({ minLength: 1, maxLength: 30 });
const text = fc.string({ maxLength: 30 });
const shortText = fc.string({ maxLength: 60 });
const bool = fc.boolean();
const identifier: fc.Arbitrary<Identifier> = fc.oneof(
  u32.map((value) => ({ kind: 'numeric' as const, value })),
  name.map((value) => ({ kind: 'string' as const, value })),
);
const options = fc
  .uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 3 })
  .chain((keys) => fc.tuple(...keys.map((k) => u64.map((v) => option(k, { kind: 'uint64', value: v })))));
const topicPerm = rec({ topicId: u32, manageTopic: bool, readTopic: bool, pollMessages: bool, sendMessages: bool });
const streamPerm = rec({
  streamId: u32,
  manageStream: bool,
  readStream: bool,
  manageTopics: bool,
  readTopics: bool,
  pollMessages: bool,
  sendMessages: bool,
  topics: fc.uniqueArray(topicPerm, { selector: (t) => t.topicId, maxLength: 3 }).map((ts) => [...ts].sort((a, b) => a.topicId - b.topicId)),
});
const permissions: fc.Arbitrary<Permissions> = rec({
  global: rec({
    manageServers: bool,
    readServers: bool,
    manageUsers: bool,
    readUsers: bool,
    manageStreams: bool,
    readStreams: bool,
    manageTopics: bool,
    readTopics: bool,
    pollMessages: bool,
    sendMessages: bool,
  }),
  streams: fc.uniqueArray(streamPerm, { selector: (s) => s.streamId, maxLength: 3 }).map((ss) => [...ss].sort((a, b) => a.streamId - b.streamId)),
});
const consumer = rec({ kind: fc.constantFrom(1 as const, 2 as const), id: identifier });
const optPartition = fc.option(u32, { nil: null });
const versionInfo = rec({ protocolVersion: u32, sdkName: name, sdkVersion: name });
const context = fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: null });
const topicRef = rec({ streamId: identifier, topicId: identifier });
const groupRef = rec({ streamId: identifier, topicId: identifier, groupId: identifier });
const empty = fc.constant({});
const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));

const topicInfo = rec({
  id: u32,
  createdAt: u64,
  partitionsCount: u32,
  messageExpiry: u64,
  compressionAlgorithm: u8,
  maxTopicSize: u64,
  sizeBytes: u64,
  messagesCount: u64,
  name,
  explicitOptions: options,
  derivedOptions: options,
});
const partitionInfo = rec({ id: u32, createdAt: u64, segmentsCount: u32, currentOffset: u64, sizeBytes: u64, messagesCount: u64 });
const topicDetails = fc.tuple(topicInfo, fc.array(partitionInfo, { maxLength: 3 })).map(([t, partitions]) => ({ ...t, partitionsCount: partitions.length, partitions }));
const streamInfo = rec({ id: u32, createdAt: u64, topicsCount: u32, sizeBytes: u64, messagesCount: u64, name, options });
const userInfo = rec({ id: u32, createdAt: u64, status: u8, username: name, options });
const userDetails = fc.tuple(userInfo, fc.option(permissions, { nil: null })).map(([u, p]) => ({ ...u, permissions: p }));
const clientInfo = rec({ clientId: u32, userId: u32, transport: u8, address: text, consumerGroupsCount: u32 });
const clientDetails = fc
  .tuple(clientInfo, fc.array(rec({ streamId: u32, topicId: u32, groupId: u32 }), { maxLength: 3 }))
  .map(([c, consumerGroups]) => ({ ...c, consumerGroupsCount: consumerGroups.length, consumerGroups }));
const groupInfo = rec({ id: u32, partitionsCount: u32, membersCount: u32, name });
const groupDetails = fc
  .tuple(groupInfo, fc.array(rec({ id: u32, partitions: fc.array(u32, { maxLength: 4 }) }), { maxLength: 3 }))
  .map(([g, members]) => ({ ...g, membersCount: members.length, members }));
const stats = rec({
  processId: u32,
  cpuUsage: f32,
  totalCpuUsage: f32,
  memoryUsage: u64,
  totalMemory: u64,
  availableMemory: u64,
  runTime: u64,
  startTime: u64,
  readBytes: u64,
  writtenBytes: u64,
  messagesSizeBytes: u64,
  streamsCount: u32,
  topicsCount: u32,
  partitionsCount: u32,
  segmentsCount: u32,
  messagesCount: u64,
  clientsCount: u32,
  consumerGroupsCount: u32,
  hostname: text,
  osName: text,
  osVersion: text,
  kernelVersion: text,
  iggyServerVersion: text,
  iggyServerSemver: u32,
  cacheMetrics: fc.array(rec({ streamId: u32, topicId: u32, partitionId: u32, hits: u64, misses: u64, hitRatio: f32 }), { maxLength: 2 }),
  threadsCount: u32,
  freeDiskSpace: u64,
  totalDiskSpace: u64,
});
const batchBytes = fc
  .array(rec({ id: u64, originTimestamp: fc.bigInt({ min: 0n, max: 1000n }), payload: bytes(20) }), { minLength: 1, maxLength: 3 })
  .map((ms) => Buffer.concat(encodeBatch(ms)));

interface Case {
  group: string;
  code: CommandCode;
  request: fc.Arbitrary<unknown>;
  reply: fc.Arbitrary<unknown>;
}

const cases: Case[] = [
  { group: 'system', code: CommandCode.ping, request: empty, reply: empty },
  { group: 'system', code: CommandCode.getStats, request: empty, reply: stats },
  { group: 'system', code: CommandCode.getSnapshot, request: rec({ compression: fc.integer({ min: 1, max: 6 }), snapshotTypes: fc.array(u8, { maxLength: 5 }) }), reply: bytes(100) },
  {
    group: 'system',
    code: CommandCode.getClusterMetadata,
    request: empty,
    reply: rec({ name: text, nodes: fc.array(rec({ name: text, ip: text, tcpPort: u16, quicPort: u16, httpPort: u16, websocketPort: u16, role: u8, status: u8 }), { maxLength: 3 }) }),
  },
  {
    group: 'system',
    code: CommandCode.describeOptions,
    request: rec({ scope: u8 }),
    reply: fc.array(rec({ key: fc.string({ maxLength: 20 }), kind: u8, defaultValue: bytes(10), description: text }), { maxLength: 3 }),
  },
  { group: 'system', code: CommandCode.getMe, request: empty, reply: fc.option(clientDetails, { nil: null }) },
  { group: 'system', code: CommandCode.getClient, request: rec({ clientId: u32 }), reply: fc.option(clientDetails, { nil: null }) },
  { group: 'system', code: CommandCode.getClients, request: empty, reply: fc.array(clientInfo, { maxLength: 3 }) },
  { group: 'users', code: CommandCode.getUser, request: rec({ userId: identifier }), reply: fc.option(userDetails, { nil: null }) },
  { group: 'users', code: CommandCode.getUsers, request: empty, reply: fc.array(userInfo, { maxLength: 3 }) },
  {
    group: 'users',
    code: CommandCode.createUser,
    request: rec({ username: name, password: shortText, status: u8, permissions: fc.option(permissions, { nil: null }), options }),
    reply: userDetails,
  },
  { group: 'users', code: CommandCode.deleteUser, request: rec({ userId: identifier }), reply: empty },
  {
    group: 'users',
    code: CommandCode.updateUser,
    request: rec({ userId: identifier, username: fc.option(name, { nil: null }), status: fc.option(u8, { nil: null }), options }),
    reply: empty,
  },
  { group: 'users', code: CommandCode.updatePermissions, request: rec({ userId: identifier, permissions: fc.option(permissions, { nil: null }) }), reply: empty },
  { group: 'users', code: CommandCode.changePassword, request: rec({ userId: identifier, currentPassword: shortText, newPassword: shortText }), reply: empty },
  {
    group: 'login',
    code: CommandCode.loginRegister,
    request: rec({ versionInfo, username: name, password: shortText, context }),
    reply: rec({ userId: u32, session: u64, serverProtocolVersion: u32, serverVersion: name }),
  },
  {
    group: 'login',
    code: CommandCode.loginRegisterWithPat,
    request: rec({ versionInfo, token: shortText, context }),
    reply: rec({ userId: u32, session: u64, serverProtocolVersion: u32, serverVersion: name }),
  },
  { group: 'login', code: CommandCode.logoutUser, request: empty, reply: empty },
  { group: 'login', code: CommandCode.loginUser, request: rec({ username: name, password: shortText, version: context, context }), reply: rec({ userId: u32 }) },
  { group: 'login', code: CommandCode.loginWithPersonalAccessToken, request: rec({ token: shortText }), reply: rec({ userId: u32 }) },
  { group: 'tokens', code: CommandCode.getPersonalAccessTokens, request: empty, reply: fc.array(rec({ name, expiryAt: u64 }), { maxLength: 3 }) },
  { group: 'tokens', code: CommandCode.createPersonalAccessToken, request: rec({ name, expiry: u64 }), reply: rec({ token: shortText }) },
  { group: 'tokens', code: CommandCode.deletePersonalAccessToken, request: rec({ name }), reply: empty },
  {
    group: 'streams',
    code: CommandCode.getStream,
    request: rec({ streamId: identifier }),
    reply: fc.option(
      fc.tuple(streamInfo, fc.array(topicInfo, { maxLength: 2 })).map(([s, topics]) => ({ ...s, topicsCount: topics.length, topics })),
      { nil: null },
    ),
  },
  { group: 'streams', code: CommandCode.getStreams, request: empty, reply: fc.array(streamInfo, { maxLength: 3 }) },
  { group: 'streams', code: CommandCode.createStream, request: rec({ name, options }), reply: streamInfo },
  { group: 'streams', code: CommandCode.deleteStream, request: rec({ streamId: identifier }), reply: empty },
  { group: 'streams', code: CommandCode.updateStream, request: rec({ streamId: identifier, name, options }), reply: empty },
  { group: 'streams', code: CommandCode.purgeStream, request: rec({ streamId: identifier }), reply: empty },
  { group: 'topics', code: CommandCode.getTopic, request: topicRef, reply: fc.option(topicDetails, { nil: null }) },
  { group: 'topics', code: CommandCode.getTopics, request: rec({ streamId: identifier }), reply: fc.array(topicInfo, { maxLength: 3 }) },
  { group: 'topics', code: CommandCode.createTopic, request: rec({ streamId: identifier, partitionsCount: u32, name, options }), reply: topicDetails },
  { group: 'topics', code: CommandCode.deleteTopic, request: topicRef, reply: empty },
  { group: 'topics', code: CommandCode.updateTopic, request: rec({ streamId: identifier, topicId: identifier, name, options }), reply: empty },
  { group: 'topics', code: CommandCode.purgeTopic, request: topicRef, reply: empty },
  { group: 'partitions', code: CommandCode.createPartitions, request: rec({ streamId: identifier, topicId: identifier, partitionsCount: u32 }), reply: empty },
  { group: 'partitions', code: CommandCode.deletePartitions, request: rec({ streamId: identifier, topicId: identifier, partitionsCount: u32 }), reply: empty },
  { group: 'segments', code: CommandCode.deleteSegments, request: rec({ streamId: identifier, topicId: identifier, partitionId: u32, segmentsCount: u32 }), reply: empty },
  {
    group: 'messages',
    code: CommandCode.pollMessages,
    request: rec({
      consumer,
      streamId: identifier,
      topicId: identifier,
      partitionId: optPartition,
      strategy: rec({ kind: fc.constantFrom(1 as const, 2 as const, 3 as const, 4 as const, 5 as const), value: u64 }),
      count: u32,
      autoCommit: bool,
    }),
    reply: rec({ partitionId: u32, currentOffset: u64, messagesCount: u32, batches: fc.option(batchBytes, { nil: null }).map((b) => (b === null ? [] : [b])) }),
  },
  {
    group: 'messages',
    code: CommandCode.sendMessages,
    request: fc
      .tuple(
        identifier,
        identifier,
        fc.oneof(
          fc.constant({ kind: 'balanced' as const }),
          u32.map((partitionId) => ({ kind: 'partitionId' as const, partitionId })),
          fc.uint8Array({ minLength: 1, maxLength: 20 }).map((k) => ({ kind: 'messagesKey' as const, key: Buffer.from(k) })),
        ),
        batchBytes,
      )
      .map(([streamId, topicId, partitioning, batch]) => ({ streamId, topicId, partitioning, messagesCount: batch.readUInt32LE(48), batch })),
    reply: rec({ confirmations: fc.array(rec({ streamId: u32, topicId: u32, partitionId: u32, baseOffset: u64 }), { maxLength: 2 }) }),
  },
  { group: 'messages', code: CommandCode.flushUnsavedBuffer, request: rec({ streamId: identifier, topicId: identifier, partitionId: u32, fsync: bool }), reply: empty },
  {
    group: 'consumer-offsets',
    code: CommandCode.getConsumerOffset,
    request: rec({ consumer, streamId: identifier, topicId: identifier, partitionId: optPartition }),
    reply: fc.option(rec({ partitionId: u32, currentOffset: u64, storedOffset: u64 }), { nil: null }),
  },
  {
    group: 'consumer-offsets',
    code: CommandCode.storeConsumerOffset,
    request: rec({ consumer, streamId: identifier, topicId: identifier, partitionId: optPartition, offset: u64, ack: fc.constantFrom(0, 1) }),
    reply: empty,
  },
  {
    group: 'consumer-offsets',
    code: CommandCode.deleteConsumerOffset,
    request: rec({ consumer, streamId: identifier, topicId: identifier, partitionId: optPartition, ack: fc.constantFrom(0, 1) }),
    reply: empty,
  },
  { group: 'consumer-groups', code: CommandCode.getConsumerGroup, request: groupRef, reply: fc.option(groupDetails, { nil: null }) },
  { group: 'consumer-groups', code: CommandCode.getConsumerGroups, request: topicRef, reply: fc.array(groupInfo, { maxLength: 3 }) },
  { group: 'consumer-groups', code: CommandCode.createConsumerGroup, request: rec({ streamId: identifier, topicId: identifier, name }), reply: groupInfo },
  { group: 'consumer-groups', code: CommandCode.deleteConsumerGroup, request: groupRef, reply: empty },
  { group: 'consumer-groups', code: CommandCode.joinConsumerGroup, request: groupRef, reply: empty },
  { group: 'consumer-groups', code: CommandCode.leaveConsumerGroup, request: groupRef, reply: empty },
  { group: 'consumer-groups', code: CommandCode.syncConsumerGroup, request: groupRef, reply: fc.option(rec({ generation: u64, partitions: fc.array(u32, { maxLength: 5 }) }), { nil: null }) },
];

const runs = { numRuns: 40 };

describe('command table', () => {
  it('covers every code of the catalog with a case', () => {
    const covered = new Set(cases.map((c) => c.code));
    assert.deepEqual(
      Object.values(CommandCode).filter((c) => !covered.has(c)),
      [],
    );
    for (const c of Object.values(CommandCode)) assert.ok(commandName(c));
  });
});

for (const group of [...new Set(cases.map((c) => c.group))]) {
  describe(`${group} commands`, () => {
    for (const c of cases.filter((x) => x.group === group)) {
      it(`${commandName(c.code)} (${c.code}) request and reply round-trip`, () => {
        fc.assert(
          fc.property(c.request, (req) => {
            const body = Buffer.concat(encodeRequest(c.code, req as never));
            const decoded = decodeRequest(c.code, body);
            assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
            assert.deepEqual(decoded.value.request, req);
            assert.deepEqual(Buffer.concat(encodeRequest(c.code, decoded.value.request as never)), body);
          }),
          runs,
        );
        fc.assert(
          fc.property(c.reply, (rep) => {
            const body = Buffer.concat(encodeReply(c.code, rep as never));
            const decoded = decodeReply(c.code, body);
            assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
            assert.ok(!decoded.value.rejected);
            assert.deepEqual(decoded.value.value, rep);
          }),
          runs,
        );
      });
    }
  });
}

describe('trailing bytes', () => {
  // The requests whose last field runs to the end of the body (a batch, an options block): bytes
  // after them are part of it. Every other request ignores bytes after it, as the reference server
  // decodes bodies (decode_from).
  const readToTheEnd = new Set<number>([CommandCode.sendMessages, CommandCode.createStream, CommandCode.updateStream, CommandCode.createTopic, CommandCode.updateTopic, CommandCode.createUser, CommandCode.updateUser]);
  it('are ignored after a whole request, except where the request reads to the end', () => {
    for (const c of cases.filter((x) => !readToTheEnd.has(x.code))) {
      fc.assert(
        fc.property(c.request, fc.uint8Array({ minLength: 1, maxLength: 16 }), (req, junk) => {
          const body = Buffer.concat([...encodeRequest(c.code, req as never), junk]);
          const decoded = decodeRequest(c.code, body);
          assert.ok(decoded.ok, `${commandName(c.code)}: ${decoded.ok ? '' : decoded.reason}`);
          assert.deepEqual(decoded.value.request, req, commandName(c.code));
        }),
        { numRuns: 20 },
      );
    }
  });

  it('after a request ending in an options block are read as options, so four zero bytes are refused', () => {
    for (const c of cases.filter((x) => readToTheEnd.has(x.code) && x.code !== CommandCode.sendMessages)) {
      fc.assert(
        fc.property(c.request, (req) => {
          const body = Buffer.concat([...encodeRequest(c.code, req as never), Buffer.alloc(4)]);
          assert.equal(decodeRequest(c.code, body).ok, false, commandName(c.code));
        }),
        { numRuns: 20 },
      );
    }
  });
});

describe('result framing', () => {
  it('frames success with 00000000 and rejections as count 1, index 0, code', () => {
    assert.deepEqual(Buffer.concat(encodeReply(CommandCode.deleteStream, {})), Buffer.alloc(4));
    assert.equal(encodeResultError(1012).toString('hex'), '0100000000000000f4030000');
    const d = decodeReply(CommandCode.createStream, encodeResultError(1012));
    assert.ok(d.ok && d.value.rejected && d.value.code === 1012);
    assert.deepEqual(splitResultFramed(encodeResultError(41)), { rejected: 41 });
    assert.equal(typeof splitResultFramed(Buffer.from('02000000', 'hex')), 'string');
    // Not result-framed: a SendMessages reply body is the payload itself.
    assert.deepEqual(Buffer.concat(encodeReply(CommandCode.sendMessages, { confirmations: [] })), Buffer.alloc(4));
  });
});

describe('command resolution', () => {
  function header(operation: number, commandCode = 0, session = 1n, request = 1n) {
    return decodeRequestHeader(encodeRequestHeader({ size: 256, client: 1n, request, operation, session, commandCode }));
  }
  it('resolves NonReplicated by code and replicated by operation', () => {
    assert.deepEqual(resolveCommand(header(Operation.nonReplicated, 200)), { code: 200 });
    assert.deepEqual(resolveCommand(header(Operation.createStream)), { code: 202 });
    assert.deepEqual(resolveCommand(header(Operation.sendMessages)), { code: 101 });
    assert.deepEqual(resolveCommand(header(Operation.logout)), { code: 39 });
    assert.deepEqual(resolveCommand(header(Operation.register, 0, 0n, 0n)), { code: 40 });
    assert.deepEqual(resolveCommand(header(Operation.deleteConsumerOffset)), { code: 122 });
  });
  it('refuses legacy logins, unknown codes and operations', () => {
    const legacy = resolveCommand(header(Operation.nonReplicated, 38));
    assert.ok('action' in legacy && legacy.action === 'evict' && legacy.eviction === EvictionReason.malformedLogin);
    const unknown = resolveCommand(header(Operation.nonReplicated, 9999));
    assert.ok('action' in unknown && unknown.action === 'status' && unknown.status === 3);
    const wrongPlane = resolveCommand(header(Operation.nonReplicated, 202));
    assert.ok('action' in wrongPlane && wrongPlane.action === 'status');
    const op = resolveCommand(header(150));
    assert.ok('action' in op && op.action === 'evict' && op.eviction === EvictionReason.invalidRequestOperation);
  });
  it('SDK frames carry the code for reads and a body checksum for metadata operations', () => {
    const read = Buffer.concat(encodeRequestFrame(CommandCode.getStreams, {}, { client: 5n, request: 1n, session: 2n }));
    const h = decodeRequestHeader(read);
    assert.deepEqual([h.size, h.operation, h.commandCode, h.requestChecksum], [256, 2, 201, 0n]);
    const write = Buffer.concat(encodeRequestFrame(CommandCode.createStream, { name: 'test', options: [] }, { client: 5n, request: 2n, session: 2n }));
    const wh = decodeRequestHeader(write);
    assert.equal(wh.operation, 128);
    assert.notEqual(wh.requestChecksum, 0n);
    assert.ok(verifyRequestChecksum(wh, write.subarray(256)));
    const login = encodeRequestFrame(
      CommandCode.loginRegister,
      { versionInfo: { protocolVersion: iggyProtocolVersion, sdkName: 'quartet', sdkVersion: '0.1.0' }, username: 'iggy', password: 'iggy', context: null },
      { client: 5n, request: 0n, session: 0n },
    );
    assert.equal(decodeRequestHeader(login[0]!).operation, Operation.register);
  });
});

describe('hostile input', () => {
  const codes = Object.values(CommandCode);
  it('random bodies never throw and oversized counts are refused by bounds', () => {
    fc.assert(
      fc.property(fc.constantFrom(...codes), fc.uint8Array({ maxLength: 80 }), (code, body) => {
        const b = Buffer.from(body);
        decodeRequest(code, b);
        decodeReply(code, b);
      }),
      { numRuns: 2000 },
    );
  });
  it('truncated encodings of fixed-shape requests are refused', () => {
    const body = Buffer.concat(
      encodeRequest(CommandCode.pollMessages, {
        consumer: { kind: 1, id: { kind: 'numeric', value: 1 } },
        streamId: { kind: 'string', value: 'orders' },
        topicId: { kind: 'numeric', value: 2 },
        partitionId: 0,
        strategy: { kind: 1, value: 5n },
        count: 10,
        autoCommit: true,
      }),
    );
    for (let i = 0; i < body.length; i++) assert.equal(decodeRequest(CommandCode.pollMessages, body.subarray(0, i)).ok, false, `cut at ${i}`);
  });
  it('claims of huge counts do not allocate', () => {
    const topics = Buffer.from('ffffffff', 'hex');
    const d = decodeReply(CommandCode.getTopics, topics);
    assert.ok(!d.ok && /cannot fit/.test(d.reason));
    const sync = Buffer.concat([Buffer.alloc(8), Buffer.from('ffffffff', 'hex')]);
    assert.equal(decodeReply(CommandCode.syncConsumerGroup, sync).ok, false);
    const meta = Buffer.from('ffffffff0104', 'hex');
    assert.equal(decodeRequest(CommandCode.sendMessages, meta).ok, false);
    const user = Buffer.concat([Buffer.from('017501700001', 'hex'), Buffer.from('ffffffff', 'hex')]);
    assert.equal(decodeRequest(CommandCode.createUser, user).ok, false);
  });
  it('unknown codes are refused', () => {
    const d = decodeRequest(9999, Buffer.alloc(0));
    assert.ok(!d.ok);
  });
});
