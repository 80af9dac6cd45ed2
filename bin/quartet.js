#!/usr/bin/env -S node --max-semi-space-size=32
// The quartet command. The sources are TypeScript, loaded through tsx's ESM hook.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
