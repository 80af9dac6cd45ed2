// Writing a frame to a Felix stream (a node stream over QUIC, quic.ts): its header and payload,
// or several frames, as one write. Written one by one, the first chunk would go out at once in a
// QUIC packet of its own and the rest in the next, and each packet costs the QUIC library a send
// here and a receive at the peer (most of a small request's time: docs/felix.md "Acknowledgements
// and latency"). Corked, the chunks reach the stream's writev together and leave coalesced.

import type { Writable } from 'node:stream';

export function writeChunks(out: Writable, chunks: readonly Buffer[]): void {
  out.cork();
  for (const c of chunks) out.write(c);
  out.uncork();
}
