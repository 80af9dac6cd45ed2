import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { xxh3 } from '@node-rs/xxhash';
import {
  computeBatchChecksum,
  decodeUserHeaders,
  encodeBatch,
  encodeUserHeaders,
  isBatchRejection,
  parseBatch,
  sliceBatch,
  stampBatch,
  userHeader,
  type MessageInput,
  type ParsedBatch,
  type UserHeader,
} from '../../../../src/protocols/iggy/codec/index.js';
import { vector } from './vectors.js';

function build(messages: MessageInput[]): Buffer {
  return Buffer.concat(encodeBatch(messages));
}

function parsed(bytes: Buffer): ParsedBatch {
  const p = parseBatch(bytes, { verify: 'full', exact: true });
  assert.ok(!isBatchRejection(p), isBatchRejection(p) ? p.reason : '');
  return p;
}

const messageArb = fc.record({
  id: fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
  originTimestamp: fc.bigInt({ min: 1_000_000n, max: 1_000_100_000n }),
  payload: fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
  userHeaders: fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
});

describe('message batch', () => {
  it('Xxh3 streaming with seed 0 equals the one-shot xxh3 64', () => {
    const h = xxh3.Xxh3.withSeed(0n);
    h.update(Buffer.from('ab'));
    h.update(Buffer.from('c'));
    assert.equal(h.digest(), xxh3.xxh64(Buffer.from('abc')));
  });

  it('stamping writes the three fields and keeps the checksum valid', () => {
    const bytes = Buffer.from(vector('send_messages_batch'));
    const p = parsed(bytes);
    stampBatch(bytes, p.frames, { partitionId: 3n, baseOffset: 100n, baseTimestamp: 5000n });
    const again = parsed(bytes);
    assert.equal(again.header.partitionId, 3n);
    assert.equal(again.header.baseOffset, 100n);
    assert.equal(again.header.baseTimestamp, 5000n);
    // Exactly the record the poll vector serves.
    assert.deepEqual(bytes, vector('poll_messages_reply_body').subarray(16));
  });

  it('slicing keeps base_offset, frames byte-identical, checksums valid (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(messageArb, { minLength: 1, maxLength: 8 }), fc.nat(), fc.nat(), (messages, a, b) => {
        const bytes = build(messages);
        const p = parsed(bytes);
        stampBatch(bytes, p.frames, { partitionId: 1n, baseOffset: 50n, baseTimestamp: 9n });
        const stamped = parsed(bytes);
        const n = messages.length;
        const from = 50 + (a % n);
        const to = from + 1 + (b % (50 + n - from));
        const slice = sliceBatch(stamped, BigInt(from), BigInt(to));
        assert.ok(slice !== null);
        const sub = parsed(Buffer.concat(slice));
        assert.equal(sub.header.baseOffset, 50n);
        assert.equal(sub.header.messageCount, to - from);
        assert.deepEqual(
          sub.frames.map((f) => 50 + f.offsetDelta),
          Array.from({ length: to - from }, (_, i) => from + i),
        );
        for (const f of sub.frames) {
          const original = stamped.frames[f.offsetDelta]!;
          assert.deepEqual(sub.bytes.subarray(f.start, f.end), stamped.bytes.subarray(original.start, original.end));
        }
      }),
      { numRuns: 100 },
    );
  });

  it('slicing the whole range returns the stored bytes; an empty range returns null', () => {
    const p = parsed(vector('poll_messages_reply_body').subarray(16));
    const whole = sliceBatch(p, 100n);
    assert.ok(whole !== null && whole.length === 1 && whole[0] === p.bytes);
    assert.equal(sliceBatch(p, 102n), null);
    const tail = sliceBatch(p, 101n);
    assert.ok(tail !== null);
    const sub = parsed(Buffer.concat(tail));
    assert.equal(sub.header.messageCount, 1);
    assert.equal(sub.frames[0]!.payload.toString(), 'second-payload');
  });

  it('rejects hostile batches with reasons, never throwing', () => {
    const good = vector('send_messages_batch');
    const cases: Array<[string, (b: Buffer) => void]> = [
      ['truncated', () => {}],
      ['reserved_field', (b) => (b[100] = 1)],
      ['reserved_field', (b) => (b[256 + 44] = 1)],
      ['message_checksum', (b) => (b[310] ^= 1)],
      ['batch_checksum', (b) => (b[40] ^= 1)],
      ['bad_count', (b) => b.writeUInt32LE(3, 48)],
      ['bad_count', (b) => b.writeUInt32LE(0xffff_ffff, 48)],
      ['bad_length', (b) => b.writeBigUInt64LE(10n, 32)],
      ['truncated', (b) => b.writeBigUInt64LE(0xffff_ffff_ffffn, 32)],
      ['bad_length', (b) => b.writeUInt32LE(0xffff_fff0, 256 + 36)],
    ];
    for (const [code, mutate] of cases) {
      const b = Buffer.from(good);
      mutate(b);
      const input = code === 'truncated' && b.equals(good) ? b.subarray(0, 200) : b;
      const r = parseBatch(input, { verify: 'full' });
      assert.ok(isBatchRejection(r), `expected ${code}`);
      assert.equal(r.code, code);
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        parseBatch(Buffer.from(bytes), { verify: 'full' });
      }),
      { numRuns: 300 },
    );
  });

  it('batch checksum covers header fields and frame checksums only', () => {
    const p = parsed(vector('send_messages_batch'));
    assert.equal(computeBatchChecksum(p.bytes, p.header, p.frames), p.header.batchChecksum);
  });

  it('user headers round-trip with every typed kind', () => {
    const headers: UserHeader[] = [
      userHeader('raw', { kind: 'raw', value: Buffer.from([1, 2, 3]) }),
      userHeader('s', { kind: 'string', value: 'héllo' }),
      userHeader('b', { kind: 'bool', value: true }),
      userHeader('i8', { kind: 'int8', value: -5 }),
      userHeader('i16', { kind: 'int16', value: -300 }),
      userHeader('i32', { kind: 'int32', value: -70000 }),
      userHeader('i64', { kind: 'int64', value: -(1n << 40n) }),
      userHeader('i128', { kind: 'int128', value: -(1n << 100n) }),
      userHeader('u8', { kind: 'uint8', value: 250 }),
      userHeader('u16', { kind: 'uint16', value: 65000 }),
      userHeader('u32', { kind: 'uint32', value: 4_000_000_000 }),
      userHeader('u64', { kind: 'uint64', value: (1n << 64n) - 1n }),
      userHeader('u128', { kind: 'uint128', value: (1n << 128n) - 1n }),
      userHeader('f32', { kind: 'float32', value: Math.fround(1.5) }),
      userHeader('f64', { kind: 'float64', value: Math.PI }),
      userHeader('x', { kind: 'unknown', code: 200, value: Buffer.from('opaque') }),
    ];
    assert.deepEqual(decodeUserHeaders(encodeUserHeaders(headers)), headers);
    assert.equal(typeof decodeUserHeaders(Buffer.from('user-header-bytes')), 'string');
    const badBool = Buffer.from('0201000000620301000000' + '02', 'hex');
    assert.equal(typeof decodeUserHeaders(badBool), 'string');
  });
});
