import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError, type CoreErrorCode } from '../../src/base/errors.js';
import { SqliteMetadataStore } from '../../src/core/metadata-store.js';
import { hashToken, scramCredentialFor, UserStore, verifyScrypt, hashPassword } from '../../src/core/users.js';
import { memoryStore, tempDir, testScryptCost } from './helpers.js';

function code(expected: CoreErrorCode) {
  return (err: unknown) => isQuartetError(err) && err.code === expected;
}

async function openUsers(clock = new ManualClock()) {
  const store = memoryStore();
  return { store, clock, users: await UserStore.open(store, { clock, scryptCost: testScryptCost }) };
}

test('SCRAM-SHA-256 credentials match the RFC 7677 example exchange', async () => {
  // RFC 7677 §3: user "user", password "pencil".
  const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
  const cred = await scramCredentialFor('pencil', 'SHA-256', salt, 4096);
  const clientFirstBare = 'n=user,r=rOprNGfwEbeRWgbNEkqO';
  const serverFirst = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096';
  const clientFinalWithoutProof = 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0';
  const proof = Buffer.from('dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=', 'base64');
  const serverSignature = Buffer.from('6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=', 'base64');
  const authMessage = `${clientFirstBare},${serverFirst},${clientFinalWithoutProof}`;

  // The server's check (RFC 5802 §3): ClientKey = proof XOR HMAC(StoredKey, AuthMessage); H(ClientKey) == StoredKey.
  const clientSignature = createHmac('sha256', cred.storedKey).update(authMessage).digest();
  const clientKey = Buffer.from(proof.map((b, i) => b ^ clientSignature[i]!));
  assert.ok(createHash('sha256').update(clientKey).digest().equals(cred.storedKey), 'the RFC client proof verifies against StoredKey');
  assert.ok(createHmac('sha256', cred.serverKey).update(authMessage).digest().equals(serverSignature), 'ServerSignature matches the RFC');
  // Pinned values, derived by hand from the exchange above.
  assert.equal(cred.storedKey.toString('base64'), 'WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=');
  assert.equal(cred.serverKey.toString('base64'), 'wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=');
  assert.equal(cred.iterations, 4096);
});

test('users: create, verify (wrong password, unknown user, inactive), SCRAM stored for both mechanisms', async () => {
  const { users } = await openUsers();
  // Id 0 is root's, and only given explicitly (ensureRootUser does).
  const alice = await users.create({ username: 'alice', password: 's3cret', permissions: { kafka: ['*'] }, id: 0 });
  assert.equal(alice.id, 0);
  assert.equal(alice.root, true);
  const bob = await users.create({ username: 'bob', password: 'hunter2' });
  assert.equal(bob.id, 1);
  assert.equal(bob.root, false);
  assert.deepEqual((await users.verifyPassword('alice', 's3cret')).permissions, { kafka: ['*'] });
  await assert.rejects(users.verifyPassword('alice', 'nope'), code('invalid_credentials'));
  await assert.rejects(users.verifyPassword('carol', 's3cret'), code('invalid_credentials'));
  await assert.rejects(users.create({ username: 'bob', password: 'x' }), code('user_exists'));
  await assert.rejects(users.create({ username: '', password: 'x' }), code('invalid_name'));
  await assert.rejects(users.create({ username: 'dave', password: '' }), code('invalid_request'));
  await users.update('bob', { status: 'inactive' });
  await assert.rejects(users.verifyPassword('bob', 'hunter2'), code('user_inactive'));
  for (const mechanism of ['SHA-256', 'SHA-512'] as const) {
    const cred = users.scramCredential('bob', mechanism)!;
    assert.equal(cred.iterations, 4096);
    assert.equal(cred.salt.length, 16);
    const expected = await scramCredentialFor('hunter2', mechanism, cred.salt, 4096);
    assert.ok(cred.storedKey.equals(expected.storedKey) && cred.serverKey.equals(expected.serverKey), mechanism);
  }
  assert.equal(users.scramCredential('nobody', 'SHA-256'), null);
});

