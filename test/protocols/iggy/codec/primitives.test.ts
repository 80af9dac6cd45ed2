import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  Reader,
  Writer,
  decodeHeaderValue,
  encodeHeaderValue,
  encodePermissions,
  headerKindCode,
  numericId,
  option,
  parseOptionsBlock,
  readIdentifier,
  readPermissions,
  stringId,
  writeIdentifier,
  writeOptions,
  type Permissions,
} from '../../../../src/protocols/iggy/codec/index.js';
import { readU128, readU64, writeU128, writeU64 } from '../../../../src/protocols/iggy/codec/primitives.js';

describe('Reader', () => {
  it('keeps the first error and returns zeros after it', () => {
    const r = new Reader(Buffer.from([1, 2, 3]));
    assert.equal(r.u16('a'), 0x0201);
    assert.equal(r.u32('b'), 0);
    assert.match(r.error ?? '', /truncated at b/);
    assert.equal(r.u8('c'), 0);
    assert.match(r.done() ?? '', /truncated at b/);
  });

  it('reports trailing bytes and invalid UTF-8', () => {
    const r = new Reader(Buffer.from([1, 2]));
    r.u8();
    assert.equal(r.done(), '1 trailing bytes');
    const u = new Reader(Buffer.from([0xff, 0xfe]));
    u.utf8(2, 'name');
    assert.match(u.error ?? '', /UTF-8/);
  });
});

describe('Writer', () => {
  it('references long byte runs and copies short ones', () => {
    const big = Buffer.alloc(1000, 1);
    const w = new Writer();
    w.u8(1).bytes(big).u32(7);
    const chunks = w.chunks();
    assert.ok(chunks.includes(big));
    assert.equal(w.length, 1005);
    assert.equal(w.toBuffer().length, 1005);
  });

  it('patches a reserved u32', () => {
    const w = new Writer(8);
    const patch = w.u32Later();
    w.bytes(Buffer.alloc(20, 2));
    patch(20);
    assert.equal(w.toBuffer().readUInt32LE(0), 20);
  });
});

describe('identifier', () => {
  it('round-trips and rejects malformed shapes', () => {
    for (const id of [numericId(0), numericId(0xffff_ffff), stringId('orders'), stringId('ż'.repeat(100))]) {
      const w = new Writer();
      writeIdentifier(w, id);
      const r = new Reader(w.toBuffer());
      assert.deepEqual(readIdentifier(r), id);
      assert.equal(r.done(), null);
    }
    for (const hex of ['0103010000', '0200', '0301ff', '01']) {
      const r = new Reader(Buffer.from(hex, 'hex'));
      readIdentifier(r);
      assert.notEqual(r.done(), null, hex);
    }
  });
});

describe('options block', () => {
  it('enforces string keys, no duplicates, and the TLV rules', () => {
    const w = new Writer();
    writeOptions(w, [option('a', { kind: 'bool', value: true })]);
    const one = w.toBuffer();
    assert.equal(typeof parseOptionsBlock(Buffer.concat([one, one])), 'string');
    assert.equal(typeof parseOptionsBlock(Buffer.from('0101000000610201000000', 'hex')), 'string');
    assert.equal(typeof parseOptionsBlock(Buffer.from('0200000000', 'hex')), 'string');
    assert.equal(typeof parseOptionsBlock(Buffer.from('000100000061', 'hex')), 'string');
    assert.equal(typeof parseOptionsBlock(Buffer.alloc(100_001)), 'string');
    const unknownKind = Buffer.from('020100000061c80100000001', 'hex');
    assert.deepEqual(parseOptionsBlock(unknownKind), [{ key: 'a', kind: 200, value: Buffer.from([1]) }]);
  });

  it('typed values round-trip through bytes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -128, max: 127 }).map((v) => ({ kind: 'int8' as const, value: v })),
          fc.integer({ min: 0, max: 0xffff_ffff }).map((v) => ({ kind: 'uint32' as const, value: v })),
          fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map((v) => ({ kind: 'int64' as const, value: v })),
          fc.bigInt({ min: -(1n << 127n), max: (1n << 127n) - 1n }).map((v) => ({ kind: 'int128' as const, value: v })),
          fc.double({ noNaN: true }).map((v) => ({ kind: 'float64' as const, value: v })),
          fc.string({ minLength: 1, maxLength: 50 }).map((v) => ({ kind: 'string' as const, value: v })),
          fc.boolean().map((v) => ({ kind: 'bool' as const, value: v })),
        ),
        (v) => {
          assert.deepEqual(decodeHeaderValue(headerKindCode(v), encodeHeaderValue(v)), v);
        },
      ),
    );
    assert.equal(typeof decodeHeaderValue(12, Buffer.alloc(3)), 'string');
  });
});

