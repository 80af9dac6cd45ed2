// IggyClient: a promise-based client for Apache Iggy binary protocol 0.11.0 over TCP or TLS.
//
// Session (specs/iggy-binary-protocol-0.11.md "Connection lifecycle", "Request numbering"):
// - Every registration mints a fresh non-zero u128 `client` id and sends LoginRegister (40) or
//   LoginRegisterWithPat (45) on operation Register with session 0 and request 0; the body starts
//   with ClientVersionInfo (protocol 0.11.0 packed = 11264, sdk "quartet-ts", our version).
// - The login reply is result-framed (server notes §4: `00000000` + payload, pinned by the
//   reference server and Node SDK tests); it carries the session epoch echoed on every request.
// - Metadata operations (128..149) take the next request number (1, 2, 3, ...); partition-plane
//   and non-replicated requests send the current counter value without advancing it.
// - Only Ping works before login. A login answered TransientNotCommitted (57) is replayed on the
//   same connection with the same client id; one answered TransientNotAccepted (58) is replayed
//   with a fresh client id (core/server/src/auth.rs::transient_login_code).
//
// Connection: requests are pipelined on one connection and matched to replies in order
// (./connection.ts). When the connection drops, in-flight requests fail with the retriable
// IggyConnectionError, and the client reconnects with exponential backoff and logs in again with
// the same credentials (a new client id and session). Requests made while it reconnects wait for
// the new session, within their timeout. Evictions for bad credentials, tokens, versions or login
// bodies are terminal: no reconnect, the error is raised as IggyEvictedError.

import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import {
  CommandCode,
  Operation,
  commandName,
  commandSpec,
  consumerGroupCommands,
  consumerOffsetCommands,
  decodeReply,
  encodeRequestFrame,
  iggyProtocolVersion,
  isMetadataOperation,
  streamCommands,
  systemCommands,
  tokenCommands,
  topicCommands,
  userCommands,
  IggyErrorCode,
  polledBuffers,
  type OptionEntry,
  type Partitioning,
  type Permissions,
  type ReplyOf,
  type RequestOf,
} from '../../protocols/iggy/codec/index.js';
import { BufferLease } from '../../base/buffer-pool.js';
import { quartetVersion } from '../../base/version.js';
import { IggyConnection, type Exchange } from './connection.js';
import {
  IggyClosedError,
  IggyConnectionError,
  IggyError,
  IggyEvictedError,
  IggyProtocolError,
  IggyTimeoutError,
  isIggyClientError,
  isTerminalEviction,
  type IggyClientError,
} from './errors.js';
import { decodePolledRecords, encodeMessages, encodeSendBatch, type PolledMessages, type PreparedMessage, type SendMessage } from './messages.js';
import {
  type Id,
  toIdentifier,
  type IggyCredentials,
  type ConsumerInput,
  toConsumer,
  type PollStrategyInput,
  toPollingStrategy,
  type PartitioningInput,
  toPartitioning,
  type TopicOptions,
  topicOptionsBlock,
  groupRef,
  offsetRef,
  userIdNumber,
  splitAddr,
  sendMetadata,
  type SendMetadata,
} from './inputs.js';

import { backoffDelayMs } from '../common/backoff.js';
import type { ReconnectOptions, IggyClientOptions, LoginResult, RequestOptions, SendResult, IggyClientState } from './options.js';

export const sdkName = 'quartet-ts';
export const sdkVersion = quartetVersion;

interface Session {
  conn: IggyConnection;
  clientId: bigint;
  /** 0 until a Register commits. */
  session: bigint;
  /** The next metadata request number (non-metadata requests send it without advancing). */
  nextRequest: bigint;
  login: LoginResult | null;
  loggedInWith: IggyCredentials | null;
  /** The last request header `timestamp` (µs) sent on this connection; see encode. */
  lastTimestamp: bigint;
}

/** Bounds: login replays on TransientNotCommitted (57) and TransientNotAccepted (58). */
const loginReplaysMax = 3;

