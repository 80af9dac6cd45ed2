// One Kafka client connection: socket bytes → Framer → request header → handler → response,
// with responses written strictly in request order.
//
// Dispatch, per framed request (in arrival order):
//   1. Raw SASL token mode (SaslHandshake v0 chose it and the session is not authenticated yet):
//      the frame is a token, not a request; handlers/sasl-raw.ts answers it.
//   2. The request header is decoded; an unparsable header closes the connection (Kafka does the
//      same: it cannot answer without a correlation id it trusts).
//   3. With SASL required and no principal yet, only `preAuth` handlers are answered; anything
//      else closes the connection (Kafka's SaslServerAuthenticator does the same).
//   4. A key with no handler, or a version outside the handler's range: UNSUPPORTED_VERSION.
//      ApiVersions gets the KIP-511 v0 body listing what the registry advertises; other APIs get
//      the handler's errorResponse (or a body of defaults with the top-level error code) when the
//      codec can decode the request at that version; otherwise the connection is closed.
//   5. The handler runs. Requests are started in arrival order and synchronously up to their first
//      await, so Produce appends of pipelined requests reach the log in order; they then complete
//      concurrently. A QuartetError thrown by a handler becomes the handler's error response
//      (errors.ts maps the code); any other exception closes this connection (logged), never the
//      process. A null result (Produce acks=0) sends nothing.
//
// Ordering, back-pressure and ending are the shared request pipeline's (../pipeline.ts): each
// request takes a slot when it starts, and a reply is written only once every reply before it is.
//
// Request buffers: a Produce request large enough to straddle socket chunks is assembled in a
// pooled buffer (codec/framer.ts); it goes back to the pool once the handler has settled and every
// append it started (holdRequestUntil) has settled too: the log keeps views of it until written.
//
// Backpressure: at most `inFlightRequestsMax` requests between "framed" and "response written".
// A frame beyond it waits and the socket is paused until slots drain; reading also pauses while
// the socket's write buffer is full ('drain' resumes it), and while a large frame waits for the
// broker's request budget (src/base/request-bytes.ts, Kafka's queued.max.request.bytes).
//
// Serial points: SaslHandshake, SaslAuthenticate, raw tokens, and every request while SASL is
// required and the session is not yet authenticated run alone: nothing after them starts before
// they finish (a raw token can only be recognised once the handshake before it has finished).

import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { QuartetError, isQuartetError } from '../../base/errors.js';
import { BufferLease } from '../../base/buffer-pool.js';
import type { Logger } from '../../base/logger.js';
import { canSendFiles, type ReplyChunk } from '../file-replies.js';
import { RequestPipeline, type Slot } from '../pipeline.js';
import type { CloseReason, ConnectionHandle, RequestDone } from '../transport.js';
import { ApiKey, apiKeyName, supportedApi, type ApiKeyName, type SupportedApi } from './codec/api-keys.js';
import { ErrorCode } from './codec/errors.js';
import { Framer, type FramerResult } from './codec/framer.js';
import { decodeRequest, encodeResponseChunks, encodeUnsupportedApiVersions } from './codec/frames.js';
import { decodeRequestHeader, type RequestHeader } from './codec/headers.js';
import { hasSchema, messageSchemas, type SchemaApiKey } from './codec/messages/index.js';
import { inRange, type MessageSchema } from './codec/schema.js';
import { principalStillActive } from './access.js';
import { kafkaCodeOf } from './errors.js';
import { saslRawToken } from './handlers/sasl-raw.js';
import type { KafkaFrontend, KafkaHandler, KafkaRequestContext, KafkaSession } from './handlers/types.js';

/** What a connection needs from the frontend: the shared state plus the handler registry. */
export interface KafkaConnectionFrontend extends KafkaFrontend {
  readonly handlers: ReadonlyMap<number, KafkaHandler>;
}

