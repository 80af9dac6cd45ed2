import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LogRateLimiter, LogTail, createLogger, defaultLogFormat, formatLogLine } from '../../src/base/logger.js';

test('a log tail keeps the last lines, within its line and character bounds, oldest first', () => {
  const byCount = new LogTail(3, 1 << 20);
  for (let i = 0; i < 10; i++) byCount.push(`line ${i}`);
  assert.deepEqual(byCount.snapshot(), ['line 7', 'line 8', 'line 9']);
  const byBytes = new LogTail(100, 10);
  for (const line of ['aaaa', 'bbbb', 'cccc']) byBytes.push(line);
  assert.deepEqual(byBytes.snapshot(), ['bbbb', 'cccc'], '8 characters kept of 12');
  byBytes.push('x'.repeat(50));
  assert.deepEqual(byBytes.snapshot(), ['x'.repeat(50)], 'one line over the character bound is kept alone');
  assert.throws(() => new LogTail(0), RangeError);
  // Lines dropped for the character bound are let go of: the memory held stays near the bound.
  const big = new LogTail(2000, 1000);
  for (let i = 0; i < 500; i++) big.push(String(i % 10).repeat(400));
  assert.equal(big.snapshot().length, 2);
  assert.ok(big.heldChars() <= 1000, `held ${big.heldChars()} characters`);
});

test("a logger's children write to its tail; lines below the level are neither written nor kept", () => {
  const written: string[] = [];
  const root = createLogger('info', (line) => written.push(line), {}, new LogTail());
  root.child({ component: 'x' }).info('from the child');
  root.debug('filtered');
  root.warn('from the root');
  assert.equal(written.length, 2);
  assert.deepEqual(root.recentLines?.(), written);
  assert.deepEqual(root.child({}).recentLines?.(), written, 'a child sees the same tail');
  assert.deepEqual(createLogger('info', () => undefined).recentLines?.(), [], 'no tail: nothing kept');
});

const at = new Date('2026-12-02T04:30:00.123Z');

test('json lines: one object per line with time, level, message and fields (bigints and errors as data)', () => {
  const lines: string[] = [];
  const logger = createLogger('info', (l) => lines.push(l), { listener: 'kafka' }, null, { format: 'json', now: () => at });
  logger.info('created topic', { topic: 'orders', partitions: 3, big: 10n, error: new Error('boom') });
  assert.deepEqual(JSON.parse(lines[0]!), {
    time: '2026-12-02T04:30:00.123Z',
    level: 'info',
    msg: 'created topic',
    listener: 'kafka',
    topic: 'orders',
    partitions: 3,
    big: '10',
    error: { name: 'Error', message: 'boom' },
  });
});

test('text lines: time, padded level, message, then key=value with quoting only where needed', () => {
  const lines: string[] = [];
  const logger = createLogger('debug', (l) => lines.push(l), {}, null, { format: 'text', now: () => at }).child({ listener: 'iggy' });
  logger.warn('login failed', { peer: '127.0.0.1:5000', reason: 'wrong password', list: ['a', 'b'], skipped: undefined, error: new Error('no "such" user') });
  logger.debug('configuration', { n: 1 });
  assert.deepEqual(lines, [
    '2026-12-02T04:30:00.123Z WARN  login failed listener=iggy peer=127.0.0.1:5000 reason="wrong password" list=["a","b"] error="no \\"such\\" user"',
    '2026-12-02T04:30:00.123Z DEBUG configuration listener=iggy n=1',
  ]);
  assert.equal(formatLogLine('text', at, 'info', 'x', { empty: '' }), '2026-12-02T04:30:00.123Z INFO  x empty=""');
});

test('the default format is text on a terminal and json otherwise', () => {
  assert.equal(defaultLogFormat(true), 'text');
  assert.equal(defaultLogFormat(false), 'json');
  assert.equal(defaultLogFormat(undefined), 'json');
});

test('rate limiting: at most one line per second per kind; the next line says how many were dropped', () => {
  let nowMs = 1_000_000;
  const clock = { now: () => nowMs };
  const lines: string[] = [];
  const logger = createLogger('info', (l) => lines.push(l));
  const limiter = new LogRateLimiter(clock);
  const fields = (i: number): Record<string, unknown> => JSON.parse(lines[i]!) as Record<string, unknown>;
  assert.equal(limiter.log(logger, 'warn', 'auth-failed', 'login failed', { peer: 'a' }), true);
  for (let i = 0; i < 5; i++) assert.equal(limiter.log(logger, 'warn', 'auth-failed', 'login failed', { peer: 'b' }), false);
  assert.equal(limiter.log(logger, 'warn', 'refused', 'connection refused'), true, 'another kind is not held back');
  nowMs += 999;
  assert.equal(limiter.log(logger, 'warn', 'auth-failed', 'login failed'), false);
  assert.equal(limiter.dropped('auth-failed'), 6);
  nowMs += 1;
  assert.equal(limiter.log(logger, 'warn', 'auth-failed', 'login failed', { peer: 'c' }), true);
  assert.equal(lines.length, 3);
  assert.equal(fields(0).dropped, undefined);
  assert.equal(fields(2).peer, 'c');
  assert.equal(fields(2).dropped, 6);
  assert.equal(limiter.dropped('auth-failed'), 0);
});
