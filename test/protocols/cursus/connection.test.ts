// The Cursus connection over real sockets: negotiation, every row of the bad-frame table
// (docs/protocols/cursus-wire-v2.md §2.7), compression of replies, request-ID correlation, reply
// order, the reply shapes (none, close, stream), handler failures, the idle timeout and TLS.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { QuartetError } from '../../../src/base/errors.js';
import {
  CommandId,
  Compression,
  FrameKind,
  Status,
  decodeBatch,
  encodeBatch,
  encodeCommandPayload,
  encodeFrame,
  encodeNegotiationRequest,
  encodeStreamClose,
  isStreamControl,
  negotiateCommand,
} from '../../../src/protocols/cursus/codec/index.js';
import { CursusFailure, type CursusCommandHandler } from '../../../src/protocols/cursus/handler.js';
import { startCursus } from './harness.js';
import { assertError, errorOf, okFields, type CursusWireClient } from './wire-client.js';

/** A valid request frame's bytes with `mutate` applied (the header is not covered by the CRC). */
function mutated(command: string, fields: Record<string, string>, mutate: (frame: Buffer) => void, requestId = 1n, compression: Compression = Compression.none): Buffer {
  const frame = Buffer.concat(encodeFrame({ kind: FrameKind.request, command: CommandId[command]!, requestId, compression }, encodeCommandPayload(fields)));
  mutate(frame);
  return frame;
}

/** Asserts the broker closed the connection and sent nothing for it. */
async function assertClosedWithoutReply(c: CursusWireClient): Promise<void> {
  await c.closed();
  assert.equal(c.pending.length, 0, 'no reply frame');
  assert.equal(c.framingError, null);
}

describe('negotiation', () => {
  it('picks the first requested compression the broker knows and answers on a negotiation frame', async (t) => {
    const h = await startCursus(t);
    const c = await h.raw();
    const reply = await c.negotiateRaw([9, 3, 1]);
    assert.equal(reply.header.kind, FrameKind.negotiationResponse);
    assert.equal(reply.header.command, negotiateCommand);
    assert.equal(reply.header.requestId, 0n);
    assert.equal(reply.header.compression, Compression.none, 'negotiation frames are uncompressed');
    assert.deepEqual([...reply.payload], [0, 2, 3], 'version 2, lz4');
  });

  it('refuses a version range without 2, then closes', async (t) => {
    const h = await startCursus(t);
    const c = await h.raw();
    const reply = await c.negotiateRaw([0], 3, 4);
    assert.equal(reply.header.kind, FrameKind.negotiationResponse);
    assertError([reply], 'UNSUPPORTED_PROTOCOL_VERSION', { requested_min: '3', requested_max: '4', min: '2', max: '2' });
    await c.closed();
  });

  it('refuses when no compression is common, then closes', async (t) => {
    const h = await startCursus(t);
    const c = await h.raw();
    assertError([await c.negotiateRaw([4, 200])], 'unsupported_compression');
    await c.closed();
  });

  it('refuses a malformed negotiation (no compression, an id twice), then closes', async (t) => {
    const h = await startCursus(t);
    for (const ids of [[], [1, 1]]) {
      const c = await h.raw();
      const error = assertError([await c.negotiateRaw(ids)], 'invalid_negotiation');
      assert.equal(error.class, 'validation');
      await c.closed();
    }
  });

  it('closes a connection whose first frame is not a negotiation request', async (t) => {
    const h = await startCursus(t);
    const c = await h.raw();
    c.sendRequest('HELP');
    await assertClosedWithoutReply(c);
  });

  it('closes a connection that does not negotiate within the listener deadline', async (t) => {
    const h = await startCursus(t, { authTimeoutMs: 200 });
    const silent = await h.raw();
    await silent.closed();
    const negotiated = await h.client();
    okFields((await negotiated.request('LIST'))[0]!);
    assert.equal(negotiated.isClosed, false);
  });

  it('reads frames however the bytes are split', async (t) => {
    const h = await startCursus(t);
    const c = await h.raw();
    c.socket.setNoDelay(true);
    const bytes = Buffer.concat([
      ...encodeFrame({ kind: FrameKind.negotiationRequest, command: negotiateCommand, requestId: 0n }, [encodeNegotiationRequest({ minimumVersion: 2, maximumVersion: 2, compressions: [0] })]),
      ...encodeFrame({ kind: FrameKind.request, command: CommandId.CREATE!, requestId: 11n }, encodeCommandPayload({ topic: 'split', partitions: '2' })),
      ...encodeFrame({ kind: FrameKind.request, command: CommandId.LIST!, requestId: 12n }, encodeCommandPayload({})),
    ]);
    for (let i = 0; i < bytes.length; i += 7) {
      c.send(bytes.subarray(i, i + 7));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await c.nextFrame((f) => f.header.kind === FrameKind.negotiationResponse);
    assert.equal(okFields((await c.replies(11n))[0]!).get('partitions'), '2');
    assert.equal(okFields((await c.replies(12n))[0]!).get('topics'), 'split');
  });

  it('closes a connection that negotiates twice', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    c.send(encodeFrame({ kind: FrameKind.negotiationRequest, command: negotiateCommand, requestId: 0n }, [encodeNegotiationRequest({ minimumVersion: 2, maximumVersion: 2, compressions: [0] })]));
    await assertClosedWithoutReply(c);
  });
});

