// KafkaJS 2.2.4 admin client against Quartet: createTopics (CreateTopics v3, with configs, an
// existing topic, a refused replication factor, validateOnly), fetchTopicMetadata, describeConfigs
// (DescribeConfigs v2 with synonyms, for a topic and for the broker), alterConfigs (the legacy
// AlterConfigs v1: the whole set replaced, a refused value), the ACL APIs (v1), createPartitions
// (CreatePartitions v1) and deleteTopics (DeleteTopics v1); then SASL over SaslHandshake v1 +
// SaslAuthenticate v1 (PLAIN and SCRAM-SHA-512) against a broker that requires it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type ConfigResourceTypes, type SASLOptions } from 'kafkajs';
import { grantsOnTopic, startBroker, type StartedBroker } from './helpers.js';

// kafkajs is CommonJS: its enums are not named exports under ESM, so the ids are spelled out.
const TOPIC = 2 as ConfigResourceTypes;
const BROKER = 4 as ConfigResourceTypes;

function client(bootstrap: string, sasl?: SASLOptions): Kafka {
  return new Kafka({ clientId: 'quartet-admin', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 1, initialRetryTime: 100 }, ...(sasl ? { sasl } : {}) });
}

describe('KafkaJS admin', { timeout: 40_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('creates, describes and deletes ACLs as Quartet grants (CreateAcls/DescribeAcls/DeleteAcls v1)', async () => {
    await b.broker!.createTopic('default', 'acl-kjs', { partitions: 1 });
    await b.broker!.users.create({ username: 'kjs-alice', password: 'alice-pw' });
    const admin = client(b.bootstrap).admin();
    await admin.connect();
    // AclResourceTypes TOPIC 2, ResourcePatternTypes LITERAL 3, AclOperationTypes ANY 1 / READ 3 / WRITE 4, AclPermissionTypes ANY 1 / DENY 2 / ALLOW 3.
    const acl = (operation: number, permissionType: number) => ({ resourceType: 2, resourceName: 'acl-kjs', resourcePatternType: 3, principal: 'User:kjs-alice', host: '*', operation, permissionType });
    const filter = { resourceType: 2, resourceName: 'acl-kjs', resourcePatternType: 3, principal: 'User:kjs-alice', host: '*', operation: 1, permissionType: 1 };
    try {
      assert.equal(await admin.createAcls({ acl: [acl(3, 3)] as never }), true);
      await assert.rejects(admin.createAcls({ acl: [acl(4, 2)] as never }), (err: Error & { type?: string }) => {
        assert.equal(err.type, 'INVALID_REQUEST', 'DENY has no Quartet grant');
        return true;
      });
      const described = await admin.describeAcls(filter as never);
      assert.deepEqual(described.resources.map((r) => [r.resourceName, r.acls.map((a) => [a.principal, a.host, a.operation, a.permissionType])]), [['acl-kjs', [['User:kjs-alice', '*', 3, 3]]]]);
      const deleted = await admin.deleteAcls({ filters: [filter] as never });
      assert.deepEqual(deleted.filterResponses.map((f) => [f.errorCode, f.matchingAcls.map((m) => [m.resourceName, m.operation])]), [[0, [['acl-kjs', 3]]]]);
      assert.deepEqual((await admin.describeAcls(filter as never)).resources, []);
    } finally {
      await admin.disconnect();
    }
  });

  it('creates, describes, grows and deletes topics', async () => {
    const admin = client(b.bootstrap).admin();
    await admin.connect();
    try {
      const created = await admin.createTopics({
        topics: [{ topic: 'kjs-admin', numPartitions: 2, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
      });
      assert.equal(created, true);
      assert.equal(await admin.createTopics({ topics: [{ topic: 'kjs-admin', numPartitions: 2 }] }), false, 'an existing topic is reported, not thrown');
      // waitForLeaders would wait for the metadata of a topic validate_only did not create.
      assert.equal(await admin.createTopics({ topics: [{ topic: 'kjs-dry', numPartitions: 1 }], validateOnly: true, waitForLeaders: false }), true);
      await assert.rejects(admin.createTopics({ topics: [{ topic: 'kjs-rf3', numPartitions: 1, replicationFactor: 3 }] }), (err: Error & { errors?: Array<{ type: string }> }) => {
        assert.deepEqual(err.errors?.map((e) => e.type), ['INVALID_REPLICATION_FACTOR']);
        return true;
      });
      assert.deepEqual((await admin.listTopics()).filter((t) => t.startsWith('kjs-')), ['kjs-admin']);

      const metadata = await admin.fetchTopicMetadata({ topics: ['kjs-admin'] });
      assert.deepEqual(metadata.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => [p.partitionId, p.leader, p.replicas, p.isr]).sort() })), [
        { name: 'kjs-admin', partitions: [[0, 1, [1], [1]], [1, 1, [1], [1]]] },
      ]);

      const described = await admin.describeConfigs({
        resources: [
          { type: TOPIC, name: 'kjs-admin', configNames: ['retention.ms', 'cleanup.policy', 'min.insync.replicas'] },
          { type: BROKER, name: '1', configNames: ['num.partitions', 'default.replication.factor'] },
        ],
        includeSynonyms: true,
      });
      const [topic, broker] = described.resources;
      assert.deepEqual([topic!.errorCode, topic!.resourceName, topic!.resourceType], [0, 'kjs-admin', TOPIC]);
      assert.deepEqual(
        topic!.configEntries.map((e) => [e.configName, e.configValue, e.readOnly, e.isDefault, e.configSource, e.configSynonyms.map((s) => [s.configName, s.configValue, s.configSource])]),
        [
          ['retention.ms', '3600000', false, false, 1, [['retention.ms', '3600000', 1], ['log.retention.ms', '604800000', 5]]],
          ['cleanup.policy', 'delete', false, true, 5, [['log.cleanup.policy', 'delete', 5]]],
          ['min.insync.replicas', '1', true, true, 5, [['min.insync.replicas', '1', 5]]],
        ],
      );
      assert.deepEqual([broker!.errorCode, broker!.resourceName], [0, '1']);
      assert.deepEqual(
        broker!.configEntries.map((e) => [e.configName, e.configValue, e.readOnly, e.configSource]),
        [
          ['num.partitions', '1', true, 4],
          ['default.replication.factor', '1', true, 5],
        ],
      );

      await admin.alterConfigs({ resources: [{ type: TOPIC, name: 'kjs-admin', configEntries: [{ name: 'retention.bytes', value: '5000000' }] }], validateOnly: false });
      const altered = await admin.describeConfigs({ resources: [{ type: TOPIC, name: 'kjs-admin', configNames: ['retention.ms', 'retention.bytes'] }], includeSynonyms: false });
      assert.deepEqual(altered.resources[0]!.configEntries.map((e) => [e.configName, e.configValue, e.configSource]), [
        ['retention.ms', '604800000', 5],
        ['retention.bytes', '5000000', 1],
      ], 'retention.ms, left out, went back to its default');
      await assert.rejects(admin.alterConfigs({ resources: [{ type: TOPIC, name: 'kjs-admin', configEntries: [{ name: 'min.insync.replicas', value: '3' }] }], validateOnly: false }), (err: Error & { type?: string }) => {
        assert.equal(err.type, 'INVALID_CONFIG');
        return true;
      });

      await admin.createPartitions({ topicPartitions: [{ topic: 'kjs-admin', count: 4 }] });
      const grown = await admin.fetchTopicMetadata({ topics: ['kjs-admin'] });
      assert.equal(grown.topics[0]!.partitions.length, 4);
      await assert.rejects(admin.createPartitions({ topicPartitions: [{ topic: 'kjs-admin', count: 2 }] }), (err: Error & { type?: string }) => {
        assert.equal(err.type, 'INVALID_PARTITIONS');
        return true;
      });

      await admin.deleteTopics({ topics: ['kjs-admin'] });
      assert.deepEqual((await admin.listTopics()).filter((t) => t.startsWith('kjs-')), []);
    } finally {
      await admin.disconnect();
    }
  });
});

