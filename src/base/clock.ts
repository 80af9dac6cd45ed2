// Time, injectable: tests drive retention, segment age, session timeouts and token expiry with a
// manual clock instead of sleeping.

import { performance } from 'node:perf_hooks';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Microseconds since the epoch, in the millisecond now() reports (floor(µs / 1000) = ms). For
   * server times that protocols give in µs (Iggy's base_timestamp). Clocks without it give now()'s
   * milliseconds × 1,000 (clockMicros).
   */
  nowMicros?(): number;
}

/**
 * The wall clock in µs: Date.now()'s millisecond (the wall clock every other reading uses) and,
 * within it, the sub-millisecond part of the monotonic high-resolution clock, kept aligned to the
 * wall clock by a skew that is re-anchored whenever the two fall into different milliseconds
 * (the monotonic clock drifts from a wall clock that NTP slews or steps). So readings floor to
 * Date.now()'s millisecond, and within one millisecond they do not go back.
 */
export function wallClockMicros(wall: () => number = Date.now, monotonic: () => number = () => performance.timeOrigin + performance.now()): () => number {
  let skew = wall() - monotonic();
  let last = 0;
  return () => {
    const ms = wall();
    let precise = monotonic() + skew;
    if (precise < ms) {
      skew += ms - precise;
      precise = ms;
    } else if (precise >= ms + 1) {
      skew -= precise - (ms + 0.999);
      precise = ms + 0.999;
    }
    const micros = Math.max(Math.floor(precise * 1000), ms * 1000);
    // Within a millisecond the reading never goes back (a re-anchor may land below the last).
    last = Math.floor(last / 1000) === ms ? Math.max(last, micros) : micros;
    return last;
  };
}

export const systemClock: Clock = { now: () => Date.now(), nowMicros: wallClockMicros() };

/** The clock's µs reading, or its milliseconds × 1,000 when it has none. */
export function clockMicros(clock: Clock): number {
  return clock.nowMicros?.() ?? clock.now() * 1000;
}

export class ManualClock implements Clock {
  private micros: number;
  constructor(ms = 1_700_000_000_000) {
    this.micros = ms * 1000;
  }
  now(): number {
    return Math.floor(this.micros / 1000);
  }
  nowMicros(): number {
    return this.micros;
  }
  advance(ms: number): void {
    this.micros += ms * 1000;
  }
  advanceMicros(us: number): void {
    this.micros += us;
  }
  /** Moves to `ms`; within the current millisecond the µs reading stays (it never goes back). */
  set(ms: number): void {
    if (ms !== this.now()) this.micros = ms * 1000;
  }
}
