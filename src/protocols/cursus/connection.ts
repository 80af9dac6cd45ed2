// One Cursus Wire v2 connection (docs/protocols/cursus-wire-v2.md §1-§4) on the shared request
// pipeline (../pipeline.ts), replies in request order ('ordered'), each carrying its request's ID
// and command: socket → CursusFramer → negotiation or request → frontend.dispatch → reply frames.
//
// - The first frame must be a negotiation request; anything else closes the connection. A
//   negotiation that fails is answered (status ERROR) and the connection closes. Until it is done
//   frames may carry at most `preNegotiationPayloadBytesMax`.
// - A header the framer refuses (§2.7: magic, version, kind, flags, lengths, request ID 0, a kind
//   or NEGOTIATE out of place), a client frame of a broker kind, a second negotiation, or a
//   compression id other than the negotiated one: what was read before is answered, then the
//   connection closes without a reply.
// - CRC mismatch, undecompressable payload, a payload that is not CRQ2 (CBV2 only on PUBLISH),
//   positional strings, an unknown or internal command: ERROR, and the connection goes on. So
//   does a large frame the listener's request-byte budget (frontend.requestBytes) cannot hold.
// - Inline `principal`/`auth_token` on any request, and AUTH's `principal`/`token`, authenticate
//   the connection before dispatch (request-runner.ts); later requests run as that principal.
// - Replies are compressed with the negotiated algorithm. `none` writes nothing; `close` (EXIT)
//   answers OK, then closes. A handler error that is not a CursusFailure is answered with the
//   mapped core error (core-errors.ts) or `internal_error`, logged, and the connection goes on.
// - One request's lifecycle at a time (docs §1): a request starts once every earlier one is
//   answered, and so sees what they did (a PUBLISH after a CREATE finds the topic). Consecutive
//   PUBLISH requests are the exception: they run together, their appends reaching the log in
//   request order, and their replies still go out in order.
// - A compressed payload that decodes to workers.offloadBytesMin bytes or more (its header says
//   how many) is checked and decoded on the broker's worker pool (codec/open-task.ts): a 65 KB
//   gzip frame that inflates to 64 MiB no longer holds up other connections. The requests after
//   it start only once it has (AppendTurns), so the order above holds.
// - STREAM replies (kind 5 frames through a CursusStreamSink) hold the connection's request slot
//   until the stream ends: nothing after a stream command starts until its last frame (END). A client stops a stream by closing the
//   connection (or half-closing it): the sink's `closed` signal then aborts, as on a listener
//   shutdown or idle close, and the stream ends with its last frame. A refused stream is one
//   kind-5 ERROR frame with END.

import type { Socket } from 'node:net';
import { AppendTurns } from '../../base/append-turns.js';
import { asBuffer, ownedCopy, transferableOf } from '../../base/worker-pool.js';
import { RequestPipeline, type Slot } from '../pipeline.js';
import { publishedBatchOf } from './published-batch.js';
import type { CloseReason, ConnectionContext, ConnectionHandle } from '../transport.js';
import {
  CursusFramer,
  FrameKind,
  Compression,
  Status,
  commandSpec,
  cursusError,
  decodeBatch,
  decodeCommandPayload,
  decodeNegotiationRequest,
  encodeErrorPayload,
  encodeFrame,
  encodeJsonEnvelope,
  encodeNegotiationResponse,
  encodeOkLine,
  isBatchPayload,
  negotiate,
  negotiateCommand,
  openFrame,
  type CommandSpec,
  type CursusError,
  type Frame,
  type FrameHeader,
} from './codec/index.js';
import type { CursusFrontend } from './frontend.js';
import { CursusFailure, type CursusReply, type CursusRequest, type CursusStreamSink } from './handler.js';
import { CursusRequestRunner } from './request-runner.js';
import { overrideContext } from './connection-context.js';

/** Commands whose consecutive requests run together (module comment); every other one runs alone. */
const pipelinedCommands: ReadonlySet<string> = new Set(['PUBLISH']);

/** The largest payload a frame may carry before negotiation is done (a negotiation request has 22 bytes at most). */
export const preNegotiationPayloadBytesMax = 64 * 1024;

export class CursusConnection implements ConnectionHandle {
  private readonly framer: CursusFramer;
  private readonly pipeline: RequestPipeline<Frame>;
  /** Null until negotiated: the compression every later frame carries. */
  private compression: Compression | null = null;
  /** Authentication, dispatch and failure mapping (request-runner.ts). */
  private readonly runner: CursusRequestRunner;
  /** Keeps requests starting in arrival order behind a payload decoded on a worker. */
  private readonly turns = new AppendTurns();
  /** The peer proved who it is, or need not (requireAuth off, once negotiated). */
  private peerAuthenticated = false;
  /** Aborted when the connection goes or winds down: running streams end. */
  private readonly streamsStop = new AbortController();

