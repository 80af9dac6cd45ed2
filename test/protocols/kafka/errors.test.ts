import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuartetError, allCoreErrorCodes, assertTableComplete } from '../../../src/base/errors.js';
import { ErrorCode, kafkaErrors } from '../../../src/protocols/kafka/codec/errors.js';
import { kafkaCodeOf, kafkaErrorTable } from '../../../src/protocols/kafka/errors.js';

describe('Kafka error table', () => {
  it('maps every core error code to a known Kafka error', () => {
    assertTableComplete(kafkaErrorTable, 'kafkaErrorTable');
    const known = new Set(kafkaErrors.map((e) => e.code));
    for (const code of allCoreErrorCodes) {
      const k = kafkaErrorTable[code];
      assert.ok(known.has(k) && k !== ErrorCode.NONE, `${code} → ${k}`);
    }
  });

  it('maps thrown values: QuartetErrors by code, anything else as a storage error', () => {
    assert.equal(kafkaCodeOf(new QuartetError('offset_out_of_range')), ErrorCode.OFFSET_OUT_OF_RANGE);
    assert.equal(kafkaCodeOf(new QuartetError('out_of_order_sequence')), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert.equal(kafkaCodeOf(new Error('EIO')), ErrorCode.KAFKA_STORAGE_ERROR);
  });
});
