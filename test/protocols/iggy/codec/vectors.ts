// Loads the public Iggy golden vectors: repoRoot/../shared/vectors/iggy, the shared directory
// beside the repository clone (/work/main -> /work/shared), or, in a clone with nothing beside
// it, the copy in test/fixtures/vectors/iggy (Apache-2.0, LICENSE and NOTICE with it; a test
// checks it matches the shared one whenever both exist).

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** test/protocols/iggy/codec -> repository root. */
export const repoRoot = path.resolve(here, '..', '..', '..', '..');
export const sharedVectorsDir = path.resolve(repoRoot, '..', 'shared', 'vectors', 'iggy');
export const fixtureVectorsDir = path.resolve(repoRoot, 'test', 'fixtures', 'vectors', 'iggy');
export const vectorsDir = existsSync(sharedVectorsDir) ? sharedVectorsDir : fixtureVectorsDir;

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
