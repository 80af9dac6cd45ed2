// DescribeTransactions, ListTransactions and DescribeProducers over the core's transaction
// coordinator and producer state.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { addPartitionsToTxnHandler } from '../../../../src/protocols/kafka/handlers/add-partitions-to-txn.js';
import { describeProducersHandler } from '../../../../src/protocols/kafka/handlers/describe-producers.js';
import { describeTransactionsHandler } from '../../../../src/protocols/kafka/handlers/describe-transactions.js';
import { endTxnHandler } from '../../../../src/protocols/kafka/handlers/end-txn.js';
import { listTransactionsHandler } from '../../../../src/protocols/kafka/handlers/list-transactions.js';
import { adminHarness } from './admin-harness.js';
import { sessionReadingTopic } from './admin-users.js';
import { txnHarness } from './transactions-harness.js';

describe('transaction admin APIs', () => {
  it('describe an open transaction, its partitions and its producer, then the completed one', async (t) => {
    const h = await txnHarness(t, { topics: { out: 2 } });
    const id = await h.initTxn('tx-1', 30_000);
    const idle = await h.initTxn('tx-idle');
    assert.equal((await h.call(addPartitionsToTxnHandler, 3, { ...id, topics: [{ name: 'out', partitions: [1, 0] }] })).results.every((t) => t.results.every((p) => p.partitionErrorCode === 0)), true);
    const startedAt = h.clock.now();
    const firstOffset = await h.produceTxn('out', 1, id, 0, ['a', 'b', 'c']);

    const described = await h.call(describeTransactionsHandler, 0, { transactionalIds: ['tx-1', 'nope'] });
    assert.deepEqual(described.transactionStates.map((s) => [s.transactionalId, s.errorCode, s.transactionState, s.transactionTimeoutMs, s.transactionStartTimeMs, s.producerId, s.producerEpoch, s.topics]), [
      ['tx-1', 0, 'Ongoing', 30_000, startedAt, id.producerId, id.producerEpoch, [{ topic: 'out', partitions: [0, 1] }]],
      ['nope', ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, '', 0, -1, -1, -1, []],
    ]);

    const producers = await h.call(describeProducersHandler, 0, { topics: [{ name: 'out', partitionIndexes: [1, 0, 7] }, { name: 'nope', partitionIndexes: [0] }] });
    assert.deepEqual(producers.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode, p.activeProducers.map((a) => [a.producerId, a.producerEpoch, a.lastSequence, a.lastTimestamp, a.currentTxnStartOffset])])]), [
      ['out', [[1, 0, [[id.producerId, id.producerEpoch, 2, h.clock.now(), firstOffset]]], [0, 0, []], [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []]]],
      ['nope', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []]]],
    ]);

    const listed = await h.call(listTransactionsHandler, 0, { stateFilters: [], producerIdFilters: [] });
    assert.deepEqual(listed.transactionStates.map((s) => [s.transactionalId, s.producerId, s.transactionState]), [
      ['tx-1', id.producerId, 'Ongoing'],
      ['tx-idle', idle.producerId, 'Empty'],
    ]);
    const ongoing = await h.call(listTransactionsHandler, 1, { stateFilters: ['Ongoing', 'Bogus'], producerIdFilters: [], durationFilter: -1 });
    assert.deepEqual([ongoing.transactionStates.map((s) => s.transactionalId), ongoing.unknownStateFilters], [['tx-1'], ['Bogus']]);
    assert.deepEqual((await h.call(listTransactionsHandler, 0, { stateFilters: [], producerIdFilters: [idle.producerId] })).transactionStates.map((s) => s.transactionalId), ['tx-idle']);
    h.clock.advance(5_000);
    assert.deepEqual((await h.call(listTransactionsHandler, 1, { stateFilters: [], producerIdFilters: [], durationFilter: 5_000 })).transactionStates.map((s) => s.transactionalId), ['tx-1']);
    assert.deepEqual((await h.call(listTransactionsHandler, 1, { stateFilters: [], producerIdFilters: [], durationFilter: 5_001 })).transactionStates, []);

    assert.equal((await h.call(endTxnHandler, 3, { ...id, committed: true })).errorCode, 0);
    const done = (await h.call(describeTransactionsHandler, 0, { transactionalIds: ['tx-1'] })).transactionStates[0]!;
    assert.deepEqual([done.transactionState, done.topics], ['CompleteCommit', []]);
    const after = await h.call(describeProducersHandler, 0, { topics: [{ name: 'out', partitionIndexes: [1] }] });
    assert.equal(after.topics[0]!.partitions[0]!.activeProducers[0]!.currentTxnStartOffset, -1, 'no open transaction after the commit');
  });
});

describe('DescribeProducers authorization', () => {
  it('needs READ (poll_messages) on the topic', async (t) => {
    const h = await adminHarness(t, { topics: { mine: 1, theirs: 1 } });
    const session = await sessionReadingTopic(h, 'reader', 'mine');
    const res = await h.call(describeProducersHandler, 0, { topics: [{ name: 'mine', partitionIndexes: [0] }, { name: 'theirs', partitionIndexes: [0] }] }, session);
    assert.deepEqual(res.topics.map((t) => [t.name, t.partitions[0]!.errorCode]), [['mine', 0], ['theirs', ErrorCode.TOPIC_AUTHORIZATION_FAILED]]);
  });
});
