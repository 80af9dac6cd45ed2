import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Reader } from '../../../../src/protocols/kafka/codec/reader.js';
import { Writer } from '../../../../src/protocols/kafka/codec/writer.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('Reader primitives', () => {
  it('reads fixed-width big-endian values', () => {
    const r = new Reader(hex('ff 8000 80000000 ffffffffffffffff 0001 ffffffff 3ff0000000000000'));
    assert.equal(r.int8(), -1);
    assert.equal(r.int16(), -32768);
    assert.equal(r.int32(), -2147483648);
    assert.equal(r.int64(), -1n);
    assert.equal(r.uint16(), 1);
    assert.equal(r.uint32(), 0xffffffff);
    assert.equal(r.float64(), 1);
    assert.ok(r.complete());
  });

  it('int64AsNumber is exact in the safe range and falls back beyond it', () => {
    const w = new Writer();
    w.int64(Number.MAX_SAFE_INTEGER).int64(-Number.MAX_SAFE_INTEGER).int64(-1).int64(2n ** 62n);
    const r = new Reader(w.toBuffer());
    assert.equal(r.int64AsNumber(), Number.MAX_SAFE_INTEGER);
    assert.equal(r.int64AsNumber(), -Number.MAX_SAFE_INTEGER);
    assert.equal(r.int64AsNumber(), -1);
    assert.equal(r.int64AsNumber(), 2 ** 62);
  });

  it('decodes varints from the protocol guide examples', () => {
    // zigzag: 0 -> 00, -1 -> 01, 1 -> 02, -2 -> 03, 300 -> d8 04
    const r = new Reader(hex('00 01 02 03 d804'));
    assert.deepEqual([r.varint(), r.varint(), r.varint(), r.varint(), r.varint()], [0, -1, 1, -2, 300]);
    const u = new Reader(hex('ac02 ffffffff0f'));
    assert.equal(u.uvarint(), 300);
    assert.equal(u.uvarint(), 0xffffffff);
    assert.ok(u.complete());
  });

  it('round-trips every primitive (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        fc.maxSafeInteger(),
        fc.option(fc.string({ maxLength: 40 })),
        fc.option(fc.uint8Array({ maxLength: 40 })),
        (i32, u32, i64, safe, s, b) => {
          const w = new Writer(8);
          w.varint(i32).uvarint(u32).varlong(i64).varlong(safe).int64(i64).nullableString(s).compactNullableString(s);
          const bytes = b === null ? null : Buffer.from(b);
          w.nullableBytes(bytes).compactNullableBytes(bytes).int32(i32).uint32(u32);
          const r = new Reader(w.toBuffer());
          assert.equal(r.varint(), i32);
          assert.equal(r.uvarint(), u32);
          assert.equal(r.varlongBig(), i64);
          assert.equal(r.varlong(), safe);
          assert.equal(r.int64(), i64);
          assert.equal(r.nullableString(), s);
          assert.equal(r.compactNullableString(), s);
          assert.deepEqual(r.nullableBytes(), bytes);
          assert.deepEqual(r.compactNullableBytes(), bytes);
          assert.equal(r.int32(), i32);
          assert.equal(r.uint32(), u32);
          assert.ok(r.complete(), r.error ?? 'bytes left');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('returns byte fields as views of the frame', () => {
    const buf = hex('00000003 616263');
    const b = new Reader(buf).bytes();
    assert.equal(b.buffer, buf.buffer);
    assert.equal(b.toString(), 'abc');
  });

  it('skips unknown tagged fields and hands known ones a bounded reader', () => {
    // 2 fields: tag 0 size 2 [00 07], tag 5 size 3 [aa bb cc]; then int8 09
    const r = new Reader(hex('02 00 02 0007 05 03 aabbcc 09'));
    const seen: number[] = [];
    r.taggedFields((tag, sub) => {
      seen.push(tag);
      if (tag === 0) assert.equal(sub.int16(), 7);
    });
    assert.deepEqual(seen, [0, 5]);
    assert.equal(r.int8(), 9);
    assert.ok(r.complete());
  });
});

describe('Reader hostile input', () => {
  const cases: Array<[string, string, (r: Reader) => unknown]> = [
    ['truncated int32', '0000', (r) => r.int32()],
    ['truncated varint', '8080', (r) => r.varint()],
    ['overlong varint', 'ffffffffff01', (r) => r.uvarint()],
    ['varint wider than 32 bits', 'ffffffff1f', (r) => r.uvarint()],
    ['truncated varlong', 'ffffffffffffffffff', (r) => r.varlongBig()],
    ['negative string length', 'fffe', (r) => r.string()],
    ['null non-nullable string', 'ffff', (r) => r.string()],
    ['string longer than the frame', '7fff6162', (r) => r.string()],
    ['negative bytes length', 'fffffff0', (r) => r.bytes()],
    ['huge bytes length', '7fffffff00', (r) => r.bytes()],
    ['compact bytes longer than frame', 'ffffffff0f00', (r) => r.compactBytes()],
    ['huge array count', '7fffffff', (r) => r.arrayLength(1)],
    ['negative array count', 'fffffffe', (r) => r.arrayLength(1)],
    ['huge compact array count', 'ffffffff0f', (r) => r.compactArrayLength(4)],
    ['tagged field larger than frame', '01 00 7f 00', (r) => r.taggedFields()],
    ['tagged fields out of order', '02 05 00 01 00', (r) => r.taggedFields()],
    ['huge tagged field count', 'ffffffff0f', (r) => r.taggedFields()],
  ];
  for (const [name, bytes, read] of cases) {
    it(`${name}: sticky error, no throw`, () => {
      const r = new Reader(hex(bytes));
      assert.doesNotThrow(() => read(r));
      assert.notEqual(r.error, null);
      // Every read after the failure returns a zero value and keeps the first reason.
      const first = r.error;
      assert.equal(r.int32(), 0);
      assert.equal(r.string(), '');
      assert.equal(r.error, first);
      assert.equal(r.complete(), false);
    });
  }

  it('never throws on random input (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const r = new Reader(Buffer.from(bytes));
        r.int16();
        r.compactNullableString();
        const n = r.compactArrayLength(1);
        for (let i = 0; i < n; i++) r.varlong();
        r.taggedFields(() => undefined);
        r.nullableBytes();
        assert.ok(r.offset <= r.end);
      }),
      { numRuns: 500 },
    );
  });
});