describe('bad frames (§2.7)', () => {
  const closingRows: Array<[string, (f: Buffer) => void]> = [
    ['bad magic', (f) => f.writeUInt32BE(0x43525333, 0)],
    ['bad version', (f) => f.writeUInt16BE(1, 4)],
    ['unknown kind', (f) => (f[6] = 6)],
    ['a broker kind (response) from the client', (f) => (f[6] = FrameKind.response)],
    ['a reserved flag bit', (f) => (f[7] = 0x10)],
    ['compression id 4', (f) => (f[7] = 0x04)],
    ['END on a request', (f) => (f[7] = 0x08)],
    ['encoded length over 64 MiB', (f) => f.writeUInt32BE(67_108_865, 20)],
    ['decoded length over 64 MiB', (f) => f.writeUInt32BE(67_108_865, 24)],
    ['decoded length ≠ encoded length without compression', (f) => f.writeUInt32BE(f.readUInt32BE(20) + 1, 24)],
    ['status ERROR on a request', (f) => f.writeUInt16BE(Status.error, 10)],
    ['request ID 0', (f) => f.writeBigUInt64BE(0n, 12)],
    ['NEGOTIATE on a request frame', (f) => f.writeUInt16BE(negotiateCommand, 8)],
    ['a negotiation request after negotiation', (f) => (f[6] = FrameKind.negotiationRequest)],
  ];
  for (const [name, mutate] of closingRows) {
    it(`closes without a reply on ${name}, after answering what came before`, async (t) => {
      const h = await startCursus(t);
      const c = await h.client();
      const before = c.sendRequest('HELP');
      c.send(mutated('LIST', {}, mutate, 99n));
      const [reply] = await c.replies(before);
      assert.ok(okFields(reply!).get('commands')!.includes('CREATE'));
      await assertClosedWithoutReply(c);
    });
  }

  it('closes on an empty/non-empty mismatch between the lengths', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    const frame = Buffer.concat(encodeFrame({ kind: FrameKind.request, command: CommandId.LIST!, requestId: 5n }, []));
    frame.writeUInt32BE(10, 24);
    c.send(frame);
    await assertClosedWithoutReply(c);
  });

  it('closes on a compression id other than the negotiated one', async (t) => {
    const h = await startCursus(t);
    const c = await h.client([Compression.none]);
    c.sendRequest('HELP', {}, { compression: Compression.gzip });
    await assertClosedWithoutReply(c);
  });

  it('answers a CRC mismatch with checksum_mismatch (retryable) and goes on', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    c.send(mutated('LIST', {}, (f) => f.writeUInt32BE((f.readUInt32BE(28) ^ 1) >>> 0, 28), 7n));
    const error = assertError(await c.replies(7n), 'checksum_mismatch');
    assert.equal(error.class, 'validation');
    assert.equal(error.retryable, true);
    okFields((await c.request('LIST'))[0]!);
  });

  it('answers an undecompressable payload, or one of another size, with decompression_failed and goes on', async (t) => {
    const h = await startCursus(t);
    const c = await h.client([Compression.gzip]);
    /** A frame flagged gzip whose encoded payload is `encoded` as given, claiming `decodedLength`. */
    const gzipFlagged = (requestId: bigint, encoded: Buffer, decodedLength: number): Buffer => {
      const frame = Buffer.concat(encodeFrame({ kind: FrameKind.request, command: CommandId.LIST!, requestId }, [encoded]));
      frame[7] = Compression.gzip;
      frame.writeUInt32BE(decodedLength, 24);
      return frame;
    };
    c.send(gzipFlagged(3n, Buffer.from('not gzip at all'), 40));
    assertError(await c.replies(3n), 'decompression_failed');
    // A real gzip member whose content is one byte longer than decoded_length says.
    const payload = Buffer.concat(encodeCommandPayload({}));
    c.send(gzipFlagged(4n, gzipSync(Buffer.concat([payload, Buffer.from([0])])), payload.length));
    assertError(await c.replies(4n), 'decompression_failed');
    okFields((await c.request('LIST'))[0]!);
  });

  it('decodes a compressed payload of workers.offloadBytesMin or more on a worker, later requests starting after it', async (t) => {
    const seen: string[] = [];
    const publish: CursusCommandHandler = {
      command: 'PUBLISH',
      permissions: [],
      handle: (_ctx, request) => {
        const decoded = request.batch === null ? null : decodeBatch(request.batch.bytes);
        const batch = decoded?.ok === true ? decoded.value : null;
        seen.push(`${batch?.records.length ?? 0}:${batch?.records[0]?.payload.length ?? 0}`);
        return { kind: 'text', fields: [['records', String(batch?.records.length ?? 0)]] };
      },
    };
    const h = await startCursus(t, { handlers: [[publish]], broker: { workers: { threads: 1, offloadBytesMin: 64 * 1024, queueMax: 16 } } });
    const transcoder = h.broker.transcoder;
    const offload = transcoder.offloadTask.bind(transcoder);
    let offloaded = 0;
    transcoder.offloadTask = <T>(...args: Parameters<typeof offload>): Promise<T> | null => {
      const run = offload<T>(...args);
      if (run !== null) offloaded++;
      return run;
    };
    const c = await h.client([Compression.gzip]);
    const batch = (n: number, bytes: number) => {
      const records = Array.from({ length: n }, (_, i) => ({ topic: 'orders', partition: 0, offset: i, payload: Buffer.alloc(bytes, 0x61) }));
      return encodeBatch({ idempotent: false, topic: 'orders', partition: 0, acks: '1', batchStart: 0, batchEnd: n - 1, records });
    };
    // Pipelined PUBLISH requests, large (2 MiB of records in a few KB of gzip) and small, alternating.
    const ids = [batch(2, 1 << 20), batch(1, 10), batch(3, 1 << 20), batch(1, 20)].map((b) => c.sendPayload('PUBLISH', b));
    for (const id of ids) okFields((await c.replies(id))[0]!);
    assert.deepEqual(seen, [`2:${1 << 20}`, '1:10', `3:${1 << 20}`, '1:20'], 'handled in request order');
    assert.equal(offloaded, 2, 'the two large payloads were decoded on the worker');
    // A corrupt large payload is refused from the worker as inline.
    const bad = Buffer.concat(encodeFrame({ kind: FrameKind.request, command: CommandId.LIST!, requestId: 99n }, [gzipSync(Buffer.alloc(1 << 20))]));
    bad[7] = Compression.gzip;
    bad.writeUInt32BE((1 << 20) + 5, 24);
    c.send(bad);
    assertError(await c.replies(99n), 'decompression_failed');
    assert.equal(offloaded, 3);
  });

  it('answers a payload that is not CRQ2 (raw text, a topic envelope) with invalid_command_payload', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    for (const text of [Buffer.from('LIST'), Buffer.from([0, 0, 0x4c, 0x49, 0x53, 0x54])]) {
      const id = c.sendPayload('LIST', [text]);
      assertError(await c.replies(id), 'invalid_command_payload');
    }
    okFields((await c.request('LIST'))[0]!);
  });

  it('answers a CBV2 batch outside PUBLISH, and positional strings, with invalid_command_payload', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    const batch = encodeBatch({ idempotent: false, topic: 'orders', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: [] });
    assertError(await c.replies(c.sendPayload('CREATE', batch)), 'invalid_command_payload', { reason: 'batch_outside_publish' });
    assertError(await c.replies(c.sendPayload('LIST', encodeCommandPayload({}, ['orders']))), 'invalid_command_payload');
  });

  it('answers unknown, reserved and unassigned command IDs with unknown_command, internal ones with internal_command_unauthorized', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    for (const id of [32, 44, 255, 999]) assertError(await c.request(id), 'unknown_command', { command: String(id) });
    const internal = assertError(await c.request('REPLICATE_MESSAGE'), 'internal_command_unauthorized', { command: 'REPLICATE_MESSAGE' });
    assert.equal(internal.class, 'authorization');
    okFields((await c.request('HELP'))[0]!);
  });

  it('checks the required fields of the command spec', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    assertError(await c.request('CREATE', {}), 'missing_topic', { command: 'CREATE' });
    assertError(await c.request('ELECT_LEADER', { topic: 'x', partition: '0' }), 'missing_broker', { command: 'ELECT_LEADER' });
  });
});

