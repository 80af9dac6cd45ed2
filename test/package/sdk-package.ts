// What the SDK package tests (iggy-, cursus- and felix-sdk-pack.test.ts) share: the package.json
// files, the closure of an SDK's entry (its sources under src/ and the npm packages they import,
// following every import, type-only too), the shape of an SDK's package.json, and packing the
// package and installing the tarball into a fresh project apart from the broker.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ok, packInfo, run } from './npm-run.js';

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

/** The shape every SDK package.json has: ESM for Node 20, typed exports of its entry, dist/ only, versioned with the root, a root workspace. */
export function assertPackageShape(sdkPkg: PackageJson, rootPkg: PackageJson, sdk: string): void {
  assert.equal(sdkPkg.name, `@quartet/${sdk}`);
  assert.equal(sdkPkg.version, rootPkg.version);
  assert.equal(sdkPkg.type, 'module');
  assert.equal(sdkPkg.engines?.node, rootPkg.engines?.node);
  assert.deepEqual(sdkPkg.exports, {
    '.': { types: `./dist/clients/${sdk}/index.d.ts`, default: `./dist/clients/${sdk}/index.js` },
    './package.json': './package.json',
  });
  assert.equal(sdkPkg.main, `./dist/clients/${sdk}/index.js`);
  assert.equal(sdkPkg.types, `./dist/clients/${sdk}/index.d.ts`);
  assert.deepEqual(sdkPkg.files, ['dist/']);
  assert.ok(rootPkg.workspaces?.includes(`packages/${sdk}`), `the root lists packages/${sdk} among its workspaces`);
}

export interface Installed {
  /** The fresh project the tarball was installed into. */
  app: string;
  /** The packages of its installed tree. */
  names: Set<string>;
}

/**
 * `npm pack` of packages/<sdk> (its prepare script builds it) into `work`, checked to hold the
 * compiled sources of the entry's closure and nothing else but README.md and package.json; then
 * installed into a fresh project, checked to have none of the broker's own dependencies and no
 * quartet.
 */
export async function packAndInstall(
  t: { diagnostic(message: string): void },
  o: { sdk: string; work: string; sdkPkg: PackageJson; rootPkg: PackageJson; packMsMax: number; installMsMax: number },
): Promise<Installed> {
  const packed = ok(await run('npm', ['pack', '--json', '--pack-destination', o.work], join(repoRoot, 'packages', o.sdk), o.packMsMax), `npm pack (packages/${o.sdk})`);
  const { filename, files } = packInfo(packed.stdout);
  const expected = sdkClosure(`src/clients/${o.sdk}/index.ts`).sources.flatMap((f) => {
    const out = f.replace(/^src\//, 'dist/').replace(/\.ts$/, '');
    return [`${out}.js`, `${out}.d.ts`];
  });
  assert.deepEqual([...files].filter((f) => f.startsWith('dist/')).sort(), expected.sort(), 'the tarball holds the compiled SDK sources, no more and no less');
  assert.deepEqual([...files].filter((f) => !f.startsWith('dist/')).sort(), ['README.md', 'package.json']);
  t.diagnostic(`npm pack (with the build): ${packed.ms} ms, ${files.size} files`);

  const app = join(o.work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `quartet-${o.sdk}-pack-check`, version: '1.0.0', private: true, type: 'module' }));
  const installed = ok(await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(o.work, filename)], app, o.installMsMax), 'npm install');
  t.diagnostic(`npm install of the tarball: ${installed.ms} ms`);

  // The installed tree (npm's own record of it), against the root's dependencies the SDK does not use.
  const tree = readJson(join(app, 'node_modules/.package-lock.json')) as unknown as { packages: Record<string, unknown> };
  const names = new Set(Object.keys(tree.packages).map((p) => p.replace(/^.*node_modules\//, '')));
  const brokerOnly = ['quartet', ...Object.keys(o.rootPkg.dependencies ?? {}).filter((d) => !(d in (o.sdkPkg.dependencies ?? {})))];
  assert.ok(brokerOnly.includes('better-sqlite3'));
  assert.deepEqual(brokerOnly.filter((n) => names.has(n)), [], `installed: ${[...names].join(', ')}`);
  assert.ok(names.has(`@quartet/${o.sdk}`), [...names].join(', '));
  return { app, names };
}
