// The request pipeline every connection of every front-end runs on: between the frames a
// protocol's framer cuts out of the socket and the replies it writes back. The protocol supplies
// the framing and the meaning of a request; the pipeline owns the order in which requests start,
// the order in which replies are written, back-pressure, and how a connection ends.
//
//   socket → protocol framer → push(frames) → waiting → start(frame) → open(slot) … reply(slot)
//          ← cork + write / sendfile ← flush (reply order) ←──────────────────────────────┘
//
// Starting: waiting frames start in arrival order, synchronously up to their first await (so
// appends of pipelined produce requests reach the log in order), while fewer than inFlightMax()
// requests are unanswered, no barrier stands, the socket's write buffer is not full, and the
// protocol's mayStart() agrees (Kafka: one Fetch at a time). A slot opened with `barrier` holds
// every later frame until its reply is written: a serial protocol (Iggy) opens every slot so, a
// pipelined one (Kafka) only at its serial points (SASL).
//
// Replies: 'ordered' writes a reply only once every reply before it is written (Kafka, Iggy);
// 'as-ready' writes each as soon as it is ready, for protocols whose replies carry the request's
// id (Cursus). Replies finished together go out in one corked write (uncorked on the next tick,
// so that replies finished in the same tick share a syscall). A reply with file slices
// (file-replies.ts) goes out with sendfile after everything before it, one of more than
// replySliceBytes a slice at a time with the event loop turning between slices (one write of
// many megabytes holds the loop), and nothing else is written while either is being sent. A
// reply's afterWrite callbacks run once its bytes are out (or dropped): only then may buffers it
// references be reused.
//
// Back-pressure: reading pauses while the socket's write buffer is full (a peer that does not
// read holds up its own requests), while inFlightMax() requests are unanswered, or once
// readAheadMax() frames wait, or while the protocol holds its input (holdInput: its framer waits
// for the broker's request budget); it resumes when fewer than half of that wait (and none of the
// others holds).
//
// Ending, four ways:
// - close(): the listener winds the connection down: no more reading or starting; requests in
//   flight finish and are answered; whenIdle() tells when (the listener then ends the socket).
// - finishInput(then): the input is over (a FIN, a framing error): frames already read are
//   started and answered, then `then` runs (the protocol ends the connection its way).
// - endWith(last): after the replies in flight, `last` (an eviction) is written and the socket
//   ended; a reply marked closeAfter does the same at once, dropping what follows it. A peer
//   that does not read what is left is cut off after endDrainMs.
// - destroy(): at once, nothing more is written (a peer that broke the protocol).
// When the socket closes, every unanswered request is marked done ('error') and the afterWrite
// callbacks of ready replies run; a reply that comes later only runs its own.
//
// Transports: the pipeline needs a Duplex; file slices need a plain TCP net.Socket. A QUIC
// connection (Felix) runs one pipeline per stream.

import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../base/logger.js';
import { isFileSlice, replyBytes, replySliceBytes, writeReply, type ReplyChunk } from './file-replies.js';
import type { RequestDone } from './transport.js';

export type ReplyOrder = 'ordered' | 'as-ready';

/** What a protocol plugs into its pipeline. */
export interface PipelineProtocol<F> {
  /**
   * Starts one request: runs synchronously up to its first await, opening its slot (open) there
   * if it will answer. The promise settles once nothing references the frame's bytes any more
   * (the handler and any append it started have settled); it must not reject.
   */
  start(frame: F): Promise<void>;
  /** Gives a frame's bytes back (its framer's pooled buffer); for started frames and dropped ones. */
  release(frame: F): void;
  /** Whether the next waiting frame may start now (default: yes); asked again after each reply. */
  mayStart?(frame: F): boolean;
  /** The socket closed: the protocol lets go of what it holds (framer, session, registrations). */
  closed(): void;
}