export function mintClientId(): bigint {
  for (;;) {
    const b = randomBytes(16);
    const id = b.readBigUInt64LE(0) | (b.readBigUInt64LE(8) << 64n);
    if (id !== 0n) return id;
  }
}

/** The SDK's default reply frame limit (IggyClientOptions.frameBytesMax). */
export const replyFrameBytesMaxDefault = 256 * 1024 * 1024;

/**
 * Events: 'connect' (LoginResult | null), 'disconnect' (IggyClientError), 'reconnect' (attempt
 * number, delay ms). No 'error' event: failures surface on the requests.
 */
export class IggyClient extends EventEmitter {
  readonly host: string;
  readonly port: number;
  private readonly options: Required<Pick<IggyClientOptions, 'requestTimeoutMs' | 'connectTimeoutMs' | 'pingIntervalMs' | 'inflightRequestsMax' | 'frameBytesMax'>> &
    IggyClientOptions;
  private readonly reconnect: Required<ReconnectOptions> | null;
  private credentials: IggyCredentials | null;
  private current: Session | null = null;
  private sessionPromise: Promise<Session> | null = null;
  private everConnected = false;
  private closed = false;
  private cancelSleep: (() => void) | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private lastSendMs = 0;
  private terminal: IggyClientError | null = null;

  constructor(options: IggyClientOptions = {}) {
    super();
    const [addrHost, addrPort] = splitAddr(options.addr ?? '127.0.0.1:8090');
    this.host = options.host ?? addrHost;
    this.port = options.port ?? addrPort;
    this.options = {
      requestTimeoutMs: 30_000,
      connectTimeoutMs: 10_000,
      pingIntervalMs: 5_000,
      inflightRequestsMax: 256,
      frameBytesMax: replyFrameBytesMaxDefault,
      ...options,
    };
    this.reconnect =
      options.reconnect === false ? null : { attemptsMax: 10, backoffMinMs: 100, backoffMaxMs: 5_000, ...(options.reconnect ?? {}) };
    this.credentials = options.credentials ?? null;
  }

  get state(): IggyClientState {
    if (this.closed) return 'closed';
    if (this.current !== null) return 'ready';
    if (this.sessionPromise !== null) return this.everConnected ? 'reconnecting' : 'connecting';
    return 'idle';
  }

  /** The login of the current session, or null (not connected, or not logged in). */
  get loginInfo(): LoginResult | null {
    return this.current?.login ?? null;
  }

  /** Connects (and logs in when credentials were given). Idempotent while connected. */
  async connect(): Promise<LoginResult | null> {
    this.terminal = null;
    const s = await this.ensureSession(true);
    return s.login;
  }

  /** Logs in with a username and password; they are reused after every reconnect. */
  login(username: string, password: string): Promise<LoginResult> {
    return this.loginWith({ username, password });
  }

  /** Logs in with a personal access token; it is reused after every reconnect. */
  loginWithToken(token: string): Promise<LoginResult> {
    return this.loginWith({ token });
  }

  private async loginWith(creds: IggyCredentials): Promise<LoginResult> {
    this.terminal = null;
    this.credentials = creds;
    const s = await this.ensureSession(true);
    if (s.loggedInWith !== creds) await this.register(s, creds);
    return s.login!;
  }

  /** Logs out (LogoutUser 39); the connection stays open and no re-login happens after a reconnect. */
  async logout(options?: RequestOptions): Promise<void> {
    const s = await this.ensureSession();
    await this.callOn(Promise.resolve(s), CommandCode.logoutUser, {}, options);
    this.credentials = null;
    s.session = 0n;
    s.login = null;
    s.loggedInWith = null;
  }

  /** Closes the connection; pending and later requests fail with IggyClosedError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopPing();
    this.cancelSleep?.();
    const s = this.current;
    this.current = null;
    this.sessionPromise = null;
    s?.conn.destroy(new IggyClosedError());
  }

  // -------------------------------------------------------------------------------------------
  // The request path

  /**
   * Sends one command and resolves with its decoded reply. The generic entry point behind every
   * typed method; useful for commands this class does not wrap.
   */
  call<C extends CommandCode>(code: C, request: RequestOf<C>, options?: RequestOptions): Promise<ReplyOf<C>> {
    return this.callOn(this.ensureSession(), code, request, options);
  }

