// The worker-thread side of opening a compressed Cursus frame (connection.ts hands one that
// decodes to workers.offloadBytesMin bytes or more to the broker's worker pool, core/offload.ts
// offloadTask): a gzip payload of 65 KB that inflates to 64 MiB decodes for a second or more,
// which on the event loop would hold up every other connection. A pure function of plain bytes.

import { asBuffer } from '../../../base/worker-pool.js';
import { openFrame, type FrameHeader, type OpenFailure } from './frame.js';

/** openFrame on a worker: the payload arrives as plain bytes, the decoded bytes go back. */
export function openFrameTask(h: FrameHeader, encoded: Uint8Array): { ok: true; value: Uint8Array } | OpenFailure {
  return openFrame(h, asBuffer(encoded));
}
