import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { defaultLogConfig, encodeNeutralBatch, openFileLog } from '../../src/log/index.js';
import { acquireDataDirLock } from '../../src/server/lock.js';
import { quartetVersion } from '../../src/base/version.js';

const root = mkdtempSync(join(tmpdir(), 'quartet-cli-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => join(root, `d${n++}`);

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(argv: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<Run> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    readStdin: async () => options.stdin ?? '',
    env: options.env ?? {},
    cwd: root,
  };
  const code = await main(argv, io);
  return { code, out, err };
}

describe('usage', () => {
  test('help and version', async () => {
    const help = await run(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.out, /Usage: quartet <command>/);
    assert.match((await run(['help', 'log'])).out, /quartet log verify/);
    assert.match((await run(['serve', '--help'])).out, /Usage: quartet serve/);
    assert.deepEqual(await run(['version']), { code: 0, out: `quartet ${quartetVersion}\n`, err: '' });
  });

  test('no command, unknown command, unknown flag, missing value: exit 2 with usage', async () => {
    for (const argv of [['frobnicate'], ['log', 'verify', '--deep', root], ['log', 'dump', root, '--limit'], ['user'], ['log', 'rewind']]) {
      const r = await run(argv);
      assert.equal(r.code, 2, argv.join(' '));
      // One line: what is wrong and where the usage is, not the whole usage.
      assert.match(r.err, /^quartet: [^\n]+; see 'quartet help( [a-z-]+)?'\n$/, argv.join(' '));
    }
    assert.match((await run(['frobnicate'])).err, /unknown command "frobnicate"/);
    assert.equal((await run([])).code, 2);
    assert.match((await run(['log', 'dump', root, '--limit', 'ten'])).err, /--limit takes a non-negative integer/);
  });

  test('serve with a bad configuration exits 2 before starting anything', async () => {
    const r = await run(['serve', '--data-dir', fresh(), '--http-addr', 'localhost:99999', '--log-level', 'chatty']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--http-addr: "localhost:99999" is not valid: port must be between 0 and 65535/);
    assert.match(r.err, /--log-level: "chatty" is not valid/);
    const unknown = await run(['serve', '--kafka-adr', '1.2.3.4:5']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown option --kafka-adr/);
    const env = await run(['serve'], { env: { QUARTET_FSYNC_POLICY: 'never' } });
    assert.equal(env.code, 2);
    assert.match(env.err, /QUARTET_FSYNC_POLICY: "never" is not valid/);
  });
});

/** A partition directory with `batches` neutral batches of two records each. */
async function writePartition(dir: string, batches: number): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const log = await openFileLog(dir, { ...defaultLogConfig, fsyncPolicy: 'always' });
  for (let i = 0; i < batches; i++) {
    await log.append(encodeNeutralBatch([{ key: `k${i}`, value: `value-${i}-a` }, { value: `value-${i}-b` }], { timestamp: 1_700_000_000_000 + i }));
  }
  await log.close();
}

/** Flips one byte in the middle of the partition's first segment. */
function corruptSegment(dir: string): string {
  const name = readdirSync(dir).find((f) => f.endsWith('.log'))!;
  const path = join(dir, name);
  const fd = openSync(path, 'r+');
  try {
    const position = 100;
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, position);
    byte[0] = byte[0]! ^ 0xff;
    writeSync(fd, byte, 0, 1, position);
  } finally {
    closeSync(fd);
  }
  return path;
}

