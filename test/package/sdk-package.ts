// What the SDK package tests (iggy-, cursus- and felix-sdk-pack.test.ts) read from the sources: the
// package.json files, and the closure of an SDK's entry (its sources under src/ and the npm
// packages they import, following every import, type-only too).

import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface PackageJson {
  name: string;
  version: string;
  type?: string;
  engines?: { node?: string };
  main?: string;
  types?: string;
  exports?: Record<string, unknown>;
  files?: string[];
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

export const readJson = (path: string): PackageJson => JSON.parse(readFileSync(path, 'utf8')) as PackageJson;

/** The package an import specifier names ('@node-rs/xxhash/x' is '@node-rs/xxhash'), or null for a builtin. */
export function packageName(spec: string): string | null {
  if (spec.startsWith('node:')) return null;
  const parts = spec.split('/');
  return spec.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** The sources ('src/...') of an SDK entry and the npm packages they import. */
export function sdkClosure(entry: string): { sources: string[]; packages: string[] } {
  const sources = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (sources.has(file)) return;
    sources.add(file);
    // Comment lines out: a codec's prose may say `from "exactly right"`.
    const text = readFileSync(join(repoRoot, file), 'utf8').replace(/^\s*\/\/.*$/gm, '');
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) {
        visit(relative(repoRoot, join(repoRoot, dirname(file), spec)).split('\\').join('/').replace(/\.js$/, '.ts'));
      } else {
        const name = packageName(spec);
        if (name !== null) packages.add(name);
      }
    }
  };
  visit(entry);
  return { sources: [...sources].sort(), packages: [...packages].sort() };
}
