// @platformatic/kafka 2.12.1 against a Quartet listener that requires SASL: an administrator
// (SCRAM-SHA-512, every global right) describes the users' SCRAM credentials
// (DescribeUserScramCredentials v0) and replaces alice's SCRAM-SHA-256 credential
// (AlterUserScramCredentials v0, salted on the client as Kafka's admin clients do); alice then
// authenticates with the new password and no longer with the old one, over a fresh connection.

import assert from 'node:assert/strict';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { platformaticKafkaPeer, type Connection, type PlatformaticKafka } from '../peers/platformatic-kafka.js';
import { startBroker, type StartedBroker } from './helpers.js';

const peer = await platformaticKafkaPeer();

const SHA256 = 1;
const SHA512 = 2;

async function connectAs(kafka: PlatformaticKafka, b: StartedBroker, mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', username: string, password: string): Promise<Connection> {
  const connection = new kafka.Connection('quartet-scram', { sasl: { mechanism, username, password } });
  await connection.connect(b.host, b.port);
  return connection;
}

describe('@platformatic/kafka SCRAM credential admin', { timeout: 60_000, skip: peer.skip }, () => {
  const kafka = peer.kafka!;
  const { alterUserScramCredentialsV0, describeUserScramCredentialsV0, metadataV12 } = kafka;
  let b: StartedBroker;
  before(async () => {
    b = await startBroker({ sasl: { users: { admin: 'admin-pw', alice: 'alice-pw' } } });
  });
  after(async () => {
    await b?.stop();
  });

  it('describes credentials, replaces one, and the new password is the one that logs in', async () => {
    const admin = await connectAs(kafka, b, 'SCRAM-SHA-512', 'admin', 'admin-pw');
    try {
      const described = await describeUserScramCredentialsV0.api.async(admin, [{ name: 'alice' }]);
      assert.deepEqual(described.results.map((r) => [r.user, r.errorCode, r.credentialInfos.map((c) => [c.mechanism, c.iterations])]), [['alice', 0, [[SHA256, 4096], [SHA512, 4096]]]]);
      const salt = randomBytes(24);
      const saltedPassword = pbkdf2Sync('alice-new', salt, 8192, 32, 'sha256');
      const altered = await alterUserScramCredentialsV0.api.async(admin, [], [{ name: 'alice', mechanism: SHA256, iterations: 8192, salt, saltedPassword }]);
      assert.deepEqual(altered.results, [{ user: 'alice', errorCode: 0, errorMessage: null }]);
      const after = await describeUserScramCredentialsV0.api.async(admin, [{ name: 'alice' }]);
      assert.deepEqual(after.results[0]!.credentialInfos.map((c) => [c.mechanism, c.iterations]), [[SHA256, 8192], [SHA512, 4096]]);
    } finally {
      await admin.close();
    }

    const alice = await connectAs(kafka, b, 'SCRAM-SHA-256', 'alice', 'alice-new');
    try {
      const md = await metadataV12.api.async(alice, [], false, false);
      assert.ok(Array.isArray(md.brokers) && md.brokers.length === 1, 'an authenticated request is answered');
    } finally {
      await alice.close();
    }
    await assert.rejects(connectAs(kafka, b, 'SCRAM-SHA-256', 'alice', 'alice-pw'));
  });
});
