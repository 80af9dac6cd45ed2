// DescribeUserScramCredentials and AlterUserScramCredentials over Quartet's users: a credential
// set through Kafka is the one the SCRAM exchange then checks.
import assert from 'node:assert/strict';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { alterUserScramCredentialsHandler } from '../../../../src/protocols/kafka/handlers/alter-user-scram-credentials.js';
import { describeUserScramCredentialsHandler } from '../../../../src/protocols/kafka/handlers/describe-user-scram-credentials.js';
import { saslAuthenticateHandler } from '../../../../src/protocols/kafka/handlers/sasl-authenticate.js';
import { saslHandshakeHandler } from '../../../../src/protocols/kafka/handlers/sasl-handshake.js';
import { ScramClient, type ScramMechanism } from '../../../../src/protocols/kafka/sasl/scram.js';
import { adminHarness, type AdminHarness } from './admin-harness.js';
import { sessionWith } from './admin-users.js';

const SHA256 = 1;
const SHA512 = 2;

async function scramLogin(h: AdminHarness, mechanism: ScramMechanism, user: string, password: string): Promise<boolean> {
  const session = h.newSession();
  assert.equal((await h.call(saslHandshakeHandler, 1, { mechanism }, session)).errorCode, 0);
  const client = new ScramClient(mechanism, user, password);
  const first = await h.call(saslAuthenticateHandler, 1, { authBytes: client.firstMessage() }, session);
  if (first.errorCode !== 0) return false;
  const final = await h.call(saslAuthenticateHandler, 1, { authBytes: client.finalMessage(first.authBytes) }, session);
  return final.errorCode === 0 && session.principal === user;
}

function upsertion(name: string, mechanism: number, password: string, iterations = 4096) {
  const salt = randomBytes(16);
  const saltedPassword = pbkdf2Sync(password, salt, iterations, mechanism === SHA256 ? 32 : 64, mechanism === SHA256 ? 'sha256' : 'sha512');
  return { name, mechanism, iterations, salt, saltedPassword };
}

