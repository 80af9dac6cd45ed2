import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CompressionCodec,
  compress,
  decompress,
} from '../../../../src/protocols/kafka/codec/compression.js';
import { xerialMagic } from '../../../../src/base/compression.js';

const text = Buffer.from('hello kafka, hello kafka, hello kafka');
const hex = (s: string) => Buffer.from(s, 'hex');

// Produced by other implementations (CLI tools and python-snappy / kafka-python 2.0.2) from `text`.
const foreign: Array<[string, number, string]> = [
  ['gzip CLI (gzip -c -n)', CompressionCodec.gzip, '1f8b0800000000000003cb48cdc9c957c84e4ccb4ed451c8c0c10100d7b4e3dd25000000'],
  ['lz4 CLI, content checksum', CompressionCodec.lz4, '04224d186440a717000000df68656c6c6f206b61666b612c200d0000506b61666b610000000007d1f98e'],
  ['lz4 CLI, no checksum, dependent blocks', CompressionCodec.lz4, '04224d1860408217000000df68656c6c6f206b61666b612c200d0000506b61666b6100000000'],
  ['zstd CLI, content size', CompressionCodec.zstd, '28b52ffd24259d00006868656c6c6f206b61666b612c20010000ce2f15464cff'],
  ['zstd CLI, streamed (no content size)', CompressionCodec.zstd, '28b52ffd04589d00006868656c6c6f206b61666b612c20010000ce2f15464cff'],
  ['raw snappy block (librdkafka style)', CompressionCodec.snappy, '253068656c6c6f206b61666b612c205e0d00'],
  [
    'xerial snappy (kafka-python snappy_encode)',
    CompressionCodec.snappy,
    '82534e4150505900000000010000000100000012253068656c6c6f206b61666b612c205e0d00',
  ],
];

describe('compression', () => {
  for (const [name, codec, bytes] of foreign) {
    it(`decodes ${name}`, () => {
      const r = decompress(codec, hex(bytes));
      assert.ok(r.ok, r.ok ? '' : r.reason);
      assert.deepEqual(r.value, text);
    });
  }

  it('writes the xerial header exactly as snappy-java does', () => {
    const out = compress(CompressionCodec.snappy, text);
    // 0x82 'SNAPPY' 0x00, version 1, compatible 1 (big-endian int32s)
    assert.deepEqual(out.subarray(0, 16), hex('82534e41505059000000000100000001'));
    assert.deepEqual(out.subarray(0, 8), xerialMagic);
    // Same bytes as kafka-python's snappy_encode for this input.
    assert.deepEqual(out, hex(foreign[6]![2]));
  });

  it('writes gzip containers and LZ4 frames (magic 0x184D2204)', () => {
    assert.deepEqual(compress(CompressionCodec.gzip, text).subarray(0, 2), hex('1f8b'));
    assert.deepEqual(compress(CompressionCodec.lz4, text).subarray(0, 4), hex('04224d18'));
    assert.deepEqual(compress(CompressionCodec.zstd, text).subarray(0, 4), hex('28b52ffd'));
  });

  for (const codec of [CompressionCodec.none, CompressionCodec.gzip, CompressionCodec.snappy, CompressionCodec.lz4, CompressionCodec.zstd]) {
    it(`round-trips codec ${codec} (property, incl. empty and multi-block input)`, () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 2000 }), (raw) => {
          const data = Buffer.from(raw);
          const r = decompress(codec, compress(codec, data));
          assert.ok(r.ok);
          assert.deepEqual(r.value, data);
        }),
        { numRuns: 30 },
      );
      const big = Buffer.alloc(100_000, 'abcdefgh');
      const r = decompress(codec, compress(codec, big));
      assert.ok(r.ok);
      assert.deepEqual(r.value, big);
    });
  }

  it('reports corrupt input as a reason, never a throw', () => {
    for (const codec of [1, 2, 3, 4]) {
      const r = decompress(codec, Buffer.from('definitely not compressed data'));
      assert.equal(r.ok, false, `codec ${codec}`);
    }
    assert.equal(decompress(7, text).ok, false);
  });

  it('bounds the decompressed size', () => {
    const big = Buffer.alloc(1_000_000);
    for (const codec of [1, 2, 3, 4]) {
      const r = decompress(codec, compress(codec, big), 1000);
      assert.equal(r.ok, false, `codec ${codec}`);
    }
    // A raw snappy block declaring 4 GiB is refused before decoding.
    assert.equal(decompress(2, hex('ffffffff0f00')).ok, false);
  });

  it('refuses small zstd and LZ4 frames that would inflate to gigabytes before decoding them, from their block headers', () => {
    // zstd: a frame of RLE blocks of 128 KiB each (window 128 KiB: descriptor 0, window byte 0x38).
    const rleFrame = (blocks: number): Buffer => {
      const parts = [hex('28b52ffd0038')];
      for (let i = 0; i < blocks; i++) {
        const header = ((128 * 1024) << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
        parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, 0x61]));
      }
      return Buffer.concat(parts);
    };
    // The hand-made frame is real zstd: four blocks decode to 512 KiB of 'a'.
    const small = decompress(CompressionCodec.zstd, rleFrame(4));
    assert.ok(small.ok, small.ok ? '' : small.reason);
    assert.deepEqual(small.value, Buffer.alloc(512 * 1024, 0x61));
    // 24,576 blocks (98 KB) would be 3 GiB: refused by the bound, not after decoding.
    const zstdBomb = decompress(CompressionCodec.zstd, rleFrame(24_576));
    assert.equal(zstdBomb.ok, false);
    assert.match(zstdBomb.ok ? '' : zstdBomb.reason, /may hold more than/);
    // LZ4: the one compressed block of a 4 MiB frame of zeros, repeated 256 times (1 GiB).
    const one = compress(CompressionCodec.lz4, Buffer.alloc(4 * 1024 * 1024));
    assert.equal((one[5]! >> 4) & 7, 7, 'block maximum 4 MiB');
    const headerBytes = 7 + ((one[4]! >> 3) & 1 ? 8 : 0);
    const blockBytes = 4 + one.readUInt32LE(headerBytes);
    const block = one.subarray(headerBytes, headerBytes + blockBytes);
    assert.equal(one.readUInt32LE(headerBytes + blockBytes), 0, 'one block, then the end mark');
    const lz4Bomb = Buffer.concat([one.subarray(0, headerBytes), ...Array.from({ length: 256 }, () => block), one.subarray(headerBytes + blockBytes)]);
    const refused = decompress(CompressionCodec.lz4, lz4Bomb);
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? '' : refused.reason, /may hold more than/);
    // Within the bound, the same frame decodes.
    const fine = decompress(CompressionCodec.lz4, one);
    assert.ok(fine.ok && fine.value.length === 4 * 1024 * 1024);
  });
});
