// One Iggy client connection: socket → IggyFramer → header rules → session gate → handler →
// reply frame, in order, on the shared request pipeline (../pipeline.ts) run serially: requests of
// one connection run one at a time in arrival order (replies to pipelined requests come back in
// order, and pipelined sends append in order); at most `inFlightRequestsMax` framed requests
// wait, beyond that the socket is paused until half of them have run. Nothing a peer sends can
// throw out of here: an unexpected exception evicts (reason 12) and closes this connection only.
//
// Header handling (server notes §2–§5):
// - declared size < 256 or a frame that is not a Request: close without a reply;
// - size above the frame maximum: Eviction 6 (InvalidRequestBodySize), then close;
// - release != 0, reserved/internal operation, bad session/request numbers: Eviction, then close;
// - request_checksum non-zero and wrong: Reply status 4, empty body;
// - legacy logins 38/44: Eviction 15; unknown command code: Reply status 3;
// - before login only Ping (1) is served, anything else: Reply status 40;
// - before login a frame may be at most `unauthenticatedFrameBytesMax` (the largest login), and
//   one framed request waits at a time: an unauthenticated peer holds at most one small frame;
// - a registration fenced by a newer one of the same client id: Eviction 7 (SessionTooLow).
//
// A large frame (64 KiB and up) that straddles reads takes its bytes from the broker's request
// budget (src/base/request-bytes.ts); while the budget cannot take it, the socket is not read.

import type { Socket } from 'node:net';
import { isQuartetError } from '../../base/errors.js';
import { BufferLease } from '../../base/buffer-pool.js';
import type { User } from '../../core/users.js';
import type { CloseReason, ConnectionContext, ConnectionHandle, RequestDone } from '../transport.js';
import {
  CommandCode,
  EvictionReason,
  IggyFramer,
  IggyErrorCode,
  Operation,
  operationOffset,
  commandSpec,
  decodeLoginRegisterBody,
  decodeRequest,
  decodeRequestHeader,
  encodeEviction,
  encodeReply,
  encodeReplyChunks,
  encodeReplyFrame,
  encodeResultError,
  headerBytes,
  loginRegisterBodyBytesMax,
  iggyProtocolVersion,
  iggyProtocolVersionMin,
  isMetadataOperation,
  isProtocolCompatible,
  resolveCommand,
  validateRequestHeader,
  verifyRequestChecksum,
  type Frame,
  type FramerResult,
  type RequestHeader,
  type RequestRejection,
} from './codec/index.js';
import { canSendFiles, isFileSlice, type ReplyChunk } from '../file-replies.js';
import { RequestPipeline, type Slot } from '../pipeline.js';
import { directReadBytesMin } from '../../base/socket-reads.js';
import { IggyFailure, iggyCodeOf } from './errors.js';
import type { IggyFrontend, IggySession } from './frontend.js';
import type { IggyHandler, IggyRequestContext } from './handlers/types.js';

/** How long an evicted peer has to read its eviction (and a reply before it) before the socket is destroyed. */
const evictionDrainMs = 5_000;

/**
 * The largest frame a connection may send before it logs in: the largest LoginRegister that can
 * decode (66,824 bytes). A larger declared size is evicted (reason 6) before its body is read.
 */
export const unauthenticatedFrameBytesMax = headerBytes + loginRegisterBodyBytesMax;

/** `session`: the reply's `op` when it is not the connection's session now (a logout's reply carries the ended one). */
type Answer = { body: ReplyChunk[]; status?: number; session?: bigint } | { evict: EvictionReason } | { close: true };

export class IggyConnection implements ConnectionHandle, IggySession {
  readonly connectionId: number;
  readonly address: string;
  readonly localHost: string;
  clientId = 0n;
  session = 0n;
  userId: number | null = null;
  lastActivityMs: number;

  private readonly framer: IggyFramer;
  private readonly pipeline: RequestPipeline<Frame>;
  /** Poll replies may carry file slices (plain TCP and the addon: file-replies.ts). */
  private readonly fileSlices: boolean;

