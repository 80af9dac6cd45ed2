// Loads the public Iggy golden vectors. The shared directory sits beside the repository clone
// (/work/main -> /work/shared, and the same in CI): repoRoot/../shared/vectors/iggy.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** test/protocols/iggy/codec -> repository root. */
export const repoRoot = path.resolve(here, '..', '..', '..', '..');
export const vectorsDir = path.resolve(repoRoot, '..', 'shared', 'vectors', 'iggy');

export function vector(name: string): Buffer {
  const file = name.endsWith('.hex') ? name : `${name}.hex`;
  return Buffer.from(readFileSync(path.join(vectorsDir, file), 'utf8').trim(), 'hex');
}

export function vectorNames(): string[] {
  return readdirSync(vectorsDir)
    .filter((f) => f.endsWith('.hex'))
    .map((f) => f.slice(0, -4))
    .sort();
}

export function concat(chunks: readonly Buffer[]): Buffer {
  return Buffer.concat(chunks);
}
