// Felix codec fuzzing: seeded random mutations of valid frames (bit flips, byte overwrites,
// insertions, deletions, truncations, length and flag rewrites, JSON text edits), a bounded number
// per seed. The framer and decodeFrame never throw and always answer a Decoded result with a
// reason; whatever decodes re-encodes to something that decodes to the same value. A failure
// prints the seed and the mutated frame's hex to reproduce it.

import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FelixFramer, decodeFrame, encodeMessageFrame, payloadBytesMaxDefault } from '../../../../src/protocols/felix/codec/index.js';
import { vectors } from '../../../vectors/felix/build.js';
import { readHex, reencode } from './vector-helpers.js';

/** mulberry32: a small seeded generator. */
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

const sharedDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', '..', 'shared', 'vectors', 'felix');

/** The corpus: every positive vector of ours, the public ones when present, and a few more. */
function corpus(): Buffer[] {
  const out = Object.entries(vectors())
    .filter(([name]) => !name.startsWith('bad_'))
    .map(([, v]) => v.bytes);
  if (existsSync(sharedDir)) for (const f of readdirSync(sharedDir).filter((n) => n.endsWith('.hex'))) out.push(readHex(path.join(sharedDir, f)));
  out.push(encodeMessageFrame({ type: 'group_records', records: [{ offset: 1n, payload: Buffer.from('xyz'), attempts: 3 }], requestId: 2n }));
  return out;
}

const jsonBits = ['"', '\\', '{', '}', '[', ']', ',', ':', '0', '-1', '1.5', 'null', 'true', '"x"', '\\u00', '\\ud800', '18446744073709551616', ' '];

function mutate(frame: Buffer, next: () => number): Buffer {
  const pick = (n: number): number => Math.floor(next() * n);
  const b = Buffer.from(frame);
  switch (pick(8)) {
    case 0: {
      const i = pick(b.length);
      b[i] = b[i]! ^ (1 << pick(8));
      return b;
    }
    case 1: {
      for (let k = 0; k < 1 + pick(4); k++) b[pick(b.length)] = pick(256);
      return b;
    }
    case 2: {
      const i = pick(b.length + 1);
      return Buffer.concat([b.subarray(0, i), Buffer.from(Array.from({ length: 1 + pick(8) }, () => pick(256))), b.subarray(i)]);
    }
    case 3: {
      const i = pick(b.length);
      return Buffer.concat([b.subarray(0, i), b.subarray(i + 1 + pick(8))]);
    }
    case 4:
      return b.subarray(0, pick(b.length));
    case 5: {
      // A payload edit with the length kept true, so the payload decoder is what is exercised.
      const body = b.subarray(12);
      const i = pick(body.length + 1);
      const bit = Buffer.from(jsonBits[pick(jsonBits.length)]!);
      const edited = Buffer.concat([body.subarray(0, i), bit, body.subarray(i + (next() < 0.5 ? 0 : 1 + pick(4)))]);
      const h = Buffer.from(b.subarray(0, 12));
      h.writeUInt32BE(edited.length, 8);
      return Buffer.concat([h, edited]);
    }
    case 6:
      if (b.length >= 12) b.writeUInt32BE(pick(2) === 0 ? pick(b.length + 16) : 0xffff_ffff - pick(4), 8);
      return b;
    default:
      if (b.length >= 12) b.writeUInt16BE(pick(2) === 0 ? 1 << pick(16) : pick(0x100), 6);
      return b;
  }
}

/** Feeds one frame's bytes to a fresh framer in random pieces and decodes what comes out. */
function exercise(bytes: Buffer, next: () => number): { decoded: number; refused: number } {
  const framer = new FelixFramer({ payloadBytesMax: next() < 0.5 ? 65_536 : payloadBytesMaxDefault });
  let decoded = 0;
  let refused = 0;
  let off = 0;
  while (off < bytes.length) {
    const n = 1 + Math.floor(next() * 40);
    for (const r of framer.push(bytes.subarray(off, off + n))) {
      if (!r.ok) {
        assert.equal(typeof r.reason, 'string');
        assert.ok(r.reason.length > 0);
        refused++;
        continue;
      }
      const d = decodeFrame(r.frame.header.flags, r.frame.payload);
      if (!d.ok) {
        assert.ok(d.reason.length > 0);
        assert.equal(typeof d.flagsRefused, 'boolean');
        refused++;
        continue;
      }
      decoded++;
      const again = reencode(d.value);
      const d2 = decodeFrame(again.readUInt16BE(6), again.subarray(12));
      assert.ok(d2.ok, d2.ok ? '' : d2.reason);
      assert.deepEqual(d2.value, d.value);
    }
    off += n;
  }
  return { decoded, refused };
}

describe('felix codec fuzz', () => {
  const frames = corpus();
  const seeds = 20;
  const perSeed = 400;

  it(`${seeds} seeds × ${perSeed} mutations: never throws, always a Decoded result`, () => {
    let decoded = 0;
    let refused = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const next = rng(seed);
      for (let i = 0; i < perSeed; i++) {
        const original = frames[Math.floor(next() * frames.length)]!;
        const mutated = mutate(original, next);
        try {
          const r = exercise(mutated, next);
          decoded += r.decoded;
          refused += r.refused;
        } catch (e) {
          assert.fail(`seed ${seed} mutation ${i}: ${(e as Error).message}\nframe ${mutated.toString('hex')}`);
        }
      }
    }
    // Both outcomes happen: the mutations reach the decoders, not only the header checks.
    assert.ok(decoded > 100, `${decoded} decoded`);
    assert.ok(refused > 1000, `${refused} refused`);
  });
});
