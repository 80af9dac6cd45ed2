import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LogTail, createLogger } from '../../src/base/logger.js';

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
