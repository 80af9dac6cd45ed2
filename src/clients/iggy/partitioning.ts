// Client-side partition choice, the same rules the Iggy server applies to a SendMessages
// `partitioning` (reference server `topics::helpers::calculate_partition_id_by_messages_key_hash`
// and `get_next_partition_id`):
// - messages key: XXH32(key, seed 0) % partitions_count (`iggy_common::hash::calculate_32`,
//   twox_hash XxHash32::oneshot(0, key)); partition ids are 0-based in 0.11;
// - balanced: round robin over 0..partitions_count-1, one step per batch.
// Resolving on the client lets the producer batch per partition and report where messages went.

import { xxh32 } from '@node-rs/xxhash';

/** The partition a messages key maps to (0-based), as the server computes it. */
export function partitionForKey(key: Buffer | string, partitionsCount: number): number {
  if (!(partitionsCount >= 1)) throw new RangeError('a topic has at least one partition');
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  return xxh32(bytes, 0) % partitionsCount;
}

/** Round robin over a topic's partitions, one step per call. */
export class RoundRobin {
  private next = 0;

  constructor(start = 0) {
    this.next = start;
  }

  pick(partitionsCount: number): number {
    if (!(partitionsCount >= 1)) throw new RangeError('a topic has at least one partition');
    const p = this.next % partitionsCount;
    this.next = (p + 1) % partitionsCount;
    return p;
  }
}