/** The part of the listener's ConnectionContext a connection uses (tests pass their own). */
export interface KafkaConnectionContext {
  readonly remote: string;
  readonly logger: Logger;
  beginRequest(operation: string): RequestDone;
  /** See ConnectionContext.readInto: chunks from one reused buffer instead of 'data' events. */
  readonly readInto?: (onChunk: (chunk: Buffer) => void) => void;
  /** See ConnectionContext.authenticated: told once SASL succeeds, or at once when it is not required. */
  authenticated?(): void;
}

class Session implements KafkaSession {
  clientId: string | null = null;
  principal: string | null = null;
  principalUserId: number | null = null;
  sasl: { mechanism: string; rawTokens: boolean } | null = null;
  private readonly abort = new AbortController();
  constructor(
    readonly remote: string,
    readonly logger: Logger,
  ) {}
  get signal(): AbortSignal {
    return this.abort.signal;
  }
  end(): void {
    this.abort.abort();
  }
}

const serialApis = new Set<number>([ApiKey.SaslHandshake, ApiKey.SaslAuthenticate]);

/** The largest frame a connection may send before SASL authentication (Kafka's default sasl.server.max.receive.size). */
export const unauthenticatedFrameBytesMax = 512 * 1024;

/** The ApiVersions list: exactly what the handler registry answers, in key order. */
export function advertisedApis(handlers: ReadonlyMap<number, KafkaHandler>): SupportedApi[] {
  return [...handlers.values()]
    .sort((a, b) => a.apiKey - b.apiKey)
    .map((h) => ({
      key: h.apiKey,
      name: apiKeyName(h.apiKey) as ApiKeyName,
      minVersion: h.minVersion,
      maxVersion: h.maxVersion,
      flexibleFrom: supportedApi(h.apiKey)?.flexibleFrom ?? null,
    }));
}

export class KafkaConnection implements ConnectionHandle {
  readonly session: Session;
  private readonly framer: Framer;
  private readonly pipeline: RequestPipeline<Buffer>;
  /** Fetch requests started whose responses are not written yet (one is started at a time). */
  private fetchesInFlight = 0;
  /** Fetch responses may carry file slices (plain TCP and the addon: file-replies.ts). */
  private readonly fileSlices: boolean;
  private closed = false;
  /** The listener has been told that the peer authenticated. */
  private toldAuthenticated = false;
  private readonly logger: Logger;

  constructor(
    private readonly frontend: KafkaConnectionFrontend,
    socket: Duplex,
    private readonly context: KafkaConnectionContext,
  ) {
    this.logger = context.logger;
    this.fileSlices = canSendFiles(socket as Socket);
    this.session = new Session(context.remote, context.logger);
    this.framer = new Framer({
      frameBytesMax: frontend.settings.requestBytesMax,
      frameLease: largeProduceLease,
      reusedChunks: context.readInto !== undefined,
      budget: frontend.broker.requestBytes,
      onGranted: () => this.onBudgetGranted(),
    });
    this.pipeline = new RequestPipeline<Buffer>(
      socket,
      {
        start: (frame) => this.start(frame),
        release: (frame) => this.framer.release(frame),
        // As Kafka mutes a connection until its response is sent, a connection holds at most one
        // Fetch response (at most fetchResponseBytesMax) besides what the socket has queued.
        mayStart: (frame) => this.fetchesInFlight === 0 || frame.length < 2 || frame.readInt16BE(0) !== ApiKey.Fetch,
        closed: () => this.shutdown(),
      },
      { logger: context.logger, inFlightMax: () => frontend.settings.inFlightRequestsMax, readAheadMax: () => 1, order: 'ordered', fileSlices: this.fileSlices },
    );
    if (context.readInto) context.readInto((chunk) => this.onData(chunk));
    else socket.on('data', (chunk: Buffer) => this.onData(chunk));
    // Without SASL required there is nothing to prove: the deadline before authentication is lifted.
    if (!frontend.settings.saslRequired) this.tellAuthenticated();
  }