export interface PipelineOptions {
  logger: Logger;
  /** Requests started and not yet answered, at most (read each time: it may change after a login). */
  inFlightMax(): number;
  /** Frames read and not yet started, at most, before reading pauses. */
  readAheadMax(): number;
  order: ReplyOrder;
  /** Replies may carry file slices (canSendFiles: a plain TCP socket and the addon). */
  fileSlices: boolean;
  /** How long a connection being ended gracefully may take to drain (default defaultEndDrainMs). */
  endDrainMs?: number;
}

/** How long a peer has to read the last replies (an eviction) of a connection being ended. */
export const defaultEndDrainMs = 5_000;

export interface ReplyOptions {
  outcome?: 'ok' | 'error';
  /** End the connection once this reply is written; requests behind it are dropped. */
  closeAfter?: boolean;
}

/** One request between its start and its reply's write. */
export class Slot {
  chunks: ReplyChunk[] | null = null;
  outcome: 'ok' | 'error' = 'ok';
  closeAfter = false;
  /** Marked done (its reply written, or the connection gone). */
  finished = false;
  readonly afterWrite: (() => void)[] = [];
  constructor(readonly done: RequestDone) {}

  /** Runs `fn` once this slot's reply has been written out, or dropped. */
  onWritten(fn: () => void): void {
    this.afterWrite.push(fn);
  }
}

export class RequestPipeline<F> {
  private readonly waiting: F[] = [];
  private slots: Slot[] = [];
  /** The slot every later frame waits for, or null. */
  private barrier: Slot | null = null;
  private writeBlocked = false;
  /** A reply with file slices, or a large one, is being sent (sendSerially): nothing else is written until it is out. */
  private sendingSerially = false;
  private corked = false;
  private paused = false;
  /** Set by holdInput: the protocol reads nothing more for now. */
  private inputHeld = false;
  /** Set by muteFor: no frame starts and the socket is not read until the timer fires. */
  private muted: ReturnType<typeof setTimeout> | null = null;
  /** No more frames are read or started (close, endWith, destroy, the socket gone). */
  private closing = false;
  /** The socket is gone. */
  private closed = false;
  /** Set by finishInput: no more input; run once everything read is answered. */
  private afterInput: (() => void) | null = null;
  private inputOver = false;
  /** Set by endWith: written, and the socket ended, once every reply before it is out. */
  private terminal: { last: Buffer | undefined; onEnd: (() => void) | undefined } | null = null;
  private idleWaiters: (() => void)[] = [];
  /** Counts 'drain' events, answered requests and sendfile progress: the output moving. */
  private outputProgress = 0;

  constructor(
    private readonly socket: Duplex,
    private readonly protocol: PipelineProtocol<F>,
    private readonly options: PipelineOptions,
  ) {
    socket.on('drain', () => {
      this.outputProgress++;
      this.writeBlocked = false;
      this.pump();
    });
    socket.once('close', () => this.shutdown());
    socket.on('error', () => this.shutdown());
  }

  /** Requests started and not yet answered (a reply being sent serially included). */
  get inFlight(): number {
    return this.slots.length + (this.sendingSerially ? 1 : 0);
  }

  /** Whether frames are still taken: not closing and the input not over. */
  get accepting(): boolean {
    return !this.closing && !this.inputOver;
  }

  /** Closing, ending or gone: no more requests start. */
  get stopping(): boolean {
    return this.closing;
  }

  /** Frames read and not yet started, oldest first. */
  waitingFrames(): readonly F[] {
    return this.waiting;
  }

  // --- input -----------------------------------------------------------------------------------

  /** Framed requests, in arrival order. Dropped (released) when the pipeline no longer takes input. */
  push(frames: readonly F[]): void {
    if (!this.accepting) {
      for (const frame of frames) this.protocol.release(frame);
      return;
    }
    for (const frame of frames) this.waiting.push(frame);
    this.pump();
  }

