#!/usr/bin/env -S node --max-semi-space-size=32 --min-semi-space-size=32 --no-memory-reducer
// The quartet command: the compiled JavaScript in dist/, which npm install (the package's prepare
// script) and `npm run build` make from src/. scripts/quartet-from-source.mjs runs the TypeScript
// sources instead (the tests do).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error(`quartet: ${fileURLToPath(entry)} is missing: run npm run build (npm install runs it too)`);
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
