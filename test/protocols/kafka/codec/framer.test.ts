import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Framer } from '../../../../src/protocols/kafka/codec/framer.js';

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
}

function feed(framer: Framer, chunks: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (const c of chunks) {
    const r = framer.push(c);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    out.push(...r.frames);
  }
  return out;
}

const bodies = [Buffer.from('a'), Buffer.alloc(0), Buffer.from('hello world'), Buffer.alloc(300, 9)];
const stream = Buffer.concat(bodies.map(frame));

describe('Framer', () => {
  it('returns frames inside one chunk as views (no copy)', () => {
    const framer = new Framer({ frameBytesMax: 1024 });
    const r = framer.push(stream);
    assert.ok(r.ok);
    assert.deepEqual(r.frames, bodies);
    for (const f of r.frames) if (f.length > 0) assert.equal(f.buffer, stream.buffer);
    assert.equal(framer.bufferedBytes, 0);
  });

  it('yields the same frames fed one byte at a time', () => {
    const framer = new Framer({ frameBytesMax: 1024 });
    const chunks = [...stream].map((b) => Buffer.from([b]));
    assert.deepEqual(feed(framer, chunks), bodies);
  });

  it('yields the same frames for any split of the stream (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (raw, cuts) => {
          const expected = raw.map((b) => Buffer.from(b));
          const all = Buffer.concat(expected.map(frame));
          const points = [...new Set(cuts.map((c) => (all.length === 0 ? 0 : c % all.length)))].sort((a, b) => a - b);
          const chunks: Buffer[] = [];
          let prev = 0;
          for (const p of points) {
            chunks.push(all.subarray(prev, p));
            prev = p;
          }
          chunks.push(all.subarray(prev));
          assert.deepEqual(feed(new Framer({ frameBytesMax: 1024 }), chunks), expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects an oversized frame before allocating, and stays failed', () => {
    const framer = new Framer({ frameBytesMax: 100 });
    const r = framer.push(Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2, 3]));
    assert.equal(r.ok, false);
    assert.equal(framer.bufferedBytes, 0);
    const again = framer.push(frame(Buffer.from('x')));
    assert.equal(again.ok, false);
  });

  it('rejects a negative size split across chunks', () => {
    const framer = new Framer({ frameBytesMax: 100 });
    assert.ok(framer.push(Buffer.from([0xff, 0xff])).ok);
    const r = framer.push(Buffer.from([0xff, 0xfe]));
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.reason, /negative/);
  });

  it('returns the frames before a bad size in the same chunk', () => {
    const framer = new Framer({ frameBytesMax: 10 });
    const r = framer.push(Buffer.concat([frame(Buffer.from('ok')), frame(Buffer.alloc(11))]));
    assert.equal(r.ok, false);
    assert.deepEqual(r.frames, [Buffer.from('ok')]);
  });
});

describe('Framer frame leases', () => {
  class CountingLease {
    released = 0;
    readonly buf: Buffer;
    constructor(size: number) {
      this.buf = Buffer.alloc(size + 100, 0xee);
    }
    buffer(length: number): Buffer {
      return this.buf.subarray(0, length);
    }
    release(): void {
      this.released++;
    }
  }

  it('assembles straddling frames the lease function accepts in leased buffers, released once each', () => {
    const leases: CountingLease[] = [];
    const heads: number[] = [];
    const framer = new Framer({
      frameBytesMax: 1 << 20,
      frameLease: (size, head) => {
        heads.push(head.length);
        if (head.length === 0 || head[0] !== 0x01) return null;
        const lease = new CountingLease(size);
        leases.push(lease);
        return lease;
      },
    });
    const pooled = Buffer.alloc(1000, 0x01);
    const plain = Buffer.alloc(1000, 0x02);
    const inOne = Buffer.alloc(10, 0x01);
    const bytes = Buffer.concat([frame(pooled), frame(plain), frame(inOne)]);
    const frames = feed(framer, [bytes.subarray(0, 300), bytes.subarray(300, 1500), bytes.subarray(1500)]);
    assert.deepEqual(frames, [pooled, plain, inOne]);
    assert.equal(leases.length, 1, 'only the accepted straddling frame is leased; a frame inside one chunk is a view');
    assert.equal(frames[0]!.buffer, leases[0]!.buf.buffer, 'the pooled frame lives in the lease buffer');
    assert.deepEqual(heads, [296, 492], 'the lease function sees the body bytes that have arrived');
    framer.release(frames[1]!);
    framer.release(frames[2]!);
    assert.equal(leases[0]!.released, 0, 'releasing other frames does not touch the lease');
    framer.release(frames[0]!);
    framer.release(frames[0]!);
    assert.equal(leases[0]!.released, 1, 'released once, however often it is handed back');
  });

  it('dispose releases the lease of a frame still being assembled', () => {
    const lease = new CountingLease(5000);
    const framer = new Framer({ frameBytesMax: 1 << 20, frameLease: () => lease });
    const r = framer.push(frame(Buffer.alloc(5000, 7)).subarray(0, 100));
    assert.deepEqual(r.frames, []);
    framer.dispose();
    assert.equal(lease.released, 1);
  });
});

describe('Framer with reused chunks', () => {
  it('copies frames that lie inside a chunk, so overwriting the chunk leaves them intact', () => {
    const framer = new Framer({ frameBytesMax: 1 << 20, reusedChunks: true });
    const chunk = Buffer.concat([frame(Buffer.from('first')), frame(Buffer.from('second'))]);
    const frames = feed(framer, [chunk]);
    chunk.fill(0);
    assert.deepEqual(frames, [Buffer.from('first'), Buffer.from('second')]);
  });
});
