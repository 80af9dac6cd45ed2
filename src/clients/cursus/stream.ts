// CursusStream: the frames of a STREAM request (spec §4 "STREAM (continuous push)") as an async
// iterable of events. A stream frame's payload says what it is by its first bytes (docs §3):
// empty is a keepalive, `STREAM_CONTROL` a control line (CLOSE, the last frame), `CBV2` a batch.
//
// Frames the caller has not taken yet are buffered up to `bufferedFramesMax`; past that the
// connection stops reading (TCP then holds the broker back) until the caller catches up. stop()
// closes the stream's connection, the only way a client ends a stream (the broker needs no
// message: a disconnect means "resume from the committed offset").

import {
  batchMagic,
  decodeBatch,
  decodeStreamControl,
  isStreamControl,
  type CursusBatch,
  type StreamClose,
} from '../../protocols/cursus/codec/index.js';
import type { CursusConnection, ReplyFrame } from './connection.js';
import { CursusClosedError, CursusProtocolError } from './errors.js';

export type StreamEvent = { type: 'batch'; batch: CursusBatch } | { type: 'keepalive' } | { type: 'close'; close: StreamClose };

export interface StreamOptions {
  /** Longest wait for the next frame, keepalives included (default: the client's streamIdleTimeoutMs). */
  idleTimeoutMs?: number;
  /** Events buffered before the connection stops reading (default 16). */
  bufferedFramesMax?: number;
}

/** What the stream gives the request path: where frames go, and the connection once it runs. */
export interface StreamSink {
  onFrame(frame: ReplyFrame): void;
  started(conn: CursusConnection, stop: () => void): void;
}

/** A stream frame's payload as an event; throws CursusProtocolError for anything else. */
export function streamEvent(payload: Buffer): StreamEvent {
  if (payload.length === 0) return { type: 'keepalive' };
  if (isStreamControl(payload)) {
    const c = decodeStreamControl(payload);
    if (!c.ok) throw new CursusProtocolError(`STREAM control frame: ${c.reason}`);
    return { type: 'close', close: c.value };
  }
  if (payload.length >= 4 && payload.readUInt32BE(0) === batchMagic) {
    const b = decodeBatch(payload);
    if (!b.ok) throw new CursusProtocolError(`STREAM batch: ${b.reason}`);
    return { type: 'batch', batch: b.value };
  }
  throw new CursusProtocolError('STREAM frame is neither a keepalive, a control line nor a CBV2 batch');
}

export class CursusStream implements AsyncIterable<StreamEvent> {
  /** Settles when the stream ended: the CLOSE control line, null when stop() ended it, or the error. */
  readonly ended: Promise<StreamClose | null>;
  private readonly buffer: StreamEvent[] = [];
  private readonly bufferedFramesMax: number;
  private conn: CursusConnection | null = null;
  private stopFn: (() => void) | null = null;
  private paused = false;
  private stopped = false;
  private finished = false;
  private failure: Error | null = null;
  private closeLine: StreamClose | null = null;
  private wake: (() => void) | null = null;

  constructor(options: StreamOptions, start: (sink: StreamSink) => Promise<void>) {
    this.bufferedFramesMax = options.bufferedFramesMax ?? 16;
    const sink: StreamSink = {
      onFrame: (frame) => this.push(streamEvent(frame.payload)),
      started: (conn, stop) => {
        this.conn = conn;
        this.stopFn = stop;
        if (this.stopped) stop();
      },
    };
    this.ended = start(sink).then(
      () => this.end(null),
      (err: unknown) => this.end(err instanceof Error ? err : new Error(String(err))),
    );
    // The iterator reports a failure; `ended` is for those who wait on it.
    this.ended.catch(() => {});
  }

  /** Closes the stream's connection; the iteration ends after the events already buffered. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopFn?.();
    this.conn?.resume();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamEvent, void, undefined> {
    try {
      for (;;) {
        const next = this.buffer.shift();
        if (next !== undefined) {
          if (this.paused && this.buffer.length <= this.bufferedFramesMax / 2) {
            this.paused = false;
            this.conn?.resume();
          }
          yield next;
          continue;
        }
        if (this.finished) {
          if (this.failure !== null) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.stop();
    }
  }

  private push(event: StreamEvent): void {
    if (event.type === 'close') this.closeLine = event.close;
    this.buffer.push(event);
    if (!this.paused && this.buffer.length >= this.bufferedFramesMax) {
      this.paused = true;
      this.conn?.pause();
    }
    this.notify();
  }

  private end(err: Error | null): StreamClose | null {
    this.finished = true;
    // stop() ends the lifecycle with CursusClosedError: that is the ending the caller asked for.
    if (err !== null && !(this.stopped && err instanceof CursusClosedError)) this.failure = err;
    this.notify();
    if (this.failure !== null) throw this.failure;
    return this.closeLine;
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }
}
