// Every golden vector in shared/vectors/iggy decoded and re-encoded byte for byte. A .hex file
// without an entry in `checks` fails the suite, so new vectors cannot be skipped silently.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CommandCode,
  Reader,
  Writer,
  decodeLoginRegisterBody,
  decodeReply,
  decodeRequest,
  decodeRequestHeader,
  encodeBatch,
  encodeReply,
  encodeRequest,
  encodeRequestHeader,
  iggyProtocolVersion,
  isBatchRejection,
  numericId,
  parseBatch,
  parseOptionsBlock,
  parsePolledBatches,
  readPartitioning,
  readPollingStrategy,
  validateRequestHeader,
  validateSendMessagesBatch,
  writeOptions,
  writePartitioning,
  writePollingStrategy,
  type DecodedRequest,
} from '../../../../src/protocols/iggy/codec/index.js';
import { readLoginRegisterReply } from '../../../../src/protocols/iggy/codec/commands/login.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { concat, fixtureVectorsDir, sharedVectorsDir, vector, vectorNames } from './vectors.js';

function requestRoundTrip(name: string, code: number): DecodedRequest {
  const bytes = vector(name);
  const decoded = decodeRequest(code, bytes);
  assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
  const again = concat(encodeRequest(decoded.value.code, decoded.value.request as never));
  assert.deepEqual(again, bytes);
  return decoded.value;
}

function replyRoundTrip<C extends CommandCode>(bytes: Buffer, code: C): unknown {
  const decoded = decodeReply(code, bytes);
  assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
  assert.equal(decoded.value.rejected, false);
  if (decoded.value.rejected) return undefined;
  assert.deepEqual(concat(encodeReply(code, decoded.value.value)), bytes);
  return decoded.value.value;
}

function loginReplyCheck(name: string, expected: { userId: number; session: bigint; serverProtocolVersion: number; serverVersion: string }): void {
  const payload = vector(name);
  const r = new Reader(payload);
  assert.deepEqual(readLoginRegisterReply(r), expected);
  assert.equal(r.done(), null);
  // The server sends the success result prefix (server notes §5).
  const body = Buffer.concat([Buffer.alloc(4), payload]);
  assert.deepEqual(concat(encodeReply(CommandCode.loginRegister, expected)), body);
  assert.deepEqual(replyRoundTrip(body, CommandCode.loginRegister), expected);
}