describe('permissions', () => {
  it('matches the one-byte-per-bool layout', () => {
    const p: Permissions = {
      global: {
        manageServers: true,
        readServers: false,
        manageUsers: true,
        readUsers: false,
        manageStreams: true,
        readStreams: false,
        manageTopics: true,
        readTopics: false,
        pollMessages: true,
        sendMessages: false,
      },
      streams: [
        {
          streamId: 1,
          manageStream: true,
          readStream: false,
          manageTopics: true,
          readTopics: false,
          pollMessages: true,
          sendMessages: false,
          topics: [
            { topicId: 10, manageTopic: true, readTopic: false, pollMessages: true, sendMessages: false },
            { topicId: 20, manageTopic: false, readTopic: true, pollMessages: false, sendMessages: true },
          ],
        },
        { streamId: 2, manageStream: false, readStream: true, manageTopics: false, readTopics: true, pollMessages: false, sendMessages: true, topics: [] },
      ],
    };
    const bytes = encodePermissions(p);
    assert.equal(
      bytes.toString('hex'),
      '01000100010001000100' + '01' + '01000000' + '010001000100' + '01' + '0a000000' + '01000100' + '01' + '14000000' + '00010001' + '00' + '01' +
        '02000000' + '000100010001' + '00' + '00',
    );
    const r = new Reader(bytes);
    assert.deepEqual(readPermissions(r), p);
    assert.equal(r.done(), null);
    const none = encodePermissions({ global: p.global, streams: [] });
    assert.equal(none.length, 11);
  });
});

describe('u64 and u128', () => {
  const edges = [0n, 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n];

  it('write and read the same bytes as Buffer\'s BigInt methods, on both sides of 2^53', () => {
    const check = (v: bigint): void => {
      const ours = Buffer.alloc(8, 0xaa);
      writeU64(ours, v, 0);
      const theirs = Buffer.alloc(8);
      theirs.writeBigUInt64LE(v, 0);
      assert.deepEqual(ours, theirs, String(v));
      assert.equal(readU64(theirs, 0), v);
    };
    edges.forEach(check);
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (v) => check(v)));
  });

  it('u128: the high half counts, and a value past 2^64 round-trips', () => {
    const check = (v: bigint): void => {
      const b = Buffer.alloc(16, 0xaa);
      writeU128(b, v, 0);
      assert.equal(b.readBigUInt64LE(0), v & (2n ** 64n - 1n), String(v));
      assert.equal(b.readBigUInt64LE(8), v >> 64n, String(v));
      assert.equal(readU128(b, 0), v);
    };
    [...edges, 2n ** 64n, 2n ** 64n + 5n, 2n ** 128n - 1n].forEach(check);
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }), (v) => check(v)));
  });

  it('a u64 out of range is refused as Buffer refuses it', () => {
    assert.throws(() => writeU64(Buffer.alloc(8), -1n, 0), RangeError);
    assert.throws(() => writeU64(Buffer.alloc(8), 2n ** 64n, 0), RangeError);
  });
});