describe('replies', () => {
  for (const [name, id] of [['gzip', Compression.gzip], ['snappy', Compression.snappy], ['lz4', Compression.lz4]] as const) {
    it(`compresses requests and replies with ${name} once negotiated`, async (t) => {
      const h = await startCursus(t);
      const c = await h.client([id]);
      const acl = Array.from({ length: 50 }, (_, i) => `principal-${i}`).join(',');
      const [created] = await c.request('CREATE', { topic: `t-${name}`, partitions: '2', read_acl: acl });
      assert.equal(created!.header.compression, id);
      assert.ok(created!.header.encodedLength < created!.header.decodedLength, 'the reply is compressed');
      assert.equal(okFields(created!).get('read_acl'), acl);
      const [help] = await c.request('HELP');
      assert.equal(help!.header.compression, id);
      assert.ok(okFields(help!).get('commands')!.split(',').includes('TRUNCATE'));
    });
  }

  it('echoes the request ID and command of each request, up to the largest u64', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    for (const requestId of [1n, 0x1234_5678_9abc_def0n, 0xffff_ffff_ffff_ffffn]) {
      c.sendRequest('LIST', {}, { requestId });
      const [reply] = await c.replies(requestId);
      assert.equal(reply!.header.requestId, requestId);
      assert.equal(reply!.header.command, CommandId.LIST);
      assert.equal(reply!.header.kind, FrameKind.response);
    }
  });

  it('answers pipelined requests in request order, a slow one holding back the later ones', async (t) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: CursusCommandHandler = {
      command: 'LIST_GROUPS',
      permissions: [],
      async handle() {
        await gate;
        return { kind: 'text', fields: [['count', '0'], ['groups', '']] };
      },
    };
    const h = await startCursus(t, { handlers: [[slow]] });
    const c = await h.client();
    const first = c.sendRequest('LIST_GROUPS');
    const second = c.sendRequest('HELP');
    const third = c.sendRequest('LIST');
    // HELP and LIST are done long before LIST_GROUPS: nothing may be written ahead of it.
    await assert.rejects(c.nextFrame(() => true, 200), /no frame/);
    release();
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await c.nextFrame()).header.requestId);
    assert.deepEqual(order, [first, second, third]);
  });

  it('runs a request after the earlier ones are answered, consecutive PUBLISH requests together', async (t) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    let bothStarted!: () => void;
    const publishesStarted = new Promise<void>((resolve) => (bothStarted = resolve));
    const publish: CursusCommandHandler = {
      command: 'PUBLISH',
      permissions: [],
      async handle(_ctx, req) {
        started.push(`PUBLISH ${req.requestId}`);
        if (started.length === 2) bothStarted();
        await gate;
        return { kind: 'json', value: { status: 'OK' } };
      },
    };
    const groups: CursusCommandHandler = {
      command: 'LIST_GROUPS',
      permissions: [],
      handle(_ctx, req) {
        started.push(`LIST_GROUPS ${req.requestId}`);
        return { kind: 'text', fields: [['count', '0'], ['groups', '']] };
      },
    };
    const h = await startCursus(t, { handlers: [[publish, groups]] });
    const c = await h.client();
    const fields = { topic: 'orders', producerId: 'p', message: 'm' };
    const ids = [c.sendRequest('PUBLISH', fields), c.sendRequest('PUBLISH', fields), c.sendRequest('LIST_GROUPS'), c.sendRequest('PUBLISH', fields)];
    await publishesStarted;
    assert.deepEqual(started, [`PUBLISH ${ids[0]}`, `PUBLISH ${ids[1]}`], 'LIST_GROUPS waits for the publishes before it');
    release();
    const order = [];
    for (let i = 0; i < 4; i++) order.push((await c.nextFrame()).header.requestId);
    assert.deepEqual(order, ids);
    assert.deepEqual(started, [`PUBLISH ${ids[0]}`, `PUBLISH ${ids[1]}`, `LIST_GROUPS ${ids[2]}`, `PUBLISH ${ids[3]}`]);
  });

  it('writes nothing for a `none` reply and answers what follows', async (t) => {
    let batches = 0;
    const publish: CursusCommandHandler = {
      command: 'PUBLISH',
      permissions: [],
      handle(_ctx, req) {
        if (req.batch !== null) {
          batches++;
          return { kind: 'json', value: { status: 'OK', records: req.batch.summary.recordCount } };
        }
        return { kind: 'none' };
      },
    };
    const h = await startCursus(t, { handlers: [[publish]] });
    const c = await h.client([Compression.snappy]);
    const silent = c.sendRequest('PUBLISH', { topic: 'orders', producerId: 'p', message: 'hello', acks: '0' });
    const [help] = await c.request('HELP');
    okFields(help!);
    assert.ok(!c.pending.some((f) => f.header.requestId === silent), 'acks=0 gets no frame');
    const record = { topic: 'orders', partition: 0, offset: 0, payload: Buffer.from('x') };
    const id = c.sendPayload('PUBLISH', encodeBatch({ idempotent: false, topic: 'orders', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: [record, record] }));
    const [ack] = await c.replies(id);
    assert.equal(JSON.parse(ack!.payload.toString()).records, 2);
    assert.equal(batches, 1);
  });

  it('answers a CBV2 batch that does not decode with batch_decode_failed', async (t) => {
    const publish: CursusCommandHandler = { command: 'PUBLISH', permissions: [], handle: () => ({ kind: 'none' }) };
    const h = await startCursus(t, { handlers: [[publish]] });
    const c = await h.client();
    const bytes = Buffer.concat(encodeBatch({ idempotent: false, topic: 'orders', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: [] }));
    assertError(await c.replies(c.sendPayload('PUBLISH', [bytes.subarray(0, bytes.length - 1)])), 'batch_decode_failed');
  });

  it('answers a handler bug with internal_error and a core error with its Cursus code, and goes on', async (t) => {
    const buggy: CursusCommandHandler = {
      command: 'LIST_GROUPS',
      permissions: [],
      handle() {
        throw new TypeError('cannot read properties of undefined');
      },
    };
    const core: CursusCommandHandler = {
      command: 'GROUP_STATUS',
      permissions: [],
      handle() {
        throw new QuartetError('unknown_topic', 'unknown topic default/x');
      },
    };
    const h = await startCursus(t, { handlers: [[buggy, core]] });
    const c = await h.client();
    const bug = assertError(await c.request('LIST_GROUPS'), 'internal_error', { command: 'LIST_GROUPS' });
    assert.equal(bug.class, 'internal');
    assert.doesNotMatch(bug.message, /undefined/, 'internals stay in the log');
    assert.equal(assertError(await c.request('GROUP_STATUS', { group: 'g' }), 'topic_not_found').class, 'not_found');
    okFields((await c.request('LIST'))[0]!);
  });

  it('EXIT answers OK, then closes', async (t) => {
    const h = await startCursus(t);
    const c = await h.client([Compression.lz4]);
    const [reply] = await c.request('EXIT');
    assert.deepEqual([...okFields(reply!)], []);
    await c.closed();
  });

  it('closes a connection idle for the listener idle timeout', async (t) => {
    const h = await startCursus(t, { idleTimeoutMs: 100 });
    const c = await h.client();
    okFields((await c.request('LIST'))[0]!);
    await c.closed(5_000);
  });

  it('serves TLS connections as the other listeners do', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'quartet-cursus-tls-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const certFile = join(dir, 'cert.pem');
    const keyFile = join(dir, 'key.pem');
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
    } catch {
      t.skip('openssl is not available');
      return;
    }
    const h = await startCursus(t, { tls: { certFile, keyFile } });
    const { CursusWireClient } = await import('./wire-client.js');
    const c = await CursusWireClient.connect(h.port, { tlsCa: readFileSync(certFile) });
    t.after(() => c.destroy());
    await c.negotiate([Compression.gzip]);
    okFields((await c.request('CREATE', { topic: 'secure' }))[0]!);
  });
});

