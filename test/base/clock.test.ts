// The µs wall clock (Iggy's server times): readings floor to the wall clock's millisecond, carry
// the monotonic clock's sub-millisecond part, and stay aligned when the two clocks drift apart.
// Driven by injected sources, never by the real clocks.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock, clockMicros, systemClock, wallClockMicros } from '../../src/base/clock.js';

/** Wall (ms, integer) and monotonic (ms, fractional) sources moved by hand. */
function sources(wallMs: number, monoMs: number) {
  const s = { wall: wallMs, mono: monoMs };
  const read = wallClockMicros(
    () => s.wall,
    () => s.mono,
  );
  return { s, read };
}

describe('wallClockMicros', () => {
  it('adds the monotonic clock’s sub-millisecond part to the wall clock’s millisecond', () => {
    const { s, read } = sources(1_700_000_000_000, 5_000);
    assert.equal(read(), 1_700_000_000_000_000);
    s.mono += 0.25;
    assert.equal(read(), 1_700_000_000_000_250);
    s.mono += 0.5;
    assert.equal(read(), 1_700_000_000_000_750);
    s.wall += 1;
    s.mono += 0.3; // 1.05 ms after the start
    assert.equal(read(), 1_700_000_000_001_050);
  });

  it('floors to the wall clock’s millisecond when the monotonic clock runs ahead, without going back', () => {
    const { s, read } = sources(1_700_000_000_000, 5_000);
    s.mono += 0.9;
    assert.equal(read(), 1_700_000_000_000_900);
    // The monotonic clock says the next millisecond has begun; the wall clock does not yet.
    s.mono += 0.3;
    assert.equal(read(), 1_700_000_000_000_999);
    s.mono += 0.05;
    assert.equal(read(), 1_700_000_000_000_999);
    // Re-anchored: the next millisecond starts at its beginning and runs on from there.
    s.wall += 1;
    assert.equal(read(), 1_700_000_000_001_000);
    s.mono += 0.4;
    assert.equal(read(), 1_700_000_000_001_400);
  });

  it('follows a wall clock stepped forward or back', () => {
    const { s, read } = sources(1_700_000_000_000, 5_000);
    s.mono += 0.2;
    assert.equal(read(), 1_700_000_000_000_200);
    s.wall += 60_000; // NTP stepped the wall clock a minute ahead
    s.mono += 0.1;
    assert.equal(Math.floor(read() / 1000), 1_700_000_060_000);
    s.wall -= 120_000; // and then two minutes back
    s.mono += 0.1;
    assert.equal(read(), 1_699_999_940_000_999);
    // Held at the millisecond's last µs until the wall clock's next tick re-aligns the two.
    s.wall += 1;
    s.mono += 0.05;
    assert.equal(read(), 1_699_999_940_001_049);
    s.mono += 0.3;
    const next = read();
    s.mono += 0.3;
    assert.equal(read(), next + 300);
  });

  it('the system clock’s readings floor to Date.now()’s millisecond at the time', () => {
    for (let i = 0; i < 1000; i++) {
      const before = Date.now();
      const micros = systemClock.nowMicros!();
      const after = Date.now();
      const ms = Math.floor(micros / 1000);
      assert.ok(ms >= before && ms <= after, `${micros} µs is within [${before}, ${after}] ms`);
    }
  });
});

describe('ManualClock', () => {
  it('moves in ms and µs; clockMicros reads µs, or ms × 1,000 from a clock without them', () => {
    const clock = new ManualClock(1_000);
    clock.advanceMicros(1_500);
    assert.equal(clock.now(), 1_001); // 1,000 ms + 1.5 ms, floored
    assert.equal(clockMicros(clock), 1_001_500);
    clock.advance(2);
    assert.equal(clock.nowMicros(), 1_003_500);
    // set() to the current millisecond keeps its µs (a scheduler's advance(0) must not go back).
    clock.set(1_003);
    assert.equal(clock.nowMicros(), 1_003_500);
    clock.set(1_010);
    assert.equal(clock.nowMicros(), 1_010_000);
    assert.equal(clockMicros({ now: () => 7 }), 7_000);
  });
});
