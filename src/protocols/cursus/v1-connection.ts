// One Cursus v1 connection (docs/protocols/cursus-v1.md) on the shared request pipeline
// (../pipeline.ts), as a serial protocol: socket → V1Framer → one body at a time → V1Session →
// the same frontend dispatch, authentication and services as a Wire v2 connection
// (request-runner.ts). cursus-port.ts hands a connection here when its first bytes are v1's.
//
// - Every request is a barrier: a body starts once the one before it is answered, as a v1 broker
//   reads the next command only after answering the last. The session writes its frames straight
//   to the socket while its request holds the slot (a READ_STREAM's two frames, a STREAM's
//   pushes), and resolves once the socket took them; the slot then closes with no frame of its own.
// - A body over 16 MiB closes the connection without a reply, after what was read before it is
//   answered (v1's limit). Malformed input and the end of a STREAM end the connection (the session).
// - Without cursus.requireAuth a v1 connection counts as authenticated at once (v1 has no
//   negotiation to wait for); with it, once an AUTH or inline principal/auth_token succeeds, and
//   until then its bodies may carry at most `unauthenticatedBodyBytesMax` (an unauthenticated
//   peer holds only a small frame; a batch could not be accepted before authentication anyway).
// - The peer's FIN stops a running STREAM (v1's only way to stop one); what it sent is answered.
// - A 0xBA7C batch body of workers.offloadBytesMin bytes or more is decoded and converted to CBV2
//   on the broker's worker pool (v1/publish-batch.ts), as Wire v2 frames are opened there: up to
//   100,000 records of a 16 MiB body would otherwise hold up every other connection.

import type { Socket } from 'node:net';
import { ownedCopy, transferableOf } from '../../base/worker-pool.js';
import { RequestPipeline } from '../pipeline.js';
import type { CloseReason, ConnectionContext, ConnectionHandle } from '../transport.js';
import { overrideContext } from './connection-context.js';
import type { CursusFrontend } from './frontend.js';
import { CursusRequestRunner } from './request-runner.js';
import { V1Framer, V1Session, v1FrameBytesMax } from './v1/index.js';
import { prepareV1Batch, receivedV1Batch, type V1PreparedBatch } from './v1/publish-batch.js';

const publishTaskModule = import.meta.resolve('./v1/publish-batch.js');

/** v1 bodies read and not yet started, at most, before reading pauses (each up to 16 MiB). */
export const v1BodiesWaitingMax = 8;

/** The largest body before authentication, when cursus.requireAuth is set. */
export const unauthenticatedBodyBytesMax = 64 * 1024;

export class V1Connection implements ConnectionHandle {
  private readonly framer: V1Framer;
  private readonly pipeline: RequestPipeline<Buffer>;
  private readonly session: V1Session;
  /** Aborted when the connection goes or winds down: a running STREAM ends. */
  private readonly stop = new AbortController();

  constructor(
    frontend: CursusFrontend,
    private readonly socket: Socket,
    private readonly context: ConnectionContext,
  ) {
    const requireAuth = frontend.settings.requireAuth;
    this.framer = new V1Framer({ reusedChunks: context.readInto !== undefined, ...(requireAuth ? { frameBytesMax: unauthenticatedBodyBytesMax } : {}) });
    const runner = new CursusRequestRunner(frontend, overrideContext(context, { authenticated: () => this.authenticated() }));
    this.session = new V1Session({
      dispatch: (request) => runner.runOrFail(request),
      output: { write: (chunks) => this.write(chunks), end: () => this.pipeline.endWith(), closed: this.stop.signal },
      prepareBatch: (body) => this.prepareBatch(frontend, body),
      logger: context.logger,
    });
    this.pipeline = new RequestPipeline<Buffer>(
      socket,
      {
        start: (body) => this.process(body),
        release: () => {},
        closed: () => {
          this.stop.abort();
          this.framer.dispose();
        },
      },
      { logger: context.logger, inFlightMax: () => 1, readAheadMax: () => v1BodiesWaitingMax, order: 'ordered', fileSlices: false },
    );
    if (context.readInto) context.readInto((chunk) => this.onData(chunk));
    else socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.once('end', () => this.onInputEnded());
    if (!requireAuth) context.authenticated();
  }

  /** The peer proved who it is: the listener's deadline lifts, and bodies may be as large as v1's. */
  private authenticated(): void {
    this.framer.frameBytesMax = v1FrameBytesMax;
    this.context.authenticated();
  }

  close(reason: CloseReason): void {
    if (this.pipeline.stopping) return;
    this.context.logger.debug('closing cursus v1 connection', { reason });
    this.stop.abort();
    this.pipeline.close();
  }

  whenIdle(): Promise<void> {
    return this.pipeline.whenIdle();
  }

  private onData(chunk: Buffer): void {
    if (!this.pipeline.accepting) return;
    const bodies: Buffer[] = [];
    let bad: string | null = null;
    for (const result of this.framer.push(chunk)) {
      if (!result.ok) {
        bad = result.reason;
        break;
      }
      bodies.push(result.body);
    }
    this.pipeline.push(bodies);
    if (bad !== null) {
      this.context.logger.debug('cursus v1 frame refused; closing', { reason: bad });
      this.pipeline.finishInput(() => this.pipeline.endWith());
    }
  }

  private onInputEnded(): void {
    if (!this.pipeline.accepting) return;
    this.stop.abort();
    this.pipeline.finishInput(() => this.pipeline.endWith());
  }

  /** One body: the session answers it (its frames written as it goes); then the slot closes. */
  private async process(body: Buffer): Promise<void> {
    const slot = this.pipeline.open(this.context.beginRequest('v1'), { barrier: true });
    await this.session.handle(body);
    this.pipeline.reply(slot, []);
  }

  /**
   * A 0xBA7C body decoded and converted on the broker's worker pool when it is
   * workers.offloadBytesMin bytes or more, else (and when the pool is off or full) here. A body
   * that owns its memory (one assembled across reads) is handed over, not copied; a worker that
   * fails then fails the request (answered command_failed), else the body is decoded here.
   */
  private prepareBatch(frontend: CursusFrontend, body: Buffer): V1PreparedBatch | Promise<V1PreparedBatch> {
    const transcoder = frontend.services.broker.transcoder;
    if (body.length < transcoder.settings.offloadBytesMin) return prepareV1Batch(body);
    const handed = transferableOf(body).length > 0 ? body : ownedCopy(body);
    const run = transcoder.offloadTask<V1PreparedBatch>(publishTaskModule, 'prepareV1BatchTask', [handed], transferableOf(handed), body.length);
    if (run === null) return prepareV1Batch(body);
    return run.then(receivedV1Batch, (err: unknown) => {
      if (handed === body) throw err;
      return prepareV1Batch(body);
    });
  }

  /** Writes whole v1 frames now (this request holds the connection); resolves once the socket took them, or is gone. */
  private write(chunks: readonly Buffer[]): Promise<void> {
    if (chunks.length === 0 || this.socket.destroyed || this.socket.writableEnded) return Promise.resolve();
    return new Promise((resolve) => {
      const last = chunks.length - 1;
      for (let i = 0; i < last; i++) this.socket.write(chunks[i]!);
      this.socket.write(chunks[last]!, () => resolve());
    });
  }
}