test('users: change password, rename, permissions, delete; persisted across reopen', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  let store = SqliteMetadataStore.openInDataDir(dir);
  let users = await UserStore.open(store, { clock, scryptCost: testScryptCost });
  await users.create({ username: 'root', password: 'r00t', id: 0 });
  await users.create({ username: 'eve', password: 'old' });
  await assert.rejects(users.changePassword('eve', 'wrong', 'new'), code('invalid_credentials'));
  await users.changePassword('eve', 'old', 'new');
  await users.update('eve', { username: 'eve2' });
  await users.setPermissions('eve2', { iggy: { global: { read_streams: true } } });
  await assert.rejects(users.delete('root'), code('invalid_request'));
  await assert.rejects(users.delete('nobody'), code('unknown_user'));
  await store.close();

  store = SqliteMetadataStore.openInDataDir(dir);
  users = await UserStore.open(store, { clock, scryptCost: testScryptCost });
  assert.deepEqual(users.list().map((u) => u.username), ['root', 'eve2']);
  await assert.rejects(users.verifyPassword('eve2', 'old'), code('invalid_credentials'));
  const eve = await users.verifyPassword('eve2', 'new');
  assert.deepEqual(eve.permissions, { iggy: { global: { read_streams: true } } });
  await users.changePassword('eve2', null, 'admin-set');
  await users.verifyPassword('eve2', 'admin-set');
  await users.delete('eve2');
  assert.equal(users.get('eve2'), null);
  await store.close();
});

test('ensureRootUser: creates root once, generates a password only when none is given', async () => {
  const { users } = await openUsers();
  const first = await users.ensureRootUser('iggy');
  assert.equal(first.created, true);
  assert.ok(first.generatedPassword && first.generatedPassword.length >= 20);
  assert.equal((await users.verifyPassword('iggy', first.generatedPassword)).id, 0);
  // Without a configured password, a later start changes nothing.
  assert.deepEqual(await users.ensureRootUser('iggy'), { created: false, generatedPassword: null, updated: [], renameRefused: false });
  await users.verifyPassword('iggy', first.generatedPassword);
  const { users: fresh } = await openUsers();
  assert.deepEqual(await fresh.ensureRootUser('admin', 'given'), { created: true, generatedPassword: null, updated: [], renameRefused: false });
  await fresh.verifyPassword('admin', 'given');
});

test('ensureRootUser: configured credentials become root\'s at a later start (a generated password, another name)', async () => {
  const { users } = await openUsers();
  const first = await users.ensureRootUser('root');
  await users.create({ username: 'taken', password: 'pw' });
  // The check's case: a first start without credentials, then a start with them.
  assert.deepEqual(await users.ensureRootUser('iggy', 'iggy', undefined, { applyToExisting: true }), { created: false, generatedPassword: null, updated: ['username', 'password'], renameRefused: false });
  assert.equal((await users.verifyPassword('iggy', 'iggy')).id, 0);
  await assert.rejects(users.verifyPassword('root', first.generatedPassword!), (err: Error & { code?: string }) => err.code === 'invalid_credentials');
  // The same again: nothing to change.
  assert.deepEqual((await users.ensureRootUser('iggy', 'iggy', undefined, { applyToExisting: true })).updated, []);
  // A name another user has is not taken from it; the password still follows.
  assert.deepEqual(await users.ensureRootUser('taken', 'new-pw', undefined, { applyToExisting: true }), { created: false, generatedPassword: null, updated: ['password'], renameRefused: true });
  assert.equal((await users.verifyPassword('iggy', 'new-pw')).id, 0);
  assert.equal((await users.verifyPassword('taken', 'pw')).username, 'taken');
  // Without applyToExisting (the CLI's user commands), an existing root is left as it is.
  assert.deepEqual((await users.ensureRootUser('other', 'other-pw')).updated, []);
  assert.equal((await users.verifyPassword('iggy', 'new-pw')).id, 0);
});

test('root is neither renamed, deactivated nor re-permissioned through the store; the operator may, and configured credentials reactivate it', async () => {
  const { users } = await openUsers();
  await users.ensureRootUser('iggy', 'iggy');
  await assert.rejects(users.update(0, { status: 'inactive' }), code('unauthorized'));
  await assert.rejects(users.update('iggy', { username: 'mallory' }), code('unauthorized'));
  await assert.rejects(users.setPermissions(0, { global: {}, streams: [] }), code('unauthorized'));
  await users.update(0, { username: 'iggy', status: 'active' });
  assert.deepEqual([users.get(0)?.username, users.get(0)?.status], ['iggy', 'active']);
  // A store where root is inactive (from before the rule, or the operator's doing):
  await users.update(0, { status: 'inactive' }, { asOperator: true });
  await assert.rejects(users.verifyPassword('iggy', 'iggy'), code('user_inactive'));
  // A start with the configured credentials brings it back.
  assert.deepEqual((await users.ensureRootUser('iggy', 'iggy', undefined, { applyToExisting: true })).updated, ['status']);
  assert.equal((await users.verifyPassword('iggy', 'iggy')).status, 'active');
});

