import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { compressFrameSync } from 'lz4-napi';
import { compressSync } from 'snappy';
import { decompressV1Body } from '../../../src/protocols/cursus/v1/index.js';

const body = Buffer.from('\x00\x00PUBLISH topic=t producerId=p message=' + 'x'.repeat(300));

/** xerial (snappy-java) framing: 16-byte header, then (u32 length, raw block) pairs. */
function xerial(...blocks: Buffer[]): Buffer {
  const header = Buffer.from('82534e41505059000000000100000001', 'hex');
  return Buffer.concat([header, ...blocks.flatMap((b) => [Buffer.from([0, 0, 0, 0].map((_, i) => (b.length >> (24 - 8 * i)) & 0xff)), b])]);
}

describe('v1 inbound decompression', () => {
  it('reads gzip, raw and xerial snappy, and LZ4 frames', () => {
    const half = body.length >> 1;
    for (const [name, compression, data] of [
      ['gzip', 'gzip', gzipSync(body)],
      ['raw snappy', 'snappy', compressSync(body)],
      ['xerial snappy', 'snappy', xerial(compressSync(body.subarray(0, half)), compressSync(body.subarray(half)))],
      ['lz4', 'lz4', compressFrameSync(body)],
      ['none', 'none', body],
    ] as const) {
      const r = decompressV1Body(data, compression, 1 << 20);
      assert.ok(r.ok, `${name}: ${r.ok ? '' : r.reason}`);
      assert.ok(r.value.equals(body), name);
    }
  });

  it('refuses what inflates past the limit, and what does not decompress, without throwing', () => {
    for (const [compression, data] of [
      ['gzip', gzipSync(body)],
      ['snappy', compressSync(body)],
      ['snappy', xerial(compressSync(body))],
      ['lz4', compressFrameSync(body)],
    ] as const) {
      const r = decompressV1Body(data, compression, 100);
      assert.equal(r.ok, false, compression);
    }
    for (const compression of ['gzip', 'snappy', 'lz4'] as const) assert.equal(decompressV1Body(Buffer.from('plain text'), compression, 1 << 20).ok, false, compression);
  });
});
