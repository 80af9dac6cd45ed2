// A small Chrome DevTools Protocol client for the web console's end-to-end test: it starts the
// Debian `chromium` headless with --remote-debugging-pipe (JSON messages ending in NUL on fds 3
// and 4, so no WebSocket library is needed), attaches to its page and offers what the test uses:
// navigate, evaluate, wait for a condition (polled until a deadline) and screenshot.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { missingClient } from '../missing-client.js';

export const CHROMIUM = process.env.QUARTET_CHROMIUM ?? 'chromium';

/** A skip reason when chromium is absent (a failure under QUARTET_REQUIRE_CLIENTS=1), else false. */
export function chromiumSkip(): string | false {
  if (spawnSync(CHROMIUM, ['--version'], { stdio: 'ignore', timeout: 20_000 }).status === 0) return false;
  return missingClient('chromium is not installed (apt-get install chromium)');
}

interface Pending {
  resolve: (result: Record<string, unknown>) => void;
  reject: (err: Error) => void;
}

export class Browser {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buffered = '';
  private sessionId = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
  ) {
    const out = child.stdio[4] as Readable;
    out.setEncoding('utf8');
    out.on('data', (chunk: string) => this.receive(chunk));
    child.once('exit', () => {
      for (const p of this.pending.values()) p.reject(new Error('chromium exited'));
      this.pending.clear();
    });
  }

  static async launch(): Promise<Browser> {
    const profile = mkdtempSync(join(tmpdir(), 'quartet-chromium-'));
    const child = spawn(
      CHROMIUM,
      ['--headless=new', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check', '--window-size=1280,900', `--user-data-dir=${profile}`, 'about:blank'],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    child.stderr?.resume();
    const browser = new Browser(child, profile);
    const { targetInfos } = (await browser.send('Target.getTargets')) as { targetInfos: Array<{ targetId: string; type: string }> };
    const page = targetInfos.find((t) => t.type === 'page');
    if (page === undefined) throw new Error('chromium opened no page');
    const { sessionId } = (await browser.send('Target.attachToTarget', { targetId: page.targetId, flatten: true })) as { sessionId: string };
    browser.sessionId = sessionId;
    await browser.send('Page.enable');
    await browser.send('Runtime.enable');
    return browser;
  }

  private receive(chunk: string): void {
    this.buffered += chunk;
    for (let end = this.buffered.indexOf('\0'); end >= 0; end = this.buffered.indexOf('\0')) {
      const message = JSON.parse(this.buffered.slice(0, end)) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
      this.buffered = this.buffered.slice(end + 1);
      const p = message.id === undefined ? undefined : this.pending.get(message.id);
      if (p === undefined) continue;
      this.pending.delete(message.id!);
      if (message.error) p.reject(new Error(message.error.message));
      else p.resolve(message.result ?? {});
    }
  }

  /** One CDP command; page commands go to the attached page's session. */
  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const message = { id, method, params, ...(this.sessionId !== '' && !method.startsWith('Target.') ? { sessionId: this.sessionId } : {}) };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      (this.child.stdio[3] as Writable).write(JSON.stringify(message) + '\0');
    });
  }

  async navigate(url: string): Promise<void> {
    await this.send('Page.navigate', { url });
  }

  /** Evaluates an expression in the page (promises awaited) and returns its JSON value. */
  async evaluate<T>(expression: string): Promise<T> {
    const reply = (await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true })) as { result: { value?: T }; exceptionDetails?: { text: string; exception?: { description?: string } } };
    if (reply.exceptionDetails) throw new Error(`page error: ${reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text}`);
    return reply.result.value as T;
  }

  /** Polls an expression until it is truthy; fails with `what` after the deadline. */
  async waitFor(expression: string, what: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await this.evaluate<boolean>(`Boolean(${expression})`).catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await delay(50);
    }
  }

  async screenshot(): Promise<Buffer> {
    const { data } = (await this.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
    return Buffer.from(data, 'base64');
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => (this.child.exitCode !== null ? resolve() : this.child.once('exit', () => resolve())));
    this.send('Browser.close').catch(() => {});
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
    rmSync(this.profile, { recursive: true, force: true });
  }
}