  constructor(
    private readonly frontend: IggyFrontend,
    /** The connection's socket (diagnostics and tests; everything written goes through the pipeline). */
    readonly socket: Socket,
    private readonly context: ConnectionContext,
  ) {
    this.connectionId = context.id;
    this.address = context.remote;
    this.localHost = socket.localAddress ?? '';
    this.lastActivityMs = frontend.clock.now();
    this.fileSlices = canSendFiles(socket);
    this.framer = new IggyFramer({
      frameBytesMax: frontend.settings.frameBytesMax,
      frameLease: largeSendLease,
      reusedChunks: context.readInto !== undefined,
      budget: frontend.broker.requestBytes,
      onGranted: () => this.onFrames(() => this.framer.resume()),
    });
    // Serial: every request is a barrier, so requests run one at a time in arrival order. Before
    // login one framed request may wait (it holds its frame's bytes).
    this.pipeline = new RequestPipeline<Frame>(
      socket,
      {
        start: (frame) => this.process(frame),
        release: (frame) => this.framer.release(frame),
        closed: () => {
          this.frontend.removeConnection(this);
          this.framer.dispose();
        },
      },
      {
        logger: context.logger,
        inFlightMax: () => frontend.settings.inFlightRequestsMax,
        readAheadMax: () => (this.loggedIn ? frontend.settings.inFlightRequestsMax : 1),
        order: 'ordered',
        fileSlices: this.fileSlices,
        endDrainMs: evictionDrainMs,
      },
    );
    frontend.addConnection(this);
    if (context.readInto) {
      // The body of a large SendMessages frame is read straight into its pooled buffer.
      context.readInto((chunk) => this.onData(chunk), {
        target: () => (this.pipeline.accepting ? this.framer.directTarget(directReadBytesMin) : null),
        filled: (target, bytes) => this.onFrames(() => this.framer.pushDirect(target, bytes)),
      });
    } else {
      socket.on('data', (chunk: Buffer) => this.onData(chunk));
    }
    socket.once('end', () => this.onInputEnded());
  }

  // --- ConnectionHandle ------------------------------------------------------------------------

  close(reason: CloseReason): void {
    if (this.pipeline.stopping) return;
    this.context.logger.debug('closing iggy connection', { reason });
    this.pipeline.close();
  }

  whenIdle(): Promise<void> {
    return this.pipeline.whenIdle();
  }

  evict(reason: EvictionReason): void {
    this.sendEviction(this.clientId === 0n ? 1n : this.clientId, reason);
  }

  /** Bytes of requests read and not yet handled: framed ones waiting, and a frame being assembled. */
  get heldRequestBytes(): number {
    let bytes = this.framer.bufferedBytes;
    for (const frame of this.pipeline.waitingFrames()) bytes += frame.header.length + frame.body.length;
    return bytes;
  }

  // --- input -----------------------------------------------------------------------------------

  private onData(chunk: Buffer): void {
    this.onFrames(() => this.framer.push(chunk));
  }

  /** Queues the frames `frame()` completes (a push of a chunk, or of bytes read in place). */
  private onFrames(frame: () => FramerResult[]): void {
    if (!this.pipeline.accepting) return;
    // The limits in force when a frame's header completes: a login's limits until it succeeds.
    this.framer.frameBytesMax = this.loggedIn ? this.frontend.settings.frameBytesMax : Math.min(unauthenticatedFrameBytesMax, this.frontend.settings.frameBytesMax);
    // The broker's request budget is for logged-in peers' frames (request-bytes.ts).
    this.framer.budgeted = this.loggedIn;
    try {
      const frames: Frame[] = [];
      let bad: { header: Buffer; reason: string } | null = null;
      for (const result of frame()) {
        if (!result.ok) {
          bad = result;
          break;
        }
        frames.push(result.frame);
      }
      this.pipeline.push(frames);
      if (bad !== null) this.onFramingError(bad.header, bad.reason);
      // A large frame waiting for the request budget: the socket is not read until it has its bytes.
      else this.pipeline.holdInput(this.framer.waiting);
    } catch (error) {
      this.context.logger.error('iggy connection failed; evicting', { error });
      this.evict(EvictionReason.sessionError);
    }
  }

