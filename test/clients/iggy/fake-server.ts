// A small fake Iggy 0.11 server for the SDK's unit tests, built on the codec's server half
// (decodeRequestHeader, resolveCommand, decodeRequest, encodeReply, encodeReplyFrame,
// encodeEviction). It keeps a tiny in-memory model (one topic shape, messages per partition,
// consumer offsets, groups) so the producer and consumer can be exercised, and lets a test take
// over any request with `handler` (reply, status, eviction, hold, drop).

import net from 'node:net';
import { after, before, beforeEach } from 'node:test';
import { IggyClient, type IggyClientOptions } from '../../../src/clients/iggy/index.js';
import {
  CommandCode,
  EvictionReason,
  IggyFramer,
  decodeLoginRegisterBody,
  decodeRequest,
  decodeRequestHeader,
  encodeBatch,
  encodeEviction,
  encodeReply,
  encodeReplyFrame,
  encodeResultError,
  headerBytes,
  parseBatch,
  resolveCommand,
  type DecodedRequest,
  type MessageInput,
  type RequestHeader,
} from '../../../src/protocols/iggy/codec/index.js';

export interface FakeRequest {
  header: RequestHeader;
  code: number;
  /** The decoded request (null for Register, see `login`). */
  decoded: DecodedRequest | null;
  login: ReturnType<typeof decodeLoginRegisterBody> | null;
  body: Buffer;
  conn: FakeConn;
}

export type FakeAction =
  | { reply: Buffer[] }
  | { status: number }
  | { rejected: number }
  | { evict: number; serverProtocolVersion?: number; serverProtocolVersionMin?: number }
  | { hold: true }
  | { drop: true }
  | undefined;

export interface FakeConn {
  socket: net.Socket;
  session: bigint;
  /** Sends a raw reply for a held request. */
  reply(req: FakeRequest, body: Buffer[], status?: number): void;
}

interface StoredMessage {
  input: MessageInput;
  offset: bigint;
}

export class FakeIggyServer {
  readonly requests: FakeRequest[] = [];
  readonly conns: FakeConn[] = [];
  /** Return an action to take over a request; undefined falls through to the model. */
  handler: (req: FakeRequest) => FakeAction = () => undefined;
  users = new Map<string, string>([['root', 'secret']]);
  tokens = new Set<string>(['tok-1']);
  partitionsCount = 3;
  topicExists = true;
  readonly partitions = new Map<number, StoredMessage[]>();
  readonly offsets = new Map<string, bigint>();
  readonly groupMembers = new Set<bigint>();
  /** Write each reply one byte at a time (framing test). */
  trickle = false;
  private sessions = 0n;
  private server: net.Server;

  private constructor() {
    this.server = net.createServer((socket) => this.accept(socket));
  }

  static async start(): Promise<FakeIggyServer> {
    const s = new FakeIggyServer();
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    return s;
  }

