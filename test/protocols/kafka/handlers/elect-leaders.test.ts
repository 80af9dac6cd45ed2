import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { electLeadersHandler } from '../../../../src/protocols/kafka/handlers/elect-leaders.js';
import { adminHarness } from './admin-harness.js';
import { sessionWith } from './admin-users.js';

describe('ElectLeaders', () => {
  it('answers ELECTION_NOT_NEEDED for every partition of the sole replica (v0..v2, both types)', async (t) => {
    const h = await adminHarness(t, { topics: { a: 2 } });
    for (const [v, electionType] of [[0, 0], [1, 1], [2, 0]] as const) {
      const res = await h.call(electLeadersHandler, v, { electionType, topicPartitions: [{ topic: 'a', partitionId: [0, 1, 9] }, { topic: 'nope', partitionId: [0] }], timeoutMs: 1000 });
      assert.equal(res.errorCode, 0);
      assert.deepEqual(res.replicaElectionResults.map((r) => [r.topic, r.partitionResult.map((p) => [p.partitionId, p.errorCode])]), [
        ['a', [[0, ErrorCode.ELECTION_NOT_NEEDED], [1, ErrorCode.ELECTION_NOT_NEEDED], [9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
        ['nope', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
      ]);
    }
  });

  it('lists nothing for all partitions (null), refuses an unknown election type', async (t) => {
    const h = await adminHarness(t, { topics: { a: 2 } });
    assert.deepEqual((await h.call(electLeadersHandler, 2, { electionType: 0, topicPartitions: null })).replicaElectionResults, []);
    assert.equal((await h.call(electLeadersHandler, 1, { electionType: 5, topicPartitions: null })).errorCode, ErrorCode.INVALID_REQUEST);
  });

  it('needs ALTER on the cluster (manage_servers) for a SASL user', async (t) => {
    const h = await adminHarness(t, { topics: { a: 1 } });
    const session = await sessionWith(h, 'reader', ['read_servers', 'manage_topics']);
    const res = await h.call(electLeadersHandler, 1, { electionType: 0, topicPartitions: [{ topic: 'a', partitionId: [0] }] }, session);
    assert.equal(res.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    assert.equal(res.replicaElectionResults[0]!.partitionResult[0]!.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });
});