describe('log verify and log dump', () => {
  test('a clean partition directory verifies with exit 0', async () => {
    const dir = fresh();
    await writePartition(dir, 3);
    const r = await run(['log', 'verify', dir]);
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /verified 1 partition\(s\): 1 segment\(s\), 3 batch\(es\), 6 record\(s\), 0 problem\(s\)/);
  });

  test('a data directory: every logs/<topic>/<partition>/ is verified; a corrupt byte gives exit 1 and the problem', async () => {
    const dataDir = fresh();
    await writePartition(join(dataDir, 'logs', '1', '0'), 2);
    await writePartition(join(dataDir, 'logs', '1', '1'), 2);
    await writePartition(join(dataDir, 'logs', '2', '0'), 1);
    assert.match((await run(['log', 'verify', dataDir])).out, /verified 3 partition\(s\): 3 segment\(s\), 5 batch\(es\)/);
    const segment = corruptSegment(join(dataDir, 'logs', '1', '1'));
    const r = await run(['log', 'verify', dataDir]);
    assert.equal(r.code, 1);
    assert.ok(r.out.includes(`${segment}:`), r.out);
    assert.match(r.out, /[1-9]\d* problem\(s\)/);
    const json = await run(['log', 'verify', dataDir, '--json']);
    assert.equal(json.code, 1);
    const report = JSON.parse(json.out) as { partitions: number; batches: number; problems: Array<{ file: string; position: number; problem: string }> };
    assert.equal(report.partitions, 3);
    assert.ok(report.problems.length > 0 && report.problems.every((p) => p.file === segment && typeof p.position === 'number'), json.out);
  });

  test('verify of a path that is not a directory is a usage error', async () => {
    const r = await run(['log', 'verify', join(root, 'nope')]);
    assert.equal(r.code, 2);
    assert.match(r.err, /is not a directory/);
  });

  test('dump prints one line per batch, with --from, --limit and --json', async () => {
    const dir = fresh();
    await writePartition(dir, 4);
    const all = await run(['log', 'dump', dir]);
    assert.equal(all.code, 0);
    const lines = all.out.trim().split('\n');
    assert.equal(lines.length, 4);
    assert.match(lines[0]!, /^offsets 0\.\.1 format=neutral records=2 first_ts=2023-11-14T22:13:20\.000Z max_ts=\S+ producer=-1\/-1\/-1 flags=- payload_bytes=\d+ position=0$/);
    const some = await run(['log', 'dump', dir, '--from', '3', '--limit', '1', '--json']);
    const parsed = some.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(parsed.length, 1);
    assert.equal(parsed[0]!.baseOffset, 2);
    assert.equal(parsed[0]!.lastOffset, 3);
    assert.equal(parsed[0]!.format, 'neutral');
    assert.equal(parsed[0]!.checksumValid, true);
  });
});

