// Kafka reads leaders, epochs, replicas and the node id from the core's replication state
// (src/core/replication.ts), never from constants of its own: a replication that says node 7
// leads in epoch 5 shows in Metadata, FindCoordinator, Produce and OffsetForLeaderEpoch.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Leadership, Replication } from '../../../../src/core/replication.js';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { fetchHandler } from '../../../../src/protocols/kafka/handlers/fetch.js';
import { findCoordinatorHandler } from '../../../../src/protocols/kafka/handlers/find-coordinator.js';
import { listOffsetsHandler } from '../../../../src/protocols/kafka/handlers/list-offsets.js';
import { metadataHandler } from '../../../../src/protocols/kafka/handlers/metadata.js';
import { offsetForLeaderEpochHandler } from '../../../../src/protocols/kafka/handlers/offset-for-leader-epoch.js';
import { produceHandler } from '../../../../src/protocols/kafka/handlers/produce.js';
import { batchOf, dataHarness } from './data-harness.js';

/** Node 7 leads every partition in epoch 5, with node 8 as a second, in-sync replica. */
const epochFive: Replication = {
  nodeId: 7,
  leadership(): Leadership {
    return { leaderId: 7, leaderEpoch: 5, replicas: [7, 8], inSyncReplicas: [7, 8] };
  },
  stateOf(_partition, stats) {
    return { ...this.leadership(_partition), highWatermark: stats.highWatermark, logEndOffset: stats.highWatermark, logStartOffset: stats.logStartOffset };
  },
};

describe('Kafka over the replication seam', () => {
  it('Metadata and FindCoordinator answer the core node id, leader, epoch and replicas', async (t) => {
    const h = await dataHarness(t, { topics: { a: 2 }, replication: epochFive });
    const r = await h.ask(metadataHandler, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.deepEqual(r.brokers.map((b) => b.nodeId), [7]);
    assert.equal(r.controllerId, 7);
    assert.deepEqual(r.topics[0]!.partitions.map((p) => [p.leaderId, p.leaderEpoch, p.replicaNodes, p.isrNodes]), [
      [7, 5, [7, 8], [7, 8]],
      [7, 5, [7, 8], [7, 8]],
    ]);
    const c = await h.ask(findCoordinatorHandler, 1, { key: 'g', keyType: 0 });
    assert.equal(c.nodeId, 7);
  });

  it('Produce stamps the leader epoch into the stored batch; OffsetForLeaderEpoch checks against it', async (t) => {
    const h = await dataHarness(t, { topics: { a: 1 }, replication: epochFive });
    const p = await h.ask(produceHandler, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'a', partitionData: [{ index: 0, records: batchOf([{ key: 'k', value: 'v' }]) }] }] });
    assert.equal(p.responses[0]!.partitionResponses[0]!.errorCode, 0);
    const [stored] = await h.broker.read({ topic: 'a' }, 0, 0, { maxBytes: 1 << 20 });
    assert.equal(stored!.payload.readInt32BE(12), 5, 'partitionLeaderEpoch');
    const ask = async (currentLeaderEpoch: number, leaderEpoch: number) =>
      (await h.ask(offsetForLeaderEpochHandler, 4, { replicaId: -1, topics: [{ topic: 'a', partitions: [{ partition: 0, currentLeaderEpoch, leaderEpoch }] }] })).topics[0]!.partitions[0]!;
    assert.deepEqual(await ask(-1, 5), { errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: 5, endOffset: 1 });
    assert.equal((await ask(5, 5)).errorCode, ErrorCode.NONE);
    assert.equal((await ask(4, 5)).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal((await ask(6, 5)).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.deepEqual(await ask(-1, 0), { errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: -1, endOffset: -1 });
  });

  it('Fetch and ListOffsets check current_leader_epoch against the leader epoch and report it', async (t) => {
    const h = await dataHarness(t, { topics: { a: 1 }, replication: epochFive });
    await h.ask(produceHandler, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'a', partitionData: [{ index: 0, records: batchOf([{ key: 'k', value: 'v' }]) }] }] });
    const fetchAt = async (currentLeaderEpoch: number) =>
      (
        await h.ask(fetchHandler, 12, {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 1,
          maxBytes: 1 << 20,
          isolationLevel: 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [{ topic: 'a', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
          forgottenTopicsData: [],
          rackId: '',
        })
      ).responses[0]!.partitions[0]!;
    for (const current of [-1, 5]) {
      const p = await fetchAt(current);
      assert.equal(p.errorCode, ErrorCode.NONE, `current epoch ${current}`);
      assert.ok(p.records !== null && p.records.length > 0);
    }
    assert.equal((await fetchAt(6)).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal((await fetchAt(4)).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    const listAt = async (currentLeaderEpoch: number) =>
      (await h.ask(listOffsetsHandler, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'a', partitions: [{ partitionIndex: 0, currentLeaderEpoch, timestamp: -1 }] }] })).topics[0]!.partitions[0]!;
    const latest = await listAt(-1);
    assert.deepEqual([latest.errorCode, latest.offset, latest.leaderEpoch], [ErrorCode.NONE, 1, 5]);
    assert.equal((await listAt(6)).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal((await listAt(4)).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
  });
});
