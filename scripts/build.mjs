#!/usr/bin/env node
// npm install's prepare script: compiles src/ to dist/ (ESM JavaScript and .d.ts declarations;
// tsconfig.build.json). `--all` (`npm run build`) then builds each workspace package (package.json
// "workspaces": packages/iggy, packages/cursus, packages/felix) from its own tsconfig.build.json into its own
// dist/; npm install builds those through their own prepare scripts, which run
// `node ../../scripts/build.mjs .` (folders given are taken from the working directory). Each
// dist/ is emptied first, so that a source file moved or deleted leaves no stale module behind to
// be imported or packed.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.error('quartet: typescript is not installed (a devDependency: run npm install in the repository)');
  process.exit(1);
}

function workspaces() {
  const { workspaces: list = [] } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  for (const w of list) {
    if (/[*?{[]/.test(w)) throw new Error(`package.json workspaces: ${w}: name each folder (the build does not expand globs)`);
  }
  return list.map((w) => join(root, w));
}

const args = process.argv.slice(2);
const dirs = args.length === 0 ? [root] : args[0] === '--all' && args.length === 1 ? [root, ...workspaces()] : args.map((d) => resolve(d));
for (const dir of dirs) {
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  const result = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.build.json')], { cwd: dir, stdio: 'inherit' });
  if (result.error) console.error(`quartet: the build could not run tsc: ${result.error.message}`);
  if (result.status !== 0) {
    console.error(`quartet: the build of ${relative(root, dir) || '.'} failed`);
    process.exit(result.status ?? 1);
  }
}