describe('KafkaJS with SASL required', { timeout: 40_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker({ sasl: { users: { alice: 'alice-secret' } } });
  });
  after(async () => {
    await b?.stop();
  });

  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
    it(`${mechanism}: authenticates, then administers`, async () => {
      const admin = client(b.bootstrap, { mechanism, username: 'alice', password: 'alice-secret' }).admin();
      await admin.connect();
      try {
        assert.equal(await admin.createTopics({ topics: [{ topic: `kjs-sasl-${mechanism}`, numPartitions: 1 }] }), true);
        assert.ok((await admin.listTopics()).includes(`kjs-sasl-${mechanism}`));
      } finally {
        await admin.disconnect();
      }
    });
  }

  it('a client without SASL is refused (the connection closes at its first request past ApiVersions)', async () => {
    const admin = client(b.bootstrap).admin();
    try {
      await assert.rejects(admin.connect().then(() => admin.listTopics()));
    } finally {
      await admin.disconnect();
    }
  });

  it('a user granted one topic consumes it in a group and commits; other groups and topics are refused', async () => {
    const alice = client(b.bootstrap, { mechanism: 'plain', username: 'alice', password: 'alice-secret' });
    const producer = alice.producer();
    await producer.connect();
    try {
      await producer.send({ topic: 'kjs-granted', messages: [{ value: 'g1' }, { value: 'g2' }] });
      await producer.send({ topic: 'kjs-payroll', messages: [{ value: 'p1' }] });
    } finally {
      await producer.disconnect();
    }
    await b.broker!.users.create({ username: 'carol', password: 'carol-secret', permissions: grantsOnTopic(b.broker!, 'kjs-granted', { readTopic: true, pollMessages: true }) });
    // Alice's group over payroll: carol may not see it, nor join it.
    const payroll = alice.consumer({ groupId: 'kjs-payroll-group', sessionTimeout: 10_000, heartbeatInterval: 200, maxWaitTimeInMs: 100 });
    await payroll.connect();
    await payroll.subscribe({ topic: 'kjs-payroll', fromBeginning: true });
    const payrollSeen = new Promise<void>((resolve) => void payroll.run({ eachMessage: async () => resolve() }));
    const carol = client(b.bootstrap, { mechanism: 'scram-sha-256', username: 'carol', password: 'carol-secret' });
    const consumer = carol.consumer({ groupId: 'kjs-carol-group', sessionTimeout: 10_000, heartbeatInterval: 200, maxWaitTimeInMs: 100 });
    const admin = carol.admin();
    try {
      await payrollSeen;
      await consumer.connect();
      await consumer.subscribe({ topic: 'kjs-granted', fromBeginning: true });
      const values: string[] = [];
      const both = new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            values.push(message.value!.toString());
            if (values.length === 2) resolve();
          },
        });
      });
      const deadline = setTimeout(() => void consumer.disconnect(), 20_000);
      await both;
      clearTimeout(deadline);
      assert.deepEqual(values, ['g1', 'g2']);
      await consumer.commitOffsets([{ topic: 'kjs-granted', partition: 0, offset: '2' }]);
      await admin.connect();
      assert.deepEqual((await admin.fetchOffsets({ groupId: 'kjs-carol-group', topics: ['kjs-granted'] }))[0]!.partitions.map((p) => p.offset), ['2']);
      assert.deepEqual((await admin.listGroups()).groups.map((g) => g.groupId).sort(), ['kjs-carol-group'], "alice's group is not listed");
      const described = await admin.describeGroups(['kjs-payroll-group']).then(
        (r) => JSON.stringify(r.groups),
        (err: Error) => `${err.name}: ${err.message}`,
      );
      assert.match(described, /Group authorization failed/, 'DescribeGroups of a group over payroll is refused');
      assert.deepEqual(await admin.listTopics(), ['kjs-granted']);
    } finally {
      await admin.disconnect();
      await consumer.disconnect();
      await payroll.disconnect();
    }
  });

  it('a wrong password fails with SASL_AUTHENTICATION_FAILED', async () => {
    const admin = client(b.bootstrap, { mechanism: 'scram-sha-512', username: 'alice', password: 'wrong' }).admin();
    await assert.rejects(admin.connect(), (err: Error) => {
      assert.equal(err.name, 'KafkaJSSASLAuthenticationError');
      assert.match(err.message, /SASL SCRAM SHA512 authentication failed/);
      return true;
    });
    await admin.disconnect();
  });
});