describe('SCRAM credentials over Kafka', () => {
  it('describes every user with credentials, then one by name; refuses unknown and duplicate names', async (t) => {
    const h = await adminHarness(t, { users: { alice: 'alice-pw' } });
    const all = await h.call(describeUserScramCredentialsHandler, 0, { users: null });
    assert.deepEqual(all.results.map((r) => [r.user, r.errorCode, r.credentialInfos.map((c) => [c.mechanism, c.iterations])]), [
      ['root', 0, [[SHA256, 4096], [SHA512, 4096]]],
      ['alice', 0, [[SHA256, 4096], [SHA512, 4096]]],
    ]);
    const some = await h.call(describeUserScramCredentialsHandler, 0, { users: [{ name: 'alice' }, { name: 'ghost' }, { name: 'root' }, { name: 'root' }] });
    assert.deepEqual(some.results.map((r) => [r.user, r.errorCode]), [['alice', 0], ['ghost', ErrorCode.RESOURCE_NOT_FOUND], ['root', ErrorCode.DUPLICATE_RESOURCE]]);
  });

  it('an upserted credential is the one SCRAM checks; a deleted one no longer logs in', async (t) => {
    const h = await adminHarness(t, { users: { alice: 'alice-pw' } });
    const res = await h.call(alterUserScramCredentialsHandler, 0, { deletions: [{ name: 'alice', mechanism: SHA512 }], upsertions: [upsertion('alice', SHA256, 'new-secret', 8192)] });
    assert.deepEqual(res.results, [{ user: 'alice', errorCode: 0, errorMessage: null }]);
    assert.equal(await scramLogin(h, 'SCRAM-SHA-256', 'alice', 'new-secret'), true);
    assert.equal(await scramLogin(h, 'SCRAM-SHA-256', 'alice', 'alice-pw'), false);
    assert.equal(await scramLogin(h, 'SCRAM-SHA-512', 'alice', 'alice-pw'), false, 'the deleted mechanism no longer authenticates');
    await h.broker.users.verifyPassword('alice', 'alice-pw');
    const described = await h.call(describeUserScramCredentialsHandler, 0, { users: [{ name: 'alice' }] });
    assert.deepEqual(described.results[0]!.credentialInfos, [{ mechanism: SHA256, iterations: 8192 }]);
  });

  it('refuses bad changes per user, all or nothing, with Kafka codes', async (t) => {
    const h = await adminHarness(t, { users: { alice: 'alice-pw', bob: 'bob-pw' } });
    const res = await h.call(alterUserScramCredentialsHandler, 0, {
      deletions: [{ name: 'bob', mechanism: SHA256 }, { name: 'carol', mechanism: 0 }],
      upsertions: [
        upsertion('alice', SHA256, 'x', 1000),
        upsertion('bob', SHA256, 'y'),
        upsertion('', SHA256, 'z'),
        upsertion('ghost', SHA512, 'w'),
      ],
    });
    assert.deepEqual(res.results.map((r) => [r.user, r.errorCode]), [
      ['bob', ErrorCode.DUPLICATE_RESOURCE],
      ['carol', ErrorCode.UNSUPPORTED_SASL_MECHANISM],
      ['alice', ErrorCode.UNACCEPTABLE_CREDENTIAL],
      ['', ErrorCode.UNACCEPTABLE_CREDENTIAL],
      ['ghost', ErrorCode.RESOURCE_NOT_FOUND],
    ]);
    assert.equal(await scramLogin(h, 'SCRAM-SHA-256', 'bob', 'bob-pw'), true, "bob's credential was left alone");
    const twice = await h.call(alterUserScramCredentialsHandler, 0, { deletions: [{ name: 'alice', mechanism: SHA512 }], upsertions: [] });
    assert.equal(twice.results[0]!.errorCode, 0);
    const gone = await h.call(alterUserScramCredentialsHandler, 0, { deletions: [{ name: 'alice', mechanism: SHA512 }], upsertions: [] });
    assert.equal(gone.results[0]!.errorCode, ErrorCode.RESOURCE_NOT_FOUND);
  });

  it('needs read_users to describe and manage_users to alter; only root alters root', async (t) => {
    const h = await adminHarness(t, { users: { alice: 'alice-pw' } });
    const nobody = await sessionWith(h, 'nobody', ['read_servers']);
    assert.equal((await h.call(describeUserScramCredentialsHandler, 0, { users: null }, nobody)).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    assert.equal((await h.call(alterUserScramCredentialsHandler, 0, { deletions: [], upsertions: [upsertion('alice', SHA256, 'p')] }, nobody)).results[0]!.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const admin = await sessionWith(h, 'admin', ['read_users', 'manage_users']);
    assert.equal((await h.call(describeUserScramCredentialsHandler, 0, { users: null }, admin)).errorCode, 0);
    const res = await h.call(alterUserScramCredentialsHandler, 0, { deletions: [], upsertions: [upsertion('alice', SHA256, 'p'), upsertion('root', SHA256, 'p')] }, admin);
    assert.deepEqual(res.results.map((r) => [r.user, r.errorCode]), [['alice', 0], ['root', ErrorCode.CLUSTER_AUTHORIZATION_FAILED]]);
  });

  it('a user with manage_users cannot set the credentials of a user holding more than it, and so log in as them', async (t) => {
    const h = await adminHarness(t);
    await sessionWith(h, 'ops', ['manage_servers', 'manage_users', 'read_users', 'manage_topics']);
    const admin = await sessionWith(h, 'admin', ['read_users', 'manage_users']);
    await sessionWith(h, 'peer', ['read_users']);
    const res = await h.call(alterUserScramCredentialsHandler, 0, { deletions: [], upsertions: [upsertion('ops', SHA256, 'taken'), upsertion('peer', SHA256, 'reset')] }, admin);
    assert.deepEqual(res.results.map((r) => [r.user, r.errorCode]), [['ops', ErrorCode.CLUSTER_AUTHORIZATION_FAILED], ['peer', 0]]);
    assert.equal(await scramLogin(h, 'SCRAM-SHA-256', 'ops', 'taken'), false);
    assert.equal(await scramLogin(h, 'SCRAM-SHA-256', 'peer', 'reset'), true);
  });
});
