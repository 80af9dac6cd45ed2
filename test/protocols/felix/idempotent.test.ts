// Felix idempotent producers (docs/felix.md "Idempotent producers"): the window of the last 64
// batches per producer and shard (a retry of any of them is acknowledged without appending, an
// older one is sequence_expired), and the producer state across restarts: after a clean stop
// (the producer snapshot) and after a crash (nothing closed: rebuilt from the log), the same
// producer id goes on with its next sequence, a retry of its last batch is deduplicated, a gap
// is refused with the expected sequence, and batches with several records count one sequence.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BatchFormat } from '../../../src/base/batch.js';
import type { FelixMessage } from '../../../src/protocols/felix/codec/index.js';
import { startFelix, type FelixHarness, type TestStream } from './harness.js';

const name = { tenantId: 'default', namespace: 'default', stream: 'idem' };

async function values(h: FelixHarness): Promise<string[]> {
  const t = h.broker.catalog.requireTopic({ namespace: 'default', topic: 'idem' });
  const reader = h.broker.reads.open(t, 0);
  const end = reader.position().highWatermark;
  const read = await reader.readRecords({ from: 0, end, recordsMax: 10_000, bytesMax: 1 << 24, format: BatchFormat.neutral, isolation: 'read_uncommitted', decode: true });
  return (read.decoded ?? []).map((r) => r.value!.toString());
}

class Producer {
  private requestId = 1n;
  constructor(
    private readonly s: TestStream,
    readonly producerId: bigint,
  ) {}

  static async init(s: TestStream): Promise<Producer> {
    s.send({ type: 'producer_init', requestId: 0n });
    const init = await s.reader.message();
    assert.equal(init.type, 'producer_init_ok');
    return new Producer(s, init.type === 'producer_init_ok' ? init.producerId : -1n);
  }

  /** Publishes `payloads` as batch `sequence`; the answer without its request id. */
  async publish(sequence: number, ...payloads: string[]): Promise<Record<string, unknown>> {
    const requestId = this.requestId++;
    this.s.send({ type: 'publish_idempotent', ...name, payloads: payloads.map((p) => Buffer.from(p)), requestId, producerId: this.producerId, sequence: BigInt(sequence) });
    const answer: FelixMessage = await this.s.reader.message();
    assert.equal('requestId' in answer ? answer.requestId : null, requestId);
    if (answer.type === 'publish_ok') return { ok: true };
    if (answer.type === 'publish_refused') return { refused: answer.reason };
    return { other: answer };
  }
}

const ok = { ok: true };

describe('felix idempotent producers', () => {
  it('remembers the last 64 batches of a producer on a shard: retries of them are acknowledged, older ones expired', async (t) => {
    const h = await startFelix(t);
    await h.broker.createTopic('default', 'idem', { partitions: 1 });
    const p = await Producer.init(await (await h.connect()).authed('default', 'x', 0x00ff));
    for (let i = 0; i < 70; i++) assert.deepEqual(await p.publish(i, `v${i}`), ok);
    assert.deepEqual(await p.publish(69, 'again'), ok, 'the last batch');
    assert.deepEqual(await p.publish(6, 'again'), ok, 'the oldest of the 64');
    assert.deepEqual(await p.publish(5, 'again'), { refused: { kind: 'sequence_expired' } });
    assert.deepEqual(await p.publish(72, 'gap'), { refused: { kind: 'sequence_gap', expected: 70n } });
    assert.deepEqual(await values(h), Array.from({ length: 70 }, (_, i) => `v${i}`));
  });

  for (const how of ['a clean stop', 'a crash'] as const) {
    it(`keeps a producer's sequences over ${how}: the next sequence is appended, a retry deduplicated, a gap refused`, async (t) => {
      let h = await startFelix(null, { keepDataDir: true });
      await h.broker.createTopic('default', 'idem', { partitions: 1 });
      const dataDir = h.dataDir;
      const before = await Producer.init(await (await h.connect()).authed('default', 'x', 0x00ff));
      assert.deepEqual(await before.publish(0, 'a0'), ok);
      assert.deepEqual(await before.publish(1, 'b0', 'b1', 'b2'), ok);
      assert.deepEqual(await before.publish(2, 'c0', 'c1'), ok);
      const crashed = how === 'a crash' ? h : null;
      if (crashed === null) await h.stop();
      // A crash: the broker is opened again while the old one was never closed, so it wrote no
      // producer snapshot; the log (in the page cache) is all there is.
      h = await startFelix(null, { dataDir });
      t.after(async () => {
        await h.stop();
        await crashed?.stop().catch(() => undefined);
        rmSync(dataDir, { recursive: true, force: true });
      });
      const after = new Producer(await (await h.connect()).authed('default', 'x', 0x00ff), before.producerId);
      assert.deepEqual(await after.publish(2, 'c0', 'c1'), ok, 'a retry of the last batch');
      assert.deepEqual(await after.publish(1, 'b0', 'b1', 'b2'), ok, 'a retry of an earlier batch');
      assert.deepEqual(await after.publish(4, 'gap'), { refused: { kind: 'sequence_gap', expected: 3n } });
      assert.deepEqual(await after.publish(3, 'd0'), ok, 'the next sequence');
      assert.deepEqual(await values(h), ['a0', 'b0', 'b1', 'b2', 'c0', 'c1', 'd0']);
    });
  }
});
