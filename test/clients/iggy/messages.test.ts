// The SDK's message helpers: decodePolledRecords (one walk, no frame objects) against the
// parsePolledBatches-based decoder it replaced, over valid and corrupted poll regions; the golden
// poll reply and its opaque user headers; raw user headers on the send side; and the
// UUIDv7-shaped ids drawn from the pooled random bytes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CommandCode,
  batchHeaderBytes,
  decodeReply,
  decodeUserHeaders,
  encodeBatchBytes,
  encodeUserHeaders,
  parsePolledBatches,
  polledBuffers,
  userHeader,
} from '../../../src/protocols/iggy/codec/index.js';
import { IggyProtocolError } from '../../../src/clients/iggy/errors.js';
import {
  decodePolledRecords,
  encodeMessages,
  encoderInputsForTests,
  encodeSendBatch,
  newMessageId,
  prepareMessage,
  toUserHeaders,
  userHeadersBytesMax,
  writeNewMessageId,
  type IggyMessage,
  type SendMessage,
} from '../../../src/clients/iggy/messages.js';
import { vector } from '../../protocols/iggy/codec/vectors.js';
import type { MessageInput } from '../../../src/protocols/iggy/codec/index.js';
import { parseBatch } from '../../../src/protocols/iggy/codec/index.js';

/**
 * decodePolledRecords as it was: parsePolledBatches('full') frames, then one object per frame;
 * user headers that are not a TLV block read as none (they are opaque to the server).
 */
function reference(partitionId: number, records: readonly Buffer[]): IggyMessage[] {
  const out: IggyMessage[] = [];
  for (const region of records) {
    const batches = parsePolledBatches(region, 'full');
    if ('code' in batches) throw new IggyProtocolError(`poll reply: ${batches.reason}`);
    for (const batch of batches) {
      const h = batch.header;
      for (const f of batch.frames) {
        const decoded = f.userHeaders.length === 0 ? [] : decodeUserHeaders(f.userHeaders);
        const headers = typeof decoded === 'string' ? [] : decoded;
        out.push({
          partitionId,
          offset: h.baseOffset + BigInt(f.offsetDelta),
          id: f.id,
          timestamp: h.baseTimestamp,
          originTimestamp: h.originTimestamp + BigInt(f.timestampDelta),
          checksum: f.checksum,
          payload: f.payload,
          rawHeaders: f.userHeaders,
          headers,
        });
      }
    }
  }
  return out;
}

/** The encoder input the SDK used to build for a message with an id (a frozen copy). */
function referenceInput(m: SendMessage | Buffer | string, now: bigint): MessageInput {
  const msg: SendMessage = typeof m === 'string' || Buffer.isBuffer(m) ? { payload: m } : m;
  const payload = typeof msg.payload === 'string' ? Buffer.from(msg.payload, 'utf8') : Buffer.isBuffer(msg.payload) ? msg.payload : Buffer.from(msg.payload);
  assert.notEqual(msg.id, undefined, 'the reference is for messages with ids');
  return { id: msg.id!, originTimestamp: msg.timestampMicros ?? now, payload, userHeaders: encodeUserHeaders(toUserHeaders(msg.headers)) };
}

/** The fields of a message as a plain object (a polled message's id, checksum and headers are getters). */
function plain(m: IggyMessage): IggyMessage {
  const { partitionId, offset, id, timestamp, originTimestamp, checksum, payload, rawHeaders, headers } = m;
  return { partitionId, offset, id, timestamp, originTimestamp, checksum, payload, rawHeaders, headers };
}

function outcome(f: () => IggyMessage[]): IggyMessage[] | string {
  try {
    return f().map(plain);
  } catch (e) {
    assert.ok(e instanceof IggyProtocolError);
    return e.message;
  }
}

