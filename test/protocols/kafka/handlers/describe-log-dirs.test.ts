import assert from 'node:assert/strict';
import { resolve, join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { describeLogDirsHandler } from '../../../../src/protocols/kafka/handlers/describe-log-dirs.js';
import { adminHarness } from './admin-harness.js';
import { appendValues, sessionWith } from './admin-users.js';

describe('DescribeLogDirs', () => {
  it('answers one log dir with every partition, its size growing with appends (v0..v4)', async (t) => {
    const h = await adminHarness(t, { topics: { a: 2, b: 1 } });
    await appendValues(h, { topic: 'a' }, 1, ['one', 'two', 'three']);
    for (let v = 0; v <= 4; v++) {
      const res = await h.call(describeLogDirsHandler, v, { topics: null });
      assert.equal(res.results.length, 1);
      const dir = res.results[0]!;
      assert.deepEqual([dir.errorCode, dir.logDir], [0, resolve(join(h.broker.dataDir, 'logs'))]);
      const sizes = Object.fromEntries(dir.topics.flatMap((t) => t.partitions.map((p) => [`${t.name}-${p.partitionIndex}`, p.partitionSize])));
      assert.deepEqual(Object.keys(sizes).sort(), ['a-0', 'a-1', 'b-0']);
      assert.equal(sizes['a-0'], 0);
      assert.ok(sizes['a-1']! > 0, 'the partition with records has a size');
      assert.ok(dir.topics.every((t) => t.partitions.every((p) => p.offsetLag === 0 && !p.isFutureKey)));
      if (v >= 4) assert.ok(dir.totalBytes > 0 && dir.usableBytes >= 0 && dir.usableBytes <= dir.totalBytes);
      else assert.deepEqual([dir.totalBytes, dir.usableBytes], [-1, -1]);
    }
  });

  it('leaves out unknown topics and partitions', async (t) => {
    const h = await adminHarness(t, { topics: { a: 2 } });
    const res = await h.call(describeLogDirsHandler, 2, { topics: [{ topic: 'a', partitions: [1, 7] }, { topic: 'nope', partitions: [0] }] });
    assert.deepEqual(res.results[0]!.topics.map((t) => [t.name, t.partitions.map((p) => p.partitionIndex)]), [['a', [1]]]);
  });

  it('needs DESCRIBE on the cluster (read_servers) for a SASL user', async (t) => {
    const h = await adminHarness(t, { topics: { a: 1 } });
    const plain = await sessionWith(h, 'plain', ['read_topics']);
    const denied = await h.call(describeLogDirsHandler, 3, { topics: null }, plain);
    assert.deepEqual([denied.errorCode, denied.results.length], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 0]);
    const reader = await sessionWith(h, 'reader', ['read_servers']);
    assert.equal((await h.call(describeLogDirsHandler, 3, { topics: null }, reader)).results.length, 1);
  });
});
