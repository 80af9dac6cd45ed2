import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { authenticatePlain, parsePlainMessage } from '../../../../src/protocols/kafka/sasl/plain.js';
import { SaslKafkaError, isSaslFailure } from '../../../../src/protocols/kafka/sasl/types.js';

const verify = (user: string, password: string) => user === 'alice' && password === 'secret';
const token = (...fields: string[]) => Buffer.from(fields.join('\0'));

describe('SASL PLAIN', () => {
  it('authenticates a good password, with or without a matching authzid', async () => {
    for (const t of [token('', 'alice', 'secret'), token('alice', 'alice', 'secret')]) {
      const result = await authenticatePlain(t, verify);
      assert.deepEqual(result, { token: Buffer.alloc(0), done: true, user: 'alice' });
    }
  });

  it('supports an asynchronous verifier', async () => {
    const result = await authenticatePlain(token('', 'alice', 'secret'), async (u, p) => verify(u, p));
    assert(!isSaslFailure(result) && result.done);
  });

  it('rejects a bad password without saying which part was wrong', async () => {
    for (const t of [token('', 'alice', 'wrong'), token('', 'mallory', 'secret')]) {
      const result = await authenticatePlain(t, verify);
      assert(isSaslFailure(result));
      assert.equal(result.error, 'invalid-credentials');
      assert.equal(result.kafkaErrorCode, SaslKafkaError.SASL_AUTHENTICATION_FAILED);
      assert.equal(result.message, 'Authentication failed: invalid credentials');
    }
  });

  it('rejects malformed messages before calling the verifier', async () => {
    const never = () => assert.fail('verifier must not run');
    const malformed = [
      Buffer.from('alice'),
      token('alice', 'secret'),
      token('', 'alice', 'secret', 'extra'),
      token('', '', 'secret'),
      token('', 'alice', ''),
      Buffer.from([0, 0x61, 0, 0xff]),
      token('', 'a'.repeat(1025), 'secret'),
    ];
    for (const t of malformed) {
      const result = await authenticatePlain(t, never);
      assert(isSaslFailure(result));
      assert.equal(result.error, 'malformed-message', t.toString('hex'));
    }
    const other = await authenticatePlain(token('bob', 'alice', 'secret'), never);
    assert(isSaslFailure(other));
    assert.equal(other.error, 'authzid-mismatch');
  });

  it('parses the three fields', () => {
    assert.deepEqual(parsePlainMessage(token('z', 'alice', 'pä$$')), { authzid: 'z', authcid: 'alice', password: 'pä$$' });
  });
});
