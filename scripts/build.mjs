#!/usr/bin/env node
// `npm run build` (and npm install's prepare script): compiles src/ to dist/ (ESM JavaScript and
// .d.ts declarations; tsconfig.build.json). dist/ is emptied first, so that a source file moved or
// deleted leaves no stale module behind to be imported or packed.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.error('quartet: typescript is not installed (a devDependency: run npm install in the repository)');
  process.exit(1);
}
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (result.error) console.error(`quartet: the build could not run tsc: ${result.error.message}`);
process.exit(result.status ?? 1);
