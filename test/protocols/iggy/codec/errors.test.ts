import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IggyErrorCode, iggyErrorName, isIggyErrorCode } from '../../../../src/protocols/iggy/codec/index.js';

describe('iggy error codes', () => {
  it('are unique and resolve back to their names', () => {
    const codes = Object.values(IggyErrorCode);
    assert.equal(new Set(codes).size, codes.length);
    for (const [name, code] of Object.entries(IggyErrorCode)) assert.equal(iggyErrorName(code), name);
    assert.equal(IggyErrorCode.unauthenticated, 40);
    assert.equal(IggyErrorCode.streamIdNotFound, 1009);
    assert.equal(IggyErrorCode.incompatibleProtocolVersion, 14003);
    assert.equal(isIggyErrorCode(2), false);
  });
});
