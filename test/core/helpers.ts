// Shared fixtures for the core tests: temp directories and stores.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteMetadataStore } from '../../src/core/metadata-store.js';

export function tempDir(t: { after(fn: () => void): void }, prefix = 'quartet-core-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function memoryStore(): SqliteMetadataStore {
  return SqliteMetadataStore.open({ path: ':memory:' });
}

/** Cheap scrypt for tests: hashing cost is not what they check. */
export const testScryptCost = { N: 1024, r: 8, p: 1 };
