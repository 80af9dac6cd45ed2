import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuartetError, allCoreErrorCodes, assertTableComplete } from '../../../src/base/errors.js';
import { isIggyErrorCode } from '../../../src/protocols/iggy/codec/index.js';
import { IggyFailure, iggyCodeOf, iggyErrorTable } from '../../../src/protocols/iggy/errors.js';

describe('iggy error table', () => {
  it('maps every core error to a known Iggy code', () => {
    assertTableComplete(iggyErrorTable, 'iggy error table');
    for (const code of allCoreErrorCodes) assert.ok(isIggyErrorCode(iggyErrorTable[code]), `${code} → ${iggyErrorTable[code]}`);
  });

  it('resolves thrown values: IggyFailure as is, QuartetError by table or override, others as storage errors', () => {
    assert.equal(iggyCodeOf(new IggyFailure(4041)), 4041);
    assert.equal(iggyCodeOf(new QuartetError('unknown_topic')), 2010);
    assert.equal(iggyCodeOf(new QuartetError('invalid_name'), { invalid_name: 2014 }), 2014);
    assert.equal(iggyCodeOf(new Error('disk')), 1);
  });
});