  constructor(
    private readonly frontend: CursusFrontend,
    private readonly socket: Socket,
    private readonly context: ConnectionContext,
  ) {
    this.runner = new CursusRequestRunner(frontend, overrideContext(context, { authenticated: () => this.onAuthenticated() }));
    // Until the peer authenticates (when that is required), its large frames count in the
    // listener's request bytes only, not the broker's (frontend.ts ListenerRequestBytes).
    const budget = frontend.requestBytes.forConnection(() => this.peerAuthenticated);
    this.framer = new CursusFramer({ encodedBytesMax: preNegotiationPayloadBytesMax, decodedBytesMax: preNegotiationPayloadBytesMax, reusedChunks: context.readInto !== undefined, budget });
    const settings = frontend.settings;
    this.pipeline = new RequestPipeline<Frame>(
      socket,
      {
        start: (frame) => this.process(frame),
        release: (frame) => this.framer.release(frame),
        mayStart: (frame) => this.mayStart(frame),
        closed: () => {
          this.streamsStop.abort();
          this.framer.dispose();
        },
      },
      {
        logger: context.logger,
        inFlightMax: () => settings.inFlightRequestsMax,
        readAheadMax: () => (this.compression === null ? 1 : settings.inFlightRequestsMax),
        order: 'ordered',
        fileSlices: false,
      },
    );
    if (context.readInto) context.readInto((chunk) => this.onData(chunk));
    else socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.once('end', () => this.onInputEnded());
  }

  /** The listener is told (its deadline lifts) and large frames count in the broker's bytes from now. */
  private onAuthenticated(): void {
    this.peerAuthenticated = true;
    this.context.authenticated();
  }

  // --- ConnectionHandle ------------------------------------------------------------------------

  close(reason: CloseReason): void {
    if (this.pipeline.stopping) return;
    this.context.logger.debug('closing cursus connection', { reason });
    this.streamsStop.abort();
    this.pipeline.close();
  }

  whenIdle(): Promise<void> {
    return this.pipeline.whenIdle();
  }

  // --- input -----------------------------------------------------------------------------------

  private onData(chunk: Buffer): void {
    if (!this.pipeline.accepting) return;
    try {
      const frames: Frame[] = [];
      let bad: string | null = null;
      for (const result of this.framer.push(chunk)) {
        if (!result.ok) {
          bad = result.reason;
          break;
        }
        frames.push(result.frame);
      }
      this.pipeline.push(frames);
      if (bad !== null) {
        this.context.logger.debug('cursus framing error; closing', { reason: bad });
        this.pipeline.finishInput(() => this.end());
      }
    } catch (error) {
      this.context.logger.error('cursus connection failed; closing', { error });
      this.pipeline.destroy();
    }
  }

  /** The peer's FIN: running streams stop, what it sent is answered, then the connection ends. */
  private onInputEnded(): void {
    if (!this.pipeline.accepting) return;
    this.streamsStop.abort();
    this.pipeline.finishInput(() => this.end());
  }

  private end(): void {
    this.pipeline.endWith();
  }

  /**
   * A request waits until every earlier one is answered (a stream's frames then go straight to the
   * socket); a PUBLISH only waits for the requests that are not PUBLISH, through their barrier.
   */
  private mayStart(frame: Frame): boolean {
    if (this.compression === null || isPipelined(frame.header)) return true;
    return this.pipeline.inFlight === 0;
  }

  // --- requests --------------------------------------------------------------------------------

  private process(frame: Frame): Promise<void> {
    if (this.compression === null) {
      this.negotiate(frame);
      return Promise.resolve();
    }
    const h = frame.header;
    const spec = commandSpec(h.command);
    const streamed = spec?.reply === 'stream';
    const slot = this.pipeline.open(this.context.beginRequest(spec?.name ?? 'unknown'), { barrier: !isPipelined(h) });
    const problem = h.kind !== FrameKind.request ? `a frame of kind ${h.kind} after negotiation` : h.compression !== this.compression ? `compression ${h.compression}, negotiated ${this.compression}` : null;
    if (problem !== null) {
      this.context.logger.debug('cursus frame refused; closing', { reason: problem });
      this.pipeline.reply(slot, [], { outcome: 'error', closeAfter: true });
      return Promise.resolve();
    }
    return this.handle(frame, spec, slot, streamed);
  }

  private async handle(frame: Frame, spec: CommandSpec | undefined, slot: Slot, streamed: boolean): Promise<void> {
    const h = frame.header;
    let reply: CursusReply;
    try {
      reply = await this.answer(frame, spec);
    } catch (error) {
      this.replyError(slot, h, streamed, this.runner.failureOf(error, spec?.name ?? String(h.command)).error);
      return;
    }
    try {
      await this.send(slot, h, reply);
    } catch (error) {
      // An encoding failure (a reply over 64 MiB): a bug of the handler, answered as internal.
      this.replyError(slot, h, streamed, this.runner.failureOf(error, spec?.name ?? String(h.command)).error);
    }
  }

