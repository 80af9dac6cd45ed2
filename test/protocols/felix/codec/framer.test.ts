// The Felix frame header, flag shapes and the incremental framer: frames fed whole, byte by byte
// and split at random cut the same; the header alone decides a refusal (nothing buffered first);
// the pre-auth limit holds until it is raised.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FelixFramer,
  Flag,
  decodeFrameHeader,
  encodeMessageFrame,
  encodePublishBatchFrame,
  flagsOf,
  frameShape,
  knownFlags,
  preAuthPayloadBytesMax,
  type FramerResult,
} from '../../../../src/protocols/felix/codec/index.js';

function frames(): Buffer[] {
  return [
    encodeMessageFrame({ type: 'auth', tenantId: 't1', token: 'tok', clientFlags: 0xff }),
    encodePublishBatchFrame({ acked: { requestId: 3n, ackMode: 'per_batch' }, key: Buffer.from('k'), tenantId: 't1', namespace: 'default', stream: 's', payloads: [Buffer.alloc(700, 1), Buffer.from('x')] }),
    encodeMessageFrame({ type: 'ok' }),
  ];
}

function payloadsOf(results: FramerResult[]): string[] {
  return results.map((r) => {
    assert.ok(r.ok, r.ok ? '' : r.reason);
    return r.frame.payload.toString('hex');
  });
}

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('felix frame header', () => {
  it('reads magic, version, flags and length', () => {
    const b = encodeMessageFrame({ type: 'ok' });
    assert.deepEqual(decodeFrameHeader(b, 0, { payloadBytesMax: 100 }), { ok: true, value: { flags: 0, length: 13 } });
  });

  it('refuses a bad magic, a bad version, a short header and an oversize length, with the reason', () => {
    const b = encodeMessageFrame({ type: 'ok' });
    const badMagic = Buffer.from(b);
    badMagic[3] = 0x32;
    const badVersion = Buffer.from(b);
    badVersion.writeUInt16BE(2, 4);
    const cases: Array<[Buffer, RegExp]> = [
      [badMagic, /invalid magic/],
      [badVersion, /unsupported version 2/],
      [b.subarray(0, 11), /incomplete frame/],
      [b, /frame too large: 13 bytes exceeds 12/],
    ];
    for (const [bytes, reason] of cases) {
      const r = decodeFrameHeader(bytes, 0, { payloadBytesMax: bytes === b ? 12 : 100 });
      assert.ok(!r.ok);
      assert.match(r.reason, reason);
    }
  });
});

describe('felix flag shapes', () => {
  it('accepts every valid combination and maps it back to its flags', () => {
    const valid = [0, 0x01, 0x09, 0x41, 0x49, 0x02, 0x22, 0x04, 0x24, 0x10, 0x90];
    for (const flags of valid) {
      const s = frameShape(flags);
      assert.ok(s.ok, `0x${flags.toString(16)}`);
      assert.equal(flagsOf(s.value), flags);
    }
  });

  it('refuses every other combination of the 16 bits', () => {
    const valid = new Set([0, 0x01, 0x09, 0x41, 0x49, 0x02, 0x22, 0x04, 0x24, 0x10, 0x90]);
    for (let flags = 0; flags <= 0xffff; flags++) {
      const s = frameShape(flags);
      assert.equal(s.ok, valid.has(flags), `0x${flags.toString(16)}`);
      if (!s.ok) assert.ok(s.reason.length > 0);
    }
  });

  it('names unknown bits rather than masking them', () => {
    const s = frameShape(Flag.binaryPublishBatch | 0x0100);
    assert.ok(!s.ok);
    assert.match(s.reason, /unknown flag bits 0x0100/);
    assert.equal(knownFlags, 0x00ff);
  });
});

describe('felix framer', () => {
  it('cuts whole frames from one chunk as views of it', () => {
    const all = Buffer.concat(frames());
    const out = new FelixFramer({ payloadBytesMax: 1 << 20 }).push(all);
    assert.deepEqual(
      payloadsOf(out),
      frames().map((f) => f.subarray(12).toString('hex')),
    );
    const first = out[0]!;
    assert.ok(first.ok && first.frame.payload.buffer === all.buffer, 'a view, not a copy');
  });

  it('cuts the same frames fed one byte at a time', () => {
    const all = Buffer.concat(frames());
    const framer = new FelixFramer({ payloadBytesMax: 1 << 20 });
    const out: FramerResult[] = [];
    for (let i = 0; i < all.length; i++) out.push(...framer.push(all.subarray(i, i + 1)));
    assert.deepEqual(payloadsOf(out), frames().map((f) => f.subarray(12).toString('hex')));
    assert.ok(framer.atFrameBoundary);
  });

  it('cuts the same frames from random splits (seeded)', () => {
    const all = Buffer.concat(frames());
    const want = frames().map((f) => f.subarray(12).toString('hex'));
    for (let seed = 1; seed <= 200; seed++) {
      const next = rng(seed);
      const framer = new FelixFramer({ payloadBytesMax: 1 << 20, reusedChunks: seed % 2 === 0 });
      const out: FramerResult[] = [];
      let off = 0;
      while (off < all.length) {
        const n = 1 + Math.floor(next() * 64);
        out.push(...framer.push(Buffer.from(all.subarray(off, off + n))));
        off += n;
      }
      assert.deepEqual(payloadsOf(out), want, `seed ${seed}`);
    }
  });

  it('refuses a header over the pre-auth limit before buffering its payload, and stops', () => {
    const framer = new FelixFramer();
    assert.equal(framer.limits.payloadBytesMax, preAuthPayloadBytesMax);
    const header = Buffer.from('464c58310001000000010001', 'hex');
    const out = framer.push(header);
    assert.equal(out.length, 1);
    assert.ok(!out[0]!.ok);
    assert.match(out[0]!.ok ? '' : out[0]!.reason, /frame too large: 65537 bytes exceeds 65536/);
    assert.equal(framer.bufferedBytes, 0);
    assert.ok(framer.broken);
    assert.deepEqual(framer.push(encodeMessageFrame({ type: 'ok' })), [], 'nothing after a bad header');
  });

  it('takes a larger frame once the limit is raised (after auth)', () => {
    const big = encodePublishBatchFrame({ acked: null, key: null, tenantId: 't', namespace: 'n', stream: 's', payloads: [Buffer.alloc(70_000)] });
    const before = new FelixFramer().push(big);
    assert.ok(!before[0]!.ok);
    const framer = new FelixFramer();
    framer.limits = { payloadBytesMax: 16 << 20 };
    const after = framer.push(big);
    assert.ok(after[0]!.ok);
  });

  it('hands a frame with unknown flags out whole: the flags are decodeFrame\'s to refuse', () => {
    const f = encodeMessageFrame({ type: 'ok' });
    f.writeUInt16BE(0x8000, 6);
    const out = new FelixFramer().push(Buffer.concat([f, encodeMessageFrame({ type: 'ok' })]));
    assert.equal(out.length, 2);
    assert.ok(out.every((r) => r.ok));
  });
});
