// The replication seam: who leads a partition, in which leader epoch, on which replicas, and how
// far its records are committed (the high watermark). Front-ends read these here, never from the
// log or from constants of their own, so that a cluster mode (leaders and in-sync replicas kept
// in etcd, followers fetching from leaders) changes this module and not the front-ends.
//
// One node (today): this node leads every partition in epoch 0, forever; it is the only replica
// and the only member of the in-sync set; the high watermark is the end of what the log has
// written. In a cluster the high watermark is the smallest log end among the in-sync replicas, so
// it may trail the log end offset: readers see offsets below the high watermark only.

import assert from 'node:assert/strict';
import type { LogStats } from '../log/types.js';

/** The node id a broker has when none is configured (Kafka's first broker id). */
export const defaultNodeId = 1;

/** Who leads a partition and who holds it: what metadata answers need, without the log. */
export interface Leadership {
  /** The node that leads the partition: it takes appends and serves reads. */
  readonly leaderId: number;
  /** Grows by one each time leadership moves; stamped into batches appended under it. */
  readonly leaderEpoch: number;
  /** Every node holding a copy, the leader first. */
  readonly replicas: readonly number[];
  /** The replicas caught up with the leader (the leader always among them). */
  readonly inSyncReplicas: readonly number[];
}

/** One partition as replication sees it. Offsets are the log's. */
export interface ReplicaState extends Leadership {
  /** Offsets below it are committed: what consumers may read. At most `logEndOffset`. */
  readonly highWatermark: number;
  /** The end of the leader's written log. */
  readonly logEndOffset: number;
  /** The first offset still in the log (retention and DeleteRecords move it). */
  readonly logStartOffset: number;
}

/** A partition of the catalog: its topic's internal id and its index. */
export interface PartitionRef {
  readonly topicInternalId: number;
  readonly partition: number;
}

export interface Replication {
  /** This broker's node id. */
  readonly nodeId: number;
  leadership(partition: PartitionRef): Leadership;
  /** The state of a partition whose local log has `stats`. */
  stateOf(partition: PartitionRef, stats: Pick<LogStats, 'highWatermark' | 'logStartOffset'>): ReplicaState;
}

/** The single-node implementation: this node leads everything in epoch 0 and is the only replica. */
export class SingleNodeReplication implements Replication {
  readonly nodeId: number;
  private readonly leader: Leadership;

  constructor(nodeId: number = defaultNodeId) {
    assert.ok(Number.isInteger(nodeId) && nodeId >= 0, 'a node id is a non-negative integer');
    this.nodeId = nodeId;
    const nodes = Object.freeze([nodeId]);
    this.leader = Object.freeze({ leaderId: nodeId, leaderEpoch: 0, replicas: nodes, inSyncReplicas: nodes });
  }

  leadership(): Leadership {
    return this.leader;
  }

  stateOf(_partition: PartitionRef, stats: Pick<LogStats, 'highWatermark' | 'logStartOffset'>): ReplicaState {
    // The log's "high watermark" is its written end: on one node everything written is committed.
    return { ...this.leader, highWatermark: stats.highWatermark, logEndOffset: stats.highWatermark, logStartOffset: stats.logStartOffset };
  }
}
