import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { createLogger, silentLogger } from '../../src/base/logger.js';
import { AuthThrottle, defaultAuthThrottleSettings, peerHost } from '../../src/core/auth-throttle.js';
import { MetricsRegistry } from '../../src/core/metrics.js';

function throttle(overrides: Partial<typeof defaultAuthThrottleSettings> = {}) {
  const clock = new ManualClock();
  const metrics = new MetricsRegistry();
  const slept: number[] = [];
  const t = new AuthThrottle({ ...defaultAuthThrottleSettings, delayAfterFailures: 3, lockoutAfterFailures: 6, lockoutMs: 60_000, ...overrides }, clock, metrics, silentLogger, async (ms) => void slept.push(ms));
  return { t, clock, metrics, slept };
}

test('peer hosts: IPv4 and bracketed IPv6 without the port', () => {
  assert.equal(peerHost('10.0.0.1:5555'), '10.0.0.1');
  assert.equal(peerHost('[::1]:9092'), '::1');
  assert.equal(peerHost('[::ffff:127.0.0.1]:1'), '::ffff:127.0.0.1');
});

test('failures of a name slow its attempts, then lock it out for the window; other names and a success are not held back', async () => {
  const { t, clock, metrics, slept } = throttle();
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await t.admit('alice', `10.0.0.${i}:1`, 'iggy'), { admitted: true });
    t.failed('alice', `10.0.0.${i}:1`, 'iggy');
  }
  assert.deepEqual(slept, [], 'no delay before delayAfterFailures');
  // From new peers each time: the name's count decides. Delays double: 250, 500, 1000 ms.
  for (let i = 3; i < 6; i++) {
    assert.deepEqual(await t.admit('alice', `10.0.1.${i}:1`, 'iggy'), { admitted: true });
    t.failed('alice', `10.0.1.${i}:1`, 'iggy');
  }
  assert.deepEqual(slept, [250, 500, 1000]);
  assert.deepEqual(await t.admit('alice', '10.9.9.9:1', 'iggy'), { admitted: false, lockedOut: 'user' });
  assert.deepEqual(await t.admit('bob', '10.9.9.9:1', 'iggy'), { admitted: true }, 'another name from a clean peer');
  clock.advance(59_999);
  assert.equal((await t.admit('alice', '10.9.9.9:1', 'iggy')).admitted, false, 'still within the window');
  clock.advance(1);
  assert.deepEqual(await t.admit('alice', '10.9.9.9:1', 'iggy'), { admitted: true }, 'the window passed: back to normal');
  const text = metrics.render();
  assert.match(text, /quartet_auth_failures_total\{protocol="iggy"\} 6/);
  assert.match(text, /quartet_auth_delayed_total\{protocol="iggy"\} 3/);
  assert.match(text, /quartet_auth_locked_out_total\{protocol="iggy",scope="user"\} 2/);
});

test('failures from a peer lock that peer out for every name; a success clears the name, not the peer', async () => {
  const { t } = throttle();
  for (let i = 0; i < 6; i++) t.failed(`user${i}`, '192.168.1.7:40000', 'kafka');
  assert.deepEqual(await t.admit('someone', '192.168.1.7:50000', 'kafka'), { admitted: false, lockedOut: 'peer' }, 'any port of the host');
  assert.deepEqual(await t.admit('someone', '192.168.1.8:50000', 'kafka'), { admitted: true });
  for (let i = 0; i < 5; i++) t.failed('carol', '172.16.0.1:1', 'kafka');
  t.succeeded('carol');
  assert.deepEqual(await t.admit('carol', '172.16.0.2:1', 'kafka'), { admitted: true });
});

test('a token login (no name) counts against its peer only; 0 thresholds never slow or lock out', async () => {
  const { t, slept } = throttle();
  for (let i = 0; i < 6; i++) t.failed(null, '10.1.1.1:1', 'iggy');
  assert.equal((await t.admit(null, '10.1.1.1:2', 'iggy')).admitted, false);
  const off = throttle({ delayAfterFailures: 0, lockoutAfterFailures: 0 });
  for (let i = 0; i < 50; i++) off.t.failed('x', '10.2.2.2:1', 'iggy');
  assert.deepEqual(await off.t.admit('x', '10.2.2.2:1', 'iggy'), { admitted: true });
  assert.deepEqual(off.slept, []);
  assert.deepEqual(slept, []);
});

test('a spray of names is bounded: the oldest entries go', () => {
  const { t } = throttle({ trackedMax: 100 });
  for (let i = 0; i < 10_000; i++) t.failed(`name${i}`, `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}:1`, 'iggy');
  assert.ok(t.tracked <= 100, `tracked ${t.tracked}`);
});

test('failed logins are logged with the peer address, at most one line per second, counting the dropped ones', () => {
  const clock = new ManualClock(1_000_000);
  const lines: string[] = [];
  const t = new AuthThrottle(defaultAuthThrottleSettings, clock, new MetricsRegistry(), createLogger('info', (l) => lines.push(l)));
  t.failed('alice', '10.0.0.7:51000', 'kafka');
  for (let i = 0; i < 9; i++) t.failed('alice', '10.0.0.7:51000', 'iggy');
  clock.advance(1_000);
  t.failed(null, '[::1]:6000', 'cursus');
  const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    logged.map(({ msg, protocol, peer, user, dropped }) => ({ msg, protocol, peer, user, dropped })),
    [
      { msg: 'authentication failed', protocol: 'kafka', peer: '10.0.0.7:51000', user: 'alice', dropped: undefined },
      { msg: 'authentication failed', protocol: 'cursus', peer: '[::1]:6000', user: undefined, dropped: 9 },
    ],
  );
});
