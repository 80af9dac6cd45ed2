// Partition commands: CreatePartitions (402, op 136), DeletePartitions (403, op 137); both reply
// R: empty.
//
//   request := [stream_id Identifier][topic_id Identifier][partitions_count u32]

import { Reader, Writer } from '../primitives.js';
import { readIdentifier, writeIdentifier, type Identifier } from '../values.js';

/** MAX_PARTITIONS_PER_REQUEST (server notes §8). */
export const partitionsPerRequestMax = 1000;

export interface PartitionsRequest {
  streamId: Identifier;
  topicId: Identifier;
  partitionsCount: number;
}

export function readPartitionsRequest(r: Reader): PartitionsRequest {
  const streamId = readIdentifier(r, 'stream_id');
  const topicId = readIdentifier(r, 'topic_id');
  const partitionsCount = r.u32('partitions_count');
  return { streamId, topicId, partitionsCount };
}

export function writePartitionsRequest(w: Writer, v: PartitionsRequest): void {
  writeIdentifier(w, v.streamId);
  writeIdentifier(w, v.topicId);
  w.u32(v.partitionsCount);
}
