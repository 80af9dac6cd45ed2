// What the SDK package tests (iggy-, cursus- and felix-sdk-pack.test.ts) share: the package.json
// files, the closure of an SDK's entry (its sources under src/ and the npm packages they import,
// following every import, type-only too) checked against the package's dependencies, the shape of
// an SDK's package.json, packing the package and installing the tarball into a fresh project apart
// from the broker, then running a check script on it with plain Node and type-checking a user's
// file against its declarations.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { commandMsMax, ok, packInfo, run } from './npm-run.js';

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

/**
 * The closure of src/clients/<sdk>/index.ts, checked: every source matches `allowed` (else the
 * package would carry it), and the package's dependencies are exactly the npm packages the sources
 * import, at the root's ranges.
 */
export function assertSdkSources(o: { sdk: string; allowed: RegExp; sdkPkg: PackageJson; rootPkg: PackageJson }): { sources: string[]; packages: string[] } {
  const entry = `src/clients/${o.sdk}/index.ts`;
  const closure = sdkClosure(entry);
  assert.deepEqual(closure.sources.filter((f) => !o.allowed.test(f)), [], `the SDK (${entry}) imports sources outside ${o.allowed}: @quartet/${o.sdk} would carry them`);
  assert.deepEqual(Object.keys(o.sdkPkg.dependencies ?? {}).sort(), closure.packages, `packages/${o.sdk}/package.json dependencies must be exactly the npm packages the SDK imports`);
  for (const [name, range] of Object.entries(o.sdkPkg.dependencies ?? {})) {
    assert.equal(range, o.rootPkg.dependencies?.[name], `${name}: the SDK package and the root ask for the same range`);
  }
  return closure;
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

/** A scratch folder for an SDK's pack test (tarball, fresh project), removed when the file's tests end. */
export function packWorkDir(sdk: string): string {
  const work = mkdtempSync(join(tmpdir(), `quartet-${sdk}-pack-`));
  after(() => rmSync(work, { recursive: true, force: true }));
  return work;
}

/** The installed package's dist/: base, clients (common and the SDK) and protocols (the SDK's only); its path. */
export function assertInstalledDist(app: string, sdk: string): string {
  const dist = join(app, `node_modules/@quartet/${sdk}/dist`);
  assert.deepEqual(readdirSync(dist).sort(), ['base', 'clients', 'protocols']);
  assert.deepEqual(readdirSync(join(dist, 'clients')).sort(), ['common', sdk]);
  assert.deepEqual(readdirSync(join(dist, 'protocols')), [sdk]);
  return dist;
}

/**
 * Runs `script` as check.mjs with plain Node (no tsx) in the installed project and returns what it
 * printed, checked to resolve @quartet/<sdk> from node_modules, to export each of `exports` as a
 * function, and not to reach the broker (`import('quartet')` fails). Before `script` the SDK is
 * imported as `<sdk>` and `failure(client)` is defined: connect(), expected to fail, as the error's
 * name, kind, brand and message. `script` leaves its own findings in a `const checks = { ... }`.
 */
export async function runInstalledCheck(app: string, o: { sdk: string; exports: string[]; script: string }): Promise<Record<string, unknown>> {
  const guard = `is${o.sdk[0]!.toUpperCase()}${o.sdk.slice(1)}ClientError`;
  writeFileSync(
    join(app, 'check.mjs'),
    `import * as ${o.sdk} from '@quartet/${o.sdk}';
const kinds = Object.fromEntries(${JSON.stringify(o.exports)}.map((n) => [n, typeof ${o.sdk}[n]]));
const failure = async (client) => {
  try {
    await client.connect();
    return 'connected';
  } catch (err) {
    return { name: err.name, kind: err.kind, branded: ${o.sdk}.${guard}(err), message: err.message };
  } finally {
    await client.close().catch(() => {});
  }
};
${o.script}
let broker;
try {
  await import('quartet');
  broker = 'importable';
} catch (err) {
  broker = err.code;
}
console.log(JSON.stringify({ resolved: import.meta.resolve('@quartet/${o.sdk}'), kinds, broker, ...checks }));
process.exit(0);
`,
  );
  const checked = ok(await run(process.execPath, ['check.mjs'], app, commandMsMax), 'node check.mjs');
  const result = JSON.parse(checked.stdout) as Record<string, unknown>;
  assert.match(String(result['resolved']), new RegExp(`/node_modules/@quartet/${o.sdk}/dist/clients/${o.sdk}/index\\.js$`));
  assert.deepEqual(result['kinds'], Object.fromEntries(o.exports.map((n) => [n, 'function'])));
  assert.equal(result['broker'], 'ERR_MODULE_NOT_FOUND');
  return result;
}

/** A `failure(client)` of the check script: the SDK's branded `name`, of kind connection; its message. */
export function assertConnectionFailure(failure: unknown, name: string): string {
  const f = failure as { name: string; kind: string; branded: boolean; message: string };
  assert.deepEqual({ ...f, message: undefined }, { name, kind: 'connection', branded: true, message: undefined });
  return f.message;
}

/**
 * Type-checks `source` as a user's consumer.ts against the installed declarations (the repository's
 * tsc and @types/node, which the app lacks; the package's .d.ts checked too, skipLibCheck off).
 * Lines the source marks `@ts-expect-error` fail the check if the types were loose (any).
 */
export async function typecheckConsumer(app: string, o: { sdk: string; source: string; lib?: string[]; msMax?: number }): Promise<void> {
  writeFileSync(join(app, 'consumer.ts'), o.source);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: o.lib ?? ['ES2023'],
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
        typeRoots: [join(repoRoot, 'node_modules/@types')],
      },
      files: ['consumer.ts'],
    }),
  );
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  const typed = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], app, o.msMax ?? commandMsMax);
  assert.equal(typed.code, 0, `tsc on a consumer of @quartet/${o.sdk}:\n${typed.stdout}${typed.stderr}`);
}