  private callOn<C extends CommandCode>(session: Promise<Session>, code: C, request: RequestOf<C>, options?: RequestOptions): Promise<ReplyOf<C>> {
    const name = commandName(code) ?? `command ${code}`;
    const timeoutMs = options?.timeoutMs ?? this.options.requestTimeoutMs;
    return new Promise<ReplyOf<C>>((resolve, reject) => {
      let settled = false;
      let sent: { conn: IggyConnection; exchange: Exchange } | null = null;
      const settle = (err: Error | null, value?: ReplyOf<C>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err !== null) reject(err);
        else resolve(value as ReplyOf<C>);
      };
      const timer = setTimeout(() => {
        if (sent !== null && !sent.conn.withdraw(sent.exchange)) sent.exchange.abandoned = true;
        settle(new IggyTimeoutError(name, timeoutMs));
      }, timeoutMs);
      session.then(
        (s) => {
          if (settled) return;
          let frame: Buffer[];
          let requestNo: bigint;
          let timestamp: bigint;
          try {
            ({ frame, requestNo, timestamp } = this.encode(s, code, request));
          } catch (err) {
            settle(err instanceof Error ? err : new Error(String(err)));
            return;
          }
          const exchange: Exchange = {
            name,
            frame,
            request: requestNo,
            operation: commandSpec(code).operation,
            timestamp,
            abandoned: false,
            onError: (err) => settle(err),
            onReply: (header, body) => {
              if (header.status !== 0) {
                settle(new IggyError(header.status, name));
                return;
              }
              const decoded = decodeReply(code, body);
              if (!decoded.ok) settle(new IggyProtocolError(`${name}: ${decoded.reason}`));
              else if (decoded.value.rejected) settle(new IggyError(decoded.value.code, name));
              else settle(null, decoded.value.value);
            },
          };
          sent = { conn: s.conn, exchange };
          this.lastSendMs = performance.now();
          s.conn.send(exchange);
        },
        (err: unknown) => settle(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }

  /** Numbers and frames a request for session `s` (see "Request numbering"). */
  private encode<C extends CommandCode>(s: Session, code: C, request: RequestOf<C>): { frame: Buffer[]; requestNo: bigint; timestamp: bigint } {
    const operation = commandSpec(code).operation;
    let requestNo: bigint;
    let session = s.session;
    if (operation === Operation.register) {
      requestNo = 0n;
      session = 0n;
    } else if (isMetadataOperation(operation)) {
      requestNo = s.nextRequest++;
    } else {
      requestNo = s.nextRequest;
    }
    // The header timestamp is informational to the server, which echoes it: the send time in µs,
    // kept strictly increasing per connection, tells apart the replies of requests that share a
    // request number and operation (non-metadata requests between two metadata ones).
    const now = BigInt(Date.now()) * 1000n;
    s.lastTimestamp = now > s.lastTimestamp ? now : s.lastTimestamp + 1n;
    const frame = encodeRequestFrame(code, request, {
      client: s.clientId,
      request: requestNo,
      session,
      timestamp: s.lastTimestamp,
      stampChecksum: this.options.requestChecksums ?? true,
    });
    return { frame, requestNo, timestamp: s.lastTimestamp };
  }

  /** The current session, or a (re)connection in progress; `explicit`: connect() was called. */
  private ensureSession(explicit = false): Promise<Session> {
    if (this.closed) return Promise.reject(new IggyClosedError());
    if (this.terminal !== null) return Promise.reject(this.terminal);
    if (this.current !== null) return Promise.resolve(this.current);
    if (this.sessionPromise === null) {
      if (this.everConnected && this.reconnect === null && !explicit) {
        return Promise.reject(new IggyConnectionError(`not connected to ${this.host}:${this.port} (reconnect is off; call connect())`));
      }
      const p = this.establish();
      this.sessionPromise = p;
      p.catch(() => {
        if (this.sessionPromise === p) this.sessionPromise = null;
      });
    }
    return this.sessionPromise;
  }

  /** Opens a connection and logs in, retrying with backoff when reconnecting is on. */
  private async establish(): Promise<Session> {
    const attemptsMax = this.reconnect?.attemptsMax ?? 1;
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new IggyClosedError();
      try {
        const conn = await IggyConnection.open({
          host: this.host,
          port: this.port,
          tls: this.options.tls,
          connectTimeoutMs: this.options.connectTimeoutMs,
          frameBytesMax: this.options.frameBytesMax,
          inflightRequestsMax: this.options.inflightRequestsMax,
        });
        if (this.closed) {
          conn.destroy(new IggyClosedError());
          throw new IggyClosedError();
        }
        const s: Session = { conn, clientId: mintClientId(), session: 0n, nextRequest: 1n, login: null, loggedInWith: null, lastTimestamp: 0n };
        conn.onClose((err) => this.onConnectionClosed(s, err));
        if (this.credentials !== null) {
          try {
            await this.register(s, this.credentials);
          } catch (err) {
            conn.destroy();
            throw err;
          }
        }
        this.current = s;
        this.everConnected = true;
        this.startPing();
        this.emit('connect', s.login);
        return s;
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        if (this.closed || e instanceof IggyClosedError) throw new IggyClosedError();
        // A refused login will be refused again: stop here.
        if (e instanceof IggyError && !(e instanceof IggyEvictedError && !isTerminalEviction(e.reason))) {
          if (e instanceof IggyEvictedError) this.terminal = e;
          throw e;
        }
        if (attempt >= attemptsMax) throw e;
        const delayMs = this.backoffMs(attempt);
        this.emit('reconnect', attempt, delayMs);
        await this.sleep(delayMs);
      }
    }
  }

  /** LoginRegister / LoginRegisterWithPat on `s` with a fresh client id; binds the session. */
  private async register(s: Session, creds: IggyCredentials): Promise<void> {
    const versionInfo = {
      protocolVersion: this.options.protocolVersion ?? iggyProtocolVersion,
      sdkName: this.options.sdkName ?? sdkName,
      sdkVersion: this.options.sdkVersion ?? sdkVersion,
    };
    // A registration has a fresh client id. TransientNotCommitted (57) leaves the outcome unknown:
    // the register may have committed, so the replay keeps this connection and this client id and
    // rebinds the same client-table entry (a new id would orphan it). TransientNotAccepted (58)
    // says nothing was committed: the replay may take a new identity.
    let mint = true;
    for (let replay = 0; ; replay++) {
      if (mint) s.clientId = mintClientId();
      s.session = 0n;
      s.nextRequest = 1n;
      s.login = null;
      s.loggedInWith = null;
      try {
        const reply =
          'token' in creds
            ? await this.callOn(Promise.resolve(s), CommandCode.loginRegisterWithPat, { versionInfo, token: creds.token, context: null })
            : await this.callOn(Promise.resolve(s), CommandCode.loginRegister, { versionInfo, username: creds.username, password: creds.password, context: null });
        if (reply.session === 0n) throw new IggyProtocolError('login reply carries session 0');
        s.session = reply.session;
        s.login = { userId: reply.userId, session: reply.session, clientId: s.clientId, serverProtocolVersion: reply.serverProtocolVersion, serverVersion: reply.serverVersion };
        s.loggedInWith = creds;
        return;
      } catch (err) {
        if (!(err instanceof IggyError) || err instanceof IggyEvictedError || replay >= loginReplaysMax) throw err;
        if (err.code === IggyErrorCode.transientNotCommitted) mint = false;
        else if (err.code === IggyErrorCode.transientNotAccepted) mint = true;
        else throw err;
      }
    }
  }

  private onConnectionClosed(s: Session, err: IggyClientError): void {
    if (this.current !== s) return;
    this.current = null;
    this.sessionPromise = null;
    this.stopPing();
    this.emit('disconnect', err);
    if (this.closed) return;
    if (err instanceof IggyEvictedError && isTerminalEviction(err.reason)) {
      this.terminal = err;
      return;
    }
    // Reconnect now (not on the next request) so consumers and producers resume on their own.
    if (this.reconnect !== null) this.ensureSession().catch(() => {});
  }

  private backoffMs(attempt: number): number {
    return backoffDelayMs(attempt, this.reconnect ?? { backoffMinMs: 100, backoffMaxMs: 5_000 }, this.options.random);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.cancelSleep = done;
    });
  }

