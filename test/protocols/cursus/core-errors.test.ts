import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QuartetError, allCoreErrorCodes, assertTableComplete } from '../../../src/base/errors.js';
import { classifyError } from '../../../src/protocols/cursus/codec/errors.js';
import { cursusCoreErrorTable, cursusFailureOfCoreError } from '../../../src/protocols/cursus/core-errors.js';

test('every core error code has a Cursus code', () => {
  assertTableComplete(cursusCoreErrorTable, 'cursus');
  for (const code of allCoreErrorCodes) assert.match(cursusCoreErrorTable[code], /^[A-Za-z0-9_]{1,64}$/, code);
});

test('a core error becomes a failure with the class of its Cursus code and the core message', () => {
  const failure = cursusFailureOfCoreError(new QuartetError('unknown_topic', 'unknown topic default/x'))!;
  assert.equal(failure.error.code, 'topic_not_found');
  assert.equal(failure.error.class, 'not_found');
  assert.equal(failure.error.message, 'unknown topic default/x');
  assert.equal(cursusFailureOfCoreError(new QuartetError('not_leader'))!.error.class, 'routing');
  assert.equal(classifyError(cursusCoreErrorTable.storage_error).class, 'internal');
  assert.equal(cursusFailureOfCoreError(new Error('plain')), null);
});
