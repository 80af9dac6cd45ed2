// One Iggy client connection: socket → IggyFramer → header rules → session gate → handler →
// reply frame, in order. Requests of one connection run one at a time in arrival order (replies
// to pipelined requests come back in order, and pipelined sends append in order); at most
// `inFlightRequestsMax` framed requests wait, beyond that the socket is paused until the queue
// drains. Nothing a peer sends can throw out of here: an unexpected exception evicts (reason 12)
// and closes this connection only.
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
import { canSendFiles, isFileSlice, writeReply, type ReplyChunk } from '../file-replies.js';
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
  private readonly queue: Frame[] = [];
  private draining = false;
  private closing = false;
  private ended = false;
  private paused = false;
  private idleWaiters: Array<() => void> = [];
  /** Poll replies may carry file slices (plain TCP and the addon: file-replies.ts). */
  private readonly fileSlices: boolean;
  /** A reply with file slices is being sent: nothing else may be written meanwhile. */
  private sendingFiles = false;
  /** An eviction that came while `sendingFiles`: sent once that reply is out. */
  private deferredEviction: (() => void) | null = null;
  /**
   * Set by a framing error: the input is over, the frames queued before the bad one are still
   * handled and answered, and then this closes or evicts the connection.
   */
  private afterQueued: (() => void) | null = null;
  /** Counts 'drain' events and answered requests: the output moving (cutOffIfOutputStalls). */
  private outputProgress = 0;

  constructor(
    private readonly frontend: IggyFrontend,
    private readonly socket: Socket,
    private readonly context: ConnectionContext,
  ) {
    this.connectionId = context.id;
    this.address = context.remote;
    this.localHost = socket.localAddress ?? '';
    this.lastActivityMs = frontend.clock.now();
    this.fileSlices = canSendFiles(socket);
    this.framer = new IggyFramer({ frameBytesMax: frontend.settings.frameBytesMax, frameLease: largeSendLease, reusedChunks: context.readInto !== undefined });
    frontend.addConnection(this);
    if (context.readInto) {
      // The body of a large SendMessages frame is read straight into its pooled buffer.
      context.readInto((chunk) => this.onData(chunk), {
        target: () => (this.closing || this.ended ? null : this.framer.directTarget(directReadBytesMin)),
        filled: (target, bytes) => this.onFrames(() => this.framer.pushDirect(target, bytes)),
      });
    } else {
      socket.on('data', (chunk: Buffer) => this.onData(chunk));
    }
    socket.on('drain', () => {
      this.outputProgress++;
      this.maybeResume();
    });
    socket.once('end', () => this.onInputEnded());
    socket.once('close', () => {
      this.ended = true;
      this.frontend.removeConnection(this);
      this.dropQueued();
      this.framer.dispose();
      this.wakeIdle();
    });
  }

  // --- ConnectionHandle ------------------------------------------------------------------------

  close(reason: CloseReason): void {
    if (this.closing) return;
    this.closing = true;
    this.context.logger.debug('closing iggy connection', { reason });
    this.socket.pause();
    this.dropQueued();
    if (!this.draining) this.wakeIdle();
  }

  whenIdle(): Promise<void> {
    if (!this.draining || this.ended) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  evict(reason: EvictionReason): void {
    this.sendEviction(this.clientId === 0n ? 1n : this.clientId, reason);
  }

  /** Bytes of requests read and not yet handled: framed ones waiting, and a frame being assembled. */
  get heldRequestBytes(): number {
    let bytes = this.framer.bufferedBytes;
    for (const frame of this.queue) bytes += frame.header.length + frame.body.length;
    return bytes;
  }

  // --- input -----------------------------------------------------------------------------------

  private onData(chunk: Buffer): void {
    this.onFrames(() => this.framer.push(chunk));
  }

  /** Queues the frames `frame()` completes (a push of a chunk, or of bytes read in place). */
  private onFrames(frame: () => FramerResult[]): void {
    if (this.closing || this.ended || this.afterQueued !== null) return;
    // The limits in force when a frame's header completes: a login's limits until it succeeds.
    this.framer.frameBytesMax = this.loggedIn ? this.frontend.settings.frameBytesMax : Math.min(unauthenticatedFrameBytesMax, this.frontend.settings.frameBytesMax);
    try {
      for (const result of frame()) {
        if (!result.ok) {
          this.onFramingError(result.header, result.reason);
          break;
        }
        this.queue.push(result.frame);
      }
      if (this.queue.length >= this.queuedRequestsMax() && !this.paused) {
        this.paused = true;
        this.socket.pause();
      }
      if (!this.draining) void this.drain();
    } catch (error) {
      this.fail(error);
    }
  }

  /**
   * The peer's FIN (the listener leaves the socket half-open): the frames it sent are answered, and
   * then the connection ends, as after a framing error; bytes of an unfinished frame are dropped.
   */
  private onInputEnded(): void {
    if (this.closing || this.ended || this.afterQueued !== null) return;
    if (this.draining || this.queue.length > 0) {
      this.afterQueued = () => this.endGracefully();
      this.cutOffIfOutputStalls();
    } else {
      this.endGracefully();
    }
  }

  /**
   * A half-closed client that stops reading would hold the connection (and the replies it pins)
   * forever while its replies wait for the socket. Checked every halfClosedStallMs: when output is
   * waiting for the peer (bytes in the socket's buffer, or a reply going out with sendfile) and
   * none of it moved since the last check (the buffer did not shrink, no 'drain', no request
   * answered, no sendfile bytes), the connection is destroyed. A request still being handled
   * with nothing waiting to go out is not a stall.
   */
  private cutOffIfOutputStalls(): void {
    let seen = { progress: this.outputProgress, unsent: this.socket.writableLength };
    const timer = setInterval(() => {
      if (this.ended || this.socket.destroyed) {
        clearInterval(timer);
        return;
      }
      const now = { progress: this.outputProgress, unsent: this.socket.writableLength };
      const waitingForPeer = now.unsent > 0 || this.sendingFiles;
      if (waitingForPeer && now.progress === seen.progress && now.unsent >= seen.unsent) {
        clearInterval(timer);
        this.context.logger.debug('iggy client half-closed and stopped reading; closing', { queued: this.queue.length, unsent: now.unsent });
        this.destroy();
        return;
      }
      seen = now;
    }, this.frontend.settings.halfClosedStallMs).unref();
    this.socket.once('close', () => clearInterval(timer));
  }

  /** Reads stop; what was queued before the bad frame is answered, then the connection goes (drain). */
  private onFramingError(header: Buffer, reason: string): void {
    this.context.logger.debug('iggy framing error', { reason });
    this.socket.pause();
    const h = decodeRequestHeader(header);
    const rejection = validateRequestHeader(h, this.framer.frameBytesMax);
    this.afterQueued = rejection?.action === 'evict' && h.client !== 0n ? () => this.sendEviction(h.client, rejection.eviction) : () => this.endGracefully();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0 && !this.closing && !this.ended) {
        const frame = this.queue.shift()!;
        let stop: boolean;
        try {
          stop = await this.process(frame);
        } finally {
          // Handled: nothing references the request's bytes any more (the append has settled).
          this.framer.release(frame);
        }
        if (stop) break;
        this.outputProgress++;
        if (this.socket.writableNeedDrain) await this.drained();
        this.maybeResume();
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.draining = false;
      const then = this.queue.length === 0 ? this.afterQueued : null;
      if (then !== null && !this.closing && !this.ended) {
        this.afterQueued = null;
        then();
      }
      this.wakeIdle();
      if (this.closing && !this.ended) this.socket.end();
    }
  }

  /** Resolves on 'drain' or 'close', whichever comes first, removing the other listener. */
  private drained(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done).off('close', done);
        resolve();
      };
      this.socket.once('drain', done).once('close', done);
    });
  }

  private get loggedIn(): boolean {
    return this.userId !== null && this.session !== 0n;
  }

  /** Framed requests that may wait before reading pauses: one before login (it holds its frame's bytes). */
  private queuedRequestsMax(): number {
    return this.loggedIn ? this.frontend.settings.inFlightRequestsMax : 1;
  }

  private maybeResume(): void {
    if (this.paused && this.queue.length < Math.ceil(this.queuedRequestsMax() / 2) && !this.closing && this.afterQueued === null) {
      this.paused = false;
      this.socket.resume();
    }
  }

  /** Handles one frame; true when the connection is finished (evicted or closed). */
  private async process(frame: Frame): Promise<boolean> {
    const h = decodeRequestHeader(frame.header);
    const headerProblem = validateRequestHeader(h, this.frontend.settings.frameBytesMax);
    if (headerProblem !== null && headerProblem.action !== 'status') return this.reject(h, headerProblem);
    const resolved = headerProblem ?? resolveCommand(h);
    const name = 'code' in resolved ? commandSpec(resolved.code).name : 'invalid';
    const done = this.context.beginRequest(name);
    const afterWrite: (() => void)[] = [];
    let answer: Answer;
    try {
      answer = 'code' in resolved ? await this.answer(h, frame.body, resolved.code, afterWrite) : this.rejectionAnswer(resolved, h);
    } catch (error) {
      done('error');
      runAll(afterWrite);
      throw error;
    }
    done('status' in answer && answer.status ? 'error' : 'body' in answer ? 'ok' : 'error');
    if ('evict' in answer || 'close' in answer) {
      runAll(afterWrite);
      if ('evict' in answer) this.sendEviction(h.client, answer.evict);
      else this.endGracefully();
      return true;
    }
    const reply = encodeReplyFrame(h, answer.status ? [] : answer.body, { session: answer.session ?? this.session, commit: this.frontend.commit, status: answer.status ?? 0 });
    if (reply.some(isFileSlice)) await this.writeWithFiles(reply, afterWrite);
    else this.write(reply as Buffer[], afterWrite);
    return false;
  }

  private reject(h: RequestHeader, r: RequestRejection): boolean {
    const a = this.rejectionAnswer(r);
    if ('evict' in a) this.sendEviction(h.client, a.evict);
    else this.endGracefully();
    return true;
  }

  private rejectionAnswer(r: RequestRejection, h?: RequestHeader): Answer {
    this.context.logger.debug('iggy request refused', { reason: r.reason, action: r.action });
    if (r.action === 'close') return { close: true };
    if (r.action === 'evict') return { evict: r.eviction };
    // Before login every non-replicated code but Ping is Unauthenticated, known or not (notes §5).
    if (h?.operation === Operation.nonReplicated && !this.loggedIn) return { body: [], status: IggyErrorCode.unauthenticated };
    return { body: [], status: r.status };
  }

  private async answer(h: RequestHeader, body: Buffer, code: CommandCode, afterWrite: (() => void)[]): Promise<Answer> {
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
    const ctx: IggyRequestContext = { frontend: this.frontend, session: this, user, header: h, afterReplyWritten: (fn) => afterWrite.push(fn), fileSlices: this.fileSlices };
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
    let user: User;
    let code: CommandCode;
    try {
      if (parsed.password !== null) {
        code = CommandCode.loginRegister;
        user = await users.verifyPassword(parsed.password.username, parsed.password.password);
      } else if (parsed.token !== null) {
        code = CommandCode.loginRegisterWithPat;
        user = users.verifyToken(parsed.token.token);
      } else {
        return { evict: EvictionReason.malformedLogin };
      }
    } catch (error) {
      if (!isQuartetError(error)) throw error;
      if (error.code === 'user_inactive') return { evict: EvictionReason.userInactive };
      if (error.code === 'invalid_token') return { evict: EvictionReason.invalidToken };
      if (error.code === 'invalid_credentials') return { evict: parsed.password !== null ? EvictionReason.invalidCredentials : EvictionReason.invalidToken };
      throw error;
    }
    if (this.ended || this.closing) return { close: true };
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

  // --- output ----------------------------------------------------------------------------------

  /** Writes one reply; `afterWrite` runs once it has been written out (or dropped). */
  private write(chunks: Buffer[], afterWrite: (() => void)[] = []): void {
    if (this.ended || this.socket.destroyed || chunks.length === 0) {
      runAll(afterWrite);
      return;
    }
    this.socket.cork();
    const last = chunks.length - 1;
    for (let i = 0; i < last; i++) this.socket.write(chunks[i]!);
    if (afterWrite.length > 0) this.socket.write(chunks[last]!, () => runAll(afterWrite));
    else this.socket.write(chunks[last]!);
    process.nextTick(() => this.socket.uncork());
  }

  /**
   * Writes a reply that references file slices (sendfile) and waits until it is out: nothing else
   * is written meanwhile (requests run one at a time; an eviction waits). A failure cuts the reply
   * short, so the connection is destroyed.
   */
  private async writeWithFiles(chunks: ReplyChunk[], afterWrite: (() => void)[]): Promise<void> {
    if (this.ended || this.socket.destroyed) {
      runAll(afterWrite);
      return;
    }
    this.sendingFiles = true;
    try {
      await writeReply(this.socket, chunks, () => this.outputProgress++);
    } catch (error) {
      this.context.logger.debug('iggy reply with file slices failed; closing', { error });
      this.destroy();
    } finally {
      this.sendingFiles = false;
      runAll(afterWrite);
      const eviction = this.deferredEviction;
      this.deferredEviction = null;
      eviction?.();
    }
  }

  /** Drops frames not yet handled (closing): pooled ones go back to the pool. */
  private dropQueued(): void {
    for (const frame of this.queue.splice(0)) this.framer.release(frame);
  }

  private sendEviction(client: bigint, reason: EvictionReason): void {
    if (this.ended || this.socket.destroyed) return;
    if (this.sendingFiles) {
      // The eviction follows the reply being sent; a peer that never reads must not keep the
      // socket (and what the reply pins) open: the same 5 s as below, from now.
      this.closing = true;
      if (this.deferredEviction === null) {
        this.deferredEviction = () => this.sendEviction(client, reason);
        setTimeout(() => this.socket.destroy(), evictionDrainMs).unref();
      }
      return;
    }
    const frame = encodeEviction({
      client: client === 0n ? 1n : client,
      reason,
      ...(reason === EvictionReason.incompatibleProtocol ? { serverProtocolVersion: iggyProtocolVersion, serverProtocolVersionMin: iggyProtocolVersionMin } : {}),
    });
    this.endGracefully(frame);
  }

  private destroy(): void {
    this.closing = true;
    this.dropQueued();
    this.socket.destroy();
  }

  /**
   * Closes after the replies already written (the frames before the one that closes it were
   * answered), with `last` (an eviction) written last: FIN, not a reset that would throw them
   * away; a peer that never reads is cut off after the eviction drain time.
   */
  private endGracefully(last?: Buffer): void {
    this.closing = true;
    this.dropQueued();
    this.frontend.removeConnection(this);
    if (last === undefined) this.socket.end();
    else this.socket.end(last);
    setTimeout(() => this.socket.destroy(), evictionDrainMs).unref();
  }

  private fail(error: unknown): void {
    this.context.logger.error('iggy connection failed; evicting', { error });
    this.sendEviction(this.clientId === 0n ? 1n : this.clientId, EvictionReason.sessionError);
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
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

function runAll(fns: (() => void)[]): void {
  for (const fn of fns.splice(0)) fn();
}