  /** Decodes, authenticates and dispatches one request; throws what is answered as ERROR. */
  private async answer(frame: Frame, spec: CommandSpec | undefined): Promise<CursusReply> {
    const h = frame.header;
    if (spec === undefined) throw CursusFailure.of('unknown_command', [['command', String(h.command)]]);
    if (spec.internal === true) throw CursusFailure.of('internal_command_unauthorized', [['command', spec.name]], 'broker-internal commands are not served on the client listener');
    if (frame.refused === true) throw requestBytesExhausted(spec, h);
    // Requests start in the order they came, also behind one whose payload a worker decodes.
    return this.turns.run('requests', this.open(h, frame.payload), (opened) => {
      if (!opened.ok) throw CursusFailure.of(opened.code, [], opened.reason);
      return this.runner.run(decodeRequest(spec, h.requestId, opened.value));
    }, rethrow);
  }

  /**
   * The frame's payload checked and decoded: on the broker's worker pool when it is compressed and
   * decodes to workers.offloadBytesMin bytes or more (the header states the decoded length), else,
   * and when the pool is off or full or its worker fails, here.
   */
  private open(h: FrameHeader, payload: Buffer): OpenedFrame | Promise<OpenedFrame> {
    if (h.compression === Compression.none) return openFrame(h, payload);
    const transcoder = this.frontend.services.broker.transcoder;
    if (h.decodedLength < transcoder.settings.offloadBytesMin) return openFrame(h, payload);
    const copy = ownedCopy(payload);
    const run = transcoder.offloadTask<OpenedFrame>(openTaskModule, 'openFrameTask', [h, copy], transferableOf(copy), h.decodedLength);
    if (run === null) return openFrame(h, payload);
    return run.then((o) => (o.ok ? { ok: true, value: asBuffer(o.value) } : o), () => openFrame(h, payload));
  }

  // --- replies ---------------------------------------------------------------------------------

  private frame(h: FrameHeader, kind: FrameKind, status: Status, payload: readonly Buffer[], end = false): Buffer[] {
    return encodeFrame({ kind, command: h.command, requestId: h.requestId, status, compression: this.compression!, end }, payload);
  }

  private replyError(slot: Slot, h: FrameHeader, streamed: boolean, error: CursusError): void {
    const kind = streamed ? FrameKind.stream : FrameKind.response;
    this.pipeline.reply(slot, this.frame(h, kind, Status.error, [encodeErrorPayload(error)], streamed), { outcome: 'error' });
  }

  private async send(slot: Slot, h: FrameHeader, reply: CursusReply): Promise<void> {
    switch (reply.kind) {
      case 'text':
        this.pipeline.reply(slot, this.frame(h, FrameKind.response, Status.ok, [encodeOkLine(reply.fields)]));
        return;
      case 'json':
        this.pipeline.reply(slot, this.frame(h, FrameKind.response, Status.ok, [encodeJsonEnvelope(reply.value)]));
        return;
      case 'batch':
        this.pipeline.reply(slot, this.frame(h, FrameKind.response, Status.ok, reply.chunks));
        return;
      case 'none':
        this.pipeline.reply(slot, []);
        return;
      case 'close':
        this.streamsStop.abort();
        this.pipeline.reply(slot, this.frame(h, FrameKind.response, Status.ok, [encodeOkLine(reply.fields)]), { closeAfter: true });
        return;
      case 'stream':
        await this.stream(slot, h, reply.run);
        return;
    }
  }

  /** Runs a stream reply: its frames go to the socket as the handler sends them; the slot ends with the stream. */
  private async stream(slot: Slot, h: FrameHeader, run: (sink: CursusStreamSink) => Promise<void>): Promise<void> {
    let ended = false;
    const finish = (status: Status, payload: readonly Buffer[], end: boolean): Promise<void> => {
      if (ended) return Promise.reject(new Error('the stream has already sent its last frame'));
      ended = end;
      return this.write(this.frame(h, FrameKind.stream, status, payload, end));
    };
    const sink: CursusStreamSink = {
      send: (payload, end = false) => finish(Status.ok, payload, end),
      fail: (error) => finish(Status.error, [encodeErrorPayload(error)], true),
      closed: this.streamsStop.signal,
    };
    let outcome: 'ok' | 'error' = 'ok';
    try {
      await run(sink);
    } catch (error) {
      outcome = 'error';
      if (!ended) await finish(Status.error, [encodeErrorPayload(this.runner.failureOf(error, commandSpec(h.command)?.name ?? 'STREAM').error)], true);
    }
    if (!ended) {
      outcome = 'error';
      this.context.logger.error('a cursus stream ended without its last frame', { command: h.command });
      await finish(Status.error, [encodeErrorPayload(cursusError('internal_error', [['command', commandSpec(h.command)?.name ?? 'STREAM']], 'the stream ended without its last frame'))], true);
    }
    this.pipeline.reply(slot, [], { outcome });
  }

