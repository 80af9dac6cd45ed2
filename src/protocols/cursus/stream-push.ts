// STREAM (spec §4 "STREAM (continuous push)"; docs/protocols/cursus-wire-v2.md §3, §7.3, §10.4):
// the broker pushes one partition to the client as stream frames. Every push round (each
// streamPushIntervalMs on the injected scheduler, sooner when an append wakes it) reads what is
// new from the stream's offset through the core read service (as CONSUME does) and sends it as a
// CBV2 batch; with nothing new for streamKeepaliveMs it sends a keepalive (an empty payload). The
// first round always sends a frame, so the client knows the stream is open.
//
// A stream starts at the group's committed offset, else at the log start, and never commits (spec:
// "Stream delivery never advances the consumer group's committed offset"). It ends with one
// STREAM_CONTROL type=CLOSE frame (END) carrying the next offset: `stopped` when the front-end
// closes, `removed` when a newer STREAM of the same topic, partition and group replaces it,
// `offset_out_of_range` (with requested= earliest= latest=) when its offset left the retained log,
// `error` when a read fails. A connection that goes away (the sink's `closed`) ends it without one.

import type { Topic } from '../../core/catalog.js';
import type { Isolation, PartitionReader } from '../../core/reads.js';
import { requiredInt, requiredText } from './args.js';
import { encodeStreamClose, type StreamClose, type StreamCloseReason } from './codec/index.js';
import { batchOf, groupOf, inRange, isolationOf, nextAfter, readEnd, readFrom, replyBatch } from './consume.js';
import { dataFailure, type CursusDataPath } from './data-path.js';
import type { CursusContext, CursusReply, CursusRequest, CursusStreamSink } from './handler.js';

/** The open STREAMs of a front-end, one per topic, partition and group (spec: "the broker removes the stream"). */
export class CursusStreams {
  private readonly active = new Map<string, StreamPush>();
  private readonly running = new Set<Promise<void>>();

  /** Streams open now. */
  get size(): number {
    return this.active.size;
  }

  /** Makes `stream` the one of its key; the one it replaces closes with reason `removed`. */
  register(stream: StreamPush): void {
    this.active.get(stream.key)?.stop('removed');
    this.active.set(stream.key, stream);
  }

  unregister(stream: StreamPush): void {
    if (this.active.get(stream.key) === stream) this.active.delete(stream.key);
  }

  /** Keeps a stream's run until it ends, so that stopAll can wait for it. */
  track(run: Promise<void>): Promise<void> {
    this.running.add(run);
    return run.finally(() => this.running.delete(run));
  }

  /** Stops every stream (reason `stopped`) and waits for their CLOSE frames. */
  async stopAll(): Promise<void> {
    for (const stream of this.active.values()) stream.stop('stopped');
    await Promise.allSettled([...this.running]);
  }
}

export interface StreamTarget {
  readonly topicName: string;
  readonly topic: Topic;
  readonly partition: number;
  readonly group: string;
  readonly isolation: Isolation;
  readonly recordsMax: number;
  /** Where the stream begins. */
  readonly start: number;
}

/** One STREAM: its push loop (run) and how it is stopped. */
export class StreamPush {
  readonly key: string;
  private next: number;
  private stopped: StreamCloseReason | null = null;
  /** Ends the current pause at once (set while the loop pauses). */
  private wake: (() => void) | null = null;

  constructor(
    private readonly data: CursusDataPath,
    readonly target: StreamTarget,
  ) {
    this.key = `${target.topicName}:${target.partition}:${target.group}`;
    this.next = target.start;
  }

  /** Ends the stream with a CLOSE of this reason after the round under way. */
  stop(reason: StreamCloseReason): void {
    this.stopped ??= reason;
    this.wake?.();
  }

  /** The push loop; resolves once the stream has ended (CLOSE sent, or the connection gone). */
  run(sink: CursusStreamSink): Promise<void> {
    const streams = this.data.streams;
    streams.register(this);
    return streams.track(this.loop(sink).finally(() => streams.unregister(this)));
  }

  private async loop(sink: CursusStreamSink): Promise<void> {
    const { data, target } = this;
    let close: StreamClose | null = null;
    let lastSentAt = Number.NEGATIVE_INFINITY;
    try {
      while (this.stopped === null && !sink.closed.aborted) {
        const reader = await data.broker.reads.openSettled(target.topic, target.partition);
        const position = reader.position();
        if (!inRange(this.next, position)) {
          const range = { requested: this.next, earliest: position.logStartOffset, latest: readEnd(position, target.isolation) };
          close = { reason: 'offset_out_of_range', offset: this.next, range };
          break;
        }
        const read = await readFrom(data, reader, this.next, target.isolation, target.recordsMax);
        if (sink.closed.aborted) return;
        if (read.records > 0) {
          await sink.send(replyBatch(target.topicName, target.partition, read.chunks));
          lastSentAt = data.clock.now();
        } else if (data.clock.now() - lastSentAt >= data.settings.streamKeepaliveMs) {
          await sink.send([]);
          lastSentAt = data.clock.now();
        }
        this.next = nextAfter(this.next, read);
        // A read cut short by the batch or byte limit is followed at once: a stream behind the
        // log catches up at the speed of the connection, not one batch per push interval.
        if (read.records > 0 && this.next < readEnd(reader.position(), target.isolation)) continue;
        await this.pause(reader, sink.closed);
      }
    } catch (error) {
      data.logger.warn('a Cursus stream failed', { stream: this.key, offset: this.next, error });
      close = { reason: 'error', offset: this.next };
    }
    if (sink.closed.aborted) return;
    close ??= { reason: this.stopped ?? 'stopped', offset: this.next };
    try {
      await sink.send([encodeStreamClose(close)], true);
    } catch (error) {
      // The connection went away meanwhile: nobody is left to tell.
      data.logger.debug('could not send a Cursus stream CLOSE', { stream: this.key, error });
    }
  }

  /** Until the next push round: the interval, an append to the partition, a stop, or the connection gone. */
  private pause(reader: PartitionReader, closed: AbortSignal): Promise<void> {
    if (this.stopped !== null || closed.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let settled = false;
      const done = (): void => {
        if (settled) return;
        settled = true;
        timer.cancel();
        unsubscribe();
        closed.removeEventListener('abort', done);
        this.wake = null;
        resolve();
      };
      const timer = this.data.scheduler.schedule(this.data.settings.streamPushIntervalMs, done);
      const unsubscribe = reader.onAppend(done);
      closed.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }
}

/**
 * STREAM topic* partition* member* [group] [isolation] [batch]: checked here (a refused stream is
 * a failure before any stream frame), then pushed by a StreamPush from the group's committed
 * offset, else the log start.
 */
export async function openStream(ctx: CursusContext, req: CursusRequest): Promise<CursusReply> {
  const data = ctx.services.data;
  const topicName = requiredText(req, 'topic');
  const partition = requiredInt(req, 'partition', 0);
  requiredText(req, 'member');
  const group = groupOf(req);
  const isolation = isolationOf(req);
  const recordsMax = batchOf(req);
  const { view, topic } = data.topic(topicName);
  await data.authorize(ctx, view, 'read');
  data.checkPartition(topic, partition);
  let start: number;
  try {
    const committed = await data.committedOffset(group, topicName, partition);
    start = committed ?? (await data.broker.reads.openSettled(topic, partition)).logStartOffset();
  } catch (err) {
    throw dataFailure(err, topicName, partition);
  }
  const push = new StreamPush(data, { topicName, topic, partition, group, isolation, recordsMax, start });
  return { kind: 'stream', run: (sink) => push.run(sink) };
}