  private tellAuthenticated(): void {
    if (this.toldAuthenticated) return;
    this.toldAuthenticated = true;
    this.context.authenticated?.();
  }

  /** Requests framed and not yet answered. */
  get inFlight(): number {
    return this.pipeline.inFlight;
  }

  /** ConnectionHandle: stop reading new requests; in-flight ones finish (the listener ends the socket). */
  close(reason: CloseReason): void {
    if (!this.pipeline.accepting) return;
    this.pipeline.close();
    this.session.end();
    this.logger.debug('connection closing', { reason });
  }

  whenIdle(): Promise<void> {
    return this.pipeline.whenIdle();
  }

  private onData(chunk: Buffer): void {
    if (!this.pipeline.accepting) return;
    // Until SASL authentication succeeds, a frame may declare at most 512 KiB (Kafka's
    // sasl.server.max.receive.size, CVE-2022-34917): an unauthenticated peer cannot make the
    // broker hold a large frame. Larger closes the connection, as in Kafka.
    const settings = this.frontend.settings;
    const unauthenticated = settings.saslRequired && this.session.principal === null;
    this.framer.frameBytesMax = unauthenticated ? Math.min(unauthenticatedFrameBytesMax, settings.requestBytesMax) : settings.requestBytesMax;
    // The broker's request budget is for authenticated peers' frames (request-bytes.ts).
    this.framer.budgeted = !unauthenticated;
    this.framed(this.framer.push(chunk));
  }

  /** The frame that waited for the broker's request budget has its bytes: reading goes on. */
  private onBudgetGranted(): void {
    if (!this.pipeline.accepting) return;
    this.framed(this.framer.resume());
  }

  private framed(result: FramerResult): void {
    this.pipeline.push(result.frames);
    if (!result.ok) this.fail(`bad frame: ${result.reason}`);
    // A large frame waiting for the request budget: the socket is not read until it has its bytes.
    else this.pipeline.holdInput(this.framer.waiting);
  }

  /** Opens the request's slot: its reply's place in the response order. */
  private openSlot(operation: string, barrier: boolean): Slot {
    const fetch = operation === apiKeyName(ApiKey.Fetch);
    const done = this.context.beginRequest(operation);
    if (fetch) this.fetchesInFlight++;
    return this.pipeline.open(
      (outcome) => {
        if (fetch) this.fetchesInFlight--;
        done(outcome);
        if (!this.toldAuthenticated && this.session.principal !== null) this.tellAuthenticated();
      },
      { barrier },
    );
  }

  /** Starts one request; settles once its handler, and every append it started, have settled. */
  private async start(frame: Buffer): Promise<void> {
    const holds: Promise<unknown>[] = [];
    try {
      await this.handle(frame, holds);
    } catch (err) {
      this.logger.error('Kafka request dispatch failed; closing the connection', { error: err, stack: (err as Error)?.stack });
      this.fail('dispatch failed');
    }
    // Each settled, failed or not (its failure is the handler's to answer); one at a time, which
    // allocates less than a Promise.allSettled per request.
    for (const hold of holds) {
      try {
        await hold;
      } catch {
        // answered by the handler
      }
    }
  }

