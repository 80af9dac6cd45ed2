import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BufferLease } from '../../../../src/base/buffer-pool.js';
import { RequestByteBudget } from '../../../../src/base/request-bytes.js';
import { Compression, CursusFramer, FrameKind, encodeFrame, openFrame, type FramerResult } from '../../../../src/protocols/cursus/codec/index.js';

function frameBytes(requestId: number, payload: Buffer, compression: Compression = Compression.none): Buffer {
  return Buffer.concat(encodeFrame({ kind: FrameKind.request, command: 3, requestId: BigInt(requestId), compression }, [payload]));
}

function payloads(results: FramerResult[]): string[] {
  return results.map((r) => {
    assert.ok(r.ok, r.ok ? '' : r.reason);
    const opened = openFrame(r.frame.header, r.frame.payload);
    assert.ok(opened.ok);
    return `${r.frame.header.requestId}:${opened.value.toString()}`;
  });
}

describe('CursusFramer', () => {
  const stream = Buffer.concat([frameBytes(1, Buffer.from('one')), frameBytes(2, Buffer.alloc(0)), frameBytes(3, Buffer.from('three'.repeat(100)), Compression.gzip), frameBytes(4, Buffer.from('four'))]);
  const expected = ['1:one', '2:', `3:${'three'.repeat(100)}`, '4:four'];

  it('hands out frames inside one chunk as views of it', () => {
    const results = new CursusFramer().push(stream);
    assert.deepEqual(payloads(results), expected);
    const first = results[0]!;
    assert.ok(first.ok);
    assert.equal(first.frame.payload.buffer, stream.buffer);
  });

  it('gives the same frames fed one byte at a time', () => {
    const framer = new CursusFramer();
    const out: FramerResult[] = [];
    for (let i = 0; i < stream.length; i++) out.push(...framer.push(stream.subarray(i, i + 1)));
    assert.deepEqual(payloads(out), expected);
    assert.equal(framer.bufferedBytes, 0);
  });

  it('gives the same frames for any split of the stream', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 12 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const framer = new CursusFramer({ reusedChunks: true });
        const out: FramerResult[] = [];
        let prev = 0;
        for (const p of [...points, stream.length]) {
          out.push(...framer.push(Buffer.from(stream.subarray(prev, p))));
          prev = p;
        }
        assert.deepEqual(payloads(out), expected);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses an oversized frame from its header, before buffering any payload', () => {
    const framer = new CursusFramer({ encodedBytesMax: 16 });
    const big = frameBytes(1, Buffer.alloc(17));
    const results = framer.push(big.subarray(0, 32));
    assert.equal(results.length, 1);
    assert.equal(results[0]!.ok, false);
    assert.equal(framer.broken, true);
    assert.equal(framer.bufferedBytes, 0);
    assert.deepEqual(framer.push(big.subarray(32)), []);
  });

  it('stops at the first bad header and hands out the frames before it', () => {
    const bad = Buffer.from(frameBytes(2, Buffer.from('x')));
    bad[7] = 0x80;
    const results = new CursusFramer().push(Buffer.concat([frameBytes(1, Buffer.from('ok')), bad, frameBytes(3, Buffer.from('never'))]));
    assert.equal(results.length, 2);
    assert.ok(results[0]!.ok);
    assert.equal(results[1]!.ok, false);
  });

  it('assembles a straddling frame in a leased buffer and returns it on release', () => {
    const leases: BufferLease[] = [];
    const framer = new CursusFramer({
      frameLease: (size) => {
        if (size < 64 * 1024) return null;
        const lease = new BufferLease();
        leases.push(lease);
        return lease;
      },
    });
    const big = frameBytes(9, Buffer.alloc(100_000, 7));
    assert.deepEqual(framer.push(big.subarray(0, 1000)), []);
    const results = framer.push(big.subarray(1000));
    assert.equal(results.length, 1);
    const r = results[0]!;
    assert.ok(r.ok);
    assert.equal(leases.length, 1);
    assert.equal(r.frame.payload.length, 100_000);
    let released = false;
    leases[0]!.onRelease(() => (released = true));
    framer.release(r.frame);
    assert.equal(released, true);
  });

  it('takes large frames from the budget until released, and skips one that does not fit, however the bytes are split', () => {
    const big = (id: number) => frameBytes(id, Buffer.alloc(1000, id));
    const input = Buffer.concat([big(1), frameBytes(2, Buffer.from('small')), big(3), frameBytes(4, Buffer.from('next'))]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: input.length }), { maxLength: 12 }), (cuts) => {
        const budget = new RequestByteBudget(1500);
        const framer = new CursusFramer({ budget, budgetedBytesMin: 1000 });
        const results: FramerResult[] = [];
        let at = 0;
        for (const cut of [...cuts.sort((a, b) => a - b), input.length]) {
          results.push(...framer.push(input.subarray(at, Math.max(at, cut))));
          at = Math.max(at, cut);
        }
        const frames = results.map((r) => (assert.ok(r.ok), r.frame));
        assert.deepEqual(frames.map((f) => [f.header.requestId, f.refused === true]), [[1n, false], [2n, false], [3n, true], [4n, false]]);
        assert.equal(frames[2]!.payload.length, 0);
        assert.equal(budget.heldBytes, 1032, 'the first frame is held until released');
        for (const f of frames) framer.release(f);
        assert.equal(budget.heldBytes, 0);
      }),
    );
  });

  it('gives back the budget of a frame dropped unfinished', () => {
    const budget = new RequestByteBudget(10_000);
    const framer = new CursusFramer({ budget, budgetedBytesMin: 1000 });
    assert.deepEqual(framer.push(frameBytes(1, Buffer.alloc(2000)).subarray(0, 500)), []);
    assert.equal(budget.heldBytes, 2032);
    framer.dispose();
    assert.equal(budget.heldBytes, 0);
  });

  it('counts what a compressed frame inflates to: a small gzip frame of a large payload takes its decoded length too', () => {
    const budget = new RequestByteBudget(100_000);
    const framer = new CursusFramer({ budget, budgetedBytesMin: 1000 });
    const bomb = frameBytes(1, Buffer.alloc(200_000), Compression.gzip);
    assert.ok(bomb.length < 1000);
    const [refused] = framer.push(bomb);
    assert.ok(refused!.ok && refused!.frame.refused === true, 'a frame inflating past the budget is refused');
    const fits = frameBytes(2, Buffer.alloc(50_000), Compression.gzip);
    const [taken] = framer.push(fits);
    assert.ok(taken!.ok && taken!.frame.refused !== true);
    assert.equal(budget.heldBytes, fits.length + 50_000);
    framer.release(taken!.frame);
    assert.equal(budget.heldBytes, 0);
  });
});
