// Failed-login throttling, for every protocol that checks a password or a token (Kafka SASL,
// Iggy logins; Cursus and Felix next). Failures are counted per user name and per peer address
// over a window: after `delayAfterFailures` of either, each further attempt of that name or from
// that peer waits before its credentials are checked (doubling from `delayBaseMs`, at most
// `delayMaxMs`); after `lockoutAfterFailures`, attempts are refused without a check until
// `lockoutMs` has passed since the last failure (the client sees what a wrong password gets). A
// success clears its user's count, not its peer's: one good account does not buy a peer more
// guesses at others. The right password of a user under attack still works once the lockout of
// that name lapses, and at once from a peer that has not failed.
//
// Bounded: at most `trackedMax` names and peers are tracked; past that the oldest entries are
// dropped (a spray of names cannot grow memory). Clocked by the injected clock; the wait goes
// through an injected sleep so that tests need no real time.

import type { Clock } from '../base/clock.js';
import { LogRateLimiter, type Logger } from '../base/logger.js';
import type { Counter, MetricsRegistry } from './metrics.js';

export interface AuthThrottleSettings {
  /** Failures (of a name or from a peer) before attempts are slowed; 0 never slows. */
  delayAfterFailures: number;
  /** Failures before attempts are refused without a check; 0 never locks out. */
  lockoutAfterFailures: number;
  /** How long failures count, and how long a lockout lasts after the last failure. */
  lockoutMs: number;
  delayBaseMs: number;
  delayMaxMs: number;
  trackedMax: number;
}

export const defaultAuthThrottleSettings: AuthThrottleSettings = {
  delayAfterFailures: 5,
  lockoutAfterFailures: 20,
  lockoutMs: 300_000,
  delayBaseMs: 250,
  delayMaxMs: 5_000,
  trackedMax: 100_000,
};

interface Failures {
  count: number;
  lastMs: number;
}

export type Admission = { admitted: true } | { admitted: false; lockedOut: 'user' | 'peer' };

/** The host of "ip:port" or "[ipv6]:port" (what listeners call the remote). */
export function peerHost(remote: string): string {
  if (remote.startsWith('[')) {
    const end = remote.indexOf(']');
    return end > 0 ? remote.slice(1, end) : remote;
  }
  const colon = remote.lastIndexOf(':');
  return colon > 0 ? remote.slice(0, colon) : remote;
}

export class AuthThrottle {
  private readonly byUser = new Map<string, Failures>();
  private readonly byPeer = new Map<string, Failures>();
  private readonly failuresTotal: Counter;
  private readonly delayedTotal: Counter;
  private readonly lockedOutTotal: Counter;
  private lastLockoutLogMs = -Infinity;
  /** Failed logins are logged at most once a second (a guessing peer does not flood the log). */
  private readonly failureLog: LogRateLimiter;

  constructor(
    private readonly settings: AuthThrottleSettings,
    private readonly clock: Clock,
    metrics: MetricsRegistry,
    private readonly logger: Logger,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    this.failuresTotal = metrics.counter('quartet_auth_failures_total', 'Failed logins (wrong password or token, unknown or inactive user, refused while locked out)');
    this.delayedTotal = metrics.counter('quartet_auth_delayed_total', 'Login attempts slowed down because of earlier failures of their user name or peer');
    this.failureLog = new LogRateLimiter(clock);
    this.lockedOutTotal = metrics.counter('quartet_auth_locked_out_total', 'Login attempts refused without a check because their user name or peer was locked out');
  }

  /**
   * Call before checking credentials: waits out the delay earlier failures call for, then says
   * whether the check may run (false: locked out; the attempt fails as a wrong password would,
   * and must be reported with failed()). `user` is null when the attempt names none (a token).
   */
  async admit(user: string | null, remote: string, protocol: string): Promise<Admission> {
    const peer = peerHost(remote);
    const userFailures = user === null ? 0 : this.recent(this.byUser, user);
    const peerFailures = this.recent(this.byPeer, peer);
    const { lockoutAfterFailures, delayAfterFailures } = this.settings;
    if (lockoutAfterFailures > 0 && (userFailures >= lockoutAfterFailures || peerFailures >= lockoutAfterFailures)) {
      const lockedOut = userFailures >= lockoutAfterFailures ? 'user' : 'peer';
      this.lockedOutTotal.inc({ protocol, scope: lockedOut });
      this.logLockout(protocol, lockedOut, user, peer);
      return { admitted: false, lockedOut };
    }
    const over = Math.max(userFailures, peerFailures) - delayAfterFailures;
    if (delayAfterFailures > 0 && over >= 0) {
      this.delayedTotal.inc({ protocol });
      await this.sleep(Math.min(this.settings.delayMaxMs, this.settings.delayBaseMs * 2 ** Math.min(over, 20)));
    }
    return { admitted: true };
  }

  /** A failed login (or one refused by admit). */
  failed(user: string | null, remote: string, protocol: string): void {
    this.failuresTotal.inc({ protocol });
    this.failureLog.log(this.logger, 'warn', 'auth-failed', 'authentication failed', { protocol, peer: remote, ...(user === null ? {} : { user }) });
    if (user !== null) this.count(this.byUser, user);
    this.count(this.byPeer, peerHost(remote));
  }

  /** A successful login clears its user's failures (not its peer's). */
  succeeded(user: string): void {
    this.byUser.delete(user);
  }

  /** Names and peers tracked (tests, diagnostics). */
  get tracked(): number {
    return this.byUser.size + this.byPeer.size;
  }

  /** Failures of `key` still in the window. */
  private recent(map: Map<string, Failures>, key: string): number {
    const entry = map.get(key);
    if (entry === undefined) return 0;
    if (this.clock.now() - entry.lastMs >= this.settings.lockoutMs) {
      map.delete(key);
      return 0;
    }
    return entry.count;
  }

  private count(map: Map<string, Failures>, key: string): void {
    const now = this.clock.now();
    const count = this.recent(map, key) + 1;
    // Re-inserted, so that the map's order is the order of last failures (oldest first).
    map.delete(key);
    map.set(key, { count, lastMs: now });
    const half = Math.max(1, Math.floor(this.settings.trackedMax / 2));
    while (map.size > half) map.delete(map.keys().next().value as string);
  }

  /** At most one log line per 10 s: a lockout under attack is logged, not every refused attempt. */
  private logLockout(protocol: string, scope: 'user' | 'peer', user: string | null, peer: string): void {
    const now = this.clock.now();
    if (now - this.lastLockoutLogMs < 10_000) return;
    this.lastLockoutLogMs = now;
    this.logger.warn('login refused: too many failed logins', { protocol, scope, ...(scope === 'user' ? { user } : { peer }), lockoutMs: this.settings.lockoutMs });
  }
}
