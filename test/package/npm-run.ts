// Running npm and node as children for the package tests (pack.test.ts, iggy-sdk-pack.test.ts):
// an environment free of this repository's npm run-script variables, a process group per child
// that a timeout kills whole, and the skip (or, under QUARTET_REQUIRE_CLIENTS=1, the failure) when
// npm is missing.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { missingClient } from '../missing-client.js';

/** Upper bound on a short child (npm --version, node on a small script, tsc on a small project). */
export const commandMsMax = 30_000;

/**
 * The environment for the child npm and node: npm's run-script variables name this repository
 * (npm_config_local_prefix would point a nested install at it), and NODE_OPTIONS could bring tsx in.
 */
export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_(lifecycle_|package_|command$|config_(local_prefix|prefix|global_prefix|call)$)/.test(k)) continue;
    if (k === 'INIT_CWD' || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  return env;
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command in its own process group; on timeout the whole group (npm, node-gyp, make, g++) is killed. */
export function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<Ran> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-20_000)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      const ran = { code, stdout, stderr, ms: Math.round(performance.now() - started) };
      if (timedOut) reject(new Error(`${command} ${args.join(' ')} took over ${timeoutMs} ms: ${stderr.slice(-2000)}`));
      else resolve(ran);
    });
  });
}

export function ok(ran: Ran, what: string): Ran {
  assert.equal(ran.code, 0, `${what} exited with ${ran.code}:\n${ran.stderr.slice(-4000)}`);
  return ran;
}

/** The JSON that `npm pack --json` prints for one package (after its prepare script's output). */
export function packInfo(stdout: string): { filename: string; files: Set<string> } {
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  assert.ok(info !== undefined, `npm pack printed no package:\n${stdout.slice(-2000)}`);
  return { filename: info.filename, files: new Set(info.files.map((f) => f.path)) };
}

/** A skip reason when npm cannot run (a failure instead under QUARTET_REQUIRE_CLIENTS=1), else false. */
export function npmMissing(): string | false {
  const probe = spawnSync('npm', ['--version'], { env: childEnv(), timeout: commandMsMax, encoding: 'utf8' });
  if (probe.error === undefined && probe.status === 0) return false;
  return missingClient(`npm is not available (${probe.error?.message ?? `exit ${probe.status}`}): the packed package is not checked`);
}
