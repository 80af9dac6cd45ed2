import assert from 'node:assert/strict';
import { ManualClock } from '../../../../src/base/clock.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { main } from '../../../../src/cli/main.js';
import { Broker } from '../../../../src/core/broker.js';
import { createLogger, silentLogger } from '../../../../src/base/logger.js';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { KafkaBrokerFrontend } from '../../../../src/protocols/kafka/frontend.js';
import { saslAuthenticateHandler } from '../../../../src/protocols/kafka/handlers/sasl-authenticate.js';
import { saslHandshakeHandler } from '../../../../src/protocols/kafka/handlers/sasl-handshake.js';
import { saslRawToken } from '../../../../src/protocols/kafka/handlers/sasl-raw.js';
import type { KafkaRequestContext, KafkaSession } from '../../../../src/protocols/kafka/handlers/types.js';
import { ScramClient, type ScramMechanism } from '../../../../src/protocols/kafka/sasl/scram.js';
import { adminHarness, type AdminHarness } from './admin-harness.js';
import { builtinFormats } from '../../../../src/server/listeners.js';

const users = { alice: 'alice-secret', bob: 'bob-secret' };

async function scramLogin(h: AdminHarness, mechanism: ScramMechanism, user: string, password: string, version: number, session: KafkaSession = h.session) {
  assert.equal((await h.call(saslHandshakeHandler, 1, { mechanism }, session)).errorCode, 0);
  const client = new ScramClient(mechanism, user, password);
  const first = await h.call(saslAuthenticateHandler, version, { authBytes: client.firstMessage() }, session);
  if (first.errorCode !== 0) return { first, final: null, client };
  assert.equal(session.principal, null, 'not authenticated after the first step');
  const final = await h.call(saslAuthenticateHandler, version, { authBytes: client.finalMessage(first.authBytes) }, session);
  return { first, final, client };
}

