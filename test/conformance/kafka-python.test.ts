// kafka-python 2.0.2 (Debian's python3-kafka, run with /usr/bin/python3) against Quartet: the
// admin client (CreateTopics v3, Metadata, DescribeConfigs v2, CreatePartitions v1, DeleteTopics
// v3), a producer and a group consumer, and the same produce/consume over SASL PLAIN and
// SCRAM-SHA-256 against a broker that requires SASL. kafka-python uses SaslHandshake v0 and then
// raw size-prefixed tokens (handlers/sasl-raw.ts); AlterConfigs v1 and the ACL APIs v1. The client side is python/kafka_python_admin.py;
// this file starts the broker and checks its JSON report.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot, requireClient, run, startBroker, type StartedBroker } from './helpers.js';

// Debian's module lives in the system interpreter; a `python3` earlier on PATH may lack it.
const python = '/usr/bin/python3';
const client = requireClient('python3-kafka', [python, '-c', 'import kafka'], 'apt-get install python3-kafka');
const script = join(repoRoot, 'test/conformance/python/kafka_python_admin.py');

async function scenario(bootstrap: string, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(python, [script, bootstrap, ...args], { timeoutMs: 30_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

const produced = {
  create: [['X', 0]],
  offsets: [
    [0, 0], [0, 1], [0, 2], [0, 3], [0, 4],
    [1, 0], [1, 1], [1, 2], [1, 3], [1, 4],
  ],
  consumed: ['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9'],
  committed: [
    [0, 5],
    [1, 5],
  ],
};

describe('kafka-python', { skip: client.skip, timeout: 60_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('admin: creates, lists, describes, grows and deletes topics', async () => {
    assert.deepEqual(await scenario(b.bootstrap, 'admin'), {
      create: [
        ['kp-admin', 0],
        ['kp-other', 0],
      ],
      create_again: 'TopicAlreadyExistsError',
      create_rf3: 'InvalidReplicationFactorError',
      list: ['kp-admin', 'kp-other'],
      describe: {
        error_code: 0,
        resource_type: 2,
        resource_name: 'kp-admin',
        configs: {
          'retention.ms': ['60000', false, 1],
          'cleanup.policy': ['compact', false, 1],
          'segment.bytes': ['1073741824', false, 5],
          'min.insync.replicas': ['1', true, 5],
        },
      },
      create_partitions: [['kp-admin', 0]],
      partitions_after: 5,
      delete: [
        ['kp-admin', 0],
        ['kp-other', 0],
      ],
      list_after: [],
    });
  });

  it('alters topic configs (legacy AlterConfigs) and creates, describes and deletes ACLs', async () => {
    await b.broker!.createTopic('default', 'kp-acl', { partitions: 1 });
    await b.broker!.users.create({ username: 'alice', password: 'alice-pw' });
    const report = await scenario(b.bootstrap, 'acls');
    const read = ['TOPIC', 'kp-acl', 'LITERAL', 'User:alice', '*', 'READ', 'ALLOW'];
    assert.deepEqual(report, {
      alter_configs: [[0, 'kp-acl']],
      created: [read],
      refused: [['WRITE', 'InvalidRequestError']],
      described: [read],
      deleted: [[read]],
      after_delete: [],
    });
    assert.equal(b.broker!.catalog.getTopic({ topic: 'kp-acl' })!.config['retention.ms'], 90000);
  });

  it('a producer_byte_rate quota throttles the producer (throttle_time_ms > 0) and bounds its rate', async (t) => {
    const quotaBytesPerSecond = 100_000;
    await b.broker!.createTopic('default', 'kp-quota', { partitions: 1 });
    await b.broker!.clientQuotas.alter({ clientId: 'kp-quota' }, [{ key: 'producer_byte_rate', value: quotaBytesPerSecond }]);
    const totalBytes = 1_600 * 1024;
    const report = (await scenario(b.bootstrap, 'quota', String(totalBytes))) as { sent: number; elapsed_s: number; throttle_max_ms: number };
    t.diagnostic(`${report.sent} KiB in ${report.elapsed_s.toFixed(2)} s, produce-throttle-time-max ${report.throttle_max_ms} ms`);
    assert.equal(report.sent, totalBytes / 1024, 'every record was acknowledged');
    assert.ok(report.throttle_max_ms > 0, `the broker answered throttle_time_ms > 0 (max ${report.throttle_max_ms})`);
    // The window lets ~11 s worth of quota through at once; the rest goes at most at the quota
    // (half of that time is asserted, for slack). Unthrottled, this takes well under a second.
    const minSeconds = ((totalBytes - 11 * quotaBytesPerSecond) / quotaBytesPerSecond) * 0.5;
    assert.ok(report.elapsed_s >= minSeconds, `took ${report.elapsed_s.toFixed(2)} s, at least ${minSeconds.toFixed(2)} s expected`);
  });

  it('produces and consumes with a group, and commits', async () => {
    assert.deepEqual(await scenario(b.bootstrap, 'produce'), { ...produced, create: [['kp-data', 0]] });
  });
});

describe('kafka-python with SASL required', { skip: client.skip, timeout: 60_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker({ sasl: { users: { alice: 'alice-secret' } } });
  });
  after(async () => {
    await b?.stop();
  });

  it('PLAIN (SaslHandshake v0, raw tokens): produces and consumes', async () => {
    assert.deepEqual(await scenario(b.bootstrap, 'sasl-plain', 'alice', 'alice-secret'), { ...produced, create: [['kp-sasl-plain', 0]] });
  });

  it('SCRAM-SHA-256 (raw tokens): produces and consumes', async () => {
    assert.deepEqual(await scenario(b.bootstrap, 'sasl-scram-sha-256', 'alice', 'alice-secret'), { ...produced, create: [['kp-sasl-scram', 0]] });
  });

  it('a wrong password does not get in', async () => {
    assert.deepEqual(await scenario(b.bootstrap, 'sasl-bad-password', 'PLAIN'), { result: 'NoBrokersAvailable' });
  });
});
