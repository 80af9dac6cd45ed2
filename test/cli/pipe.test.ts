// The quartet command as a process whose reader goes away (`quartet log dump … | head`): it ends
// quietly, exit code 0, no stack trace, as a C program ended by SIGPIPE would not complain either.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const bin = fileURLToPath(new URL('../../scripts/quartet-from-source.mjs', import.meta.url));

test('a reader that closes the pipe ends the command quietly', { timeout: 60_000 }, async () => {
  const child = spawn(process.execPath, [bin, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  // The read end closes before the command writes anything: its first write fails with EPIPE.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(stderr, '', 'nothing on stderr');
  assert.equal(code, 0);
});