describe('SaslAuthenticate', () => {
  it('runs PLAIN in one step (v0, librdkafka 2.0.2) and sets the principal', async (t) => {
    const h = await adminHarness(t, { users });
    await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' });
    const res = await h.call(saslAuthenticateHandler, 0, { authBytes: Buffer.from('\0alice\0alice-secret') });
    assert.deepEqual(res, { errorCode: 0, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0 });
    assert.equal(h.session.principal, 'alice');
  });

  for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
    for (const version of [1, 2]) {
      it(`runs ${mechanism} over two steps (v${version}) and proves the server knows the credentials`, async (t) => {
        const h = await adminHarness(t, { users });
        const { first, final, client } = await scramLogin(h, mechanism, 'bob', 'bob-secret', version);
        assert.equal(first.errorCode, 0);
        assert.match(first.authBytes.toString(), /^r=[^,]+,s=[^,]+,i=4096$/);
        assert.equal(final!.errorCode, 0);
        assert.equal(final!.sessionLifetimeMs, 0);
        assert.ok(client.verifyServerFinal(final!.authBytes));
        assert.equal(h.session.principal, 'bob');
      });
    }
  }

  it('fails a wrong password with SASL_AUTHENTICATION_FAILED and a message, then refuses more tokens', async (t) => {
    const h = await adminHarness(t, { users });
    await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' });
    const res = await h.call(saslAuthenticateHandler, 1, { authBytes: Buffer.from('\0alice\0wrong') });
    assert.deepEqual(res, { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: 'Authentication failed: invalid credentials', authBytes: Buffer.alloc(0), sessionLifetimeMs: 0 });
    assert.equal(h.session.principal, null);
    const again = await h.call(saslAuthenticateHandler, 1, { authBytes: Buffer.from('\0alice\0alice-secret') });
    assert.equal(again.errorCode, ErrorCode.ILLEGAL_SASL_STATE);
    assert.equal(h.session.principal, null);

    const scram = await scramLogin(h, 'SCRAM-SHA-256', 'alice', 'wrong', 1, h.newSession());
    assert.equal(scram.final!.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    // An unknown user is not told apart: a server-first message like a known user's, then the
    // same failure as a wrong password (RFC 5802's mock salt).
    const unknown = await scramLogin(h, 'SCRAM-SHA-512', 'mallory', 'x', 1, h.newSession());
    assert.equal(unknown.first.errorCode, 0);
    assert.match(unknown.first.authBytes.toString(), /^r=[^,]+,s=[^,]+,i=4096$/);
    assert.deepEqual([unknown.final!.errorCode, unknown.final!.errorMessage], [scram.final!.errorCode, scram.final!.errorMessage]);
  });

  it('throttles failed logins per name and peer: refused as a wrong password even with the right one until the window passes', async (t) => {
    const clock = new ManualClock(1_700_000_000_000);
    const h = await adminHarness(t, { users, broker: { clock, authThrottle: { delayAfterFailures: 2, lockoutAfterFailures: 4, lockoutMs: 60_000, delayBaseMs: 1, delayMaxMs: 1 } } });
    const plainLogin = async (password: string) => {
      const session = h.newSession();
      await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' }, session);
      return h.call(saslAuthenticateHandler, 1, { authBytes: Buffer.from(`\0alice\0${password}`) }, session);
    };
    for (let i = 0; i < 3; i++) assert.equal((await plainLogin(`guess-${i}`)).errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.equal((await scramLogin(h, 'SCRAM-SHA-256', 'alice', 'guess-3', 1, h.newSession())).final!.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    // Locked out: the right password fails over PLAIN and SCRAM alike, with the usual answer.
    assert.deepEqual([(await plainLogin('alice-secret')).errorCode, (await plainLogin('alice-secret')).errorMessage], [ErrorCode.SASL_AUTHENTICATION_FAILED, 'Authentication failed: invalid credentials']);
    const scram = await scramLogin(h, 'SCRAM-SHA-512', 'alice', 'alice-secret', 1, h.newSession());
    assert.equal(scram.first.errorCode, 0, 'SCRAM goes on with a mock salt');
    assert.equal(scram.final!.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    const text = h.broker.metrics.render();
    assert.match(text, /quartet_auth_delayed_total\{protocol="kafka"\} 2/);
    assert.match(text, /quartet_auth_locked_out_total\{protocol="kafka",scope="user"\} 3/);
    clock.advance(60_000);
    assert.equal((await plainLogin('alice-secret')).errorCode, 0, 'the window passed');
  });

  it('refuses inactive users over PLAIN and SCRAM', async (t) => {
    const h = await adminHarness(t, { users });
    await h.broker.users.update('alice', { status: 'inactive' });
    const plain = h.newSession();
    await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' }, plain);
    assert.equal((await h.call(saslAuthenticateHandler, 1, { authBytes: Buffer.from('\0alice\0alice-secret') }, plain)).errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    const scram = await scramLogin(h, 'SCRAM-SHA-256', 'alice', 'alice-secret', 1, h.newSession());
    assert.equal(scram.final!.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED, 'the right password of an inactive user fails at the proof');
    assert.equal(scram.final!.errorMessage, 'Authentication failed: invalid credentials');
  });

  it('answers ILLEGAL_SASL_STATE without a handshake, after a v0 handshake, and after authentication', async (t) => {
    const h = await adminHarness(t, { users });
    const token = { authBytes: Buffer.from('\0alice\0alice-secret') };
    const early = await h.call(saslAuthenticateHandler, 1, token);
    assert.deepEqual([early.errorCode, early.errorMessage], [ErrorCode.ILLEGAL_SASL_STATE, 'SaslAuthenticate request received before SaslHandshake']);
    const raw = h.newSession();
    await h.call(saslHandshakeHandler, 0, { mechanism: 'PLAIN' }, raw);
    assert.equal((await h.call(saslAuthenticateHandler, 1, token, raw)).errorCode, ErrorCode.ILLEGAL_SASL_STATE);
    await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' });
    assert.equal((await h.call(saslAuthenticateHandler, 1, token)).errorCode, 0);
    const late = await h.call(saslAuthenticateHandler, 1, token);
    assert.deepEqual([late.errorCode, late.errorMessage], [ErrorCode.ILLEGAL_SASL_STATE, 'SaslAuthenticate request received after successful authentication']);
  });

  it('authenticates over SCRAM a user created with `quartet user create --offline`', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quartet-sasl-cli-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    let err = '';
    const io = { stdout: () => {}, stderr: (s: string) => void (err += s), readStdin: async () => '', env: { QUARTET_ROOT_PASSWORD: 'root-pw' }, cwd: dataDir };
    assert.equal(await main(['user', 'create', 'carol', '--offline', '--password', 'carol-secret', '--data-dir', dataDir], io), 0, err);
    const broker = await Broker.open({ formats: builtinFormats(), dataDir, maintenanceIntervalMs: 0 });
    const frontend = new KafkaBrokerFrontend({ broker, logger: silentLogger, clusterId: 'c', persistGroups: false });
    t.after(async () => {
      await frontend.close();
      await broker.close();
    });
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
      const session: KafkaSession = { remote: 'x', clientId: null, principal: null, sasl: null, logger: silentLogger };
      const context = (version: number) => ({ frontend, session, version, header: { apiKey: 0, apiVersion: version, correlationId: 1, clientId: null, headerVersion: 1 } }) as KafkaRequestContext;
      await saslHandshakeHandler.handle({ mechanism }, context(1));
      const client = new ScramClient(mechanism, 'carol', 'carol-secret');
      const first = await saslAuthenticateHandler.handle({ authBytes: client.firstMessage() }, context(1));
      const final = await saslAuthenticateHandler.handle({ authBytes: client.finalMessage(first!.authBytes as Buffer) }, context(1));
      assert.equal(final!.errorCode, 0, mechanism);
      assert.ok(client.verifyServerFinal(final!.authBytes as Buffer));
      assert.equal(session.principal, 'carol');
    }
  });
});

describe('failed SASL logins in the log', () => {
  /** A harness whose broker and connection log (at info) into `lines`. */
  async function loggingHarness(t: { after(fn: () => Promise<void> | void): void }, lines: Array<Record<string, unknown>>) {
    const clock = new ManualClock(1_700_000_000_000);
    const logger = createLogger('info', (line) => void lines.push(JSON.parse(line) as Record<string, unknown>));
    const h = await adminHarness(t, { users, broker: { clock, logger } });
    const session = (): KafkaSession => ({ ...h.newSession(), remote: '10.1.2.3:40000', logger: logger.child({ remote: '10.1.2.3:40000' }) });
    return { h, clock, session };
  }

  it('writes one line per failed login (the core\'s, with the peer), over SaslAuthenticate and raw tokens', async (t) => {
    const lines: Array<Record<string, unknown>> = [];
    const { h, clock, session } = await loggingHarness(t, lines);
    lines.length = 0; // the users created
    const plain = session();
    await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' }, plain);
    assert.equal((await h.call(saslAuthenticateHandler, 1, { authBytes: Buffer.from('\0alice\0wrong') }, plain)).errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.deepEqual(
      lines.map((l) => [l.msg, l.protocol, l.peer, l.user]),
      [['authentication failed', 'kafka', '10.1.2.3:40000', 'alice']],
    );

    // The rate limit lets one line a second through: the next attempts come a second apart.
    clock.advance(1_000);
    lines.length = 0;
    const scram = await scramLogin(h, 'SCRAM-SHA-256', 'alice', 'wrong', 1, session());
    assert.equal(scram.final!.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.deepEqual(lines.map((l) => [l.msg, l.peer]), [['authentication failed', '10.1.2.3:40000']]);

    clock.advance(1_000);
    lines.length = 0;
    const raw = session();
    await h.call(saslHandshakeHandler, 0, { mechanism: 'PLAIN' }, raw);
    assert.deepEqual(await saslRawToken(h.frontend, raw, Buffer.from('alice\0alice\0wrong')), { reply: null, close: true });
    assert.deepEqual(lines.map((l) => [l.msg, l.peer]), [['authentication failed', '10.1.2.3:40000']]);
  });
});