describe('user commands (offline)', () => {
  test('create, list, delete; a fresh store also gets root with a password shown once', async () => {
    const dataDir = fresh();
    const created = await run(['user', '--offline', 'create', 'alice', '--password', 'alice-password', '--data-dir', dataDir]);
    assert.equal(created.code, 0, created.err);
    assert.match(created.out, /^quartet: generated root password for user 'root': \S+ \(shown once/);
    assert.match(created.out, /created user 'alice' \(id 1\)/);

    const generated = await run(['user', '--offline', 'create', 'bob', '--data-dir', dataDir]);
    assert.match(generated.out, /created user 'bob'/);
    assert.match(generated.out, /generated password for user 'bob': \S+ \(shown once\)/);
    assert.doesNotMatch(generated.out, /root password/, 'root exists now');

    const stdin = await run(['user', '--offline', 'create', 'carol', '--password-stdin'], { stdin: 'carol-password\n', env: { QUARTET_DATA_DIR: dataDir } });
    assert.equal(stdin.code, 0, stdin.err);

    const list = await run(['user', '--offline', 'list', '--data-dir', dataDir]);
    assert.deepEqual(
      list.out.trim().split('\n').map((l) => l.split('\t').slice(0, 2).join(' ')),
      ['0 root', '1 alice', '2 bob', '3 carol'],
    );
    // Five tab-separated columns on every row, the root user's included.
    const rows = list.out.trim().split('\n').map((l) => l.split('\t'));
    assert.deepEqual(rows.map((r) => [r.length, r[3]]), [[5, 'root'], [5, '-'], [5, '-'], [5, '-']]);
    assert.ok(rows.every((r) => !Number.isNaN(Date.parse(r[4]!))), 'the fifth column is the creation time');
    const json = await run(['user', '--offline', 'list', '--json', '--data-dir', dataDir]);
    assert.equal((JSON.parse(json.out.split('\n')[0]!) as { root: boolean }).root, true);

    assert.equal((await run(['user', '--offline', 'delete', 'bob', '--data-dir', dataDir])).code, 0);
    const dup = await run(['user', '--offline', 'create', 'alice', '--password', 'x-password', '--data-dir', dataDir]);
    assert.equal(dup.code, 1);
    assert.match(dup.err, /already exists/);
    const missing = await run(['user', '--offline', 'delete', 'nobody', '--data-dir', dataDir]);
    assert.equal(missing.code, 1);
  });

  test('permissions: --grant on create, permissions to change the global ones, listed in --json', async () => {
    const dataDir = fresh();
    const made = await run(['user', '--offline', 'create', 'writer', '--password', 'writer-password', '--grant', 'read_topics,send_messages', '--data-dir', dataDir]);
    assert.equal(made.code, 0, made.err);
    assert.equal((await run(['user', '--offline', 'create', 'plain', '--password', 'plain-password', '--data-dir', dataDir])).code, 0);
    const listed = async () =>
      (await run(['user', '--offline', 'list', '--json', '--data-dir', dataDir])).out.trim().split('\n').map((l) => JSON.parse(l) as { username: string; global: string[] }).map((u) => [u.username, u.global.join(',')]);
    const everything = 'manage_servers,read_servers,manage_users,read_users,manage_streams,read_streams,manage_topics,read_topics,poll_messages,send_messages';
    assert.deepEqual(await listed(), [['root', everything], ['writer', 'read_topics,send_messages'], ['plain', '']], 'root may do everything');
    const rootChange = await run(['user', '--offline', 'permissions', 'root', 'none', '--data-dir', dataDir]);
    assert.equal(rootChange.code, 1);
    assert.match(rootChange.err, /permissions of the root user 'root' cannot be changed/);
    const changed = await run(['user', '--offline', 'permissions', 'plain', 'all', '--data-dir', dataDir]);
    assert.equal(changed.code, 0, changed.err);
    assert.match(changed.out, /user 'plain' \(id 2\): global permissions manage_servers,read_servers,.*,send_messages\n/);
    assert.equal((await run(['user', '--offline', 'permissions', 'writer', 'poll_messages', '--data-dir', dataDir])).code, 0);
    assert.deepEqual(await listed(), [['root', everything], ['writer', 'poll_messages'], ['plain', everything]]);
    const unknown = await run(['user', '--offline', 'permissions', 'writer', 'poll_messages,fly', '--data-dir', dataDir]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown permission "fly"/);
    assert.equal((await run(['user', '--offline', 'create', 'x', '--grant', 'everything', '--data-dir', dataDir])).code, 2);
    assert.equal((await run(['user', '--offline', 'permissions', 'nobody', 'none', '--data-dir', dataDir])).code, 1);
    assert.equal((await run(['user', '--offline', 'permissions', 'writer', '--data-dir', dataDir])).code, 2, 'the list is required');
  });

  test('refused while the data directory is locked', async () => {
    const dataDir = fresh();
    const lock = acquireDataDirLock(dataDir, { purpose: 'serve' });
    try {
      const r = await run(['user', '--offline', 'create', 'alice', '--password', 'pw-pw-pw', '--data-dir', dataDir]);
      assert.equal(r.code, 1);
      assert.match(r.err, /is locked by process \d+/);
      assert.match(r.err, /stop the broker first/);
    } finally {
      lock.release();
    }
  });

  test('list on a directory without a metadata store says so', async () => {
    const r = await run(['user', '--offline', 'list', '--data-dir', fresh()]);
    assert.equal(r.code, 1);
    assert.match(r.err, /no metadata store/);
  });

  test('usage errors', async () => {
    assert.equal((await run(['user', '--offline', 'create'])).code, 2);
    assert.equal((await run(['user', '--offline', 'create', 'a', '--password', 'x', '--password-stdin'])).code, 2);
    assert.equal((await run(['user', '--offline', 'frob'])).code, 2);
  });
});