  private startPing(): void {
    const interval = this.options.pingIntervalMs;
    if (interval <= 0 || this.pingTimer !== null) return;
    this.pingTimer = setInterval(() => {
      if (this.current === null || performance.now() - this.lastSendMs < interval) return;
      this.ping().catch(() => {});
    }, interval);
    this.pingTimer.unref();
  }

  private stopPing(): void {
    if (this.pingTimer !== null) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  // -------------------------------------------------------------------------------------------
  // System

  async ping(options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.ping, {}, options);
  }

  getStats(options?: RequestOptions): Promise<systemCommands.Stats> {
    return this.call(CommandCode.getStats, {}, options);
  }

  getMe(options?: RequestOptions): Promise<systemCommands.ClientDetails | null> {
    return this.call(CommandCode.getMe, {}, options);
  }

  getClient(clientId: number, options?: RequestOptions): Promise<systemCommands.ClientDetails | null> {
    return this.call(CommandCode.getClient, { clientId }, options);
  }

  getClients(options?: RequestOptions): Promise<systemCommands.ClientInfo[]> {
    return this.call(CommandCode.getClients, {}, options);
  }

  /** A raw ZIP archive. compression 1 = Stored ... 6 = Xz; types 100 = All. */
  getSnapshot(request: { compression?: number; types?: number[] } = {}, options?: RequestOptions): Promise<Buffer> {
    return this.call(CommandCode.getSnapshot, { compression: request.compression ?? 2, snapshotTypes: request.types ?? [100] }, options);
  }

