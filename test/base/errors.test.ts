import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allCoreErrorCodes, assertTableComplete, coreCodeOf, coreErrorCodes, isQuartetError, QuartetError } from '../../src/base/errors.js';

test('every core error code has a non-empty description', () => {
  assert.ok(allCoreErrorCodes.length > 0);
  for (const code of allCoreErrorCodes) {
    const description = coreErrorCodes[code];
    assert.equal(typeof description, 'string', code);
    assert.ok(description.trim().length > 0, `${code} has no description`);
    assert.match(code, /^[a-z][a-z_]*$/, `${code} is not snake_case`);
  }
});

test('QuartetError carries its code, a default message and the brand', () => {
  const err = new QuartetError('unknown_topic');
  assert.equal(err.code, 'unknown_topic');
  assert.equal(err.message, coreErrorCodes.unknown_topic);
  assert.ok(isQuartetError(err));
  assert.equal(coreCodeOf(err), 'unknown_topic');
  assert.equal(coreCodeOf(new Error('EIO')), 'storage_error');
  assert.equal(isQuartetError({ code: 'unknown_topic' }), false);
});

test('assertTableComplete accepts a total table and names missing and unknown codes', () => {
  const total = Object.fromEntries(allCoreErrorCodes.map((c, i) => [c, i]));
  assert.doesNotThrow(() => assertTableComplete(total));
  const { unknown_topic: _dropped, ...partial } = total;
  assert.throws(() => assertTableComplete(partial, 'kafka'), /kafka is incomplete: missing unknown_topic/);
  assert.throws(() => assertTableComplete({ ...total, bogus: 1 }), /unknown bogus/);
  assert.throws(() => assertTableComplete({ ...total, timeout: undefined }), /missing timeout/);
});
