// Footguns banned from every protocol codec (STYLE.md §15): no `any`, no async decoders, no I/O
// imports, no per-chunk Buffer.concat in a framer. What a codec may import is test/layers.test.ts's.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const protocolsRoot = fileURLToPath(new URL('../../src/protocols/', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const codecs = readdirSync(protocolsRoot)
  .filter((name) => existsSync(join(protocolsRoot, name, 'codec')))
  .sort();

describe('codec hygiene', () => {
  it('covers every protocol with a codec', () => {
    assert.deepEqual(codecs.filter((c) => c === 'kafka' || c === 'iggy' || c === 'cursus'), ['cursus', 'iggy', 'kafka']);
  });
  for (const protocol of codecs) {
    const root = join(protocolsRoot, protocol, 'codec/');
    for (const file of files(root)) {
      it(`${protocol}: ${file.slice(root.length)}`, () => {
        const src = readFileSync(file, 'utf8');
        assert.doesNotMatch(src, /:\s*any\b|as any\b|<any>/, 'no any');
        assert.doesNotMatch(src, /\basync\b|\bawait\b/, 'no async code');
        assert.doesNotMatch(src, /from 'node:(net|fs|fs\/promises|dgram|http|https|tls)'/, 'no I/O imports');
        if (file.endsWith('framer.ts')) assert.doesNotMatch(src, /Buffer\.concat/, 'framer copies once per frame');
      });
    }
  }
});
