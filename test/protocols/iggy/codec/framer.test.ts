import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { IggyFramer, encodeRequestHeader, type FramerResult } from '../../../../src/protocols/iggy/codec/index.js';

function frame(body: Buffer, client = 1n): Buffer {
  const header = encodeRequestHeader({ size: 256 + body.length, client, request: 1n, operation: 2, session: 0n, commandCode: 1 });
  return Buffer.concat([header, body]);
}

function collect(chunks: Buffer[], max?: number): FramerResult[] {
  const framer = new IggyFramer(max === undefined ? {} : { frameBytesMax: max });
  const out: FramerResult[] = [];
  for (const c of chunks) out.push(...framer.push(c));
  return out;
}

function asBytes(results: FramerResult[]): string[] {
  return results.map((r) => (r.ok ? Buffer.concat([r.frame.header, r.frame.body]).toString('hex') : `error:${r.reason}`));
}

describe('IggyFramer', () => {
  const stream = Buffer.concat([frame(Buffer.alloc(0)), frame(Buffer.from('hello')), frame(Buffer.alloc(1000, 7), 9n)]);
  const expected = [frame(Buffer.alloc(0)), frame(Buffer.from('hello')), frame(Buffer.alloc(1000, 7), 9n)].map((b) => b.toString('hex'));

  it('yields whole frames as views of the chunk when nothing straddles', () => {
    const results = collect([stream]);
    assert.deepEqual(asBytes(results), expected);
    const first = results[1]!;
    assert.ok(first.ok);
    assert.equal(first.frame.body.buffer, stream.buffer);
  });

  it('gives the same frames fed one byte at a time', () => {
    const chunks = [...stream].map((b) => Buffer.from([b]));
    assert.deepEqual(asBytes(collect(chunks)), expected);
  });

  it('gives the same frames for any split (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: stream.length }), { maxLength: 12 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks: Buffer[] = [];
        let prev = 0;
        for (const p of [...points, stream.length]) {
          chunks.push(stream.subarray(prev, p));
          prev = p;
        }
        assert.deepEqual(asBytes(collect(chunks)), expected);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a declared size above the maximum before allocating, with the header', () => {
    const huge = encodeRequestHeader({ size: 0xffff_ffff, client: 5n, request: 1n, operation: 2, session: 0n });
    const results = collect([huge.subarray(0, 100), huge.subarray(100)], 1 << 20);
    assert.equal(results.length, 1);
    const r = results[0]!;
    assert.ok(!r.ok);
    assert.match(r.reason, /exceeds the maximum/);
    assert.equal(r.header.length, 256);
  });

  it('refuses a size below the header and stops', () => {
    const bad = encodeRequestHeader({ size: 10, client: 5n, request: 1n, operation: 2, session: 0n });
    const framer = new IggyFramer();
    const results = framer.push(Buffer.concat([bad, frame(Buffer.alloc(0))]));
    assert.equal(results.length, 1);
    assert.ok(!results[0]!.ok);
    assert.ok(framer.broken);
    assert.deepEqual(framer.push(frame(Buffer.alloc(0))), []);
  });

  it('reports buffered bytes of an incomplete frame', () => {
    const framer = new IggyFramer();
    assert.deepEqual(framer.push(stream.subarray(0, 300)), [
      { ok: true, frame: { header: stream.subarray(0, 256), body: stream.subarray(256, 256) } },
    ]);
    assert.equal(framer.bufferedBytes, 44);
  });
});

describe('IggyFramer frame leases', () => {
  class CountingLease {
    released = 0;
    readonly buf: Buffer;
    constructor(size: number) {
      this.buf = Buffer.alloc(size, 0xee);
    }
    buffer(length: number): Buffer {
      return this.buf.subarray(0, length);
    }
    release(): void {
      this.released++;
    }
  }

  for (const split of [100, 300]) {
    it(`leases a straddling frame with its whole header in view (first chunk of ${split} bytes), and releases it once`, () => {
      const leases: CountingLease[] = [];
      const seenClients: bigint[] = [];
      const framer = new IggyFramer({
        frameLease: (size, header) => {
          seenClients.push(header.readBigUInt64LE(128) + (header.readBigUInt64LE(136) << 64n));
          const lease = new CountingLease(size);
          leases.push(lease);
          return lease;
        },
      });
      const bytes = frame(Buffer.alloc(2000, 5), 77n);
      const results = [...framer.push(bytes.subarray(0, split)), ...framer.push(bytes.subarray(split))];
      assert.equal(results.length, 1);
      const r = results[0]!;
      assert.ok(r.ok);
      assert.deepEqual(Buffer.concat([r.frame.header, r.frame.body]), bytes);
      assert.equal(leases.length, 1);
      assert.equal(r.frame.header.buffer, leases[0]!.buf.buffer, 'assembled in the leased buffer');
      assert.deepEqual(seenClients, [77n], 'the lease function saw the complete header');
      framer.release(r.frame);
      framer.release(r.frame);
      assert.equal(leases[0]!.released, 1);
    });
  }

  it('releases the lease of a frame still being assembled on dispose', () => {
    const lease = new CountingLease(5000);
    const framer = new IggyFramer({ frameLease: () => lease });
    assert.deepEqual(framer.push(frame(Buffer.alloc(4000, 1)).subarray(0, 600)), []);
    framer.dispose();
    assert.equal(lease.released, 1);
  });
});

