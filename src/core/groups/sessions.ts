// Session deadlines of group members, on an injected clock and scheduler (a ManualScheduler in
// tests). A member that sends nothing for its session timeout is expired; every sign of life
// pushes the deadline. The timer is lazy: it fires at the deadline it was armed for and re-arms if
// the deadline moved later meanwhile, so a heartbeat costs no timer work; only a deadline earlier
// than the armed one needs a new timer. Both group engines (client-side.ts, server-side.ts) use it.

import type { Clock } from '../../base/clock.js';
import type { Scheduler, TimerHandle } from '../scheduler.js';

/** The session fields a member carries. */
export interface MemberSession {
  /** When the member is considered gone (clock ms). */
  sessionDeadlineMs: number;
  sessionTimer: TimerHandle | null;
  sessionTimerFireAtMs: number;
}

export interface SessionExpiry {
  /** False once the member was removed or replaced: its timer then does nothing. */
  isCurrent(): boolean;
  /** The deadline passed without a touch (the callback may touch again to keep the member). */
  expired(nowMs: number): void;
}

export function newMemberSession(): MemberSession {
  return { sessionDeadlineMs: 0, sessionTimer: null, sessionTimerFireAtMs: 0 };
}

export class SessionTimers {
  constructor(
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
  ) {}

  /** Pushes the deadline to now + timeoutMs, (re)arming the timer if needed. */
  touch(session: MemberSession, timeoutMs: number, expiry: SessionExpiry, nowMs = this.clock.now()): void {
    session.sessionDeadlineMs = nowMs + timeoutMs;
    if (session.sessionTimer !== null && session.sessionTimerFireAtMs <= session.sessionDeadlineMs) return;
    session.sessionTimer?.cancel();
    session.sessionTimerFireAtMs = session.sessionDeadlineMs;
    session.sessionTimer = this.scheduler.schedule(timeoutMs, () => this.onTimer(session, expiry));
  }

  /** Stops the member's timer (it left, or the engine closes). */
  cancel(session: MemberSession): void {
    session.sessionTimer?.cancel();
    session.sessionTimer = null;
  }

  private onTimer(session: MemberSession, expiry: SessionExpiry): void {
    session.sessionTimer = null;
    if (!expiry.isCurrent()) return;
    const now = this.clock.now();
    if (session.sessionDeadlineMs > now) {
      session.sessionTimerFireAtMs = session.sessionDeadlineMs;
      session.sessionTimer = this.scheduler.schedule(session.sessionDeadlineMs - now, () => this.onTimer(session, expiry));
      return;
    }
    expiry.expired(now);
  }
}
