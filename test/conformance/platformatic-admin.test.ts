// @platformatic/kafka 2.12.1 Admin against Quartet, for the admin APIs the other target clients
// lack: describeLogDirs (DescribeLogDirs v4) and deleteConsumerGroupOffsets (OffsetDelete v0,
// after alterConsumerGroupOffsets commits them), alterClientQuotas / describeClientQuotas (v1).
// Exact results are asserted; sizes are compared with what the broker's own logs report.

import assert from 'node:assert/strict';
import { resolve, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { platformaticKafkaPeer, type Admin } from '../peers/platformatic-kafka.js';
import { startBroker, type StartedBroker } from './helpers.js';

const peer = await platformaticKafkaPeer();

describe('@platformatic/kafka Admin', { timeout: 60_000, skip: peer.skip }, () => {
  const { Admin, Producer, ProduceAcks, findErrorBy, stringSerializers } = peer.kafka!;
  let b: StartedBroker;
  let admin: Admin;
  before(async () => {
    b = await startBroker();
    admin = new Admin({ clientId: 'quartet-admin', bootstrapBrokers: [b.bootstrap] });
  });
  after(async () => {
    await admin?.close();
    await b?.stop();
  });

  it('describeLogDirs: one log dir, each partition with the size of its log', async () => {
    const topic = 'plt-logdirs';
    await b.broker!.createTopic('default', topic, { partitions: 2 });
    const producer = new Producer({ clientId: 'quartet-admin', bootstrapBrokers: [b.bootstrap], serializers: stringSerializers, autocreateTopics: false });
    try {
      await producer.send({ messages: [{ topic, partition: 1, key: 'k', value: 'x'.repeat(500) }], acks: ProduceAcks.LEADER });
    } finally {
      await producer.close();
    }
    const described = await admin.describeLogDirs({ topics: [{ name: topic, partitions: [0, 1] }] });
    assert.equal(described.length, 1);
    const [dir] = described[0]!.results;
    assert.equal(dir!.logDir, resolve(join(b.broker!.dataDir, 'logs')));
    const sizes = dir!.topics.flatMap((t) => t.partitions.map((p) => [t.name, p.partitionIndex, Number(p.partitionSize), Number(p.offsetLag), p.isFutureKey]));
    const logSize = (p: number) => b.broker!.partition({ topic }, p).stats().sizeBytes;
    assert.ok(logSize(1) > 500);
    assert.deepEqual(sizes, [[topic, 0, 0, 0, false], [topic, 1, logSize(1), 0, false]]);
    assert.ok(Number(dir!.totalBytes) > 0 && Number(dir!.usableBytes) > 0);
  });

  it('deleteConsumerGroupOffsets: the named partitions lose their committed offsets, the others keep them', async () => {
    const topic = 'plt-offsets';
    const groupId = 'plt-offsets-group';
    await b.broker!.createTopic('default', topic, { partitions: 2 });
    await admin.alterConsumerGroupOffsets({ groupId, topics: [{ name: topic, partitionOffsets: [{ partition: 0, offset: 3n }, { partition: 1, offset: 4n }] }] });
    const deleted = await admin.deleteConsumerGroupOffsets({ groupId, topics: [{ name: topic, partitionIndexes: [1] }] });
    assert.deepEqual(deleted, [{ name: topic, partitionIndexes: [1] }]);
    const listed = await admin.listConsumerGroupOffsets({ groups: [groupId] });
    const offsets = listed[0]!.topics.flatMap((t) => t.partitions.map((p) => [t.name, p.partitionIndex, Number(p.committedOffset)]));
    assert.deepEqual(offsets, [[topic, 0, 3]]);
    await assert.rejects(admin.deleteConsumerGroupOffsets({ groupId: 'plt-no-such-group', topics: [{ name: topic, partitionIndexes: [0] }] }), (err: Error) => {
      assert.equal(findErrorBy(err, 'apiId', 'GROUP_ID_NOT_FOUND')?.apiCode, 69);
      return true;
    });
  });

  it('alterClientQuotas and describeClientQuotas: quotas per user and client id, defaults included', async () => {
    const altered = await admin.alterClientQuotas({
      entries: [
        { entities: [{ entityType: 'user', entityName: 'plt-alice' }, { entityType: 'client-id', entityName: null }], ops: [{ key: 'producer_byte_rate', value: 2048, remove: false }] },
        { entities: [{ entityType: 'client-id', entityName: 'plt-app' }], ops: [{ key: 'consumer_byte_rate', value: 4096, remove: false }, { key: 'request_percentage', value: 25, remove: false }] },
      ],
    });
    assert.deepEqual(altered.map((e) => e.errorCode), [0, 0]);
    const described = await admin.describeClientQuotas({ components: [{ entityType: 'client-id', matchType: 2 }] });
    const text = described.map((e) => [e.entity.map((p) => `${p.entityType}=${p.entityName}`).join(','), e.values.map((v) => `${v.key}=${v.value}`).sort().join(',')]).sort();
    assert.deepEqual(text, [
      ['client-id=plt-app', 'consumer_byte_rate=4096,request_percentage=25'],
      ['user=plt-alice,client-id=null', 'producer_byte_rate=2048'],
    ]);
    const strict = await admin.describeClientQuotas({ components: [{ entityType: 'client-id', matchType: 0, match: 'plt-app' }], strict: true });
    assert.equal(strict.length, 1);
    assert.deepEqual(b.broker!.clientQuotas.resolve('producer_byte_rate', 'plt-alice', 'any-client')?.quota, 2048, 'the core store holds what the client set');
  });
});
