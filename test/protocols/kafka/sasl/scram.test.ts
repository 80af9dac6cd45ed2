import assert from 'node:assert/strict';
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  ScramClient,
  ScramServerExchange,
  computeScramCredentials,
  decodeSaslName,
  parseClientFirst,
  type ScramCredentials,
  type ScramMechanism,
} from '../../../../src/protocols/kafka/sasl/scram.js';
import { SaslKafkaError, isSaslFailure, type SaslStepResult } from '../../../../src/protocols/kafka/sasl/types.js';
import { scramIterations, scramSaltBytes } from '../../../../src/core/users.js';

// RFC 7677 §3: the SCRAM-SHA-256 example exchange.
const rfc = {
  clientFirst: 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO',
  serverNonce: '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
  salt: Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'),
  serverFirst: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  clientFinal: 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
  serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
};

const rfcCredentials = computeScramCredentials('SCRAM-SHA-256', 'pencil', { salt: rfc.salt, iterations: 4096 });

function server(mechanism: ScramMechanism, credentials: ScramCredentials | null, user = 'user'): ScramServerExchange {
  return new ScramServerExchange(mechanism, (name, mech) => (name === user && mech === mechanism ? credentials : null), { serverNonce: () => rfc.serverNonce });
}

function text(result: SaslStepResult): string {
  assert(!isSaslFailure(result), `unexpected failure: ${JSON.stringify(result)}`);
  return result.token.toString();
}

function failure(result: SaslStepResult): string {
  assert(isSaslFailure(result), 'expected a failure');
  assert.equal(result.kafkaErrorCode, SaslKafkaError.SASL_AUTHENTICATION_FAILED);
  return result.error;
}

