#!/usr/bin/env -S node --max-semi-space-size=32 --min-semi-space-size=32 --no-memory-reducer
// The quartet command from the TypeScript sources, loaded through tsx's ESM hook (a devDependency):
// what the tests spawn, so that they never run a stale dist/. bin/quartet.js runs the compiled code.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
