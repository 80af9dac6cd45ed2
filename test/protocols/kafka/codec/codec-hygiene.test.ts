// Footguns banned from the codec (STYLE.md §15): no `any`, no async decoders, no I/O or storage
// imports, no per-chunk Buffer.concat in the framer.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = new URL('../../../../src/protocols/kafka/codec/', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('codec hygiene', () => {
  for (const file of files(root)) {
    it(file.slice(root.length), () => {
      const src = readFileSync(file, 'utf8');
      assert.doesNotMatch(src, /:\s*any\b|as any\b|<any>/, 'no any');
      assert.doesNotMatch(src, /\basync\b|\bawait\b/, 'no async code');
      assert.doesNotMatch(src, /from 'node:(net|fs|fs\/promises|dgram|http|https|tls)'/, 'no I/O imports');
      assert.doesNotMatch(src, /from '\.\.\/\.\.\/\.\.\/(core|server|log\/(?!types))/, 'only the log contract types');
      if (file.endsWith('framer.ts')) assert.doesNotMatch(src, /Buffer\.concat/, 'framer copies once per frame');
    });
  }
});