  /** Handles one request; settles once its handler has (or at once when it is refused). */
  private async handle(frame: Buffer, holds: Promise<unknown>[]): Promise<void> {
    const session = this.session;
    if (session.sasl?.rawTokens === true && session.principal === null) {
      await this.dispatchRawToken(frame);
      return;
    }
    const decoded = decodeRequestHeader(frame);
    if (!decoded.ok) {
      this.fail(`unparsable request header: ${decoded.reason}`);
      return;
    }
    const header = decoded.header;
    const handler = this.frontend.handlers.get(header.apiKey);
    const unauthenticated = this.frontend.settings.saslRequired && session.principal === null;
    if (unauthenticated && handler?.preAuth !== true) {
      this.fail(`${apiKeyName(header.apiKey)} v${header.apiVersion} before SASL authentication`);
      return;
    }
    if (!principalStillActive(this.frontend, session)) {
      // The user it authenticated as was deleted or deactivated since: the connection ends, as an
      // Iggy session is evicted (a new one cannot authenticate).
      this.fail(`${apiKeyName(header.apiKey)} v${header.apiVersion} from user '${session.principal}', deleted or deactivated since it authenticated`);
      return;
    }
    session.clientId = header.clientId;
    const slot = this.openSlot(apiKeyName(header.apiKey), unauthenticated || serialApis.has(header.apiKey));
    const context: KafkaRequestContext = {
      frontend: this.frontend,
      session,
      header,
      version: header.apiVersion,
      afterResponseWritten: (fn) => slot.onWritten(fn),
      holdRequestUntil: (work) => holds.push(work),
      closeAfterResponse: () => void (slot.closeAfter = true),
      holdFollowingRequests: () => this.pipeline.holdFollowing(slot),
      throttleAfterResponse: (ms) => slot.onWritten(() => this.pipeline.muteFor(ms)),
      fileSlices: this.fileSlices,
    };
    if (handler === undefined || header.apiVersion < handler.minVersion || header.apiVersion > handler.maxVersion) {
      this.answerUnsupported(slot, context, handler, frame, decoded.bodyOffset);
      return;
    }
    const request = decodeRequest(handler.apiKey, header.apiVersion, frame, decoded.bodyOffset);
    if (!request.ok) {
      this.fail(`malformed ${apiKeyName(header.apiKey)} v${header.apiVersion} request: ${request.reason}`);
      return;
    }
    let result: unknown;
    try {
      result = handler.handle(request.value as never, context);
    } catch (err) {
      this.handlerFailed(slot, context, handler, request.value, err);
      return;
    }
    if (result instanceof Promise) {
      await result.then(
        (body: unknown) => this.respond(slot, header, body),
        (err: unknown) => this.handlerFailed(slot, context, handler, request.value, err),
      );
    } else {
      this.respond(slot, header, result);
    }
  }

  private dispatchRawToken(frame: Buffer): Promise<void> {
    const slot = this.openSlot('SaslAuthenticate', true);
    return saslRawToken(this.frontend, this.session, frame).then(
      ({ reply, close }) => {
        let chunks: Buffer[] = [];
        if (reply !== null) {
          const size = Buffer.allocUnsafe(4);
          size.writeInt32BE(reply.length, 0);
          chunks = reply.length > 0 ? [size, reply] : [size];
        }
        this.pipeline.reply(slot, chunks, { closeAfter: close, outcome: close ? 'error' : 'ok' });
      },
      (err: unknown) => {
        this.logger.error('raw SASL token handling failed; closing the connection', { error: err });
        this.fail('raw SASL token handling failed');
      },
    );
  }

  private respond(slot: Slot, header: RequestHeader, body: unknown, outcome: 'ok' | 'error' = 'ok'): void {
    if (this.closed) {
      this.pipeline.reply(slot, []);
      return;
    }
    let chunks: ReplyChunk[] = [];
    if (body !== null) {
      try {
        chunks = encodeResponseChunks(header.apiKey as SchemaApiKey, header.apiVersion, header.correlationId, body as never);
      } catch (err) {
        this.logger.error('could not encode a response; closing the connection', { api: apiKeyName(header.apiKey), version: header.apiVersion, error: err });
        this.fail('response encoding failed');
        this.pipeline.reply(slot, []);
        return;
      }
    }
    this.pipeline.reply(slot, chunks, { outcome, closeAfter: slot.closeAfter });
  }

