import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeV1Frame, encodeV1Text, isV1Start, V1Framer, v1FrameBytesMax, v1Keepalive, type V1FramerResult } from '../../../src/protocols/cursus/v1/index.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

function bodies(results: V1FramerResult[]): string[] {
  return results.map((r) => {
    assert.ok(r.ok, r.ok ? '' : r.reason);
    return r.body.toString('latin1');
  });
}

/** Three frames back to back: LIST raw, LIST in a Go-SDK envelope, and an empty body. */
const stream = Buffer.concat([hex('00000004 4c495354'), hex('00000006 0000 4c495354'), hex('00000000')]);

describe('V1Framer', () => {
  it('cuts whole frames out of one chunk as views of it', () => {
    const f = new V1Framer();
    const out = f.push(stream);
    assert.deepEqual(bodies(out), ['LIST', '\x00\x00LIST', '']);
    assert.ok(out[0]!.ok && out[0]!.body.buffer === stream.buffer, 'a frame inside the chunk is not copied');
    assert.equal(f.bufferedBytes, 0);
  });

  it('gives the same frames whatever way the bytes are split, one byte at a time included', () => {
    for (let split = 1; split < stream.length; split++) {
      const f = new V1Framer();
      const got = [...bodies(f.push(stream.subarray(0, split))), ...bodies(f.push(stream.subarray(split)))];
      assert.deepEqual(got, ['LIST', '\x00\x00LIST', ''], `split at ${split}`);
    }
    const f = new V1Framer();
    const got: string[] = [];
    for (const b of stream) got.push(...bodies(f.push(Buffer.from([b]))));
    assert.deepEqual(got, ['LIST', '\x00\x00LIST', '']);
  });

  it('copies a straddling frame out when chunks are reused', () => {
    const f = new V1Framer({ reusedChunks: true });
    const chunk = hex('00000004 4c495354');
    const [r] = f.push(chunk);
    chunk.fill(0);
    assert.ok(r?.ok);
    assert.equal(r.body.toString(), 'LIST');
  });

  it('refuses a declared length over 16 MiB from the 4 length bytes alone, and stops', () => {
    const f = new V1Framer();
    const over = Buffer.alloc(4);
    over.writeUInt32BE(v1FrameBytesMax + 1, 0);
    const out = f.push(Buffer.concat([over.subarray(0, 2)]));
    assert.deepEqual(out, []);
    const [r, ...rest] = f.push(Buffer.concat([over.subarray(2), hex('00000004 4c495354')]));
    assert.equal(r?.ok, false);
    assert.match(r && !r.ok ? r.reason : '', /16777217 bytes exceeds 16777216/);
    assert.deepEqual(rest, []);
    assert.equal(f.broken, true);
    assert.deepEqual(f.push(hex('00000004 4c495354')), [], 'nothing more after a bad length');
    assert.equal(f.bufferedBytes, 0, 'nothing was allocated for the oversized body');
  });

  it('accepts a body of exactly the limit, and a smaller configured limit', () => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(v1FrameBytesMax, 0);
    const f = new V1Framer();
    assert.deepEqual(f.push(len), []);
    assert.equal(f.bufferedBytes, 4);
    const small = new V1Framer({ frameBytesMax: 3 });
    const [r] = small.push(hex('00000004 4c495354'));
    assert.equal(r?.ok, false);
  });
});

describe('v1 frame encoding', () => {
  it('prefixes the body length, big-endian', () => {
    assert.equal(Buffer.concat(encodeV1Text('OK')).toString('hex'), '000000024f4b');
    assert.equal(Buffer.concat(encodeV1Frame([Buffer.from('a'), Buffer.alloc(0), Buffer.from('bc')])).toString('hex'), '00000003616263');
    assert.equal(v1Keepalive.toString('hex'), '00000000');
  });
});

describe('isV1Start', () => {
  it('tells a v1 length prefix from the Wire v2 magic', () => {
    assert.equal(isV1Start(hex('00000004 4c495354')), true);
    assert.equal(isV1Start(hex('01000000')), true, 'a body of exactly 16 MiB');
    assert.equal(isV1Start(hex('01000001')), false);
    assert.equal(isV1Start(Buffer.from('CRS2')), false);
    assert.equal(isV1Start(Buffer.from('C')), false, 'one byte of CRS2 is enough');
    assert.equal(isV1Start(hex('0000')), null, 'a v1 length not yet whole');
    assert.equal(isV1Start(Buffer.alloc(0)), null);
    assert.equal(isV1Start(hex('ffffffff')), false);
  });
});
