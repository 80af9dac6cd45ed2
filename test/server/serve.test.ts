// End to end: `quartet serve` as a real child process, probed over HTTP and stopped by signals.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

// The command from the TypeScript sources (bin/quartet.js runs dist/, which the suite never needs).
const bin = new URL('../../scripts/quartet-from-source.mjs', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'quartet-serve-'));
const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

const READY_DEADLINE_MS = 10_000;
const STOP_DEADLINE_MS = 5_000;

/** A running `quartet serve` with everything it printed so far. */
class Broker {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  readonly child: ChildProcess;

  constructor(dataDir: string, env: Record<string, string> = {}) {
    // Every listener on loopback with a free port, so that front-ends added later do not collide.
    const addrs = ['http', 'kafka', 'iggy', 'cursus', 'felix'].flatMap((l) => [`--${l}-addr`, '127.0.0.1:0']);
    this.child = spawn(process.execPath, [bin, 'serve', '--data-dir', dataDir, ...addrs], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    children.add(this.child);
    this.child.stdout!.setEncoding('utf8').on('data', (s: string) => (this.stdout += s));
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr += s));
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code) => {
        children.delete(this.child);
        resolve(code);
      }),
    );
  }

  logs(): Array<Record<string, unknown>> {
    return this.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** The HTTP port, from the `listening` log line. */
  async httpPort(): Promise<number> {
    const line = await this.waitFor(() => this.logs().find((l) => l.msg === 'listening' && l.listener === 'http'), 'the http listening line');
    return Number(String(line.address).split(':').pop());
  }

  async waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, deadlineMs = READY_DEADLINE_MS): Promise<T> {
    const until = Date.now() + deadlineMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (this.child.exitCode !== null) assert.fail(`quartet exited (${this.child.exitCode}) before ${what}:\n${this.stderr}`);
      if (Date.now() > until) assert.fail(`no ${what} within ${deadlineMs} ms:\n${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async waitReady(): Promise<number> {
    const port = await this.httpPort();
    await this.waitFor(async () => ((await status(port, '/ready')) === 200 ? true : undefined), '200 on /ready');
    return port;
  }
}

function fetchText(port: number, path: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (s: string) => (body += s));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    }).on('error', reject);
  });
}

const status = (port: number, path: string): Promise<number> => fetchText(port, path).then((r) => r.status, () => 0);

async function exitWithin(broker: Broker, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  const result = await Promise.race([broker.exited, deadline]);
  clearTimeout(timer);
  assert.notEqual(result, 'timeout', `quartet did not exit within ${ms} ms:\n${broker.stderr}`);
  return result as number | null;
}

test('serve: live, ready, metrics, a refused second broker, password once, clean SIGTERM', async () => {
  const dataDir = join(root, 'main');
  const first = new Broker(dataDir);
  const port = await first.httpPort();
  assert.equal(await status(port, '/live'), 200);
  await first.waitReady();

  const metrics = await fetchText(port, '/metrics');
  assert.equal(metrics.status, 200);
  assert.match(metrics.type, /^text\/plain; version=0\.0\.4/);
  assert.match(metrics.body, /^# HELP /m);
  assert.match(metrics.body, /^quartet_ready 1$/m);

  const second = new Broker(dataDir);
  const secondCode = await exitWithin(second, READY_DEADLINE_MS);
  assert.notEqual(secondCode, 0);
  assert.match(second.stderr, new RegExp(`data directory ${dataDir} is locked by process ${first.child.pid}`));
  assert.ok(second.stderr.includes(join(dataDir, 'quartet.lock')));
  assert.equal(await status(port, '/ready'), 200, 'the first broker is unaffected');

  const passwordLines = first.stdout.split('\n').filter((l) => l.includes('generated root password'));
  assert.equal(passwordLines.length, 1, first.stdout);
  const password = /user 'root': (\S+) \(shown once/.exec(passwordLines[0]!)?.[1];
  assert.ok(password && password.length >= 16);
  assert.ok(!first.stderr.includes(password), 'the password is not in the logs');

  const ready = first.logs().find((l) => l.msg === 'ready')!;
  assert.equal(typeof ready.recoveryMs, 'number');

  first.child.kill('SIGTERM');
  assert.equal(await exitWithin(first, STOP_DEADLINE_MS), 0);
  const messages = first.logs().map((l) => l.msg);
  assert.ok(messages.includes('stopping') && messages.at(-1) === 'stopped', messages.join(', '));
});

test('serve after kill -9: the stale lock is taken over; root exists, so no new password', async () => {
  const dataDir = join(root, 'crash');
  const first = new Broker(dataDir, { QUARTET_ROOT_PASSWORD: 'chosen-root-password' });
  await first.waitReady();
  assert.equal(first.stdout, '', 'a chosen password is not printed');
  first.child.kill('SIGKILL');
  await first.exited;

  const second = new Broker(dataDir);
  await second.waitReady();
  const takeover = second.logs().find((l) => l.msg === 'took over a stale lock');
  assert.equal(takeover?.previousPid, first.child.pid);
  assert.equal(second.stdout, '');
  second.child.kill('SIGINT');
  assert.equal(await exitWithin(second, STOP_DEADLINE_MS), 0);
});