  private handlerFailed(slot: Slot, context: KafkaRequestContext, handler: KafkaHandler, request: unknown, err: unknown): void {
    if (this.closed) {
      this.pipeline.reply(slot, []);
      return;
    }
    const header = context.header;
    if (!isQuartetError(err)) {
      this.logger.error('Kafka handler failed; closing the connection', { api: apiKeyName(header.apiKey), version: header.apiVersion, error: err, stack: (err as Error)?.stack });
      this.fail('handler exception');
      this.pipeline.reply(slot, []);
      return;
    }
    const code = kafkaCodeOf(err);
    this.logger.debug('request failed', { api: apiKeyName(header.apiKey), version: header.apiVersion, code: err.code, message: err.message });
    let body: unknown;
    try {
      body = handler.errorResponse ? handler.errorResponse(request as never, code, context) : genericErrorResponse(header.apiKey, header.apiVersion, code);
    } catch (e) {
      this.logger.error('error response failed; closing the connection', { error: e });
      this.fail('error response failed');
      this.pipeline.reply(slot, []);
      return;
    }
    this.respond(slot, header, body, 'error');
  }

  private answerUnsupported(slot: Slot, context: KafkaRequestContext, handler: KafkaHandler | undefined, frame: Buffer, bodyOffset: number): void {
    const header = context.header;
    if (header.apiKey === ApiKey.ApiVersions) {
      // KIP-511: a v0 body (header v0) with error 35 and everything the registry advertises.
      this.pipeline.reply(slot, encodeUnsupportedApiVersions(header.correlationId, advertisedApis(this.frontend.handlers)), { outcome: 'error' });
      return;
    }
    const what = `${apiKeyName(header.apiKey)} v${header.apiVersion}`;
    if (!hasSchema(header.apiKey) || !inRange((messageSchemas[header.apiKey].request as MessageSchema).validVersions, header.apiVersion)) {
      this.fail(`unsupported request ${what}`);
      return;
    }
    const request = decodeRequest(header.apiKey, header.apiVersion, frame, bodyOffset);
    if (!request.ok) {
      this.fail(`malformed ${what} request: ${request.reason}`);
      return;
    }
    this.logger.debug('unsupported version', { api: apiKeyName(header.apiKey), version: header.apiVersion });
    let body: unknown;
    try {
      body = handler?.errorResponse
        ? handler.errorResponse(request.value as never, ErrorCode.UNSUPPORTED_VERSION, context)
        : genericErrorResponse(header.apiKey, header.apiVersion, ErrorCode.UNSUPPORTED_VERSION);
    } catch (err) {
      this.logger.error('error response failed; closing the connection', { error: err });
      this.fail('error response failed');
      return;
    }
    this.respond(slot, header, body, 'error');
  }

  /** Closes this connection at once because of what the peer sent (or a bug in a handler). */
  private fail(reason: string): void {
    if (this.closed) return;
    this.logger.warn('closing the Kafka connection', { reason, clientId: this.session.clientId });
    this.pipeline.destroy();
  }

  /** The socket is gone (or ending after a closing response): long waits are aborted. */
  private shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    this.framer.dispose();
    this.session.end();
  }
}

/**
 * A response of defaults carrying `errorCode` at the top level when the schema has such a field
 * at this version (most admin and group APIs); per-topic APIs should give their handler an
 * errorResponse instead.
 */
export function genericErrorResponse(apiKey: number, version: number, errorCode: number): Record<string, unknown> {
  if (!hasSchema(apiKey)) throw new QuartetError('unsupported', `no schema for API key ${apiKey}`);
  const schema = messageSchemas[apiKey].response as MessageSchema;
  const field = schema.fields.find((f) => f.name === 'errorCode');
  return field !== undefined && inRange(field.versions, version) ? { errorCode } : {};
}

/** Produce requests big enough to straddle socket chunks are assembled in pooled buffers. */
const pooledProduceBytesMin = 64 * 1024;

function largeProduceLease(size: number, head: Buffer): BufferLease | null {
  return size >= pooledProduceBytesMin && head.length >= 2 && head.readInt16BE(0) === ApiKey.Produce ? new BufferLease() : null;
}
