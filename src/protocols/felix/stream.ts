// One client-opened QUIC stream (notes §4, §6; docs/protocols/felix-wire-v1.md §6, §7): its own
// framer, its own authentication, and its requests handled one at a time in arrival order, each
// answered on the stream before the next starts. A bidirectional stream carries any request; a
// publish-only unidirectional stream only publishes and is never answered.
//
//   frame → decodeFrame → (not authenticated) auth → ok | auth_ok; anything else "auth required"
//                       → (authenticated) dispatch by type → handler → replies on the stream
//
// Reading pauses while streamFramesAheadMax frames wait. What ends a stream: a bad header (magic,
// version, a length over the limit: 64 KiB before auth), a JSON payload that does not decode, a
// malformed unacked binary batch, a message only a broker sends, a second auth, a request before
// auth, a failed auth, a successful subscribe (one-shot), the peer's FIN. Refused flags are
// answered "unsupported frame flags" and the stream goes on.

import type { Readable, Writable } from 'node:stream';
import {
  ErrorText,
  FelixFramer,
  authReply,
  clientMessageTypes,
  decodeFrame,
  encodeMessage,
  encodePublishAck,
  frameShape,
  peekAckedPrefix,
  type Frame,
  type FelixMessage,
  type PeerCapabilities,
} from './codec/index.js';
import type { FelixPrincipal } from './access.js';
import type { FelixFrontend } from './frontend.js';
import { FelixFailure, type FelixConnectionScope, type FelixStreamContext } from './handler.js';
import { publishBinary } from './handlers/publish.js';
import { writeChunks } from './write-chunks.js';
import type { Logger } from '../../base/logger.js';
import type { RequestDone } from '../transport.js';

/** What a stream needs of its connection. */
export interface FelixStreamHost extends FelixConnectionScope {
  readonly logger: Logger;
  /** A stream authenticated: the connection's auth deadline lifts. */
  authenticated(): void;
  beginRequest(operation: string): RequestDone;
}

/** Message types a publish-only stream may carry. */
const uniTypes: ReadonlySet<string> = new Set(['publish', 'publish_batch']);

export class FelixStream {
  private readonly framer: FelixFramer;
  private readonly waiting: Frame[] = [];
  private running = false;
  /** No more frames are handled (the stream is ending). */
  private ended = false;
  private inputOver = false;
  private auth: { tenantId: string; principal: FelixPrincipal; peer: PeerCapabilities } | null = null;
  private context: FelixStreamContext | null = null;
  /** Set by a handler (subscribe): the stream ends after this request. */
  private finishing = false;

  constructor(
    private readonly frontend: FelixFrontend,
    private readonly host: FelixStreamHost,
    readonly kind: 'bidi' | 'uni',
    private readonly input: Readable,
    private readonly output: Writable | null,
  ) {
    this.framer = new FelixFramer();
    input.on('data', (chunk: Buffer) => this.onData(chunk));
    input.once('end', () => this.onInputEnd());
    input.on('error', (error: Error) => {
      host.logger.debug('felix stream failed', { error: String(error) });
      this.stop();
    });
    output?.on('error', (error: Error) => {
      host.logger.debug('felix stream write failed', { error: String(error) });
      this.stop();
    });
  }

  // --- input -----------------------------------------------------------------------------------

  private onData(chunk: Buffer): void {
    if (this.ended || this.inputOver) return;
    for (const r of this.framer.push(chunk)) {
      if (!r.ok) {
        this.host.logger.debug('felix framing error; ending the stream', { reason: r.reason });
        this.inputOver = true;
        this.input.pause();
        break;
      }
      this.waiting.push(r.frame);
    }
    if (this.waiting.length >= this.frontend.settings.streamFramesAheadMax) this.input.pause();
    this.pump();
  }

  private onInputEnd(): void {
    this.inputOver = true;
    this.pump();
  }