describe('SCRAM server', () => {
  it('reproduces the RFC 7677 SCRAM-SHA-256 exchange byte for byte', async () => {
    const exchange = server('SCRAM-SHA-256', rfcCredentials);
    assert.equal(text(await exchange.step(Buffer.from(rfc.clientFirst))), rfc.serverFirst);
    const final = await exchange.step(Buffer.from(rfc.clientFinal));
    assert.equal(text(final), rfc.serverFinal);
    assert.deepEqual({ done: 'done' in final && final.done, user: 'user' in final ? final.user : undefined }, { done: true, user: 'user' });
  });

  it('produces the RFC 7677 client proof from the client helper', () => {
    const client = new ScramClient('SCRAM-SHA-256', 'user', 'pencil', { clientNonce: 'rOprNGfwEbeRWgbNEkqO' });
    assert.equal(client.firstMessage().toString(), rfc.clientFirst);
    assert.equal(client.finalMessage(Buffer.from(rfc.serverFirst)).toString(), rfc.clientFinal);
    assert.equal(client.verifyServerFinal(Buffer.from(rfc.serverFinal)), true);
    assert.equal(client.verifyServerFinal(Buffer.from('v=AAAA')), false);
  });

  for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
    it(`round-trips ${mechanism} with the client helper`, async () => {
      const credentials = computeScramCredentials(mechanism, 'correct horse', { iterations: 4096 });
      const exchange = new ScramServerExchange(mechanism, () => credentials);
      const client = new ScramClient(mechanism, 'alice,=admin', 'correct horse');
      const serverFirst = await exchange.step(client.firstMessage());
      const final = await exchange.step(client.finalMessage(Buffer.from(text(serverFirst))));
      assert(!isSaslFailure(final) && final.done);
      assert.equal(final.user, 'alice,=admin', 'the escaped username decodes');
      assert(client.verifyServerFinal(final.token));
    });
  }

  it('rejects a wrong password with invalid-proof', async () => {
    const exchange = server('SCRAM-SHA-256', rfcCredentials);
    const client = new ScramClient('SCRAM-SHA-256', 'user', 'pencil2', { clientNonce: 'rOprNGfwEbeRWgbNEkqO' });
    const serverFirst = await exchange.step(client.firstMessage());
    const final = await exchange.step(client.finalMessage(Buffer.from(text(serverFirst))));
    assert.equal(failure(final), 'invalid-proof');
    assert('token' in final && final.token?.toString() === 'e=invalid-proof');
    assert.equal(failure(await exchange.step(Buffer.from(rfc.clientFinal))), 'other-error', 'the exchange is over');
  });

  it("accepts librdkafka's client-final nonce (its client nonce again, then the server's whole nonce), as Kafka does", async () => {
    const exchange = server('SCRAM-SHA-256', rfcCredentials);
    await exchange.step(Buffer.from(rfc.clientFirst));
    const withoutProof = `c=biws,r=rOprNGfwEbeRWgbNEkqOrOprNGfwEbeRWgbNEkqO${rfc.serverNonce}`;
    const salted = pbkdf2Sync('pencil', rfc.salt, 4096, 32, 'sha256');
    const clientKey = createHmac('sha256', salted).update('Client Key').digest();
    const storedKey = createHash('sha256').update(clientKey).digest();
    const signature = createHmac('sha256', storedKey).update(`${rfc.clientFirst.slice(3)},${rfc.serverFirst},${withoutProof}`).digest();
    const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!));
    const final = await exchange.step(Buffer.from(`${withoutProof},p=${proof.toString('base64')}`));
    assert.equal(isSaslFailure(final) ? final.error : 'accepted', 'accepted');
    assert.deepEqual({ done: 'done' in final && final.done, user: 'user' in final ? final.user : undefined }, { done: true, user: 'user' });
  });

  it('rejects a tampered nonce, channel binding or proof', async () => {
    const tamper = async (final: string) => {
      const exchange = server('SCRAM-SHA-256', rfcCredentials);
      await exchange.step(Buffer.from(rfc.clientFirst));
      return failure(await exchange.step(Buffer.from(final)));
    };
    assert.equal(await tamper(rfc.clientFinal.replace('hNlF$k0', 'hNlF$k1')), 'other-error');
    assert.equal(await tamper(rfc.clientFinal.replace('c=biws', 'c=eSws')), 'channel-bindings-dont-match');
    assert.equal(await tamper(rfc.clientFinal.replace('p=dHzb', 'p=dHzc')), 'invalid-proof');
    assert.equal(await tamper(rfc.clientFinal.replace(/p=.*$/, 'p=AAAA')), 'invalid-proof', 'short proof');
    assert.equal(await tamper(rfc.clientFinal.replace(/,p=.*$/, '')), 'invalid-encoding', 'no proof');
    assert.equal(await tamper(rfc.clientFinal.replace(/p=.*$/, 'p=@@@@')), 'invalid-encoding', 'bad base64');
  });

  it('rejects malformed client-first messages', async () => {
    const first = async (message: string | Buffer) => failure(await server('SCRAM-SHA-256', rfcCredentials).step(Buffer.isBuffer(message) ? message : Buffer.from(message)));
    assert.equal(await first('p=tls-unique,,n=user,r=abc'), 'channel-binding-not-supported');
    assert.equal(await first('x,,n=user,r=abc'), 'invalid-encoding');
    assert.equal(await first('n,,n=user'), 'invalid-encoding');
    assert.equal(await first('n,,r=abc,n=user'), 'invalid-encoding');
    assert.equal(await first('n,,m=ext,n=user,r=abc'), 'extensions-not-supported');
    assert.equal(await first('n,,n=us=2Xer,r=abc'), 'invalid-username-encoding');
    assert.equal(await first('n,,n=,r=abc'), 'invalid-username-encoding');
    assert.equal(await first('n,,n=user,r=a b'), 'invalid-encoding');
    assert.equal(await first('n,a=admin,n=user,r=abc'), 'other-error', 'authzid must equal the user');
    assert.equal(await first('n,,n=user,r=abc,tokenauth=true'), 'extensions-not-supported');
    assert.equal(await first(Buffer.from([0x6e, 0x2c, 0x2c, 0xff])), 'invalid-encoding');
    assert.equal(await first(Buffer.alloc(5000, 0x61)), 'invalid-encoding');
  });

  it('answers an unknown user like a known one and fails it at the proof, as a wrong password (RFC 5802 mock salt)', async () => {
    const serverFirst = async (user: string): Promise<string> => text(await server('SCRAM-SHA-256', rfcCredentials).step(Buffer.from(`n,,n=${user},r=abc`)));
    const known = await serverFirst('user');
    const unknown = await serverFirst('nobody');
    const shape = /^r=abc[^,]+,s=([A-Za-z0-9+/=]+),i=(\d+)$/;
    assert.match(known, shape);
    assert.match(unknown, shape, 'a server-first message, not an error');
    const salt = Buffer.from(shape.exec(unknown)![1]!, 'base64');
    assert.equal(salt.length, scramSaltBytes, 'as long as a stored salt');
    assert.equal(shape.exec(unknown)![2], String(scramIterations), 'the stored iteration count');
    assert.equal(shape.exec(await serverFirst('nobody'))![1], shape.exec(unknown)![1], 'the same salt for the same name every time');
    assert.notEqual(shape.exec(await serverFirst('nobody2'))![1], shape.exec(unknown)![1], 'another name, another salt');
    // Going on with any password: the proof fails, with what a wrong password gets.
    const exchange = server('SCRAM-SHA-256', rfcCredentials);
    const client = new ScramClient('SCRAM-SHA-256', 'nobody', 'pencil');
    const reply = text(await exchange.step(client.firstMessage()));
    const final = await exchange.step(client.finalMessage(Buffer.from(reply)));
    assert.equal(failure(final), 'invalid-proof');
  });

  it('accepts an authzid equal to the user and binds the exact gs2 header', async () => {
    const exchange = server('SCRAM-SHA-256', rfcCredentials);
    const clientFirst = 'n,a=user,n=user,r=rOprNGfwEbeRWgbNEkqO';
    assert.equal(text(await exchange.step(Buffer.from(clientFirst))), rfc.serverFirst);
    const final = await exchange.step(Buffer.from(rfc.clientFinal));
    assert.equal(failure(final), 'channel-bindings-dont-match', 'c= must be base64("n,a=user,")');
  });

  it('parses and unescapes saslnames', () => {
    assert.equal(decodeSaslName('a=2Cb=3Dc'), 'a,b=c');
    assert.equal(decodeSaslName('a=2'), null);
    const parsed = parseClientFirst('y,,n=bob,r=xyz,ext=1');
    assert(!('error' in parsed));
    assert.equal(parsed.gs2Header, 'y,,');
    assert.equal(parsed.bare, 'n=bob,r=xyz,ext=1');
  });

  it('refuses credentials outside Kafka iteration bounds', () => {
    assert.throws(() => computeScramCredentials('SCRAM-SHA-512', 'x', { iterations: 4095 }), /iterations/);
    assert.throws(() => computeScramCredentials('SCRAM-SHA-512', 'x', { iterations: 16385 }), /iterations/);
  });
});
