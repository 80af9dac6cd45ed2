import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyV1Error, enrichErrorResponse, formatV1Error, splitResponseFields } from '../../../src/protocols/cursus/v1/index.js';

describe('v1 error lines', () => {
  it('are written as v1 prints them: %s values, %q reasons, bare details', () => {
    assert.equal(formatV1Error('missing_topic', [['command', 'PUBLISH']]), 'ERROR: missing_topic command=PUBLISH');
    assert.equal(formatV1Error('decode_failed', [['reason', 'invalid topic length']]), 'ERROR: decode_failed reason="invalid topic length"');
    assert.equal(formatV1Error('NOT_LEADER', ['LEADER_IS 10.0.0.2:9000']), 'ERROR: NOT_LEADER LEADER_IS 10.0.0.2:9000');
    assert.equal(formatV1Error('OFFSET_OUT_OF_RANGE', [['requested', '9'], ['earliest', '0'], ['latest', '5']]), 'ERROR: OFFSET_OUT_OF_RANGE requested=9 earliest=0 latest=5');
    assert.equal(formatV1Error('x', [['topic', 'a b']]), 'ERROR: x topic="a b"', 'a value a reader could not split back is quoted');
    assert.equal(formatV1Error('x', [['topic', '']]), 'ERROR: x topic=');
  });

  it('are classified by v1\'s registry, then by its fallback rule', () => {
    assert.deepEqual(classifyV1Error('NOT_LEADER'), { class: 'routing', retryable: true });
    assert.deepEqual(classifyV1Error('snapshot_replicate_failed'), { class: 'internal', retryable: false }, 'v1 differs from Wire v2 here');
    assert.deepEqual(classifyV1Error('whatever_not_found'), { class: 'not_found', retryable: false });
    assert.deepEqual(classifyV1Error('invalid_thing'), { class: 'validation', retryable: false });
    assert.deepEqual(classifyV1Error('NOT_AUTHORIZED_FOR_GROUP'), { class: 'authorization', retryable: false });
    assert.deepEqual(classifyV1Error('boom'), { class: 'internal', retryable: false });
  });
});

describe('EnrichErrorResponse (structured_errors_v1)', () => {
  it('inserts class= and retryable= right after the code', () => {
    assert.equal(enrichErrorResponse('ERROR: topic_not_found topic=orders'), 'ERROR: topic_not_found class=not_found retryable=false topic=orders');
    assert.equal(enrichErrorResponse('ERROR: NOT_LEADER LEADER_IS h:9000'), 'ERROR: NOT_LEADER class=routing retryable=true LEADER_IS h:9000');
    assert.equal(enrichErrorResponse('ERROR: invalid_consume_syntax'), 'ERROR: invalid_consume_syntax class=validation retryable=false');
  });

  it('leaves a line that already carries both, and success lines, as they are', () => {
    const negotiated = 'ERROR: UNSUPPORTED_PROTOCOL_VERSION class=validation retryable=false requested=2 min=1 max=1';
    assert.equal(enrichErrorResponse(negotiated), negotiated);
    assert.equal(enrichErrorResponse('OK offset=3'), 'OK offset=3');
    assert.equal(enrichErrorResponse('{"status":"OK"}'), '{"status":"OK"}');
  });

  it('adds only what is missing, and replaces nothing for an unknown class', () => {
    assert.equal(enrichErrorResponse('ERROR: boom class=fencing'), 'ERROR: boom retryable=false class=fencing');
    assert.equal(enrichErrorResponse('ERROR: NOT_LEADER retryable=false'), 'ERROR: NOT_LEADER class=routing retryable=false');
    assert.equal(enrichErrorResponse('ERROR: boom class=nope retryable=true'), 'ERROR: boom class=internal retryable=false class=nope retryable=true');
  });

  it('splits fields outside quotes, as clients do', () => {
    assert.deepEqual(splitResponseFields('invalid_topic_name topic="a b" reason="bad \\"x\\""'), ['invalid_topic_name', 'topic="a b"', 'reason="bad \\"x\\""']);
  });
});