const checks: Record<string, () => void> = {
  create_consumer_group_request() {
    const v = requestRoundTrip('create_consumer_group_request', CommandCode.createConsumerGroup);
    assert.deepEqual(v.request, { streamId: numericId(1), topicId: numericId(2), name: 'grp' });
  },
  create_stream_request() {
    const v = requestRoundTrip('create_stream_request', CommandCode.createStream);
    assert.deepEqual(v.request, { name: 'test', options: [] });
  },
  create_user_request_no_permissions() {
    const v = requestRoundTrip('create_user_request_no_permissions', CommandCode.createUser);
    assert.deepEqual(v.request, { username: 'u', password: 'p', status: 0, permissions: null, options: [] });
  },
  flush_unsaved_buffer_request() {
    const v = requestRoundTrip('flush_unsaved_buffer_request', CommandCode.flushUnsavedBuffer);
    assert.deepEqual(v.request, { streamId: numericId(1), topicId: numericId(2), partitionId: 3, fsync: true });
  },
  get_client_request() {
    assert.deepEqual(requestRoundTrip('get_client_request', CommandCode.getClient).request, { clientId: 1 });
  },
  get_stream_request() {
    assert.deepEqual(requestRoundTrip('get_stream_request', CommandCode.getStream).request, { streamId: numericId(1) });
  },
  get_user_request() {
    assert.deepEqual(requestRoundTrip('get_user_request', CommandCode.getUser).request, { userId: numericId(1) });
  },
  login_register_reply_body() {
    loginReplyCheck('login_register_reply_body', { userId: 7, session: 128n, serverProtocolVersion: 11264, serverVersion: '0.11.0-edge.1' });
  },
  login_register_reply_field_layout() {
    loginReplyCheck('login_register_reply_field_layout', {
      userId: 0x01020304,
      session: 0x05060708090a0b0cn,
      serverProtocolVersion: 0x0d0e0f10,
      serverVersion: 'v',
    });
  },
  login_register_request_body() {
    const v = requestRoundTrip('login_register_request_body', CommandCode.loginRegister);
    const versionInfo = { protocolVersion: iggyProtocolVersion, sdkName: 'go-sdk', sdkVersion: '0.9.0-edge.1' };
    assert.deepEqual(v.request, { versionInfo, username: 'iggy', password: 'secret', context: null });
    const body = decodeLoginRegisterBody(vector('login_register_request_body'));
    assert.ok(typeof body !== 'string');
    assert.deepEqual(body.password, { username: 'iggy', password: 'secret', context: null });
    assert.deepEqual(body.versionInfo, versionInfo);
  },
  login_user_request_legacy() {
    const v = requestRoundTrip('login_user_request_legacy', CommandCode.loginUser);
    assert.deepEqual(v.request, { username: 'u', password: 'p', version: null, context: null });
  },
  options_block() {
    const bytes = vector('options_block');
    const parsed = parseOptionsBlock(bytes);
    assert.ok(typeof parsed !== 'string', String(parsed));
    assert.deepEqual(
      parsed.map((o) => [o.key, o.kind, o.value.toString('hex')]),
      [
        ['enforce_fsync', 3, '01'],
        ['segment_size', 12, '0000004000000000'],
      ],
    );
    const w = new Writer();
    writeOptions(w, parsed);
    assert.deepEqual(w.toBuffer(), bytes);
  },
  partitioning_balanced() {
    const bytes = vector('partitioning_balanced');
    const r = new Reader(bytes);
    const p = readPartitioning(r);
    assert.equal(r.done(), null);
    assert.deepEqual(p, { kind: 'balanced' });
    const w = new Writer();
    writePartitioning(w, p);
    assert.deepEqual(w.toBuffer(), bytes);
  },
  partitioning_partition_id() {
    const bytes = vector('partitioning_partition_id');
    const r = new Reader(bytes);
    const p = readPartitioning(r);
    assert.equal(r.done(), null);
    assert.deepEqual(p, { kind: 'partitionId', partitionId: 1 });
    const w = new Writer();
    writePartitioning(w, p);
    assert.deepEqual(w.toBuffer(), bytes);
  },
  poll_messages_reply_body() {
    const bytes = vector('poll_messages_reply_body');
    const reply = replyRoundTrip(bytes, CommandCode.pollMessages) as { partitionId: number; currentOffset: bigint; messagesCount: number; batches: Buffer[] };
    assert.equal(reply.partitionId, 3);
    assert.equal(reply.currentOffset, 101n);
    assert.equal(reply.messagesCount, 2);
    const batches = parsePolledBatches(reply.batches[0]!, 'full');
    assert.ok(Array.isArray(batches), Array.isArray(batches) ? '' : batches.reason);
    assert.equal(batches.length, 1);
    const b = batches[0]!;
    assert.equal(b.header.partitionId, 3n);
    assert.equal(b.header.baseOffset, 100n);
    assert.equal(b.header.baseTimestamp, 5000n);
    assert.equal(b.header.batchChecksum, 0xd2ee8f8ab32668c9n);
    assert.deepEqual(
      b.frames.map((f) => [f.id, b.header.baseOffset + BigInt(f.offsetDelta), b.header.originTimestamp + BigInt(f.timestampDelta), f.payload.toString()]),
      [
        [7n, 100n, 1000n, 'first-payload'],
        [8n, 101n, 1050n, 'second-payload'],
      ],
    );
    // A non-zero reserved frame field is rejected (the Node SDK's negative case).
    const bad = Buffer.from(reply.batches[0]!);
    bad[256 + 40] = 1;
    const rejected = parsePolledBatches(bad, 'full');
    assert.ok(!Array.isArray(rejected) && rejected.code === 'reserved_field');
  },
  polling_strategy_offset() {
    const bytes = vector('polling_strategy_offset');
    const r = new Reader(bytes);
    const s = readPollingStrategy(r);
    assert.equal(r.done(), null);
    assert.deepEqual(s, { kind: 1, value: 1n });
    const w = new Writer();
    writePollingStrategy(w, s);
    assert.deepEqual(w.toBuffer(), bytes);
  },
  request_header_create_stream() {
    const bytes = vector('request_header_create_stream');
    const h = decodeRequestHeader(bytes);
    assert.equal(h.size, 260);
    assert.equal(h.command, 5);
    assert.equal(h.client, 0x100f0e0d0c0b0a090807060504030201n);
    assert.equal(h.request, 2n);
    assert.equal(h.operation, 128);
    assert.equal(h.session, 11n);
    assert.equal(validateRequestHeader(h), null);
    assert.equal([...bytes].filter((b) => b !== 0).length, 22);
    assert.deepEqual(encodeRequestHeader({ size: h.size, client: h.client, request: h.request, operation: h.operation, session: h.session }), bytes);
  },
  request_header_register() {
    const bytes = vector('request_header_register');
    const h = decodeRequestHeader(bytes);
    assert.deepEqual([h.size, h.command, h.client, h.request, h.operation, h.session], [256, 5, 1n, 0n, 1, 0n]);
    assert.equal(validateRequestHeader(h), null);
    assert.deepEqual(encodeRequestHeader({ size: 256, client: 1n, request: 0n, operation: 1, session: 0n }), bytes);
  },
  send_messages_batch() {
    const bytes = vector('send_messages_batch');
    const parsed = parseBatch(bytes, { verify: 'full', exact: true, requireSequentialDeltas: true });
    assert.ok(!isBatchRejection(parsed), isBatchRejection(parsed) ? parsed.reason : '');
    assert.equal(parsed.header.batchChecksum, 0x7c260763c8381fa9n);
    assert.deepEqual(
      parsed.frames.map((f) => f.checksum),
      [0x7596755a20b9d2bfn, 0xc0b78e751c7e6bd6n],
    );
    const rebuilt = encodeBatch([
      { id: 7n, originTimestamp: 1000n, payload: Buffer.from('first-payload') },
      { id: 8n, originTimestamp: 1050n, payload: Buffer.from('second-payload'), userHeaders: Buffer.from('user-header-bytes') },
    ]);
    assert.deepEqual(concat(rebuilt), bytes);
  },
  send_messages_reply_no_confirmations() {
    assert.deepEqual(replyRoundTrip(vector('send_messages_reply_no_confirmations'), CommandCode.sendMessages), { confirmations: [] });
  },
  send_messages_reply_one_confirmation() {
    assert.deepEqual(replyRoundTrip(vector('send_messages_reply_one_confirmation'), CommandCode.sendMessages), {
      confirmations: [{ streamId: 1, topicId: 2, partitionId: 3, baseOffset: 4n }],
    });
  },
  send_messages_request_body() {
    const v = requestRoundTrip('send_messages_request_body', CommandCode.sendMessages);
    assert.equal(v.code, CommandCode.sendMessages);
    if (v.code !== CommandCode.sendMessages) return;
    assert.deepEqual(v.request.streamId, numericId(1));
    assert.deepEqual(v.request.topicId, numericId(2));
    assert.deepEqual(v.request.partitioning, { kind: 'balanced' });
    assert.equal(v.request.messagesCount, 2);
    assert.deepEqual(v.request.batch, vector('send_messages_batch'));
    const batch = validateSendMessagesBatch(v.request);
    assert.ok(!isBatchRejection(batch));
  },
  send_messages_request_metadata() {
    const meta = vector('send_messages_request_metadata');
    const body = concat(
      encodeRequest(CommandCode.sendMessages, {
        streamId: numericId(1),
        topicId: numericId(2),
        partitioning: { kind: 'balanced' },
        messagesCount: 2,
        batch: vector('send_messages_batch'),
      }),
    );
    assert.deepEqual(body.subarray(0, meta.length), meta);
    assert.equal(body.length, 22 + 396);
  },
  sync_consumer_group_reply() {
    assert.deepEqual(replyRoundTrip(vector('sync_consumer_group_reply'), CommandCode.syncConsumerGroup), { generation: 7n, partitions: [0, 2, 4] });
  },
};

describe('iggy golden vectors', () => {
  it('the in-repository copy is the shared set, file for file', { skip: existsSync(sharedVectorsDir) ? false : 'no shared directory beside the clone' }, () => {
    const names = readdirSync(sharedVectorsDir).sort();
    assert.deepEqual(readdirSync(fixtureVectorsDir).sort(), names);
    for (const name of names) assert.ok(readFileSync(path.join(fixtureVectorsDir, name)).equals(readFileSync(path.join(sharedVectorsDir, name))), name);
  });

  it('every vector file has a check', () => {
    const missing = vectorNames().filter((n) => !(n in checks));
    assert.deepEqual(missing, []);
  });
  for (const name of vectorNames()) {
    it(name, () => {
      const check = checks[name];
      assert.ok(check, `no check for ${name}`);
      check();
    });
  }
});
