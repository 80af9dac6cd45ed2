// writeChunks (src/protocols/felix/write-chunks.ts): a frame's chunks reach a stream's writev in
// one call, so the QUIC stream under it sends them together rather than the header in a packet of
// its own; the same when a write is already in flight; and in order, nothing lost.

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { writeChunks } from '../../../src/protocols/felix/write-chunks.js';

/** A Writable like quic.ts's: writev only, each call recorded; its callbacks run when `settle` is called. */
function recorder(): { out: Writable; calls: string[][]; settle(): void } {
  const calls: string[][] = [];
  let pending: Array<() => void> = [];
  const out = new Writable({
    writev(chunks, cb) {
      calls.push(chunks.map((c) => (c.chunk as Buffer).toString()));
      pending.push(() => cb());
    },
  });
  return {
    out,
    calls,
    settle() {
      const p = pending;
      pending = [];
      for (const f of p) f();
    },
  };
}

describe('writeChunks', () => {
  it('hands a frame to writev in one call', () => {
    const r = recorder();
    writeChunks(r.out, [Buffer.from('head'), Buffer.from('body')]);
    assert.deepEqual(r.calls, [['head', 'body']]);
    // Written one by one, the header would have gone alone.
    const plain = recorder();
    for (const c of ['head', 'body']) plain.out.write(Buffer.from(c));
    assert.deepEqual(plain.calls, [['head']]);
  });

  it('keeps frames whole and in order behind a write in flight', () => {
    const r = recorder();
    writeChunks(r.out, [Buffer.from('h1'), Buffer.from('b1')]);
    writeChunks(r.out, [Buffer.from('h2'), Buffer.from('b2')]);
    writeChunks(r.out, [Buffer.from('h3'), Buffer.from('b3')]);
    assert.deepEqual(r.calls, [['h1', 'b1']]);
    r.settle();
    assert.deepEqual(r.calls, [['h1', 'b1'], ['h2', 'b2', 'h3', 'b3']]);
  });
});