  /**
   * The peer's FIN (the listener leaves the socket half-open): the frames it sent are answered, and
   * then the connection ends, as after a framing error; bytes of an unfinished frame are dropped.
   * A peer that stops reading meanwhile is cut off (halfClosedStallMs).
   */
  private onInputEnded(): void {
    if (!this.pipeline.accepting) return;
    if (this.pipeline.inFlight > 0 || this.pipeline.waitingFrames().length > 0) this.pipeline.cutOffIfOutputStalls(this.frontend.settings.halfClosedStallMs);
    this.pipeline.finishInput(() => this.endGracefully());
  }

  /** Reads stop; what was queued before the bad frame is answered, then the connection goes. */
  private onFramingError(header: Buffer, reason: string): void {
    this.context.logger.debug('iggy framing error', { reason });
    const h = decodeRequestHeader(header);
    const rejection = validateRequestHeader(h, this.framer.frameBytesMax);
    this.pipeline.finishInput(rejection?.action === 'evict' && h.client !== 0n ? () => this.sendEviction(h.client, rejection.eviction) : () => this.endGracefully());
  }

  private get loggedIn(): boolean {
    return this.userId !== null && this.session !== 0n;
  }

  /** Handles one frame; settles once it is answered (or refused) and its bytes may be released. */
  private async process(frame: Frame): Promise<void> {
    const h = decodeRequestHeader(frame.header);
    const headerProblem = validateRequestHeader(h, this.frontend.settings.frameBytesMax);
    if (headerProblem !== null && headerProblem.action !== 'status') {
      this.reject(h, headerProblem);
      return;
    }
    const resolved = headerProblem ?? resolveCommand(h);
    const name = 'code' in resolved ? commandSpec(resolved.code).name : 'invalid';
    const slot = this.pipeline.open(this.context.beginRequest(name), { barrier: true });
    let answer: Answer;
    let evictAs = h.client;
    try {
      answer = 'code' in resolved ? await this.answer(h, frame.body, resolved.code, slot) : this.rejectionAnswer(resolved, h);
    } catch (error) {
      // Nothing a peer sends may throw out of here: the connection is evicted, the broker goes on.
      this.context.logger.error('iggy connection failed; evicting', { error });
      answer = { evict: EvictionReason.sessionError };
      evictAs = this.clientId;
    }
    if ('evict' in answer || 'close' in answer) {
      this.frontend.removeConnection(this);
      const last = 'evict' in answer ? [this.evictionFrame(evictAs, answer.evict)] : [];
      this.pipeline.reply(slot, last, { outcome: 'error', closeAfter: true });
      return;
    }
    const status = answer.status ?? 0;
    const reply = encodeReplyFrame(h, status !== 0 ? [] : answer.body, { session: answer.session ?? this.session, commit: this.frontend.commit, status });
    this.pipeline.reply(slot, reply, { outcome: status !== 0 ? 'error' : 'ok' });
  }

  private reject(h: RequestHeader, r: RequestRejection): void {
    const a = this.rejectionAnswer(r);
    if ('evict' in a) this.sendEviction(h.client, a.evict);
    else this.endGracefully();
  }

  private rejectionAnswer(r: RequestRejection, h?: RequestHeader): Answer {
    this.context.logger.debug('iggy request refused', { reason: r.reason, action: r.action });
    if (r.action === 'close') return { close: true };
    if (r.action === 'evict') return { evict: r.eviction };
    // Before login every non-replicated code but Ping is Unauthenticated, known or not (notes §5).
    if (h?.operation === Operation.nonReplicated && !this.loggedIn) return { body: [], status: IggyErrorCode.unauthenticated };
    return { body: [], status: r.status };
  }