describe('IggyFramer frameAllocator', () => {
  it('assembles a straddling frame that is not leased in the allocator\'s buffer, and never a frame inside one chunk', () => {
    const sizes: number[] = [];
    const made: Buffer[] = [];
    const framer = new IggyFramer({
      frameAllocator: (size) => {
        sizes.push(size);
        made.push(Buffer.alloc(size));
        return made.at(-1)!;
      },
    });
    const whole = frame(Buffer.from('small'));
    const bytes = frame(Buffer.alloc(3000, 9), 4n);
    const results = [...framer.push(Buffer.concat([whole, bytes.subarray(0, 700)])), ...framer.push(bytes.subarray(700))];
    assert.deepEqual(asBytes(results), [whole.toString('hex'), bytes.toString('hex')]);
    assert.deepEqual(sizes, [bytes.length], 'called once, for the straddling frame only');
    const r = results[1]!;
    assert.ok(r.ok);
    assert.equal(r.frame.header.buffer, made[0]!.buffer, 'assembled in the allocated buffer');
  });
});

describe('IggyFramer with reused chunks', () => {
  it('copies frames that lie inside a chunk, so overwriting the chunk leaves them intact', () => {
    const framer = new IggyFramer({ reusedChunks: true });
    const bytes = Buffer.concat([frame(Buffer.from('one')), frame(Buffer.from('two'), 5n)]);
    const chunk = Buffer.from(bytes);
    const results = framer.push(chunk);
    chunk.fill(0);
    assert.deepEqual(asBytes(results), [frame(Buffer.from('one')).toString('hex'), frame(Buffer.from('two'), 5n).toString('hex')]);
  });
});

describe('IggyFramer direct reads', () => {
  /**
   * Feeds `stream` the way a socket with an `onread` buffer function does: each read of up to
   * `sizes[i]` bytes lands in the framer's directTarget when it offers one, else in a reused
   * chunk buffer that is pushed (and overwritten by the next read).
   */
  function feedDirect(stream: Buffer, sizes: number[], minBytes: number): { results: FramerResult[]; directBytes: number } {
    const framer = new IggyFramer({ reusedChunks: true });
    const scratch = Buffer.alloc(4096);
    const results: FramerResult[] = [];
    let at = 0;
    let directBytes = 0;
    for (let i = 0; at < stream.length; i++) {
      const target = framer.directTarget(minBytes);
      const into = target ?? scratch;
      const n = Math.min(sizes[i % sizes.length]!, into.length, stream.length - at);
      stream.copy(into, 0, at, at + n);
      at += n;
      if (target !== null) {
        directBytes += n;
        results.push(...framer.pushDirect(target, n));
      } else {
        results.push(...framer.push(scratch.subarray(0, n)));
        scratch.fill(0xee);
      }
    }
    return { results, directBytes };
  }

  it('gives the same frames as push for any read sizes, reading the rest of large frames in place (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 9000 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 5000 }),
        (bodySizes, sizes, minBytes) => {
          const frames = bodySizes.map((n, i) => frame(Buffer.alloc(n, i + 1), BigInt(i + 1)));
          const { results, directBytes } = feedDirect(Buffer.concat(frames), sizes, minBytes);
          assert.deepEqual(asBytes(results), frames.map((f) => f.toString('hex')));
          // Before a frame's buffer exists, at most 255 header bytes wait in the stash and one
          // chunk (4,096 bytes here) completes the header; a frame with minBytes more than that
          // is (partly) read in place.
          if (bodySizes.some((n) => n + 256 > 255 + 4096 + minBytes)) assert.ok(directBytes > 0);
        },
      ),
    );
  });

  it('offers no target without a frame in progress or when its rest is under minBytes', () => {
    const framer = new IggyFramer({ reusedChunks: true });
    assert.equal(framer.directTarget(1), null);
    const f = frame(Buffer.alloc(10_000, 3));
    framer.push(f.subarray(0, 1000));
    // 256 + 10,000 bytes, 1,000 in: 9,256 to go.
    assert.equal(framer.directTarget(9257), null);
    const target = framer.directTarget(9256)!;
    assert.equal(target.length, 9256);
    assert.throws(() => framer.pushDirect(target, target.length + 1), RangeError);
  });

  it('ignores bytes read into the target of a frame dropped meanwhile', () => {
    const framer = new IggyFramer({ reusedChunks: true });
    const f = frame(Buffer.alloc(10_000, 3));
    framer.push(f.subarray(0, 1000));
    const stale = framer.directTarget(1)!;
    framer.dispose();
    assert.deepEqual(framer.pushDirect(stale, 100), []);
    // The framer goes on with the next frame as usual.
    assert.deepEqual(asBytes(framer.push(frame(Buffer.from('x')))), [frame(Buffer.from('x')).toString('hex')]);
  });
});
