import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { ClientQuotas, quotaSampleMs, quotaSamples } from '../../src/core/client-quotas.js';
import { memoryStore } from './helpers.js';

describe('ClientQuotas', () => {
  it('resolves in Kafka precedence order and persists across reopen', async () => {
    const store = memoryStore();
    const clock = new ManualClock(1_000_000);
    const q = await ClientQuotas.open(store, clock);
    assert.equal(q.active, false);
    await q.alter({ clientId: null }, [{ key: 'producer_byte_rate', value: 1 }]);
    await q.alter({ user: null }, [{ key: 'producer_byte_rate', value: 2 }]);
    await q.alter({ user: 'alice' }, [{ key: 'producer_byte_rate', value: 3 }]);
    await q.alter({ user: 'alice', clientId: 'app' }, [{ key: 'producer_byte_rate', value: 4 }]);
    assert.equal(q.active, true);
    assert.equal(q.resolve('producer_byte_rate', 'alice', 'app')?.quota, 4);
    assert.equal(q.resolve('producer_byte_rate', 'alice', 'other')?.quota, 3);
    assert.equal(q.resolve('producer_byte_rate', 'bob', 'app')?.quota, 2);
    assert.equal(q.resolve('consumer_byte_rate', 'bob', 'app'), null);
    const again = await ClientQuotas.open(store, clock);
    assert.equal(again.list().length, 4);
    await again.alter({ user: 'alice' }, [{ key: 'producer_byte_rate', value: null }]);
    assert.equal(again.resolve('producer_byte_rate', 'alice', 'other')?.quota, 2);
    await assert.rejects(again.alter({ user: 'x' }, [{ key: 'producer_byte_rate', value: 1.5 }]));
  });

  it('throttles by (rate - quota) / quota × window once the window average passes the quota', async () => {
    const clock = new ManualClock(5_000_000);
    const q = await ClientQuotas.open(memoryStore(), clock);
    await q.alter({ clientId: 'c' }, [{ key: 'producer_byte_rate', value: 1000 }]);
    const minWindowMs = (quotaSamples - 1) * quotaSampleMs;
    // 10 000 bytes over the minimum 10 s window is exactly the quota: no throttle.
    assert.equal(q.record('producer_byte_rate', 'u', 'c', 10_000), 0);
    // 10 000 more: 2000 B/s over 10 s → (2000 - 1000) / 1000 × 10 000 ms.
    assert.equal(q.record('producer_byte_rate', 'u', 'c', 10_000), minWindowMs);
    // Another client id is a separate bucket with no quota.
    assert.equal(q.record('producer_byte_rate', 'u', 'd', 1_000_000), 0);
    // Once the samples age out of the window the bucket is within quota again.
    clock.advance(quotaSamples * quotaSampleMs + 1);
    assert.equal(q.record('producer_byte_rate', 'u', 'c', 100), 0);
  });

  it('request_percentage counts handling time: n % is 10·n ms per second', async () => {
    const q = await ClientQuotas.open(memoryStore(), new ManualClock(9_000_000));
    await q.alter({ user: 'u' }, [{ key: 'request_percentage', value: 10 }]);
    // 1000 ms of handling over the 10 s minimum window is 100 ms/s: exactly 10 %.
    assert.equal(q.record('request_percentage', 'u', 'c', 1000), 0);
    // 2000 ms: 200 ms/s, twice the quota → (200 - 100) / 100 × 10 000 ms.
    assert.equal(q.record('request_percentage', 'u', 'c', 1000), 10_000);
  });
});