  /** Writes a stream frame now (nothing else is in flight); resolves once the socket took it, or is gone. */
  private write(chunks: readonly Buffer[]): Promise<void> {
    if (this.socket.destroyed || this.socket.writableEnded) return Promise.resolve();
    return new Promise((resolve) => {
      const last = chunks.length - 1;
      for (let i = 0; i < last; i++) this.socket.write(chunks[i]!);
      this.socket.write(chunks[last]!, () => resolve());
    });
  }

  // --- negotiation -------------------------------------------------------------------------------

  /** The first frame: a negotiation request, answered with the choice or an error (then closed). */
  private negotiate(frame: Frame): void {
    const h = frame.header;
    const slot = this.pipeline.open(this.context.beginRequest('NEGOTIATE'), { barrier: true });
    if (h.kind !== FrameKind.negotiationRequest) {
      this.context.logger.debug('cursus connection did not begin with a negotiation; closing', { kind: h.kind });
      this.pipeline.reply(slot, [], { outcome: 'error', closeAfter: true });
      return;
    }
    const opened = openFrame(h, frame.payload);
    if (!opened.ok) return this.refuseNegotiation(slot, cursusError(opened.code, [], opened.reason));
    const request = decodeNegotiationRequest(opened.value);
    if (!request.ok) return this.refuseNegotiation(slot, cursusError('invalid_negotiation', [['reason', request.reason]]));
    const outcome = negotiate(request.value);
    if (!outcome.ok) return this.refuseNegotiation(slot, cursusError(outcome.code, outcome.fields));
    this.compression = outcome.value.compression;
    this.framer.limits = {};
    // Without required authentication the protocol asks for no proof: the listener's deadline lifts.
    if (!this.frontend.settings.requireAuth) this.onAuthenticated();
    const response = encodeFrame({ kind: FrameKind.negotiationResponse, command: negotiateCommand, requestId: 0n }, [encodeNegotiationResponse(outcome.value)]);
    this.pipeline.reply(slot, response);
  }

  private refuseNegotiation(slot: Slot, error: CursusError): void {
    this.context.logger.debug('cursus negotiation refused', { code: error.code });
    const response = encodeFrame({ kind: FrameKind.negotiationResponse, command: negotiateCommand, requestId: 0n, status: Status.error }, [encodeErrorPayload(error)]);
    this.pipeline.reply(slot, response, { outcome: 'error', closeAfter: true });
  }
}

type OpenedFrame = ReturnType<typeof openFrame>;

const openTaskModule = import.meta.resolve('./codec/open-task.js');

function rethrow(error: unknown): never {
  throw error;
}

/** A frame the listener's request-byte budget could not hold (codec/framer.ts): retry later. */
function requestBytesExhausted(spec: CommandSpec, h: FrameHeader): CursusFailure {
  return CursusFailure.of('request_bytes_exhausted', [['command', spec.name], ['bytes', String(h.encodedLength)]], 'the broker holds too many large requests at once; send it again later');
}

function isPipelined(h: FrameHeader): boolean {
  return h.kind === FrameKind.request && pipelinedCommands.has(commandSpec(h.command)?.name ?? '');
}

/** The request's payload: CRQ2 without positional strings, or a CBV2 batch on PUBLISH. */
function decodeRequest(spec: CommandSpec, requestId: bigint, payload: Buffer): CursusRequest {
  if (isBatchPayload(payload)) {
    if (spec.name !== 'PUBLISH') throw CursusFailure.of('invalid_command_payload', [['reason', 'batch_outside_publish']], `a CBV2 batch is only accepted on PUBLISH, not ${spec.name}`);
    const batch = decodeBatch(payload);
    if (!batch.ok) throw CursusFailure.of('batch_decode_failed', [['reason', batch.reason]]);
    return { command: spec.name, requestId, payload: null, batch: { summary: publishedBatchOf(batch.value), bytes: payload } };
  }
  const decoded = decodeCommandPayload(payload);
  if (!decoded.ok) throw CursusFailure.of('invalid_command_payload', [['reason', decoded.reason]]);
  if (decoded.value.positional.length > 0) throw CursusFailure.of('invalid_command_payload', [['reason', 'positional arguments are not part of this protocol revision']]);
  return { command: spec.name, requestId, payload: decoded.value, batch: null };
}