const headersArb = fc.oneof(
  fc.constant(Buffer.alloc(0)),
  fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), fc.oneof(fc.string({ minLength: 1, maxLength: 6 }), fc.integer())), { minLength: 1, maxLength: 3 }).map((hs) =>
    encodeUserHeaders(hs.map(([k, v]) => userHeader(k, typeof v === 'string' ? { kind: 'string', value: v } : { kind: 'int32', value: v | 0 }))),
  ),
  fc.uint8Array({ minLength: 1, maxLength: 8 }).map((a) => Buffer.from(a)), // not a TLV block
);

const batchArb = fc.record({
  base: fc.oneof(fc.bigInt({ min: 0n, max: 1_000_000n }), fc.bigInt({ min: 1n << 53n, max: (1n << 64n) - (1n << 33n) })),
  baseTimestamp: fc.bigInt({ min: 0n, max: 1n << 60n }),
  messages: fc.array(
    fc.record({
      id: fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
      time: fc.nat(100_000),
      payload: fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a)),
      userHeaders: headersArb,
    }),
    { minLength: 1, maxLength: 5 },
  ),
});

describe('iggy SDK messages', () => {
  it('decodePolledRecords decodes and rejects exactly as the frame-object decoder did, headers read leniently (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(batchArb, { minLength: 1, maxLength: 3 }), { maxLength: 2 }),
        fc.option(fc.tuple(fc.nat(), fc.nat(7)), { nil: null }),
        (regions, flip) => {
          const records = regions.map((batches) =>
            Buffer.concat(
              batches.map((b) =>
                encodeBatchBytes(
                  b.messages.map((m) => ({ id: m.id, originTimestamp: 1_700_000_000_000_000n + BigInt(m.time), payload: m.payload, userHeaders: m.userHeaders })),
                  { partitionId: 3n, baseOffset: b.base, baseTimestamp: b.baseTimestamp },
                ),
              ),
            ),
          );
          if (flip !== null && records.length > 0) {
            const r = records[flip[0] % records.length]!;
            r[flip[0] % r.length]! ^= 1 << flip[1];
          }
          assert.deepEqual(
            outcome(() => decodePolledRecords(3, records)),
            outcome(() => reference(3, records)),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('polled messages read offset, id and checksum from the frame, and take assignments like plain objects', () => {
    const batch = encodeBatchBytes(
      [
        { id: 42n, originTimestamp: 5n, payload: Buffer.from('x') },
        { id: 43n, originTimestamp: 5n, payload: Buffer.from('y') },
      ],
      { partitionId: 1n, baseOffset: 7n, baseTimestamp: 9n },
    );
    const messages = decodePolledRecords(1, [batch]);
    assert.equal(messages.length, 2);
    const m = messages[1]!;
    assert.deepEqual([m.offset, m.id, m.payload.toString()], [8n, 43n, 'y']);
    assert.equal(m.checksum, batch.readBigUInt64LE(batchHeaderBytes + 48 + 1));
    m.offset = 4n;
    m.id = 5n;
    m.checksum = 6n;
    assert.deepEqual([m.offset, m.id, m.checksum], [4n, 5n, 6n]);
    // Offsets past 2^53 - 2^32 are kept as BigInts.
    const far = encodeBatchBytes([{ id: 1n, originTimestamp: 5n, payload: Buffer.from('z') }], { partitionId: 1n, baseOffset: (1n << 63n) + 3n, baseTimestamp: 9n });
    assert.equal(decodePolledRecords(1, [far])[0]!.offset, (1n << 63n) + 3n);
  });

  it('decodes the golden poll reply through the SDK path: frame 1 keeps its 17 opaque header bytes', () => {
    // vectors.md: the header bytes are ASCII "user-header-bytes", not a TLV block.
    const body = vector('poll_messages_reply_body');
    const decoded = decodeReply(CommandCode.pollMessages, body);
    assert.ok(decoded.ok && !decoded.value.rejected);
    const reply = decoded.value.value;
    const messages = decodePolledRecords(reply.partitionId, polledBuffers(reply));
    assert.deepEqual(
      messages.map((m) => [m.partitionId, m.id, m.offset, m.timestamp, m.originTimestamp, m.checksum, m.payload.toString()]),
      [
        [3, 7n, 100n, 5000n, 1000n, 0x7596755a20b9d2bfn, 'first-payload'],
        [3, 8n, 101n, 5000n, 1050n, 0xc0b78e751c7e6bd6n, 'second-payload'],
      ],
    );
    const [m0, m1] = messages as [IggyMessage, IggyMessage];
    assert.equal(m0.rawHeaders.length, 0);
    assert.deepEqual(m0.headers, []);
    assert.deepEqual(m1.rawHeaders, Buffer.from('user-header-bytes'));
    assert.equal(m1.rawHeaders.buffer, body.buffer, 'a view of the reply, not a copy');
    assert.equal(m1.rawHeaders.byteOffset - body.byteOffset, 412 - 17, 'the last 17 bytes of the reply');
    assert.deepEqual(m1.headers, [], 'not a TLV block: no headers, and no error');
  });

  it('polled headers decode on read; rawHeaders and headers take assignments like plain fields', () => {
    const tlv = encodeUserHeaders([userHeader('k', { kind: 'string', value: 'v' })]);
    const batch = encodeBatchBytes(
      [
        { id: 1n, originTimestamp: 5n, payload: Buffer.from('a'), userHeaders: tlv },
        { id: 2n, originTimestamp: 5n, payload: Buffer.from('b'), userHeaders: tlv.subarray(0, tlv.length - 1) }, // truncated TLV
      ],
      { partitionId: 1n, baseOffset: 0n, baseTimestamp: 9n },
    );
    const [good, cut] = decodePolledRecords(1, [batch]) as [IggyMessage, IggyMessage];
    assert.deepEqual(good.rawHeaders, tlv);
    assert.deepEqual(good.headers, [userHeader('k', { kind: 'string', value: 'v' })]);
    assert.equal(good.headers, good.headers, 'decoded once');
    assert.deepEqual(cut.rawHeaders, tlv.subarray(0, tlv.length - 1));
    assert.deepEqual(cut.headers, []);
    good.headers = [];
    good.rawHeaders = Buffer.from('x');
    assert.deepEqual([good.headers, good.rawHeaders], [[], Buffer.from('x')]);
  });

  it('sends rawHeaders byte for byte (opaque, checked for size only), never with headers', () => {
    const now = 1_000_000n;
    const nowMs = 1_000;
    const opaque = Buffer.from('user-header-bytes');
    const fromArray = new Uint8Array([0xff, 0, 1]);
    const given: SendMessage[] = [
      { id: 1n, payload: 'a', rawHeaders: opaque },
      { id: 2n, payload: 'b', rawHeaders: fromArray },
      { id: 3n, payload: 'c', rawHeaders: Buffer.alloc(0) },
      { id: 4n, payload: 'd', rawHeaders: Buffer.alloc(userHeadersBytesMax, 7) },
    ];
    const batch = parseBatch(encodeMessages(given, now, nowMs));
    assert.ok(!('code' in batch));
    assert.deepEqual(batch.frames.map((f) => f.userHeaders), [opaque, Buffer.from(fromArray), Buffer.alloc(0), Buffer.alloc(userHeadersBytesMax, 7)]);
    assert.deepEqual(encodeSendBatch(given.map((m) => prepareMessage(m, now, nowMs))), encodeMessages(given, now, nowMs), 'the producer\'s path');
    assert.throws(() => encodeMessages([{ payload: 'x', rawHeaders: Buffer.alloc(userHeadersBytesMax + 1) }], now, nowMs), RangeError);
    assert.throws(() => encodeMessages([{ payload: 'x', rawHeaders: opaque, headers: { k: 'v' } }], now, nowMs), TypeError);
    assert.throws(() => prepareMessage({ payload: 'x', rawHeaders: 'text' as unknown as Buffer }), TypeError);
    assert.deepEqual(encoderInputsForTests().holdingPayloads, 0, 'a refused send leaves no input behind');
  });

  it('mints UUIDv7-shaped ids: time, version 7, variant 10, random and unique across pool refills', () => {
    const now = 1_750_000_000_123;
    const ids = new Set<bigint>();
    for (let i = 0; i < 5000; i++) {
      const id = newMessageId(now);
      assert.equal(id >> 80n, BigInt(now));
      assert.equal((id >> 76n) & 0xfn, 7n);
      assert.equal((id >> 62n) & 0x3n, 2n);
      ids.add(id);
    }
    assert.equal(ids.size, 5000);
    assert.ok(newMessageId() > 0n);
    assert.equal(newMessageId(0) >> 80n, 0n);
    assert.equal(newMessageId(2 ** 48 - 1) >> 80n, (1n << 48n) - 1n);
    assert.throws(() => newMessageId(2 ** 48), RangeError);
    assert.throws(() => newMessageId(-1), RangeError);
  });

  it('mints ids once, at prepare time: a batch encoded twice (a retry) carries the same ids; given ids are kept', () => {
    const before = Date.now();
    const prepared = [prepareMessage('a'), prepareMessage({ id: 42n, payload: 'b' }), ...Array.from({ length: 2000 }, (_, i) => prepareMessage(`m${i}`))];
    const after = Date.now();
    assert.equal(prepared[0]!.input.id, undefined, 'no BigInt per message');
    const first = parseBatch(encodeSendBatch(prepared));
    const retry = parseBatch(encodeSendBatch(prepared));
    assert.ok(!('code' in first) && !('code' in retry), 'the batches verify (checksums cover the ids)');
    const ids = first.frames.map((f) => f.id);
    assert.deepEqual(retry.frames.map((f) => f.id), ids, 'a retry sends the same ids');
    assert.equal(ids[1], 42n);
    const minted = ids.filter((_, i) => i !== 1);
    for (const id of minted) {
      const ms = Number(id >> 80n);
      assert.ok(ms >= before && ms <= after, 'time-ordered: the prepare time in ms');
      assert.equal((id >> 76n) & 0xfn, 7n);
      assert.equal((id >> 62n) & 0x3n, 2n);
    }
    assert.equal(new Set(minted).size, minted.length);
    assert.throws(() => encodeBatchBytes([{ originTimestamp: 0n, payload: Buffer.from('x') }]), TypeError, 'no id at all');
    assert.throws(() => writeNewMessageId(Buffer.alloc(16), 0, 2 ** 48), RangeError);
  });

  it('encodeMessages (sendMessages) writes the bytes prepareMessage + encodeSendBatch write, from every kind of input', () => {
    const now = 1_700_000_000_000_000n;
    const nowMs = 1_700_000_000_000;
    const given: Array<SendMessage | Buffer | string> = [
      { id: 1n, payload: 'text', timestampMicros: now + 5n },
      { id: 2n, payload: new Uint8Array([1, 2, 3]), headers: { k: 'v', n: 7 } },
      { id: (1n << 128n) - 1n, payload: Buffer.from('buf'), headers: [userHeader('typed', { kind: 'bool', value: true })] },
    ];
    const direct = encodeMessages(given, now, nowMs);
    assert.deepEqual(direct, encodeBatchBytes(given.map((m) => referenceInput(m, now))), 'the inputs the SDK built before');
    assert.deepEqual(direct, encodeSendBatch(given.map((m) => prepareMessage(m, now, nowMs))), 'the producer\'s path');
    // Plain Buffers and strings get minted ids: the same bytes once the ids are read back.
    const plainInputs = [Buffer.from('a'), 'b', Buffer.alloc(0)];
    const batch = parseBatch(encodeMessages(plainInputs, now, nowMs));
    assert.ok(!('code' in batch), 'the batch verifies');
    assert.deepEqual(batch.frames.map((f) => f.payload.toString()), ['a', 'b', '']);
    const ids = batch.frames.map((f) => f.id);
    for (const id of ids) {
      assert.equal(Number(id >> 80n), nowMs, 'minted at the send time');
      assert.equal((id >> 76n) & 0xfn, 7n);
    }
    assert.equal(new Set(ids).size, 3);
    const again = encodeSendBatch(plainInputs.map((m, i) => prepareMessage({ id: ids[i]!, payload: m }, now, nowMs)));
    assert.deepEqual(encodeMessages(plainInputs.map((m, i) => ({ id: ids[i]!, payload: m })), now, nowMs), again);
  });

  it('encodeMessages reuses its inputs without carrying a field from one send into the next', () => {
    const now = 1_000_000n;
    const nowMs = 1_000;
    // A long send with ids, headers and timestamps, then a shorter one with none of them.
    const first = Array.from({ length: 50 }, (_, i): SendMessage => ({ id: BigInt(i + 1), payload: `p${i}`, headers: { h: i }, timestampMicros: now + BigInt(i) }));
    assert.ok(!('code' in parseBatch(encodeMessages(first, now, nowMs))));
    const second = parseBatch(encodeMessages([Buffer.from('x'), 'y'], now + 100n, nowMs));
    assert.ok(!('code' in second));
    assert.equal(second.frames.length, 2);
    for (const f of second.frames) {
      assert.equal(f.userHeaders.length, 0, 'no headers left over');
      assert.ok(f.id > 1000n, 'a minted id, not the previous send\'s');
      assert.equal(f.timestampDelta, 0, 'the send time, not the previous send\'s timestamps');
    }
    assert.equal(second.header.originTimestamp, now + 100n);
    // A batch larger than the set the encoder keeps between sends, then a small one again.
    const big = parseBatch(encodeMessages(Array.from({ length: 20_000 }, (_, i) => `b${i}`), now, nowMs));
    assert.ok(!('code' in big));
    assert.equal(big.frames.length, 20_000);
    assert.equal(big.frames[19_999]!.payload.toString(), 'b19999');
    const small = parseBatch(encodeMessages(['z'], now, nowMs));
    assert.ok(!('code' in small));
    assert.deepEqual(small.frames.map((f) => f.payload.toString()), ['z']);
    assert.deepEqual(encoderInputsForTests(), { kept: 16 * 1024, holdingPayloads: 0 }, 'cut back, and no caller buffer kept alive');
  });

  it('encodeMessages re-entered from a message being read encodes both batches intact', () => {
    let inner: Buffer | null = null;
    const sneaky = {
      id: 7n,
      get payload(): Buffer {
        inner ??= encodeMessages([{ id: 99n, payload: 'inner' }], 5n, 1);
        return Buffer.from('outer');
      },
    };
    const outer = parseBatch(encodeMessages([{ id: 1n, payload: 'first' }, sneaky, { id: 3n, payload: 'last' }], 5n, 1));
    assert.ok(!('code' in outer));
    assert.deepEqual(outer.frames.map((f) => [f.id, f.payload.toString()]), [[1n, 'first'], [7n, 'outer'], [3n, 'last']]);
    const innerBatch = parseBatch(inner!);
    assert.ok(!('code' in innerBatch));
    assert.deepEqual(innerBatch.frames.map((f) => [f.id, f.payload.toString()]), [[99n, 'inner']]);
  });

  it('encodeBatchBytes encodes only the first `count` inputs, and refuses a count outside the list', () => {
    const inputs = ['a', 'b', 'c'].map((p, i) => ({ id: BigInt(i + 1), originTimestamp: 10n, payload: Buffer.from(p) }));
    const two = parseBatch(encodeBatchBytes(inputs, undefined, { count: 2 }));
    assert.ok(!('code' in two));
    assert.deepEqual(two.frames.map((f) => f.payload.toString()), ['a', 'b']);
    assert.deepEqual(encodeBatchBytes(inputs, undefined, { count: 2 }), encodeBatchBytes(inputs.slice(0, 2)));
    assert.throws(() => encodeBatchBytes(inputs, undefined, { count: 4 }), RangeError);
    assert.throws(() => encodeBatchBytes(inputs, undefined, { count: -1 }), RangeError);
  });
});
