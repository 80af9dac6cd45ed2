import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { saslHandshakeHandler } from '../../../../src/protocols/kafka/handlers/sasl-handshake.js';
import { expectsRawSaslToken, saslRawToken } from '../../../../src/protocols/kafka/handlers/sasl-raw.js';
import { ScramClient } from '../../../../src/protocols/kafka/sasl/scram.js';
import { adminHarness } from './admin-harness.js';

const users = { alice: 'alice-secret' };

describe('raw SASL tokens (SaslHandshake v0, kafka-python)', () => {
  it('PLAIN: success answers an empty token (the connection writes 4 zero bytes) and authenticates', async (t) => {
    const h = await adminHarness(t, { users });
    await h.call(saslHandshakeHandler, 0, { mechanism: 'PLAIN' });
    assert.equal(expectsRawSaslToken(h.session), true);
    // kafka-python sends authzid = authcid.
    const res = await saslRawToken(h.frontend, h.session, Buffer.from('alice\0alice\0alice-secret'));
    assert.deepEqual(res, { reply: Buffer.alloc(0), close: false });
    assert.equal(h.session.principal, 'alice');
    assert.equal(expectsRawSaslToken(h.session), false, 'the next frame is a request again');
  });

  it('PLAIN: a wrong password closes the connection without a reply', async (t) => {
    const h = await adminHarness(t, { users });
    await h.call(saslHandshakeHandler, 0, { mechanism: 'PLAIN' });
    assert.deepEqual(await saslRawToken(h.frontend, h.session, Buffer.from('alice\0alice\0nope')), { reply: null, close: true });
    assert.equal(h.session.principal, null);
  });

  for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
    it(`${mechanism}: server-first then server-final as raw tokens`, async (t) => {
      const h = await adminHarness(t, { users });
      await h.call(saslHandshakeHandler, 0, { mechanism });
      const client = new ScramClient(mechanism, 'alice', 'alice-secret');
      const first = await saslRawToken(h.frontend, h.session, client.firstMessage());
      assert.equal(first.close, false);
      assert.equal(expectsRawSaslToken(h.session), true);
      const final = await saslRawToken(h.frontend, h.session, client.finalMessage(first.reply!));
      assert.equal(final.close, false);
      assert.ok(client.verifyServerFinal(final.reply!));
      assert.equal(h.session.principal, 'alice');
    });
  }

  it('SCRAM: a wrong password closes the connection', async (t) => {
    const h = await adminHarness(t, { users });
    await h.call(saslHandshakeHandler, 0, { mechanism: 'SCRAM-SHA-256' });
    const client = new ScramClient('SCRAM-SHA-256', 'alice', 'wrong');
    const first = await saslRawToken(h.frontend, h.session, client.firstMessage());
    assert.deepEqual(await saslRawToken(h.frontend, h.session, client.finalMessage(first.reply!)), { reply: null, close: true });
    assert.equal(h.session.principal, null);
  });

  it('closes on a raw token outside a v0 exchange', async (t) => {
    const h = await adminHarness(t, { users });
    assert.deepEqual(await saslRawToken(h.frontend, h.session, Buffer.from('\0alice\0alice-secret')), { reply: null, close: true });
    await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' });
    assert.equal(expectsRawSaslToken(h.session), false);
    assert.deepEqual(await saslRawToken(h.frontend, h.session, Buffer.from('\0alice\0alice-secret')), { reply: null, close: true });
  });
});
