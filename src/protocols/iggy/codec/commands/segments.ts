// DeleteSegments (503, op 138): deletes the `segments_count` oldest sealed segments. Reply R: empty.
//
//   request := [stream_id Identifier][topic_id Identifier][partition_id u32][segments_count u32]

import { Reader, Writer } from '../primitives.js';
import { readIdentifier, writeIdentifier, type Identifier } from '../values.js';

export interface DeleteSegmentsRequest {
  streamId: Identifier;
  topicId: Identifier;
  partitionId: number;
  segmentsCount: number;
}

export function readDeleteSegmentsRequest(r: Reader): DeleteSegmentsRequest {
  const streamId = readIdentifier(r, 'stream_id');
  const topicId = readIdentifier(r, 'topic_id');
  const partitionId = r.u32('partition_id');
  const segmentsCount = r.u32('segments_count');
  return { streamId, topicId, partitionId, segmentsCount };
}

export function writeDeleteSegmentsRequest(w: Writer, v: DeleteSegmentsRequest): void {
  writeIdentifier(w, v.streamId);
  writeIdentifier(w, v.topicId);
  w.u32(v.partitionId).u32(v.segmentsCount);
}
