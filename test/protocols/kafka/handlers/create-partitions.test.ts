import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { createPartitionsHandler } from '../../../../src/protocols/kafka/handlers/create-partitions.js';
import { adminHarness } from './admin-harness.js';

describe('CreatePartitions', () => {
  it('grows a topic, and refuses counts that are not an increase', async (t) => {
    const h = await adminHarness(t, { topics: { a: 2, b: 3, c: 3 } });
    const res = await h.call(createPartitionsHandler, 1, {
      topics: [
        { name: 'a', count: 5, assignments: null },
        { name: 'b', count: 2, assignments: null },
        { name: 'c', count: 3, assignments: null },
        { name: 'nope', count: 3, assignments: null },
      ],
      timeoutMs: 1000,
      validateOnly: false,
    });
    assert.deepEqual(res.results, [
      { name: 'a', errorCode: 0, errorMessage: null },
      { name: 'b', errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: 'Topic currently has 3 partitions, which is higher than the requested 2.' },
      { name: 'c', errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: 'Topic already has 3 partitions.' },
      { name: 'nope', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: "The topic 'nope' does not exist." },
    ]);
    assert.equal(h.broker.catalog.getTopic({ topic: 'a' })!.partitions, 5);
    assert.equal(h.broker.partition({ topic: 'a' }, 4).stats().nextOffset, 0);
  });

  it('validate_only changes nothing (v3, flexible)', async (t) => {
    const h = await adminHarness(t, { topics: { a: 1 } });
    const res = await h.call(createPartitionsHandler, 3, { topics: [{ name: 'a', count: 4, assignments: null }], timeoutMs: 1000, validateOnly: true });
    assert.deepEqual(res.results, [{ name: 'a', errorCode: 0, errorMessage: null }]);
    assert.equal(h.broker.catalog.getTopic({ topic: 'a' })!.partitions, 1);
  });

  it('checks manual assignments and duplicate names', async (t) => {
    const h = await adminHarness(t, { topics: { a: 1, b: 1, c: 1 } });
    const res = await h.call(createPartitionsHandler, 2, {
      topics: [
        { name: 'a', count: 3, assignments: [{ brokerIds: [1] }, { brokerIds: [1] }] },
        { name: 'b', count: 3, assignments: [{ brokerIds: [1] }] },
        { name: 'c', count: 2, assignments: [{ brokerIds: [9] }] },
        { name: 'd', count: 2, assignments: null },
        { name: 'd', count: 3, assignments: null },
      ],
      timeoutMs: 1000,
      validateOnly: false,
    });
    assert.deepEqual(res.results.map((r) => [r.name, r.errorCode]), [
      ['a', 0],
      ['b', ErrorCode.INVALID_REPLICA_ASSIGNMENT],
      ['c', ErrorCode.INVALID_REPLICA_ASSIGNMENT],
      ['d', ErrorCode.INVALID_REQUEST],
    ]);
    assert.equal(res.results[1]!.errorMessage, 'Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.');
    assert.equal(h.broker.catalog.getTopic({ topic: 'a' })!.partitions, 3);
  });
});
