import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ScramClient, computeScramCredentials } from '../../../../src/protocols/kafka/sasl/scram.js';
import { SaslSession } from '../../../../src/protocols/kafka/sasl/session.js';
import { SaslKafkaError, isSaslFailure } from '../../../../src/protocols/kafka/sasl/types.js';

const credentials = computeScramCredentials('SCRAM-SHA-512', 'pw');

function session(enabledMechanisms?: ('PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512')[]) {
  return new SaslSession({
    verifyPassword: (user, password) => user === 'u' && password === 'pw',
    scramCredentials: (user, mechanism) => (user === 'u' && mechanism === 'SCRAM-SHA-512' ? credentials : null),
    ...(enabledMechanisms === undefined ? {} : { enabledMechanisms }),
  });
}

describe('SaslSession', () => {
  it('runs PLAIN to completion and then refuses more tokens', async () => {
    const s = session();
    assert.deepEqual(s.start('PLAIN'), { ok: true });
    const result = await s.step(Buffer.from('\0u\0pw'));
    assert(!isSaslFailure(result) && result.done);
    assert.equal(s.user, 'u');
    const again = await s.step(Buffer.from('\0u\0pw'));
    assert(isSaslFailure(again));
    assert.equal(again.kafkaErrorCode, SaslKafkaError.ILLEGAL_SASL_STATE);
  });

  it('runs SCRAM-SHA-512 over two steps', async () => {
    const s = session();
    assert.deepEqual(s.start('SCRAM-SHA-512'), { ok: true });
    const client = new ScramClient('SCRAM-SHA-512', 'u', 'pw');
    const first = await s.step(client.firstMessage());
    assert(!isSaslFailure(first) && !first.done);
    assert.equal(s.user, null);
    const final = await s.step(client.finalMessage(first.token));
    assert(!isSaslFailure(final) && final.done);
    assert(client.verifyServerFinal(final.token));
    assert.equal(s.user, 'u');
    assert.equal(s.mechanism, 'SCRAM-SHA-512');
  });

  it('refuses unknown or disabled mechanisms, tokens before start, and a second start', async () => {
    const s = session(['SCRAM-SHA-256']);
    const plain = s.start('PLAIN');
    assert(isSaslFailure(plain));
    assert.equal(plain.kafkaErrorCode, SaslKafkaError.UNSUPPORTED_SASL_MECHANISM);
    const lower = s.start('scram-sha-256');
    assert(isSaslFailure(lower), 'mechanism names are case-sensitive');
    const early = await s.step(Buffer.from('x'));
    assert(isSaslFailure(early));
    assert.equal(early.kafkaErrorCode, SaslKafkaError.ILLEGAL_SASL_STATE);
    assert.deepEqual(s.start('SCRAM-SHA-256'), { ok: true });
    assert(isSaslFailure(s.start('SCRAM-SHA-256')));
  });

  it('fails for good after a failed step', async () => {
    const s = session();
    s.start('PLAIN');
    const bad = await s.step(Buffer.from('\0u\0nope'));
    assert(isSaslFailure(bad));
    assert.equal(bad.kafkaErrorCode, SaslKafkaError.SASL_AUTHENTICATION_FAILED);
    const retry = await s.step(Buffer.from('\0u\0pw'));
    assert(isSaslFailure(retry));
    assert.equal(retry.kafkaErrorCode, SaslKafkaError.ILLEGAL_SASL_STATE);
  });

  it('refuses a token while the previous one is being checked', async () => {
    let release: (ok: boolean) => void = () => {};
    const s = new SaslSession({
      verifyPassword: () => new Promise<boolean>((resolve) => (release = resolve)),
      scramCredentials: () => null,
    });
    s.start('PLAIN');
    const first = s.step(Buffer.from('\0u\0pw'));
    const second = await s.step(Buffer.from('\0u\0pw'));
    assert(isSaslFailure(second));
    assert.equal(second.kafkaErrorCode, SaslKafkaError.ILLEGAL_SASL_STATE);
    release(true);
    const done = await first;
    assert(!isSaslFailure(done) && done.done);
  });
});
