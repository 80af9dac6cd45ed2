import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isRetriable, kafkaError, kafkaErrors } from '../../../../src/protocols/kafka/codec/errors.js';

describe('Kafka error codes', () => {
  it('covers every code from -1 to 133 exactly once', () => {
    const codes = kafkaErrors.map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length);
    for (let c = -1; c <= 133; c++) assert.ok(codes.includes(c), `code ${c}`);
    assert.equal(new Set(kafkaErrors.map((e) => e.name)).size, codes.length);
  });

  it('pins codes checked against the protocol guide', () => {
    assert.equal(ErrorCode.UNSUPPORTED_VERSION, 35);
    assert.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER, 6);
    assert.equal(ErrorCode.UNKNOWN_PRODUCER_ID, 59);
    assert.equal(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, 45);
    assert.equal(ErrorCode.DUPLICATE_SEQUENCE_NUMBER, 46);
    assert.equal(ErrorCode.PRODUCER_FENCED, 90);
    assert.equal(ErrorCode.MEMBER_ID_REQUIRED, 79);
    assert.equal(ErrorCode.REBOOTSTRAP_REQUIRED, 129);
    assert.equal(isRetriable(ErrorCode.NOT_LEADER_OR_FOLLOWER), true);
    assert.equal(isRetriable(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), true);
    assert.equal(isRetriable(ErrorCode.PRODUCER_FENCED), false);
    assert.equal(kafkaError(9999).name, 'UNKNOWN_ERROR_9999');
  });
});