  private async answer(h: RequestHeader, body: Buffer, code: CommandCode, slot: Slot): Promise<Answer> {
    if (!verifyRequestChecksum(h, body)) return { body: [], status: IggyErrorCode.invalidFormat };
    this.lastActivityMs = this.frontend.clock.now();
    if (h.operation === Operation.register) return this.login(h, body);
    if (code === CommandCode.ping) return { body: [] };
    // Logout without a login: what it asks for already holds (SDKs log out before logging in again).
    if (code === CommandCode.logoutUser && !this.loggedIn) return { body: [] };
    if (this.userId === null || this.session === 0n) return { body: [], status: IggyErrorCode.unauthenticated };
    // Session fencing: the client id must be this registration's, and still its current epoch.
    if (h.client !== this.clientId) return { evict: EvictionReason.sessionError };
    const current = this.frontend.currentSession(this.clientId);
    if (current !== this.session) return { evict: EvictionReason.sessionTooLow };
    if (h.operation !== Operation.nonReplicated && h.session !== this.session) {
      return { evict: h.session < this.session ? EvictionReason.sessionTooLow : EvictionReason.sessionError };
    }
    const user = this.frontend.broker.users.get(this.userId);
    if (user === null) {
      this.frontend.logout(this);
      return { evict: EvictionReason.noSession };
    }
    if (user.status !== 'active') return { evict: EvictionReason.userInactive };
    if (code === CommandCode.logoutUser) {
      const ended = this.session;
      this.frontend.logout(this, true);
      // Back to "before login": the listener's deadline for a login runs again.
      this.context.unauthenticated();
      return { body: [], session: ended };
    }
    const decoded = decodeRequest(code, body);
    if (!decoded.ok) {
      // Refused before anything is applied, with a status, and the session stays: the reference
      // server answers a body it cannot decode with InvalidCommand (3), an options block over
      // 100,000 bytes with OptionsBlockTooLarge (4043), for reads and writes alike.
      this.context.logger.debug('undecodable iggy request body', { code, reason: decoded.reason });
      return { body: [], status: decoded.code ?? IggyErrorCode.invalidCommand };
    }
    const spec = commandSpec(code);
    // Only metadata operations carry a strictly increasing request number; partition operations
    // (send, store/delete offset) and reads repeat the current one ("Request numbering").
    const dedupe = isMetadataOperation(h.operation);
    if (dedupe) {
      const seen = this.frontend.lookupReply(this.clientId, h.request, h.operation, h.requestChecksum);
      if (seen.kind === 'cached') return { body: seen.body };
      // A request number reused for another operation or other arguments: refused like a checksum that does not match.
      if (seen.kind === 'mismatch') return { body: [], status: IggyErrorCode.invalidFormat };
      if (seen.kind === 'stale') return { body: [encodeResultError(IggyErrorCode.requestAlreadyApplied)] };
    }
    const handler = this.frontend.handlers[code] as IggyHandler<CommandCode> | undefined;
    if (handler === undefined) return { body: [], status: IggyErrorCode.featureUnavailable };
    const ctx: IggyRequestContext = { frontend: this.frontend, session: this, user, header: h, afterReplyWritten: (fn) => slot.onWritten(fn), fileSlices: this.fileSlices };
    let replyBody: ReplyChunk[];
    let transientResult = false;
    try {
      const reply = await handler(ctx, decoded.value.request as never);
      replyBody = encodeReplyChunks(code, reply as never);
      if (dedupe || spec.resultFramed) this.frontend.nextCommit();
    } catch (error) {
      if (!(error instanceof IggyFailure) && !isQuartetError(error)) throw error;
      const iggyCode = iggyCodeOf(error);
      this.context.logger.debug('iggy request failed', { code, iggyCode, error });
      if (!spec.resultFramed || (error instanceof IggyFailure && error.mode === 'status')) return { body: [], status: iggyCode };
      replyBody = [encodeResultError(iggyCode)];
      transientResult = iggyCode === IggyErrorCode.transientNotCommitted || iggyCode === IggyErrorCode.transientNotAccepted;
    }
    // A transient refusal (57/58: shutting down, not ready) is retried with the same request: not remembered.
    if (dedupe && !transientResult) this.frontend.rememberReply(this.clientId, user.id, h.request, h.operation, h.requestChecksum, replyBody.filter((c): c is Buffer => !isFileSlice(c)));
    return { body: replyBody };
  }