describe('stream replies', () => {
  /** A STREAM handler: two batches, then a keepalive, then CLOSE once the connection winds down. */
  function streamHandler(started: () => void): CursusCommandHandler {
    return {
      command: 'STREAM',
      permissions: [],
      handle(_ctx, req) {
        const topic = req.payload!.fields.get('topic')!.toString();
        return {
          kind: 'stream',
          async run(sink) {
            const record = { topic, partition: 0, offset: 0, payload: Buffer.from('r') };
            await sink.send(encodeBatch({ idempotent: false, topic, partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: [record] }));
            await sink.send([]);
            started();
            if (!sink.closed.aborted) await new Promise((resolve) => sink.closed.addEventListener('abort', resolve, { once: true }));
            await sink.send([encodeStreamClose({ reason: 'stopped', offset: 1 })], true);
          },
        };
      },
    };
  }

  it('sends kind-5 frames until END, holding later requests until the stream ends', async (t) => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const h = await startCursus(t, { handlers: [[streamHandler(() => started())]] });
    const c = await h.client([Compression.gzip]);
    const stream = c.sendRequest('STREAM', { topic: 'orders', partition: '0', member: 'm' });
    const after = c.sendRequest('HELP');
    await running;
    const batch = await c.nextFrame((f) => f.header.requestId === stream);
    assert.equal(batch.header.kind, FrameKind.stream);
    assert.equal(batch.header.end, false);
    assert.equal(batch.payload.subarray(0, 4).toString(), 'CBV2');
    const keepalive = await c.nextFrame((f) => f.header.requestId === stream);
    assert.equal(keepalive.payload.length, 0);
    assert.ok(!c.pending.some((f) => f.header.requestId === after), 'HELP waits for the stream');
    // The client half-closes: the stream ends with its last frame, HELP is answered, the connection ends.
    c.socket.end();
    const last = await c.nextFrame((f) => f.header.requestId === stream);
    assert.equal(last.header.end, true);
    assert.ok(isStreamControl(last.payload));
    assert.match(last.payload.toString(), /reason=stopped/);
    okFields(await c.nextFrame((f) => f.header.requestId === after));
    await c.closed();
  });

  it('a listener shutdown ends a running stream with its last frame', async (t) => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const h = await startCursus(t, { handlers: [[streamHandler(() => started())]] });
    const c = await h.client();
    const stream = c.sendRequest('STREAM', { topic: 'orders', partition: '0', member: 'm' });
    await running;
    const stopping = h.listener.stop(2_000);
    const frames = await c.replies(stream);
    assert.equal(frames.at(-1)!.header.end, true);
    assert.match(frames.at(-1)!.payload.toString(), /STREAM_CONTROL type=CLOSE reason=stopped/);
    await stopping;
  });

  it('refuses a stream with one kind-5 ERROR frame carrying END', async (t) => {
    const refusing: CursusCommandHandler = {
      command: 'READ_STREAM',
      permissions: [],
      handle() {
        throw CursusFailure.of('event_sourcing_not_enabled', [['topic', 'orders']]);
      },
    };
    const h = await startCursus(t, { handlers: [[streamHandler(() => undefined), refusing]] });
    const c = await h.client();
    for (const [command, fields, code] of [
      ['STREAM', { topic: 'orders' }, 'missing_partition'],
      ['READ_STREAM', { topic: 'orders', key: 'k' }, 'event_sourcing_not_enabled'],
    ] as const) {
      const frames = await c.request(command, fields);
      assert.equal(frames.length, 1);
      assert.equal(frames[0]!.header.kind, FrameKind.stream);
      assert.equal(frames[0]!.header.end, true);
      assert.equal(errorOf(frames[0]!).code, code);
    }
  });

  it('ends a stream whose handler returned without its last frame with an ERROR frame', async (t) => {
    const careless: CursusCommandHandler = {
      command: 'STREAM',
      permissions: [],
      handle: () => ({ kind: 'stream', run: async (sink) => sink.send([]) }),
    };
    const h = await startCursus(t, { handlers: [[careless]] });
    const c = await h.client();
    const frames = await c.request('STREAM', { topic: 'orders', partition: '0', member: 'm' });
    assert.equal(frames.length, 2);
    assert.equal(frames[1]!.header.end, true);
    assert.equal(errorOf(frames[1]!).code, 'internal_error');
    okFields((await c.request('HELP'))[0]!);
  });
});
