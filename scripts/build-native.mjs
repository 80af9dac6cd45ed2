// `npm install` runs this (the package's install script): builds the native checksum addon
// (native/quartet_native.cc, binding.gyp) with the node-gyp npm ships, against the Node headers npm
// is configured with. If it cannot be built (no C++ compiler, no headers), Quartet still works:
// src/base/native.ts falls back to @node-rs/crc32 and @node-rs/xxhash, which compute the same
// values more slowly. The warning says so; CI sets QUARTET_REQUIRE_NATIVE=1 and a test then fails
// when the addon is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const nodeGyp = process.env.npm_config_node_gyp ?? join(dirname(process.execPath), '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
if (!existsSync(nodeGyp)) {
  console.warn(`quartet: node-gyp not found at ${nodeGyp}; the native checksum addon is not built (JS fallbacks are used)`);
  process.exit(0);
}
const result = spawnSync(process.execPath, [nodeGyp, 'rebuild'], { stdio: 'inherit' });
if (result.status !== 0) {
  console.warn('quartet: the native checksum addon did not build; CRC32C and XXH3 use the slower JS-side fallbacks');
}
process.exit(0);