  /** LoginRegister (40) / LoginRegisterWithPat (45), operation Register (server notes §1, §5). */
  private async login(h: RequestHeader, body: Buffer): Promise<Answer> {
    const parsed = decodeLoginRegisterBody(body);
    if (typeof parsed === 'string') return { evict: EvictionReason.malformedLogin };
    if (!isProtocolCompatible(parsed.versionInfo.protocolVersion)) return { evict: EvictionReason.incompatibleProtocol };
    const users = this.frontend.broker.users;
    if (parsed.password === null && parsed.token === null) return { evict: EvictionReason.malformedLogin };
    // Failed logins are throttled per name and per peer (core/auth-throttle.ts): the check may
    // wait, and a locked-out name or peer is refused as a wrong password or token would be.
    const throttle = this.frontend.broker.authThrottle;
    const claimed = parsed.password?.username ?? null;
    const wrong = parsed.password !== null ? EvictionReason.invalidCredentials : EvictionReason.invalidToken;
    if (!(await throttle.admit(claimed, this.address, 'iggy')).admitted) {
      throttle.failed(claimed, this.address, 'iggy');
      return { evict: wrong };
    }
    let user: User;
    let code: CommandCode;
    try {
      if (parsed.password !== null) {
        code = CommandCode.loginRegister;
        user = await users.verifyPassword(parsed.password.username, parsed.password.password);
      } else {
        code = CommandCode.loginRegisterWithPat;
        user = users.verifyToken(parsed.token!.token);
      }
    } catch (error) {
      if (!isQuartetError(error)) throw error;
      if (error.code === 'user_inactive' || error.code === 'invalid_token' || error.code === 'invalid_credentials') throttle.failed(claimed, this.address, 'iggy');
      if (error.code === 'user_inactive') return { evict: EvictionReason.userInactive };
      if (error.code === 'invalid_token') return { evict: EvictionReason.invalidToken };
      if (error.code === 'invalid_credentials') return { evict: wrong };
      throw error;
    }
    if (claimed !== null) throttle.succeeded(claimed);
    if (this.pipeline.stopping) return { close: true };
    // A client id belongs to the user who registered it first (and its remembered replies).
    if (this.frontend.ownedByAnotherUser(h.client, user.id)) return { evict: EvictionReason.sessionError };
    if (this.session !== 0n) this.frontend.logout(this);
    this.clientId = h.client;
    const session = this.frontend.register(this, user);
    this.context.authenticated();
    return {
      body: encodeReply(code, { userId: user.id, session, serverProtocolVersion: iggyProtocolVersion, serverVersion: this.frontend.serverVersion }),
    };
  }

  // --- ending --------------------------------------------------------------------------------

  private evictionFrame(client: bigint, reason: EvictionReason): Buffer {
    return encodeEviction({
      client: client === 0n ? 1n : client,
      reason,
      ...(reason === EvictionReason.incompatibleProtocol ? { serverProtocolVersion: iggyProtocolVersion, serverProtocolVersionMin: iggyProtocolVersionMin } : {}),
    });
  }

  /** Evicts after the reply in flight, if any (a reply going out with sendfile finishes first). */
  private sendEviction(client: bigint, reason: EvictionReason): void {
    this.endGracefully(this.evictionFrame(client, reason));
  }

  /**
   * Closes after the replies already written or in flight, with `last` (an eviction) written
   * last: FIN, not a reset that would throw them away; a peer that never reads is cut off after
   * the eviction drain time.
   */
  private endGracefully(last?: Buffer): void {
    this.pipeline.endWith(last, () => this.frontend.removeConnection(this));
  }
}

/** Bytes of a frame header: exported for tests that build frames by hand. */
export const iggyHeaderBytes = headerBytes;
export type { RequestDone };

/** SendMessages requests big enough to straddle socket chunks are assembled in pooled buffers. */
const pooledSendBytesMin = 64 * 1024;

function largeSendLease(size: number, header: Buffer): BufferLease | null {
  return size >= pooledSendBytesMin && header[operationOffset] === Operation.sendMessages ? new BufferLease() : null;
}