  /**
   * Holds reading while `held` (the framer waits for the broker's request budget with a frame
   * begun): the socket is paused, and resumed once released if nothing else holds it.
   */
  holdInput(held: boolean): void {
    if (held === this.inputHeld) return;
    this.inputHeld = held;
    this.updateReading(this.options.inFlightMax());
  }

  /**
   * No more input (the peer's FIN, a framing error): reading stops, the frames already read are
   * started and answered, and then `then` runs (not after close, endWith or destroy).
   */
  finishInput(then: () => void): void {
    if (!this.accepting) return;
    this.inputOver = true;
    this.afterInput = then;
    this.setPaused(true);
    this.pump();
  }

  /**
   * A peer that stopped reading would hold the connection (and the replies it pins) forever while
   * its replies wait. Checked every `intervalMs`: when output is waiting for the peer (bytes in the
   * socket's buffer, or a reply going out with sendfile) and none of it moved since the last check
   * (the buffer did not shrink, no 'drain', no request answered, no sendfile bytes), the
   * connection is destroyed. A request still being handled with nothing waiting to go out is not
   * a stall.
   */
  cutOffIfOutputStalls(intervalMs: number): void {
    let seen = { progress: this.outputProgress, unsent: this.socket.writableLength };
    const timer = setInterval(() => {
      if (this.closed || this.socket.destroyed) {
        clearInterval(timer);
        return;
      }
      const now = { progress: this.outputProgress, unsent: this.socket.writableLength };
      const waitingForPeer = now.unsent > 0 || this.sendingSerially;
      if (waitingForPeer && now.progress === seen.progress && now.unsent >= seen.unsent) {
        clearInterval(timer);
        this.options.logger.debug('the peer stopped reading with replies waiting; closing', { waiting: this.waiting.length, unsent: now.unsent });
        this.destroy();
        return;
      }
      seen = now;
    }, intervalMs).unref();
    this.socket.once('close', () => clearInterval(timer));
  }

  /** Starts waiting frames while the limits allow, then pauses or resumes reading. */
  private pump(): void {
    const max = this.options.inFlightMax();
    while (!this.closing && !this.writeBlocked && this.muted === null && this.barrier === null && this.waiting.length > 0 && this.inFlight < max) {
      if (this.protocol.mayStart !== undefined && !this.protocol.mayStart(this.waiting[0]!)) break;
      this.startFrame(this.waiting.shift()!);
    }
    this.updateReading(max);
    this.settleIfIdle();
  }

  private startFrame(frame: F): void {
    let started: Promise<void>;
    try {
      started = this.protocol.start(frame);
    } catch (error) {
      this.options.logger.error('a request could not start; closing the connection', { error });
      this.protocol.release(frame);
      this.destroy();
      return;
    }
    started.then(
      () => this.protocol.release(frame),
      (error: unknown) => {
        this.options.logger.error('a request failed outside its handler; closing the connection', { error });
        this.protocol.release(frame);
        this.destroy();
      },
    );
  }

  private updateReading(inFlightMax: number): void {
    if (this.closing || this.inputOver) return;
    const readAhead = this.options.readAheadMax();
    const full = this.writeBlocked || this.muted !== null || this.inputHeld || this.inFlight >= inFlightMax;
    if (!this.paused) {
      if (full || this.waiting.length >= readAhead) this.setPaused(true);
    } else if (!full && this.waiting.length < Math.ceil(readAhead / 2)) {
      this.setPaused(false);
    }
  }

  private setPaused(paused: boolean): void {
    if (paused === this.paused) return;
    this.paused = paused;
    if (paused) this.socket.pause();
    else this.socket.resume();
  }

  // --- requests --------------------------------------------------------------------------------