  getClusterMetadata(options?: RequestOptions): Promise<systemCommands.ClusterMetadata> {
    return this.call(CommandCode.getClusterMetadata, {}, options);
  }

  /** The option catalog of a scope: 'topic' (1), 'stream' (2), 'user' (3). */
  describeOptions(scope: 'topic' | 'stream' | 'user' | number, options?: RequestOptions): Promise<systemCommands.OptionDescriptor[]> {
    const code = typeof scope === 'number' ? scope : { topic: 1, stream: 2, user: 3 }[scope];
    return this.call(CommandCode.describeOptions, { scope: code }, options);
  }

  // -------------------------------------------------------------------------------------------
  // Users

  getUser(userId: Id, options?: RequestOptions): Promise<userCommands.UserDetails | null> {
    return this.call(CommandCode.getUser, { userId: toIdentifier(userId) }, options);
  }

  getUsers(options?: RequestOptions): Promise<userCommands.UserInfo[]> {
    return this.call(CommandCode.getUsers, {}, options);
  }

  createUser(
    user: { username: string; password: string; status?: 'active' | 'inactive'; permissions?: Permissions | null; options?: OptionEntry[] },
    options?: RequestOptions,
  ): Promise<userCommands.UserDetails> {
    return this.call(
      CommandCode.createUser,
      { username: user.username, password: user.password, status: user.status === 'inactive' ? 2 : 1, permissions: user.permissions ?? null, options: user.options ?? [] },
      options,
    );
  }

  async updateUser(userId: Id, update: { username?: string; status?: 'active' | 'inactive'; options?: OptionEntry[] }, options?: RequestOptions): Promise<void> {
    const status = update.status === undefined ? null : update.status === 'inactive' ? 2 : 1;
    await this.call(CommandCode.updateUser, { userId: toIdentifier(userId), username: update.username ?? null, status, options: update.options ?? [] }, options);
  }

