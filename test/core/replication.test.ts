// The replication seam: one node leads every partition in epoch 0 and its high watermark is the
// log's written end; the broker answers leadership without a log and the state with one.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuartetError } from '../../src/base/errors.js';
import { Broker } from '../../src/core/broker.js';
import { SingleNodeReplication, defaultNodeId } from '../../src/core/replication.js';
import { encodeNeutralBatch } from '../../src/log/index.js';

describe('SingleNodeReplication', () => {
  it('this node leads in epoch 0, alone in the replicas and the in-sync set', () => {
    const r = new SingleNodeReplication(7);
    assert.equal(r.nodeId, 7);
    assert.deepEqual({ ...r.leadership() }, { leaderId: 7, leaderEpoch: 0, replicas: [7], inSyncReplicas: [7] });
    const s = r.stateOf({ topicInternalId: 1, partition: 0 }, { highWatermark: 12, logStartOffset: 3 });
    assert.deepEqual([s.leaderId, s.leaderEpoch, s.highWatermark, s.logEndOffset, s.logStartOffset], [7, 0, 12, 12, 3]);
    assert.equal(new SingleNodeReplication().nodeId, defaultNodeId);
    assert.throws(() => new SingleNodeReplication(-1));
  });
});

describe('Broker replication state', () => {
  it('answers leadership from the catalog and the high watermark from the log', async () => {
    const broker = await Broker.open({ dataDir: '/nonexistent', memory: true, maintenanceIntervalMs: 0, nodeId: 4 });
    try {
      await broker.createNamespace('default');
      const topic = await broker.createTopic('default', 'orders', { partitions: 2 });
      assert.equal(broker.replication.nodeId, 4);
      assert.equal(broker.leadership(topic, 1).leaderId, 4);
      assert.throws(() => broker.leadership(topic, 2), (e: unknown) => e instanceof QuartetError && e.code === 'unknown_partition');
      assert.throws(() => broker.leadership({ namespace: 'default', topic: 'missing' }, 0), (e: unknown) => e instanceof QuartetError && e.code === 'unknown_topic');
      assert.equal(broker.replicaState(topic, 0).highWatermark, 0);
      await broker.append(topic, 0, encodeNeutralBatch([{ key: null, value: Buffer.from('a') }, { key: null, value: Buffer.from('b') }]));
      const state = broker.replicaState(topic, 0);
      assert.deepEqual([state.highWatermark, state.logEndOffset, state.logStartOffset, state.leaderEpoch], [2, 2, 0, 0]);
    } finally {
      await broker.close();
    }
  });
});
