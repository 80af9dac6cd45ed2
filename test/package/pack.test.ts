// The package as a user gets it: `npm pack` (whose prepare script builds dist/), the tarball
// installed into a fresh project, then, with plain Node (no tsx), the main entry, quartet/iggy,
// quartet/cursus and quartet/felix imported, the quartet command run through npx, and the declarations type-checked. The only test
// that uses dist/.
//
// The fresh project installs with --ignore-scripts, then `npm rebuild quartet` runs Quartet's own
// install script (the native addon, from the files the tarball carries). better-sqlite3's install
// script is left out: where its prebuilt binary cannot be downloaded it compiles SQLite, ~75 s on
// the 2-vCPU test machine, and neither entry nor --help loads it.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { commandMsMax, npmMissing, ok, packInfo, run } from './npm-run.js';

const repoRoot = new URL('../..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string };

/** Upper bounds per child process (the 2-vCPU machine, loaded by the rest of the suite). */
const packMsMax = 90_000;
const installMsMax = 90_000;
const rebuildMsMax = 90_000;

const work = mkdtempSync(join(tmpdir(), 'quartet-pack-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('the packed package installs, imports with plain Node and runs its command', { skip: npmMissing(), timeout: 300_000 }, async (t) => {
  const packed = ok(await run('npm', ['pack', '--json', '--pack-destination', work], repoRoot, packMsMax), 'npm pack');
  const { filename, files } = packInfo(packed.stdout);
  for (const path of ['package.json', 'README.md', 'bin/quartet.js', 'dist/index.js', 'dist/index.d.ts', 'dist/clients/iggy/index.js', 'dist/clients/cursus/index.js', 'dist/clients/felix/index.js', 'dist/cli/main.js', 'binding.gyp', 'native/quartet_native.cc', 'scripts/build-native.mjs']) {
    assert.ok(files.has(path), `the tarball lacks ${path}`);
  }
  for (const path of files) assert.doesNotMatch(path, /^(src|test|bench|build|node_modules|packages)\//, `the tarball holds ${path}`);
  t.diagnostic(`npm pack (with the build): ${packed.ms} ms, ${files.size} files`);

  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'quartet-pack-check', version: '1.0.0', private: true, type: 'module' }));
  const tarball = join(work, filename);
  const installed = ok(await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball], app, installMsMax), 'npm install');
  t.diagnostic(`npm install of the tarball: ${installed.ms} ms`);
  const rebuilt = ok(await run('npm', ['rebuild', pkg.name], app, rebuildMsMax), 'npm rebuild (the install script)');
  const addon = join(app, 'node_modules', pkg.name, 'build/Release/quartet_native.node');
  t.diagnostic(`npm rebuild ${pkg.name} (the native addon): ${rebuilt.ms} ms, ${existsSync(addon) ? 'built' : 'not built (the JS fallbacks are used)'}`);
  if (process.env['QUARTET_REQUIRE_NATIVE'] === '1') assert.ok(existsSync(addon), `the install script did not build ${addon}:\n${rebuilt.stderr.slice(-4000)}`);

  // Plain node: the exports map resolves into dist/; sdkVersion is read by dist/base/version.js
  // from the installed package.json, and dist/base/native.js looks for the addon in the package's
  // build/ (a file URL, as the exports map has no entry for it).
  writeFileSync(
    join(app, 'check.mjs'),
    `import * as quartet from '${pkg.name}';
import * as iggy from '${pkg.name}/iggy';
import * as cursus from '${pkg.name}/cursus';
import * as felix from '${pkg.name}/felix';
const { nativeStatus } = await import(new URL('./node_modules/${pkg.name}/dist/base/native.js', import.meta.url));
const kinds = (m, names) => Object.fromEntries(names.map((n) => [n, typeof m[n]]));
console.log(JSON.stringify({
  main: import.meta.resolve('${pkg.name}'),
  iggy: import.meta.resolve('${pkg.name}/iggy'),
  quartet: kinds(quartet, ['IggyClient', 'IggyProducer', 'IggyConsumer', 'QuartetError', 'isQuartetError', 'IggyError', 'BatchFormat']),
  sdk: kinds(iggy, ['IggyClient', 'IggyProducer', 'IggyConsumer', 'IggyError', 'partitionForKey']),
  cursus: kinds(cursus, ['CursusClient', 'CursusProducer', 'CursusConsumer', 'CursusError', 'partitionForKey']),
  felix: kinds(felix, ['FelixClient', 'FelixPublisher', 'FelixSubscription', 'FelixError']),
  same: quartet.IggyClient === iggy.IggyClient,
  sdkVersion: quartet.sdkVersion,
  native: { path: nativeStatus.path, loaded: nativeStatus.loaded },
}));
`,
  );
  const checked = ok(await run(process.execPath, ['check.mjs'], app, commandMsMax), 'node check.mjs');
  const result = JSON.parse(checked.stdout) as Record<string, unknown>;
  assert.match(String(result['main']), new RegExp(`/node_modules/${pkg.name}/dist/index\\.js$`));
  assert.match(String(result['iggy']), new RegExp(`/node_modules/${pkg.name}/dist/clients/iggy/index\\.js$`));
  assert.deepEqual(result['quartet'], { IggyClient: 'function', IggyProducer: 'function', IggyConsumer: 'function', QuartetError: 'function', isQuartetError: 'function', IggyError: 'function', BatchFormat: 'object' });
  assert.deepEqual(result['sdk'], { IggyClient: 'function', IggyProducer: 'function', IggyConsumer: 'function', IggyError: 'function', partitionForKey: 'function' });
  assert.deepEqual(result['cursus'], { CursusClient: 'function', CursusProducer: 'function', CursusConsumer: 'function', CursusError: 'function', partitionForKey: 'function' });
  assert.deepEqual(result['felix'], { FelixClient: 'function', FelixPublisher: 'function', FelixSubscription: 'function', FelixError: 'function' });
  assert.equal(result['same'], true);
  assert.equal(result['sdkVersion'], pkg.version);
  assert.deepEqual(result['native'], { path: addon, loaded: existsSync(addon) });

  const help = ok(await run('npx', ['--no', '--', 'quartet', '--help'], app, commandMsMax), 'npx quartet --help');
  assert.match(help.stdout, /^Usage: quartet <command>/);
  const version = ok(await run('npx', ['--no', '--', 'quartet', 'version'], app, commandMsMax), 'npx quartet version');
  assert.equal(version.stdout, `quartet ${pkg.version}\n`);

  // The declarations, as a TypeScript project using the package sees them (the repository's tsc
  // and @types/node; the app has neither).
  writeFileSync(
    join(app, 'consumer.ts'),
    `import { IggyClient, QuartetError, BatchFormat, type IggyClientOptions } from '${pkg.name}';
import { IggyProducer, type IggyMessage } from '${pkg.name}/iggy';
const options: IggyClientOptions = { addr: '127.0.0.1:8090' };
export const client: IggyClient = new IggyClient(options);
export const producer: typeof IggyProducer = IggyProducer;
export const messages: IggyMessage[] = [];
export const error: QuartetError | null = null;
export const format: BatchFormat = BatchFormat.iggy;
`,
  );
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, skipLibCheck: true, noEmit: true, types: ['node'], typeRoots: [join(repoRoot, 'node_modules/@types')] },
      files: ['consumer.ts'],
    }),
  );
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  const typed = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], app, commandMsMax);
  assert.equal(typed.code, 0, `tsc on a consumer of the package:\n${typed.stdout}${typed.stderr}`);
});