test('personal access tokens: secret shown once, only its hash stored, expiry by the clock', async () => {
  const { users, store, clock } = await openUsers();
  await users.ensureRootUser('root', 'root-password');
  await users.create({ username: 'alice', password: 'pw' });
  const { token, info } = await users.createToken('alice', 'ci', 60_000);
  assert.equal(info.expiresAt, clock.now() + 60_000);
  const forever = await users.createToken('alice', 'forever', null);
  assert.equal((await store.listTokens()).every((r) => r.tokenHash !== token && r.tokenHash.length === 64), true);
  assert.ok((await store.listTokens()).some((r) => r.tokenHash === hashToken(token)));
  assert.equal(users.verifyToken(token).username, 'alice');
  await assert.rejects(users.createToken('alice', 'ci', 1000), code('token_exists'));
  await assert.rejects(users.createToken('alice', 'neg', -5), code('invalid_request'));
  assert.deepEqual(users.listTokens('alice').map((t) => t.name), ['ci', 'forever']);
  clock.advance(59_999);
  users.verifyToken(token);
  clock.advance(1);
  assert.throws(() => users.verifyToken(token), code('invalid_token'));
  assert.throws(() => users.verifyToken('made-up'), code('invalid_token'));
  // Expired, it no longer logs in, but it is listed (with its expiry) and may be deleted until
  // the maintenance pass removes it, as the Iggy reference's; its name is free for a new token.
  assert.deepEqual(users.listTokens('alice').map((t) => [t.name, t.expiresAt]), [['ci', info.expiresAt], ['forever', null]]);
  const doomed = await users.createToken('alice', 'doomed', 1);
  clock.advance(1);
  assert.throws(() => users.verifyToken(doomed.token), code('invalid_token'));
  assert.deepEqual(users.listTokens('alice').map((t) => t.name), ['ci', 'doomed', 'forever']);
  await users.deleteToken('alice', 'doomed');
  assert.deepEqual(users.listTokens('alice').map((t) => t.name), ['ci', 'forever']);
  const again = await users.createToken('alice', 'ci', 1000);
  assert.equal(users.verifyToken(again.token).username, 'alice');
  assert.equal((await store.listTokens()).length, 2, 'the expired record went when its name was taken again');
  clock.advance(1000);
  assert.equal(await users.purgeExpiredTokens(), 1);
  assert.deepEqual(users.listTokens('alice').map((t) => t.name), ['forever']);
  await users.update('alice', { status: 'inactive' });
  assert.throws(() => users.verifyToken(forever.token), code('user_inactive'));
  await users.update('alice', { status: 'active' });
  await users.deleteToken('alice', 'forever');
  assert.throws(() => users.verifyToken(forever.token), code('invalid_token'));
  await assert.rejects(users.deleteToken('alice', 'forever'), code('invalid_token'));
});

test('scrypt hashes carry their parameters and verify timing-safely', async () => {
  const encoded = await hashPassword('pw', testScryptCost);
  assert.match(encoded, /^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  assert.equal(await verifyScrypt(encoded, 'pw'), true);
  assert.equal(await verifyScrypt(encoded, 'pW'), false);
  // Default cost still works (the production path).
  assert.equal(await verifyScrypt(await hashPassword('pw'), 'pw'), true);
});

test('editPermissions edits each user in the store queue: a setPermissions queued meanwhile is kept, and its result is what the edit sees', async () => {
  const { users } = await openUsers();
  await users.ensureRootUser('root', 'root-password');
  const a = await users.create({ username: 'alice', password: 'password1', status: 'active' });
  const b = await users.create({ username: 'bob', password: 'password1', status: 'active' });
  await users.setPermissions(a.id, { grants: ['x', 'gone'] });
  await users.setPermissions(b.id, { grants: ['gone'] });
  // Queued before the edit: the edit sees bob's new permissions and keeps what it does not drop.
  const set = users.setPermissions(b.id, { grants: ['gone', 'new'] });
  const edited = users.editPermissions((current) => {
    const p = current as { grants: string[] } | null;
    if (p === null || !p.grants.includes('gone')) return current;
    return { grants: p.grants.filter((g) => g !== 'gone') };
  });
  await set;
  assert.equal(await edited, 2);
  assert.deepEqual(users.get(a.id)?.permissions, { grants: ['x'] });
  assert.deepEqual(users.get(b.id)?.permissions, { grants: ['new'] });
  // Returning the same object changes nothing.
  assert.equal(await users.editPermissions((current) => current), 0);
});

test('users: a user made before root never takes id 0; root is made later under its own id and keeps its credentials', async () => {
  const { users } = await openUsers();
  const early = await users.create({ username: 'alice', password: 'alice-pw' });
  assert.notEqual(early.id, 0);
  const made = await users.ensureRootUser('root', 'root-pw', undefined, { applyToExisting: true });
  assert.equal(made.created, true);
  assert.equal((await users.verifyPassword('root', 'root-pw')).id, 0);
  assert.equal((await users.verifyPassword('alice', 'alice-pw')).username, 'alice', 'alice keeps her name and password');
});
