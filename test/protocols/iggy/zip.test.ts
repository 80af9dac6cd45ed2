import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readZip, writeZip } from '../../../src/protocols/iggy/zip.js';

describe('zip writer', () => {
  for (const deflate of [false, true]) {
    it(`round-trips entries (${deflate ? 'deflated' : 'stored'}) and passes an external check when available`, (t) => {
      const entries = [
        { name: 'a.txt', data: Buffer.from('hello\n'.repeat(100)) },
        { name: 'dir/é.bin', data: Buffer.from([0, 1, 2, 255]) },
        { name: 'empty', data: Buffer.alloc(0) },
      ];
      const zip = writeZip(entries, { deflate, now: new Date(Date.UTC(2026, 0, 2, 3, 4, 6)) });
      assert.deepEqual(readZip(zip), entries);
      const probe = spawnSync('python3', ['--version'], { encoding: 'utf8' });
      if (probe.error) {
        t.diagnostic('python3 not available: external check skipped');
        return;
      }
      const dir = mkdtempSync(join(tmpdir(), 'quartet-zip-'));
      try {
        const file = join(dir, 'x.zip');
        writeFileSync(file, zip);
        const r = spawnSync('python3', ['-c', 'import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print(len(z.namelist()))', file], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stdout.trim(), '3');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
