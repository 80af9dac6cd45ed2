// The reconnection backoff the SDKs share: doubling from the floor, capped, ±20 % jitter.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelayMs } from '../../../src/clients/common/backoff.js';

describe('backoffDelayMs', () => {
  const o = { backoffMinMs: 100, backoffMaxMs: 1_000 };
  it('doubles per attempt from the floor and stops at the ceiling (no jitter at random 0.5)', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 9].map((a) => backoffDelayMs(a, o, () => 0.5)), [100, 200, 400, 800, 1_000, 1_000]);
  });
  it('jitters within ±20 %', () => {
    assert.equal(backoffDelayMs(2, o, () => 0), 160);
    assert.equal(backoffDelayMs(2, o, () => 0.999_999), 240);
  });
});