  /**
   * Opens the slot of a request being started (call it synchronously from start). `done` is
   * called once its reply is written (or the connection is gone). With `barrier`, no later frame
   * starts before this reply is written.
   */
  open(done: RequestDone, options: { barrier?: boolean } = {}): Slot {
    const slot = new Slot(done);
    this.slots.push(slot);
    if (options.barrier === true) this.barrier = slot;
    return slot;
  }

  /**
   * Stops reading and starting requests for `ms` (a protocol's quota throttling: Kafka mutes a
   * throttled connection, KIP-219). A later call while muted restarts the mute with its own time.
   */
  muteFor(ms: number): void {
    if (this.closing || ms <= 0) return;
    if (this.muted !== null) clearTimeout(this.muted);
    this.muted = setTimeout(() => {
      this.muted = null;
      this.pump();
    }, ms);
    this.muted.unref?.();
    this.setPaused(true);
  }

  /** Holds every later frame until `slot`'s reply is written (a serial point found while handling it). */
  holdFollowing(slot: Slot): void {
    if (!slot.finished && this.slots.includes(slot)) this.barrier = slot;
  }

  /** A request's reply (empty chunks: nothing is written), written in turn. */
  reply(slot: Slot, chunks: ReplyChunk[], options: ReplyOptions = {}): void {
    if (slot.finished || this.closed) {
      // Never written: what the reply referenced (pooled buffers, pinned segments) goes back.
      runAll(slot.afterWrite);
      return;
    }
    slot.chunks = chunks;
    slot.outcome = options.outcome ?? 'ok';
    slot.closeAfter = options.closeAfter === true;
    this.flush();
  }

  // --- output ----------------------------------------------------------------------------------

  /** Writes every reply that may go out now, in turn. */
  private flush(): void {
    if (this.closed || this.sendingSerially) return;
    let closeNow = false;
    for (let i = 0; i < this.slots.length; ) {
      const slot = this.slots[i]!;
      if (slot.chunks === null) {
        if (this.options.order === 'ordered') break;
        i++;
        continue;
      }
      this.slots.splice(i, 1);
      const chunks = slot.chunks;
      if (chunks.some(isFileSlice) || replyBytes(chunks) > replySliceBytes) {
        // Sent after everything before it, with sendfile or a slice at a time; the replies behind it wait.
        this.uncork();
        this.sendSerially(slot, chunks);
        this.pump();
        return;
      }
      this.writeChunks(chunks as Buffer[], slot.afterWrite);
      if (this.finishSlot(slot)) {
        closeNow = true;
        break;
      }
    }
    if (closeNow) {
      this.options.logger.debug('closing the connection after the reply', {});
      this.endNow(undefined);
      return;
    }
    if (this.socket.writableNeedDrain) this.writeBlocked = true;
    this.pump();
  }

