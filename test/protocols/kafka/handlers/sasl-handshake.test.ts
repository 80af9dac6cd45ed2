import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { enabledSaslMechanisms, saslHandshakeHandler } from '../../../../src/protocols/kafka/handlers/sasl-handshake.js';
import { adminHarness } from './admin-harness.js';

describe('SaslHandshake', () => {
  it('is answered before authentication and lists the enabled mechanisms', async (t) => {
    const h = await adminHarness(t);
    assert.equal(saslHandshakeHandler.preAuth, true);
    const res = await h.call(saslHandshakeHandler, 1, { mechanism: 'SCRAM-SHA-256' });
    assert.deepEqual(res, { errorCode: 0, mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] });
    assert.equal(h.session.sasl?.mechanism, 'SCRAM-SHA-256');
    assert.equal(h.session.sasl?.rawTokens, false);
    assert.equal(h.session.sasl?.exchange?.mechanism, 'SCRAM-SHA-256');
  });

  it('v0 selects the raw-token path', async (t) => {
    const h = await adminHarness(t);
    assert.equal((await h.call(saslHandshakeHandler, 0, { mechanism: 'PLAIN' })).errorCode, 0);
    assert.equal(h.session.sasl?.rawTokens, true);
  });

  it('refuses a mechanism that is not enabled, case-sensitively, and keeps the session open for another try', async (t) => {
    const h = await adminHarness(t, { settings: { saslMechanisms: ['SCRAM-SHA-512', 'GSSAPI'] } });
    const frontend = h.frontend;
    assert.deepEqual(enabledSaslMechanisms(frontend), ['SCRAM-SHA-512'], 'mechanisms Quartet does not implement are not offered');
    assert.deepEqual(await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' }), { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['SCRAM-SHA-512'] });
    assert.equal((await h.call(saslHandshakeHandler, 1, { mechanism: 'scram-sha-512' })).errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    assert.equal((await h.call(saslHandshakeHandler, 1, { mechanism: 'GSSAPI' })).errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    assert.equal(h.session.sasl, null);
    assert.equal((await h.call(saslHandshakeHandler, 1, { mechanism: 'SCRAM-SHA-512' })).errorCode, 0);
  });

  it('answers ILLEGAL_SASL_STATE to a second handshake and after authentication', async (t) => {
    const h = await adminHarness(t);
    await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' });
    assert.equal((await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' })).errorCode, ErrorCode.ILLEGAL_SASL_STATE);
    const authenticated = h.newSession();
    authenticated.principal = 'alice';
    assert.equal((await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' }, authenticated)).errorCode, ErrorCode.ILLEGAL_SASL_STATE);
  });
});
