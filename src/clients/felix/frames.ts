// Reading Felix frames from one QUIC stream (a request stream's answers or a broker-opened event
// stream): chunks through the codec's framer and decodeFrame, each frame to `onFrame`, and one
// `onEnd` when the stream finishes, fails or sends bytes the codec cannot read. A bad header or
// payload ends the reading (the stream's bytes can no longer be trusted) with a FelixProtocolError.

import type { Readable, Writable } from 'node:stream';
import { FelixFramer, decodeFrame, type FelixFrame } from '../../protocols/felix/codec/index.js';
import { FelixConnectionError, FelixProtocolError, type FelixClientError } from './errors.js';

export interface FrameSink {
  onFrame(frame: FelixFrame): void;
  /** Once: null for a clean end (FIN at a frame boundary), else why the stream ended. */
  onEnd(err: FelixClientError | null): void;
}

/** Reads `stream` into `sink` until it ends; returns a function that stops reading (no onEnd). */
export function readFrames(stream: Readable, payloadBytesMax: number, where: string, sink: FrameSink): () => void {
  const framer = new FelixFramer({ payloadBytesMax });
  let ended = false;
  // Once reading stops, a late error on the stream (a reset from the broker) has nothing to tell:
  // it is swallowed rather than left without a listener, which would throw.
  const detach = (): void => {
    stream.off('data', onData).off('end', onFin).off('close', onClose).off('error', onError);
    stream.on('error', () => {});
    framer.dispose();
  };
  const end = (err: FelixClientError | null): void => {
    if (ended) return;
    ended = true;
    detach();
    sink.onEnd(err);
  };
  const onData = (chunk: Buffer): void => {
    for (const r of framer.push(chunk)) {
      if (ended) return;
      if (!r.ok) return end(new FelixProtocolError(`bad frame from ${where}: ${r.reason}`));
      const d = decodeFrame(r.frame.header.flags, r.frame.payload);
      if (!d.ok) return end(new FelixProtocolError(`unreadable frame (flags 0x${r.frame.header.flags.toString(16)}) from ${where}: ${d.reason}`));
      sink.onFrame(d.value);
    }
  };
  const onFin = (): void => end(framer.atFrameBoundary ? null : new FelixProtocolError(`stream from ${where} ended inside a frame`));
  const onClose = (): void => end(new FelixConnectionError(`stream to ${where} closed`));
  const onError = (err: Error): void => end(new FelixConnectionError(`stream to ${where} failed: ${err.message}`, { cause: err }));
  stream.on('data', onData).on('end', onFin).on('close', onClose).on('error', onError);
  return () => {
    if (ended) return;
    ended = true;
    detach();
  };
}

/** Writes a frame's chunks in one go; false when the stream's buffer is full. */
export function writeFrame(stream: Writable, chunks: readonly Buffer[]): boolean {
  stream.cork();
  let ok = true;
  for (const c of chunks) ok = stream.write(c);
  stream.uncork();
  return ok;
}