  /** Writes one reply's buffers into the corked socket; afterWrite runs once the last is out. */
  private writeChunks(chunks: Buffer[], afterWrite: (() => void)[]): void {
    if (chunks.length === 0) {
      runAll(afterWrite);
      return;
    }
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => this.uncork());
    }
    // The last chunk's callback runs once every chunk of the reply has been written out (or
    // failed and been dropped): only then may its buffers be reused.
    const last = chunks.length - 1;
    for (let i = 0; i < last; i++) this.socket.write(chunks[i]!);
    if (afterWrite.length > 0) this.socket.write(chunks[last]!, () => runAll(afterWrite));
    else this.socket.write(chunks[last]!);
  }

  private uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.socket.uncork();
  }

  /** A reply is out: true when the connection ends after it. */
  private finishSlot(slot: Slot): boolean {
    slot.finished = true;
    this.outputProgress++;
    if (this.barrier === slot) this.barrier = null;
    slot.done(slot.outcome);
    return slot.closeAfter;
  }

  /**
   * Writes a reply that references file slices or holds more than replySliceBytes (writeReply),
   * then what is behind it. A failure cuts the reply short, so the connection is destroyed.
   */
  private sendSerially(slot: Slot, chunks: ReplyChunk[]): void {
    this.sendingSerially = true;
    writeReply(this.socket as Socket, chunks, () => this.outputProgress++)
      .then(
        () => {
          this.sendingSerially = false;
          runAll(slot.afterWrite);
          const closeNow = this.finishSlot(slot);
          if (this.closed) return;
          if (closeNow) this.endNow(undefined);
          else this.flush();
        },
        (error: unknown) => {
          this.sendingSerially = false;
          runAll(slot.afterWrite);
          slot.finished = true;
          slot.done('error');
          if (this.closed) return;
          this.options.logger.debug('a reply sent serially failed; closing the connection', { error });
          if (this.socket.destroyed) this.shutdown();
          else this.destroy();
        },
      )
      .catch((error: unknown) => {
        this.options.logger.error('after a reply sent serially; closing the connection', { error });
        this.destroy();
      });
  }

  // --- ending ----------------------------------------------------------------------------------

  /** Stops reading and starting requests; those in flight finish (whenIdle). */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    this.dropWaiting();
    this.setPaused(true);
    this.settleIfIdle();
  }

  /** Resolves once no request is in flight (or the socket is gone). */
  whenIdle(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Ends the connection after the replies in flight, with `last` (an eviction) written last: a
   * FIN, not a reset that would throw them away. A peer that does not read it is cut off after
   * endDrainMs, counted from now. `onEnd` runs when the socket is ended (not if it closes first).
   */
  endWith(last?: Buffer, onEnd?: () => void): void {
    if (this.closed || this.terminal !== null) return;
    this.closing = true;
    this.dropWaiting();
    this.setPaused(true);
    this.terminal = { last, onEnd };
    this.armDrainTimer();
    this.settleIfIdle();
  }

  /** Closes at once, writing nothing more. */
  destroy(): void {
    if (this.closed) return;
    this.closing = true;
    this.dropWaiting();
    this.socket.destroy();
    this.shutdown();
  }

  private idle(): boolean {
    return this.closed || (this.slots.length === 0 && !this.sendingSerially);
  }

  private settleIfIdle(): void {
    if (!this.idle()) return;
    if (this.terminal !== null) {
      if (!this.closed && !this.socket.writableEnded) {
        this.endSocket(this.terminal.last);
        this.terminal.onEnd?.();
      }
    } else if (this.afterInput !== null && this.waiting.length === 0 && !this.closing) {
      const then = this.afterInput;
      this.afterInput = null;
      then();
    }
    if (this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** A closeAfter reply is out: the socket ends now, and the requests behind it are dropped. */
  private endNow(last: Buffer | undefined): void {
    this.closing = true;
    this.dropWaiting();
    this.endSocket(last);
    this.armDrainTimer();
    this.shutdown();
  }

  private endSocket(last: Buffer | undefined): void {
    if (this.socket.writableEnded) return;
    if (last === undefined) this.socket.end();
    else this.socket.end(last);
  }

  private armDrainTimer(): void {
    setTimeout(() => this.socket.destroy(), this.options.endDrainMs ?? defaultEndDrainMs).unref();
  }

  /** Drops frames not yet started: pooled ones go back to the pool. */
  private dropWaiting(): void {
    for (const frame of this.waiting.splice(0)) this.protocol.release(frame);
  }

  /** The socket is gone (or being ended after a closeAfter reply): every unanswered request is done. */
  private shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    this.closing = true;
    this.dropWaiting();
    const slots = this.slots;
    this.slots = [];
    this.barrier = null;
    for (const slot of slots) {
      slot.finished = true;
      slot.done('error');
      // A reply that is ready will never be written; one still being built lets go in reply().
      if (slot.chunks !== null) runAll(slot.afterWrite);
    }
    this.protocol.closed();
    this.settleIfIdle();
  }
}

function runAll(fns: (() => void)[]): void {
  for (const fn of fns.splice(0)) fn();
}