  async deleteUser(userId: Id, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.deleteUser, { userId: toIdentifier(userId) }, options);
  }

  async updatePermissions(userId: Id, permissions: Permissions | null, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.updatePermissions, { userId: toIdentifier(userId), permissions }, options);
  }

  async changePassword(userId: Id, currentPassword: string, newPassword: string, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.changePassword, { userId: toIdentifier(userId), currentPassword, newPassword }, options);
    const c = this.credentials;
    // Keep re-login working after a reconnect when we changed our own password.
    if (c !== null && 'username' in c && c.password === currentPassword && this.current?.login?.userId === userIdNumber(userId)) {
      const updated = { username: c.username, password: newPassword };
      this.credentials = updated;
      if (this.current?.loggedInWith === c) this.current.loggedInWith = updated;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Personal access tokens

  /** expiryMicros: lifetime in µs, 0 (default) = never expires. Resolves with the token. */
  async createPersonalAccessToken(name: string, expiryMicros: bigint = 0n, options?: RequestOptions): Promise<string> {
    const reply = await this.call(CommandCode.createPersonalAccessToken, { name, expiry: expiryMicros }, options);
    return reply.token;
  }

  getPersonalAccessTokens(options?: RequestOptions): Promise<tokenCommands.PersonalAccessTokenInfo[]> {
    return this.call(CommandCode.getPersonalAccessTokens, {}, options);
  }

  async deletePersonalAccessToken(name: string, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.deletePersonalAccessToken, { name }, options);
  }

  // -------------------------------------------------------------------------------------------
  // Streams

  getStream(streamId: Id, options?: RequestOptions): Promise<streamCommands.StreamDetails | null> {
    return this.call(CommandCode.getStream, { streamId: toIdentifier(streamId) }, options);
  }

  getStreams(options?: RequestOptions): Promise<streamCommands.StreamInfo[]> {
    return this.call(CommandCode.getStreams, {}, options);
  }

  createStream(name: string, options?: RequestOptions): Promise<streamCommands.StreamInfo> {
    return this.call(CommandCode.createStream, { name, options: [] }, options);
  }

  async updateStream(streamId: Id, name: string, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.updateStream, { streamId: toIdentifier(streamId), name, options: [] }, options);
  }

  async deleteStream(streamId: Id, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.deleteStream, { streamId: toIdentifier(streamId) }, options);
  }

  async purgeStream(streamId: Id, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.purgeStream, { streamId: toIdentifier(streamId) }, options);
  }

  // -------------------------------------------------------------------------------------------
  // Topics

  getTopic(streamId: Id, topicId: Id, options?: RequestOptions): Promise<topicCommands.TopicDetails | null> {
    return this.call(CommandCode.getTopic, { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId) }, options);
  }

  getTopics(streamId: Id, options?: RequestOptions): Promise<readonly topicCommands.TopicInfo[]> {
    return this.call(CommandCode.getTopics, { streamId: toIdentifier(streamId) }, options);
  }

  createTopic(
    topic: { streamId: Id; name: string; partitionsCount?: number; options?: TopicOptions },
    options?: RequestOptions,
  ): Promise<topicCommands.TopicDetails> {
    return this.call(
      CommandCode.createTopic,
      { streamId: toIdentifier(topic.streamId), partitionsCount: topic.partitionsCount ?? 1, name: topic.name, options: topicOptionsBlock(topic.options) },
      options,
    );
  }

  /** Only compression_algorithm, message_expiry and max_topic_size are updatable (patch semantics). */
  async updateTopic(streamId: Id, topicId: Id, update: { name: string; options?: TopicOptions }, options?: RequestOptions): Promise<void> {
    await this.call(
      CommandCode.updateTopic,
      { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId), name: update.name, options: topicOptionsBlock(update.options) },
      options,
    );
  }

  async deleteTopic(streamId: Id, topicId: Id, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.deleteTopic, { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId) }, options);
  }

  async purgeTopic(streamId: Id, topicId: Id, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.purgeTopic, { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId) }, options);
  }

  // -------------------------------------------------------------------------------------------
  // Partitions and segments

  async createPartitions(streamId: Id, topicId: Id, partitionsCount: number, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.createPartitions, { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId), partitionsCount }, options);
  }

  async deletePartitions(streamId: Id, topicId: Id, partitionsCount: number, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.deletePartitions, { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId), partitionsCount }, options);
  }

  /** Deletes the `segmentsCount` oldest sealed segments of a partition. */
  async deleteSegments(streamId: Id, topicId: Id, partitionId: number, segmentsCount: number, options?: RequestOptions): Promise<void> {
    await this.call(
      CommandCode.deleteSegments,
      { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId), partitionId, segmentsCount },
      options,
    );
  }

  // -------------------------------------------------------------------------------------------
  // Messages

  /**
   * Sends one batch; resolves when the server acknowledged it. The messages are encoded straight
   * into the request (no prepared object per message; the producer prepares once instead, for
   * its retries). Bad input (no messages, a bad header or partitioning) rejects.
   */
  async sendMessages(
    request: { streamId: Id; topicId: Id; partitioning?: PartitioningInput; messages: ReadonlyArray<SendMessage | Buffer | string> },
    options?: RequestOptions,
  ): Promise<SendResult> {
    const count = request.messages.length;
    if (count === 0) throw new RangeError('sendMessages needs at least one message');
    const meta = sendMetadata(request.streamId, request.topicId, toPartitioning(request.partitioning ?? 'balanced'));
    const nowMs = Date.now();
    const lease = new BufferLease();
    let batch: Buffer;
    try {
      batch = encodeMessages(request.messages, BigInt(nowMs) * 1000n, nowMs, lease);
    } catch (error) {
      lease.release(); // nothing has seen the buffer
      throw error;
    }
    return this.sendBatch(meta, count, batch, lease, options);
  }

  /** Sends messages already prepared with prepareMessage (the producer's path). */
  async sendPrepared(streamId: Id, topicId: Id, partitioning: Partitioning, messages: readonly PreparedMessage[], options?: RequestOptions): Promise<SendResult> {
    if (messages.length === 0) throw new RangeError('sendMessages needs at least one message');
    const meta = sendMetadata(streamId, topicId, partitioning);
    const lease = new BufferLease();
    let batch: Buffer;
    try {
      batch = encodeSendBatch(messages, lease);
    } catch (error) {
      lease.release(); // nothing has seen the buffer
      throw error;
    }
    return this.sendBatch(meta, messages.length, batch, lease, options);
  }

  /**
   * Sends an encoded batch. Its buffer is pooled (`lease`) and goes back once the server has
   * answered (it has then read every byte). Without an answer (timeout, lost connection) it may
   * still be queued on the socket, so it is left to GC instead.
   */
  private async sendBatch(meta: SendMetadata, messagesCount: number, batch: Buffer, lease: BufferLease, options?: RequestOptions): Promise<SendResult> {
    const reply = await this.call(CommandCode.sendMessages, { ...meta, messagesCount, batch }, options).then(
      (r) => {
        lease.release();
        return r;
      },
      (err: unknown) => {
        if (isIggyClientError(err) && err.kind === 'server') lease.release();
        throw err;
      },
    );
    const c = reply.confirmations[0];
    return { partitionId: c?.partitionId ?? null, baseOffset: c?.baseOffset ?? null };
  }

  /** Polls one partition (or, for a consumer group, the member's next assigned partition). */
  async pollMessages(
    request: {
      streamId: Id;
      topicId: Id;
      /** Default: consumer id 0. */
      consumer?: ConsumerInput;
      /** Required for a single consumer; null lets a consumer group pick. */
      partitionId?: number | null;
      strategy: PollStrategyInput;
      count: number;
      /** Store the offset of the last polled message server-side as part of the poll. */
      autoCommit?: boolean;
    },
    options?: RequestOptions,
  ): Promise<PolledMessages> {
    const reply = await this.call(
      CommandCode.pollMessages,
      {
        consumer: toConsumer(request.consumer ?? { consumer: 0 }),
        streamId: toIdentifier(request.streamId),
        topicId: toIdentifier(request.topicId),
        partitionId: request.partitionId ?? null,
        strategy: toPollingStrategy(request.strategy),
        count: request.count,
        autoCommit: request.autoCommit ?? false,
      },
      options,
    );
    return { partitionId: reply.partitionId, currentOffset: reply.currentOffset, messages: decodePolledRecords(reply.partitionId, polledBuffers(reply)) };
  }

  /** The 0.11 server always answers FeatureUnavailable (5); use the enforce_fsync topic option. */
  async flushUnsavedBuffer(streamId: Id, topicId: Id, partitionId: number, fsync = false, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.flushUnsavedBuffer, { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId), partitionId, fsync }, options);
  }

  // -------------------------------------------------------------------------------------------
  // Consumer offsets

  getConsumerOffset(
    ref: { consumer: ConsumerInput; streamId: Id; topicId: Id; partitionId?: number | null },
    options?: RequestOptions,
  ): Promise<consumerOffsetCommands.ConsumerOffsetInfo | null> {
    return this.call(CommandCode.getConsumerOffset, offsetRef(ref), options);
  }

  /** ack: 'quorum' (default, replicated) or 'none' (leader-local). */
  async storeConsumerOffset(
    ref: { consumer: ConsumerInput; streamId: Id; topicId: Id; partitionId?: number | null; offset: bigint | number; ack?: 'quorum' | 'none' },
    options?: RequestOptions,
  ): Promise<void> {
    await this.call(CommandCode.storeConsumerOffset, { ...offsetRef(ref), offset: BigInt(ref.offset), ack: ref.ack === 'none' ? 0 : 1 }, options);
  }

  async deleteConsumerOffset(
    ref: { consumer: ConsumerInput; streamId: Id; topicId: Id; partitionId?: number | null; ack?: 'quorum' | 'none' },
    options?: RequestOptions,
  ): Promise<void> {
    await this.call(CommandCode.deleteConsumerOffset, { ...offsetRef(ref), ack: ref.ack === 'none' ? 0 : 1 }, options);
  }

  // -------------------------------------------------------------------------------------------
  // Consumer groups

  getConsumerGroup(streamId: Id, topicId: Id, groupId: Id, options?: RequestOptions): Promise<consumerGroupCommands.ConsumerGroupDetails | null> {
    return this.call(CommandCode.getConsumerGroup, groupRef(streamId, topicId, groupId), options);
  }

  getConsumerGroups(streamId: Id, topicId: Id, options?: RequestOptions): Promise<readonly consumerGroupCommands.ConsumerGroupInfo[]> {
    return this.call(CommandCode.getConsumerGroups, { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId) }, options);
  }

  createConsumerGroup(streamId: Id, topicId: Id, name: string, options?: RequestOptions): Promise<consumerGroupCommands.ConsumerGroupInfo> {
    return this.call(CommandCode.createConsumerGroup, { streamId: toIdentifier(streamId), topicId: toIdentifier(topicId), name }, options);
  }

  async deleteConsumerGroup(streamId: Id, topicId: Id, groupId: Id, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.deleteConsumerGroup, groupRef(streamId, topicId, groupId), options);
  }

  async joinConsumerGroup(streamId: Id, topicId: Id, groupId: Id, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.joinConsumerGroup, groupRef(streamId, topicId, groupId), options);
  }

  async leaveConsumerGroup(streamId: Id, topicId: Id, groupId: Id, options?: RequestOptions): Promise<void> {
    await this.call(CommandCode.leaveConsumerGroup, groupRef(streamId, topicId, groupId), options);
  }

  /** This member's assignment (generation and partitions), or null when not a member. */
  syncConsumerGroup(streamId: Id, topicId: Id, groupId: Id, options?: RequestOptions): Promise<consumerGroupCommands.ConsumerGroupAssignment | null> {
    return this.call(CommandCode.syncConsumerGroup, groupRef(streamId, topicId, groupId), options);
  }
}