  private pump(): void {
    if (this.running) return;
    this.running = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (!this.ended && this.waiting.length > 0) {
        const frame = this.waiting.shift()!;
        if (this.waiting.length < this.frontend.settings.streamFramesAheadMax / 2 && !this.inputOver) this.input.resume();
        await this.handleFrame(frame);
        if (this.finishing) this.end();
      }
    } catch (error) {
      this.host.logger.error('felix stream failed; closing it', { error });
      this.stop();
    } finally {
      this.running = false;
    }
    if (this.inputOver && this.waiting.length === 0) this.end();
  }

  // --- output ----------------------------------------------------------------------------------

  private write(chunks: readonly Buffer[]): void {
    if (this.output === null || this.output.destroyed || this.output.writableEnded) return;
    writeChunks(this.output, chunks);
  }

  private send(message: FelixMessage): void {
    this.write(encodeMessage(message));
  }

  /** Ends the stream after what was written (FIN), reading nothing more. */
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.waiting.length = 0;
    this.framer.dispose();
    this.input.pause();
    // The answers written before go out first: the stream (both halves) is let go once they have.
    const release = (): void => {
      if (!this.input.destroyed) this.input.destroy();
    };
    if (this.output !== null && !this.output.destroyed && !this.output.writableEnded) this.output.end(release);
    else release();
  }

  /** Ends the stream at once (the connection or the stream failed). */
  private stop(): void {
    if (this.ended) return;
    this.end();
    this.output?.destroy();
  }

  /** Answers with an error; `close` ends the stream after it. */
  private refuse(message: string, close: boolean): void {
    if (this.kind === 'bidi') this.send({ type: 'error', message });
    if (close) this.end();
  }

  // --- frames ----------------------------------------------------------------------------------

  private async handleFrame(frame: Frame): Promise<void> {
    const decoded = decodeFrame(frame.header.flags, frame.payload);
    if (!decoded.ok) {
      if (decoded.flagsRefused) return this.refuse(ErrorText.unsupportedFrameFlags, false);
      return this.malformed(frame, decoded.reason);
    }
    const f = decoded.value;
    switch (f.kind) {
      case 'message':
        return this.handleMessage(f.message);
      case 'publish_batch':
        if (this.context === null) return this.refuse(ErrorText.authRequired, true);
        return this.run('publish_binary', () => publishBinary(this.context!, f.batch));
      case 'event_batch':
      case 'publish_ack':
        return this.refuse(ErrorText.unexpectedMessageType, true);
    }
  }

  /** A payload that did not decode (docs §7): what ends the stream and what does not. */
  private malformed(frame: Frame, reason: string): void {
    const shape = frameShape(frame.header.flags);
    this.host.logger.debug('felix frame malformed', { flags: frame.header.flags, reason });
    if (!shape.ok || shape.value.kind !== 'publish_batch') {
      if (shape.ok && shape.value.kind !== 'json') return this.refuse(ErrorText.unexpectedMessageType, true);
      return this.end();
    }
    if (this.context === null) return this.refuse(ErrorText.authRequired, true);
    if (!shape.value.acked) return this.end();
    const prefix = peekAckedPrefix(frame.payload);
    if (!prefix.ok) return this.refuse(ErrorText.malformedAckedPrefix, false);
    if (this.kind === 'bidi') this.write([encodePublishAck({ requestId: prefix.value.requestId, error: ErrorText.malformedPublishBatch, owner: null })]);
  }

  private async handleMessage(m: FelixMessage): Promise<void> {
    if (m.type === 'error') return this.end();
    if (m.type === 'subscribe_cursor_error') return this.refuse(ErrorText.cursorErrorFromClient, true);
    if (!clientMessageTypes.has(m.type)) return this.refuse(ErrorText.unexpectedMessageType, true);
    if (m.type === 'auth') {
      if (this.context !== null) return this.refuse(ErrorText.authAlreadyEstablished, true);
      return this.run('auth', () => this.authenticate(m));
    }
    if (this.context === null) return this.refuse(ErrorText.authRequired, true);
    if (this.kind === 'uni' && !uniTypes.has(m.type)) return this.end();
    const handler = this.frontend.handlers.get(m.type);
    if (handler === undefined) return this.refuse(`unsupported request type: ${m.type}`, true);
    const ctx = this.context;
    return this.run(m.type, () => handler.handle(ctx, m));
  }

  /** Runs one request, counted in the listener's metrics; a FelixFailure is answered, anything else logged. */
  private async run(operation: string, work: () => Promise<void> | void): Promise<void> {
    const done = this.host.beginRequest(operation);
    try {
      await work();
      done('ok');
    } catch (error) {
      done('error');
      if (error instanceof FelixFailure) return this.refuse(error.message, error.close);
      this.host.logger.error('felix request failed', { operation, error });
      this.refuse(ErrorText.serverOverloaded, false);
    }
  }

  private async authenticate(auth: FelixMessage & { type: 'auth' }): Promise<void> {
    const principal = await this.frontend.services.access.authenticate(auth, this.host.remote);
    const { reply, peer } = authReply(auth, this.frontend.server);
    this.auth = { tenantId: auth.tenantId, principal, peer };
    this.context = this.contextOf(this.auth);
    this.framer.limits = { payloadBytesMax: this.frontend.settings.frameBytesMax };
    this.host.authenticated();
    if (this.kind === 'bidi') this.send(reply);
  }

  private contextOf(auth: { tenantId: string; principal: FelixPrincipal; peer: PeerCapabilities }): FelixStreamContext {
    return {
      services: this.frontend.services,
      tenantId: auth.tenantId,
      principal: auth.principal,
      peer: auth.peer,
      kind: this.kind,
      connection: this.host,
      send: (message) => this.send(message),
      sendFrames: (chunks) => this.write(chunks),
      finish: () => {
        this.finishing = true;
      },
    };
  }
}