  /** Forgets the requests, stored messages and offsets of earlier tests; the default handler again. */
  reset(): void {
    this.requests.length = 0;
    this.partitions.clear();
    this.offsets.clear();
    this.handler = () => undefined;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  get addr(): string {
    return `127.0.0.1:${this.port}`;
  }

  codes(): number[] {
    return this.requests.map((r) => r.code);
  }

  dropAll(): void {
    for (const c of this.conns) c.socket.destroy();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    const framer = new IggyFramer();
    const conn: FakeConn = {
      socket,
      session: 0n,
      reply: (req, body, status = 0) => this.write(conn, encodeReplyFrame(req.header, status === 0 ? body : [], { session: conn.session, commit: 0n, status })),
    };
    this.conns.push(conn);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      for (const f of framer.push(chunk)) {
        if (!f.ok) {
          socket.destroy();
          return;
        }
        this.onFrame(conn, Buffer.from(f.frame.header), Buffer.from(f.frame.body));
      }
    });
  }

  private write(conn: FakeConn, chunks: Buffer[]): void {
    if (conn.socket.destroyed) return;
    const bytes = Buffer.concat(chunks);
    if (!this.trickle) {
      conn.socket.write(bytes);
      return;
    }
    for (let i = 0; i < bytes.length; i++) conn.socket.write(bytes.subarray(i, i + 1));
  }

  private onFrame(conn: FakeConn, headerBuf: Buffer, body: Buffer): void {
    const header = decodeRequestHeader(headerBuf);
    const resolved = resolveCommand(header);
    if (!('code' in resolved)) {
      conn.socket.destroy();
      return;
    }
    let code: number = resolved.code;
    let decoded: DecodedRequest | null = null;
    let login: FakeRequest['login'] = null;
    if (header.operation === 1) {
      login = decodeLoginRegisterBody(body);
      if (typeof login !== 'string' && login.password === null && login.token !== null) code = CommandCode.loginRegisterWithPat;
    } else {
      const d = decodeRequest(code, body);
      if (!d.ok) throw new Error(`fake server cannot decode ${code}: ${d.reason}`);
      decoded = d.value;
    }
    const req: FakeRequest = { header, code, decoded, login, body, conn };
    this.requests.push(req);
    const action = this.handler(req) ?? this.model(req);
    this.act(conn, req, action);
  }

  act(conn: FakeConn, req: FakeRequest, action: FakeAction): void {
    if (action === undefined) throw new Error(`no action for ${req.code}`);
    if ('hold' in action) return;
    if ('drop' in action) {
      conn.socket.destroy();
      return;
    }
    if ('evict' in action) {
      this.write(conn, [
        encodeEviction({
          client: req.header.client,
          reason: action.evict as 1,
          serverProtocolVersion: action.serverProtocolVersion ?? 0,
          serverProtocolVersionMin: action.serverProtocolVersionMin ?? 0,
        }),
      ]);
      conn.socket.end();
      return;
    }
    if ('status' in action) conn.reply(req, [], action.status);
    else if ('rejected' in action) conn.reply(req, [encodeResultError(action.rejected)]);
    else conn.reply(req, action.reply);
  }

  /** The default behaviour: a tiny broker. */
  private model(req: FakeRequest): FakeAction {
    if (req.header.operation === 1) {
      const l = req.login;
      if (l === null || typeof l === 'string') return { evict: EvictionReason.malformedLogin };
      if (l.versionInfo.protocolVersion >> 10 !== 11) return { evict: EvictionReason.incompatibleProtocol, serverProtocolVersion: 11264, serverProtocolVersionMin: 11264 };
      const ok = req.code === CommandCode.loginRegisterWithPat ? this.tokens.has(l.token!.token) : l.password !== null && this.users.get(l.password.username) === l.password.password;
      if (!ok) return { evict: req.code === CommandCode.loginRegisterWithPat ? EvictionReason.invalidToken : EvictionReason.invalidCredentials };
      this.sessions += 1n;
      req.conn.session = this.sessions;
      return { reply: encodeReply(CommandCode.loginRegister, { userId: 0, session: this.sessions, serverProtocolVersion: 11264, serverVersion: 'fake-0.11' }) };
    }
    const d = req.decoded!;
    if (req.conn.session === 0n && d.code !== CommandCode.ping) return { status: 40 };
    switch (d.code) {
      case CommandCode.ping:
      case CommandCode.logoutUser:
        return { reply: encodeReply(d.code, {}) };
      case CommandCode.createStream:
        return { reply: encodeReply(d.code, { id: 7, createdAt: 1n, topicsCount: 0, sizeBytes: 0n, messagesCount: 0n, name: d.request.name, options: [] }) };
      case CommandCode.getStreams:
        return { reply: encodeReply(d.code, []) };
      case CommandCode.deleteStream:
      case CommandCode.createPartitions:
        return { reply: encodeReply(d.code, {}) };
      case CommandCode.getTopic:
        return { reply: encodeReply(d.code, this.topicExists ? this.topicDetails() : null) };
      case CommandCode.sendMessages:
        return this.append(d.request.partitioning.kind === 'partitionId' ? d.request.partitioning.partitionId : 0, d.request.batch);
      case CommandCode.pollMessages:
        return this.poll(req, d.request);
      case CommandCode.storeConsumerOffset: {
        const key = `${d.request.consumer.kind}:${JSON.stringify(d.request.consumer.id)}:${d.request.partitionId}`;
        this.offsets.set(key, d.request.offset);
        return { reply: encodeReply(d.code, {}) };
      }
      case CommandCode.joinConsumerGroup:
        this.groupMembers.add(req.header.client);
        return { reply: encodeReply(d.code, {}) };
      case CommandCode.leaveConsumerGroup:
        this.groupMembers.delete(req.header.client);
        return { reply: encodeReply(d.code, {}) };
      case CommandCode.syncConsumerGroup:
        // Every member is assigned partition 0 (generation = members so far).
        return { reply: encodeReply(d.code, this.groupMembers.has(req.header.client) ? { generation: BigInt(this.groupMembers.size), partitions: [0] } : null) };
      default:
        return { status: 3 };
    }
  }

  topicDetails() {
    const partitions = [...Array(this.partitionsCount).keys()].map((id) => ({
      id,
      createdAt: 1n,
      segmentsCount: 1,
      currentOffset: BigInt((this.partitions.get(id)?.length ?? 1) - 1),
      sizeBytes: 0n,
      messagesCount: BigInt(this.partitions.get(id)?.length ?? 0),
    }));
    return {
      id: 1,
      createdAt: 1n,
      partitionsCount: this.partitionsCount,
      messageExpiry: 0n,
      compressionAlgorithm: 1,
      maxTopicSize: 0n,
      sizeBytes: 0n,
      messagesCount: 0n,
      name: 'orders',
      explicitOptions: [],
      derivedOptions: [],
      partitions,
    };
  }

  private append(partitionId: number, batch: Buffer): FakeAction {
    if (partitionId >= this.partitionsCount) return { status: 20 }; // ResourceNotFound, as Quartet and the reference answer a send
    const parsed = parseBatch(batch, { verify: 'full', exact: true });
    if ('code' in parsed) return { status: 4039 };
    const log = this.partitions.get(partitionId) ?? [];
    this.partitions.set(partitionId, log);
    const base = BigInt(log.length);
    parsed.frames.forEach((f, i) => {
      log.push({
        offset: base + BigInt(i),
        input: { id: f.id, originTimestamp: parsed.header.originTimestamp + BigInt(f.timestampDelta), payload: Buffer.from(f.payload), userHeaders: Buffer.from(f.userHeaders) },
      });
    });
    return { reply: encodeReply(CommandCode.sendMessages, { confirmations: [{ streamId: 1, topicId: 1, partitionId, baseOffset: base }] }) };
  }

  private poll(req: FakeRequest, p: Extract<DecodedRequest, { code: 100 }>['request']): FakeAction {
    let partitionId = p.partitionId;
    if (p.consumer.kind === 2) {
      if (!this.groupMembers.has(req.header.client)) return { status: 5006 };
      if (partitionId !== null && partitionId !== 0) return { status: 5009 };
    }
    partitionId ??= 0;
    const log = this.partitions.get(partitionId) ?? [];
    const key = `${p.consumer.kind}:${JSON.stringify(p.consumer.id)}:${partitionId}`;
    const stored = this.offsets.get(key);
    let from: bigint;
    switch (p.strategy.kind) {
      case 1:
        from = p.strategy.value;
        break;
      case 3:
        from = 0n;
        break;
      case 4:
        from = BigInt(Math.max(0, log.length - p.count));
        break;
      case 5:
        from = stored === undefined ? 0n : stored + 1n;
        break;
      default:
        from = 0n;
    }
    const slice = log.slice(Number(from), Number(from) + p.count);
    if (p.autoCommit && slice.length > 0) this.offsets.set(key, slice[slice.length - 1]!.offset);
    const batches =
      slice.length === 0
        ? []
        : [Buffer.concat(encodeBatch(slice.map((m, i) => ({ ...m.input, offsetDelta: i })), { partitionId: BigInt(partitionId), baseOffset: slice[0]!.offset, baseTimestamp: 5n }))];
    return {
      reply: encodeReply(CommandCode.pollMessages, { partitionId, currentOffset: BigInt(Math.max(0, log.length - 1)), messagesCount: slice.length, batches }),
    };
  }
}

export { headerBytes };

/**
 * One FakeIggyServer for the test file and, before each test, a reset server and a fresh
 * connected client (root / secret, no pings) with `options`; `ready` runs after it connected.
 */
export function useFakeServer(options: IggyClientOptions = {}, ready?: (client: IggyClient) => Promise<void>): { readonly server: FakeIggyServer; readonly client: IggyClient } {
  let server: FakeIggyServer | undefined;
  let client: IggyClient | undefined;
  before(async () => {
    server = await FakeIggyServer.start();
  });
  after(async () => {
    await client?.close();
    await server?.close();
  });
  beforeEach(async () => {
    await client?.close();
    server!.reset();
    client = new IggyClient({ addr: server!.addr, credentials: { username: 'root', password: 'secret' }, pingIntervalMs: 0, ...options });
    await client.connect();
    await ready?.(client);
  });
  return {
    get server() {
      return server!;
    },
    get client() {
      return client!;
    },
  };
}
