// @platformatic/kafka 2.12.1's DescribeProducers v0, DescribeTransactions v0 and ListTransactions v1
// against Quartet while a KafkaJS transactional producer holds an open transaction, and after it
// commits. Exact producer ids and epochs are those InitProducerId gave (read from the core).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { platformaticKafkaPeer } from '../peers/platformatic-kafka.js';
import { startBroker, type StartedBroker } from './helpers.js';

const peer = await platformaticKafkaPeer();

describe('@platformatic/kafka transaction admin', { timeout: 60_000, skip: peer.skip }, () => {
  const { Connection, describeProducersV0, describeTransactionsV0, findErrorBy, listTransactionsV1 } = peer.kafka!;
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('lists and describes an open transaction and its producer, then the committed one', async () => {
    const topic = 'plt-txn-admin';
    await b.broker!.createTopic('default', topic, { partitions: 1 });
    const kafka = new Kafka({ clientId: 'quartet-txn', brokers: [b.bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ transactionalId: 'plt-txn', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const connection = new Connection('quartet-txn-admin');
    await connection.connect(b.host, b.port);
    try {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] });
      const core = b.broker!.transactions.describe('kafka', 'plt-txn')!;

      const listed = await listTransactionsV1.api.async(connection, [], [], -1n, null);
      assert.deepEqual(listed.transactionStates.map((s) => [s.transactionalId, Number(s.producerId), s.transactionState]), [['plt-txn', core.producerId, 'Ongoing']]);
      const described = await describeTransactionsV0.api.async(connection, ['plt-txn']);
      const [open] = described.transactionStates;
      assert.deepEqual([open!.errorCode, open!.transactionState, Number(open!.producerId), open!.producerEpoch, open!.topics.map((t) => [t.topic, t.partitions])], [0, 'Ongoing', core.producerId, core.producerEpoch, [[topic, [0]]]]);
      await assert.rejects(describeTransactionsV0.api.async(connection, ['plt-none']), (err: Error) => {
        assert.equal(findErrorBy(err, 'apiId', 'TRANSACTIONAL_ID_NOT_FOUND')?.apiCode, 105);
        return true;
      });
      const producers = await describeProducersV0.api.async(connection, [{ name: topic, partitionIndexes: [0] }]);
      const active = producers.topics[0]!.partitions[0]!.activeProducers;
      assert.deepEqual(active.map((p) => [Number(p.producerId), p.producerEpoch, p.lastSequence, Number(p.currentTxnStartOffset)]), [[core.producerId, core.producerEpoch, 1, 0]]);

      await txn.commit();
      const committed = await describeTransactionsV0.api.async(connection, ['plt-txn']);
      assert.equal(committed.transactionStates[0]!.transactionState, 'CompleteCommit');
      const none2 = await listTransactionsV1.api.async(connection, ['Ongoing'], [], -1n, null);
      assert.deepEqual(none2.transactionStates, []);
    } finally {
      await connection.close();
      await producer.disconnect();
    }
  });
});
