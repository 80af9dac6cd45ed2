import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertTableComplete, QuartetError } from '../../../src/base/errors.js';
import { AdminHttpError, errorReply, httpStatusOfCoreError } from '../../../src/server/admin/errors.js';

test('every core error has an HTTP status, each a 4xx or 5xx', () => {
  assertTableComplete(httpStatusOfCoreError, 'admin API status table');
  for (const [code, status] of Object.entries(httpStatusOfCoreError)) assert.ok(status >= 400 && status < 600, code);
});

test('a reply keeps a core error\'s code and message; anything else is a 500 that hides its message', () => {
  assert.deepEqual(errorReply(new QuartetError('unknown_topic', 'no topic t')), { status: 404, code: 'unknown_topic', message: 'no topic t' });
  assert.deepEqual(errorReply(new AdminHttpError('payload_too_large', 'big')), { status: 413, code: 'payload_too_large', message: 'big' });
  const hidden = errorReply(new Error('secret path /var/lib/x'));
  assert.equal(hidden.status, 500);
  assert.doesNotMatch(hidden.message, /secret/);
});
