// KafkaConnection over real loopback sockets: response order under pipelining, the in-flight
// limit, frames that close the connection (oversized, garbage header, unknown API), the
// UNSUPPORTED_VERSION answers, handler errors, and SASL gating.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Broker } from '../../../src/core/broker.js';
import { QuartetError } from '../../../src/base/errors.js';
import { silentLogger } from '../../../src/base/logger.js';
import { ApiKey } from '../../../src/protocols/kafka/codec/api-keys.js';
import { ErrorCode } from '../../../src/protocols/kafka/codec/errors.js';
import { Framer } from '../../../src/protocols/kafka/codec/framer.js';
import { decodeResponse, encodeRequest } from '../../../src/protocols/kafka/codec/frames.js';
import type { RequestInputOf, ResponseOf, SchemaApiKey } from '../../../src/protocols/kafka/codec/messages/index.js';
import { KafkaConnection, unauthenticatedFrameBytesMax } from '../../../src/protocols/kafka/connection.js';
import { KafkaBrokerFrontend } from '../../../src/protocols/kafka/frontend.js';
import { apiVersionsHandler } from '../../../src/protocols/kafka/handlers/api-versions.js';
import { metadataHandler } from '../../../src/protocols/kafka/handlers/metadata.js';
import { produceHandler } from '../../../src/protocols/kafka/handlers/produce.js';
import { fetchHandler } from '../../../src/protocols/kafka/handlers/fetch.js';
import { nativeStatus } from '../../../src/base/native.js';
import { fileReplyStats } from '../../../src/protocols/file-replies.js';
import { batchOf, recordsOf } from './handlers/data-harness.js';
import { encodeNeutralBatch } from '../../../src/log/neutral-format.js';
import { defineHandler, type KafkaHandler, type KafkaSettings } from '../../../src/protocols/kafka/handlers/types.js';
import { builtinFormats } from '../../../src/server/listeners.js';

// Loopback peers get file slices only when asked (file-replies.ts canSendFiles): these tests ask.
process.env['QUARTET_SENDFILE'] = '1';

interface Gate {
  promise: Promise<void>;
  open(): void;
}
function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function harness(t: { after(fn: () => Promise<void> | void): void }, options: { handlers?: KafkaHandler[]; settings?: Partial<KafkaSettings>; fileLogs?: boolean } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-kafka-conn-'));
  const broker = await Broker.open({ formats: builtinFormats(), dataDir, memory: options.fileLogs !== true, maintenanceIntervalMs: 0 });
  const frontend = new KafkaBrokerFrontend({ broker, logger: silentLogger, clusterId: 'c', persistGroups: false, ...(options.handlers ? { handlers: options.handlers } : {}), settings: options.settings ?? {} });
  let inFlight = 0;
  let authenticated = 0;
  const server: Server = createServer((socket) => {
    new KafkaConnection(frontend, socket, {
      remote: 'test',
      logger: silentLogger,
      beginRequest: () => {
        inFlight++;
        return () => void inFlight--;
      },
      authenticated: () => void authenticated++,
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const sockets: Socket[] = [];
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await frontend.close();
    await broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    broker,
    frontend,
    dataDir,
    inFlight: () => inFlight,
    /** Connections that told the listener they authenticated. */
    authenticated: () => authenticated,
    async client() {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      await once(socket, 'connect');
      return new TestClient(socket);
    },
  };
}

class TestClient {
  private readonly framer = new Framer({ frameBytesMax: 1 << 26 });
  private readonly frames: Buffer[] = [];
  private waiter: (() => void) | null = null;
  closed = false;
  private correlationId = 0;
  readonly closedPromise: Promise<void>;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      const r = this.framer.push(chunk);
      this.frames.push(...r.frames);
      this.waiter?.();
    });
    this.closedPromise = new Promise((resolve) =>
      socket.once('close', () => {
        this.closed = true;
        this.waiter?.();
        resolve();
      }),
    );
    socket.on('error', () => {});
  }

  /** Encodes a request; returns the frame bytes and its correlation id. */
  frame<K extends SchemaApiKey>(apiKey: K, version: number, body: RequestInputOf<K>): { bytes: Buffer; correlationId: number } {
    const correlationId = ++this.correlationId;
    return { bytes: Buffer.concat(encodeRequest(apiKey, version, correlationId, 'conn-test', body)), correlationId };
  }

  send(...frames: Buffer[]): void {
    this.socket.write(Buffer.concat(frames));
  }

  /** The next response frame (without its size), or null if the connection closed first. */
  async next(timeoutMs = 5000): Promise<Buffer | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length === 0) {
      if (this.closed) return null;
      if (Date.now() > deadline) throw new Error('no response in time');
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 50);
      });
      this.waiter = null;
    }
    return this.frames.shift()!;
  }

  async response<K extends SchemaApiKey>(apiKey: K, version: number): Promise<{ correlationId: number; body: ResponseOf<K> }> {
    const frame = await this.next();
    assert.ok(frame, 'expected a response, the connection closed');
    const r = decodeResponse(apiKey, version, frame);
    if (!r.ok) throw new Error(r.reason);
    return { correlationId: r.correlationId, body: r.body };
  }

  async expectClosed(): Promise<void> {
    const frame = await this.next();
    assert.equal(frame, null, 'expected the connection to close');
  }
}

const apiVersionsBody = { clientSoftwareName: 't', clientSoftwareVersion: '1' };

describe('KafkaConnection', () => {
  it('writes responses in request order when a slow request precedes fast ones', async (t) => {
    const slowGate = gate();
    const events: string[] = [];
    const slowMetadata = defineHandler({
      ...metadataHandler,
      async handle(request, context) {
        events.push('slow started');
        await slowGate.promise;
        events.push('slow done');
        return metadataHandler.handle(request, context);
      },
    });
    const fastApiVersions = defineHandler({
      ...apiVersionsHandler,
      handle(request, context) {
        events.push('fast');
        return apiVersionsHandler.handle(request, context);
      },
    });
    const h = await harness(t, { handlers: [slowMetadata, fastApiVersions] });
    const c = await h.client();
    const slow = c.frame(ApiKey.Metadata, 12, { topics: null });
    const fast1 = c.frame(ApiKey.ApiVersions, 3, apiVersionsBody);
    const fast2 = c.frame(ApiKey.ApiVersions, 2, {});
    c.send(slow.bytes, fast1.bytes, fast2.bytes);
    const deadline = Date.now() + 5000;
    while (events.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(events, ['slow started', 'fast', 'fast'], 'the fast requests ran while the slow one waited');
    slowGate.open();
    assert.equal((await c.response(ApiKey.Metadata, 12)).correlationId, slow.correlationId);
    assert.equal((await c.response(ApiKey.ApiVersions, 3)).correlationId, fast1.correlationId);
    assert.equal((await c.response(ApiKey.ApiVersions, 2)).correlationId, fast2.correlationId);
  });

  it('starts one Fetch at a time per connection (as Kafka mutes it until the response is sent), and nothing while the peer does not read', async (t) => {
    let running = 0;
    let most = 0;
    let started = 0;
    const countingFetch = defineHandler({
      ...fetchHandler,
      async handle(request, context) {
        started++;
        most = Math.max(most, ++running);
        // Long enough that a second Fetch, if started, would overlap it.
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return fetchHandler.handle(request, context);
      },
    });
    const h = await harness(t, { handlers: [apiVersionsHandler, produceHandler, countingFetch] });
    await h.broker.createTopic('default', 'big', { partitions: 1 });
    const c = await h.client();
    // 2 MB stored: each Fetch answers all of it.
    for (let b = 0; b < 2; b++) {
      c.send(c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'big', partitionData: [{ index: 0, records: batchOf(Array.from({ length: 1000 }, (_, i) => ({ key: null, value: `${b}:${i}`.padEnd(1000, 'f') }))) }] }] }).bytes);
      assert.equal((await c.response(ApiKey.Produce, 9)).body.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    }
    const fetchBody = {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 8 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'big', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 8 << 20, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
      forgottenTopicsData: [], rackId: '',
    };
    // 24 pipelined Fetches (48 MB of responses) from a client that reads nothing for a while.
    c.socket.pause();
    c.send(...Array.from({ length: 24 }, () => c.frame(ApiKey.Fetch, 12, fetchBody).bytes));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(most, 1, 'never two Fetches at once');
    // Only as many as the kernel's socket buffers take (a few MB on loopback) before the broker's
    // own buffer fills; without the wait, all 24 would have run.
    assert.ok(started <= 8, `the Fetches wait while the responses are not read (${started} started)`);
    c.socket.resume();
    for (let i = 0; i < 24; i++) assert.equal(recordsOf((await c.response(ApiKey.Fetch, 12)).body.responses[0]!.partitions[0]!.records).length, 2000);
    assert.equal(started, 24);
    assert.equal(most, 1);
  });

  it('stops reading at inFlightRequestsMax and resumes when responses drain', async (t) => {
    const g = gate();
    let started = 0;
    const slow = defineHandler({
      ...apiVersionsHandler,
      async handle(request, context) {
        started++;
        await g.promise;
        return apiVersionsHandler.handle(request, context);
      },
    });
    const h = await harness(t, { handlers: [slow], settings: { inFlightRequestsMax: 2 } });
    const c = await h.client();
    const frames = Array.from({ length: 6 }, () => c.frame(ApiKey.ApiVersions, 3, apiVersionsBody));
    c.send(...frames.map((f) => f.bytes));
    const deadline = Date.now() + 5000;
    while (started < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(started, 2, 'only two requests in flight');
    assert.equal(h.inFlight(), 2);
    g.open();
    for (const f of frames) assert.equal((await c.response(ApiKey.ApiVersions, 3)).correlationId, f.correlationId);
    assert.equal(started, 6);
  });

  it('closes only the connection that sent an oversized frame', async (t) => {
    const h = await harness(t, { settings: { requestBytesMax: 1024 } });
    const bad = await h.client();
    const good = await h.client();
    const size = Buffer.alloc(4);
    size.writeInt32BE(4096);
    bad.send(size, Buffer.alloc(100));
    await bad.expectClosed();
    const f = good.frame(ApiKey.ApiVersions, 3, apiVersionsBody);
    good.send(f.bytes);
    assert.equal((await good.response(ApiKey.ApiVersions, 3)).body.errorCode, 0);
  });

  it('closes on an unparsable header and on an unknown API key', async (t) => {
    const h = await harness(t);
    const garbage = await h.client();
    garbage.send(Buffer.from([0, 0, 0, 3, 1, 2, 3]));
    await garbage.expectClosed();
    const unknown = await h.client();
    const w = Buffer.alloc(4 + 10);
    w.writeInt32BE(10, 0);
    w.writeInt16BE(999, 4);
    w.writeInt16BE(0, 6);
    w.writeInt32BE(1, 8);
    w.writeInt16BE(-1, 12);
    unknown.send(w);
    await unknown.expectClosed();
  });

  it('answers UNSUPPORTED_VERSION: KIP-511 for ApiVersions, error bodies for known schemas; closes when the version cannot be decoded', async (t) => {
    const h = await harness(t, { handlers: [apiVersionsHandler, produceHandler, metadataHandler] });
    const c = await h.client();
    // ApiVersions v4 (unknown to us): a v0 body with error 35 and the advertised list.
    const raw = Buffer.alloc(4 + 8 + 2 + 1 + 2 + 1);
    raw.writeInt32BE(raw.length - 4, 0);
    raw.writeInt16BE(ApiKey.ApiVersions, 4);
    raw.writeInt16BE(4, 6);
    raw.writeInt32BE(41, 8);
    raw.writeInt16BE(-1, 12); // client id null
    raw.writeUInt8(0, 14); // header tagged fields
    c.send(raw);
    const kip511 = await c.response(ApiKey.ApiVersions, 0);
    assert.equal(kip511.correlationId, 41);
    assert.equal(kip511.body.errorCode, ErrorCode.UNSUPPORTED_VERSION);
    assert.deepEqual(kip511.body.apiKeys.map((k) => k.apiKey), [ApiKey.Produce, ApiKey.Metadata, ApiKey.ApiVersions]);
    // A known schema without a handler here: defaults plus the top-level error code.
    const describeCluster = c.frame(ApiKey.DescribeCluster, 0, {});
    c.send(describeCluster.bytes);
    const dc = await c.response(ApiKey.DescribeCluster, 0);
    assert.deepEqual([dc.correlationId, dc.body.errorCode], [describeCluster.correlationId, ErrorCode.UNSUPPORTED_VERSION]);
    // Still usable.
    const md = c.frame(ApiKey.Metadata, 12, { topics: null });
    c.send(md.bytes);
    assert.equal((await c.response(ApiKey.Metadata, 12)).body.brokers.length, 1);
    // Metadata v13 is beyond the schema: the body cannot be read, so the connection closes.
    const v13 = Buffer.alloc(4 + 10);
    v13.writeInt32BE(10, 0);
    v13.writeInt16BE(ApiKey.Metadata, 4);
    v13.writeInt16BE(13, 6);
    v13.writeInt32BE(5, 8);
    v13.writeInt16BE(-1, 12);
    c.send(v13);
    await c.expectClosed();
  });

  it('turns a QuartetError into the error response and closes on any other exception', async (t) => {
    let mode: 'quartet' | 'bug' = 'quartet';
    const failing = defineHandler({
      ...produceHandler,
      handle() {
        if (mode === 'quartet') throw new QuartetError('storage_error', 'disk on fire');
        throw new TypeError('a bug');
      },
    });
    const h = await harness(t, { handlers: [apiVersionsHandler, failing] });
    const c = await h.client();
    const p = c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 100, topicData: [{ name: 't', partitionData: [{ index: 0, records: null }] }] });
    c.send(p.bytes);
    const r = await c.response(ApiKey.Produce, 9);
    assert.equal(r.body.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    mode = 'bug';
    c.send(c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 100, topicData: [] }).bytes);
    await c.expectClosed();
    const other = await h.client();
    other.send(other.frame(ApiKey.ApiVersions, 3, apiVersionsBody).bytes);
    assert.equal((await other.response(ApiKey.ApiVersions, 3)).body.errorCode, 0);
  });

  it('lets go of what a response held (read leases, segment pins) when the connection closes before it is written', async (t) => {
    let mode: 'bug' | 'unencodable' | 'errorResponse' = 'bug';
    let released = 0;
    const holding = defineHandler({
      ...produceHandler,
      errorResponse: (request, errorCode, context) => {
        if (mode === 'errorResponse') throw new TypeError('no error response either');
        return produceHandler.errorResponse!(request, errorCode, context);
      },
      handle(_request, context) {
        context.afterResponseWritten?.(() => released++);
        if (mode === 'bug') throw new TypeError('a bug');
        if (mode === 'errorResponse') throw new QuartetError('storage_error', 'disk on fire');
        return { responses: null } as never;
      },
    });
    const h = await harness(t, { handlers: [apiVersionsHandler, holding] });
    for (const m of ['bug', 'unencodable', 'errorResponse'] as const) {
      mode = m;
      const c = await h.client();
      c.send(c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 100, topicData: [] }).bytes);
      await c.expectClosed();
    }
    assert.equal(released, 3, 'each response that was never written released what it held, once');
  });

  it('with SASL required answers only pre-auth APIs and closes on anything else', async (t) => {
    const h = await harness(t, { settings: { saslRequired: true } });
    const c = await h.client();
    c.send(c.frame(ApiKey.ApiVersions, 3, apiVersionsBody).bytes);
    assert.equal((await c.response(ApiKey.ApiVersions, 3)).body.errorCode, 0);
    c.send(c.frame(ApiKey.Metadata, 12, { topics: null }).bytes);
    await c.expectClosed();
  });

  it('with SASL required, closes a connection that declares a frame over 512 KiB before it authenticates; after, the usual limit holds', async (t) => {
    const h = await harness(t, { settings: { saslRequired: true } });
    await h.broker.users.create({ username: 'dora', password: 'dora-password' });
    const size = Buffer.alloc(4);
    size.writeInt32BE(unauthenticatedFrameBytesMax + 1);
    // Only the size prefix is sent: the connection closes on it, holding nothing.
    const early = await h.client();
    early.send(size);
    await early.expectClosed();
    const c = await h.client();
    c.send(c.frame(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }).bytes);
    assert.equal((await c.response(ApiKey.SaslHandshake, 1)).body.errorCode, 0);
    c.send(c.frame(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from('\0dora\0dora-password') }).bytes);
    assert.equal((await c.response(ApiKey.SaslAuthenticate, 2)).body.errorCode, 0);
    // A 1 MiB Metadata request (long topic names) is framed and answered once authenticated.
    const big = Buffer.concat(encodeRequest(ApiKey.Metadata, 12, 99, 'conn-test', { topics: Array.from({ length: 40 }, (_, i) => ({ topicId: Buffer.alloc(16), name: `t${i}`.padEnd(30_000, 'n') })) }));
    assert.ok(big.length > unauthenticatedFrameBytesMax, `${big.length} bytes`);
    c.send(big);
    const r = await c.response(ApiKey.Metadata, 12);
    assert.equal(r.correlationId, 99);
  });

  it('tells the listener it authenticated at once without SASL required, and only after SASL succeeds with it', async (t) => {
    const open = await harness(t);
    const plain = await open.client();
    plain.send(plain.frame(ApiKey.Metadata, 12, { topics: [] }).bytes);
    await plain.response(ApiKey.Metadata, 12);
    assert.equal(open.authenticated(), 1);
    const h = await harness(t, { settings: { saslRequired: true } });
    await h.broker.users.create({ username: 'dora', password: 'dora-password' });
    const c = await h.client();
    c.send(c.frame(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }).bytes);
    assert.equal((await c.response(ApiKey.SaslHandshake, 1)).body.errorCode, 0);
    assert.equal(h.authenticated(), 0, 'not before the SASL exchange');
    c.send(c.frame(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from('\0dora\0wrong') }).bytes);
    assert.notEqual((await c.response(ApiKey.SaslAuthenticate, 2)).body.errorCode, 0);
    assert.equal(h.authenticated(), 0, 'not after a failed exchange');
    const d = await h.client();
    d.send(d.frame(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }).bytes);
    await d.response(ApiKey.SaslHandshake, 1);
    d.send(d.frame(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from('\0dora\0dora-password') }).bytes);
    assert.equal((await d.response(ApiKey.SaslAuthenticate, 2)).body.errorCode, 0);
    assert.equal(h.authenticated(), 1);
  });

  it('answers a failed SASL authentication, then closes the connection', async (t) => {
    const h = await harness(t, { settings: { saslRequired: true } });
    await h.broker.users.create({ username: 'dora', password: 'dora-password' });
    const c = await h.client();
    c.send(c.frame(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }).bytes);
    assert.equal((await c.response(ApiKey.SaslHandshake, 1)).body.errorCode, 0);
    c.send(c.frame(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from('\0dora\0wrong-password') }).bytes);
    assert.equal((await c.response(ApiKey.SaslAuthenticate, 2)).body.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    await c.expectClosed();
  });

  it('closes an authenticated connection at its next request once its user is deleted or deactivated', async (t) => {
    const h = await harness(t, { settings: { saslRequired: true } });
    for (const [name, change] of [
      ['gone', (b: Broker) => b.users.delete('gone')],
      ['idle', (b: Broker) => b.users.update('idle', { status: 'inactive' })],
    ] as const) {
      await h.broker.users.create({ username: name, password: `${name}-password` });
      const c = await h.client();
      c.send(c.frame(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }).bytes);
      assert.equal((await c.response(ApiKey.SaslHandshake, 1)).body.errorCode, 0);
      c.send(c.frame(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from(`\0${name}\0${name}-password`) }).bytes);
      assert.equal((await c.response(ApiKey.SaslAuthenticate, 2)).body.errorCode, 0, name);
      c.send(c.frame(ApiKey.Metadata, 12, { topics: null }).bytes);
      assert.equal((await c.response(ApiKey.Metadata, 12)).body.brokers.length, 1, `${name}: answered while the user exists`);
      await change(h.broker);
      c.send(c.frame(ApiKey.Metadata, 12, { topics: null }).bytes);
      await c.expectClosed();
    }
  });

  it('sends nothing for acks=0 and keeps the order of what follows', async (t) => {
    const h = await harness(t, { handlers: [apiVersionsHandler, produceHandler] });
    await h.broker.createTopic('default', 'quiet', { partitions: 1 });
    const c = await h.client();
    const p = c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: 0, timeoutMs: 100, topicData: [{ name: 'quiet', partitionData: [{ index: 0, records: batchOf([{ key: null, value: 'v' }]) }] }] });
    const v = c.frame(ApiKey.ApiVersions, 3, apiVersionsBody);
    c.send(p.bytes, v.bytes);
    assert.equal((await c.response(ApiKey.ApiVersions, 3)).correlationId, v.correlationId);
    assert.equal(h.broker.partition({ topic: 'quiet' }, 0).stats().nextOffset, 1, 'appended');
  });

  it('closes the connection after an acks=0 produce that failed on any partition (so the producer refreshes its metadata), as Kafka does', async (t) => {
    const h = await harness(t, { handlers: [apiVersionsHandler, produceHandler] });
    await h.broker.createTopic('default', 'quiet', { partitions: 1 });
    const good = batchOf([{ key: null, value: 'v' }]);
    for (const [name, partitionData] of [
      ['an unknown partition', [{ index: 0, records: good }, { index: 7, records: good }]],
      ['a bad batch', [{ index: 0, records: null }]],
    ] as const) {
      const c = await h.client();
      const p = c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: 0, timeoutMs: 100, topicData: [{ name: 'quiet', partitionData: [...partitionData] }] });
      // Pipelined behind it: a good produce, which must not run (Kafka would not have read it).
      const after = c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 100, topicData: [{ name: 'quiet', partitionData: [{ index: 0, records: good }] }] });
      c.send(p.bytes, after.bytes, c.frame(ApiKey.ApiVersions, 3, apiVersionsBody).bytes);
      await c.expectClosed();
      assert.ok(c.closed, name);
    }
    // The good partition of the first request was appended all the same; nothing after a failure was.
    assert.equal(h.broker.partition({ topic: 'quiet' }, 0).stats().nextOffset, 1);
  });

  it('assembles large Produce requests in pooled buffers and holds each until its held work settles', async (t) => {
    const hold = gate();
    const seen: { view: Buffer; copy: Buffer }[] = [];
    const holdingProduce = defineHandler({
      ...produceHandler,
      handle(request, context) {
        const records = request.topicData[0]!.partitionData[0]!.records!;
        seen.push({ view: records, copy: Buffer.from(records) });
        context.holdRequestUntil?.(hold.promise);
        return null;
      },
    });
    const h = await harness(t, { handlers: [apiVersionsHandler, holdingProduce] });
    const c = await h.client();
    const produce = (fill: number) =>
      c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: 0, timeoutMs: 100, topicData: [{ name: 't', partitionData: [{ index: 0, records: Buffer.alloc(300 * 1024, fill) }] }] });
    const waitSeen = async (n: number) => {
      const deadline = Date.now() + 5000;
      while (seen.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      assert.equal(seen.length, n);
    };
    // One at a time, so that each frame straddles socket chunks rather than share one.
    for (const fill of [1, 2, 3]) {
      c.send(produce(fill).bytes);
      await waitSeen(fill);
    }
    const held = new Set(seen.map((s) => s.view.buffer));
    assert.equal(held.size, 3, 'three requests held at once never share a buffer');
    for (const s of seen) assert.deepEqual(s.view, s.copy, 'a held request is not overwritten by the frames after it');
    const v = c.frame(ApiKey.ApiVersions, 3, apiVersionsBody);
    c.send(v.bytes);
    assert.equal((await c.response(ApiKey.ApiVersions, 3)).correlationId, v.correlationId);
    hold.open();
    await new Promise((r) => setTimeout(r, 20));
    c.send(produce(4).bytes);
    await waitSeen(4);
    assert.ok(held.has(seen[3]!.view.buffer), 'a released request buffer is reused for the next large frame');
    assert.deepEqual(seen[3]!.view, seen[3]!.copy);
  });

  it('sends large stored batches of a Fetch from the segment files, in order with the responses around it', { skip: nativeStatus.loaded ? false : 'native addon not built: run `npm install`' }, async (t) => {
    const h = await harness(t, { handlers: [apiVersionsHandler, produceHandler, fetchHandler], fileLogs: true });
    const topic = await h.broker.createTopic('default', 'big', { partitions: 1 });
    const c = await h.client();
    // Three ~200 KB batches (file slices) and one small one (read and sent as bytes).
    const values = (b: number, n: number) => Array.from({ length: n }, (_, i) => `${b}:${i}:`.padEnd(1000, String.fromCharCode(97 + ((b * 7 + i) % 26))));
    const batches = [values(0, 200), values(1, 3), values(2, 200), values(3, 200)];
    for (const vs of batches) {
      const p = c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'big', partitionData: [{ index: 0, records: batchOf(vs.map((value) => ({ key: null, value }))) }] }] });
      c.send(p.bytes);
      const r = await c.response(ApiKey.Produce, 9);
      assert.equal(r.body.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    }
    // And a ~150 KB batch written by another protocol: read whole from its slice and transcoded.
    const foreign = values(4, 150);
    await h.broker.append(topic, 0, encodeNeutralBatch(foreign.map((value) => ({ key: null, value })), { timestamp: 1_700_000_000_000 }));
    batches.push(foreign);
    const fetchBody = (fetchOffset: number) => ({
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 8 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'big', partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 8 << 20, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    // A first fetch meets the large batches; from then on the log reads only their heads.
    c.send(c.frame(ApiKey.Fetch, 12, fetchBody(0)).bytes);
    await c.response(ApiKey.Fetch, 12);
    const slicesBefore = fileReplyStats.slices;
    // Pipelined: ApiVersions, a Fetch of everything, a Fetch from inside the last batch, ApiVersions.
    const a1 = c.frame(ApiKey.ApiVersions, 3, apiVersionsBody);
    const f1 = c.frame(ApiKey.Fetch, 12, fetchBody(0));
    const f2 = c.frame(ApiKey.Fetch, 12, fetchBody(500));
    const a2 = c.frame(ApiKey.ApiVersions, 3, apiVersionsBody);
    c.send(a1.bytes, f1.bytes, f2.bytes, a2.bytes);
    assert.equal((await c.response(ApiKey.ApiVersions, 3)).correlationId, a1.correlationId);
    const all = await c.response(ApiKey.Fetch, 12);
    assert.equal(all.correlationId, f1.correlationId);
    assert.deepEqual(recordsOf(all.body.responses[0]!.partitions[0]!.records).map((r) => r.value), batches.flat());
    const tail = await c.response(ApiKey.Fetch, 12);
    assert.equal(tail.correlationId, f2.correlationId);
    // Kafka returns whole batches: the one holding offset 500 and nothing before it.
    assert.deepEqual(recordsOf(tail.body.responses[0]!.partitions[0]!.records).map((r) => r.offset), Array.from({ length: 350 }, (_, i) => 403 + i));
    assert.equal((await c.response(ApiKey.ApiVersions, 3)).correlationId, a2.correlationId);
    // Counted once the broker sees each send complete, which may follow the client's read.
    const countedBy = Date.now() + 5000;
    while (fileReplyStats.slices - slicesBefore < 4 && Date.now() < countedBy) await new Promise((r) => setTimeout(r, 5));
    assert.equal(fileReplyStats.slices - slicesBefore, 4, 'the three large batches, then the last one again, went out from the file');
    const deadline = Date.now() + 5000;
    while (h.inFlight() !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(h.inFlight(), 0, 'every request was marked done');
  });

  it('a peer gone in the middle of a response sent from the files lets its segments go', { skip: nativeStatus.loaded ? false : 'native addon not built: run `npm install`' }, async (t) => {
    const h = await harness(t, { handlers: [apiVersionsHandler, produceHandler, fetchHandler], fileLogs: true });
    const topic = await h.broker.createTopic('default', 'pins', { partitions: 1, config: { 'segment.bytes': '1000000' } });
    const c = await h.client();
    // Sixteen ~500 KB batches over eight or more segments.
    for (let b = 0; b < 16; b++) {
      const records = batchOf(Array.from({ length: 500 }, (_, i) => ({ key: null, value: `${b}:${i}:`.padEnd(1000, 'p') })));
      c.send(c.frame(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'pins', partitionData: [{ index: 0, records }] }] }).bytes);
      await c.response(ApiKey.Produce, 9);
    }
    const log = h.broker.partition(topic, 0);
    assert.ok(log.stats().segmentCount >= 8);
    const fetchBody = { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 16 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, topics: [{ topic: 'pins', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 16 << 20, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }], forgottenTopicsData: [], rackId: '' };
    c.send(c.frame(ApiKey.Fetch, 12, fetchBody).bytes);
    await c.response(ApiKey.Fetch, 12);
    // The next Fetch, ~8 MB on a fresh connection (its receive buffer still small), goes out from
    // the files; the peer reads none of it, then goes away.
    const slicesBefore = fileReplyStats.slices;
    const p = await h.client();
    p.socket.pause();
    p.send(p.frame(ApiKey.Fetch, 12, fetchBody).bytes);
    const until = async (what: string, condition: () => boolean): Promise<void> => {
      const deadline = Date.now() + 5000;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await until('the first batch to go out', () => fileReplyStats.slices > slicesBefore);
    assert.ok(h.inFlight() > 0, 'the response is still being sent');
    p.socket.destroy();
    await until('the request to end', () => h.inFlight() === 0);
    // Retention removes every sealed segment: none may stay open for the response that never finished.
    await log.deleteRecordsBefore(log.stats().highWatermark);
    const deletedOpen = (): string[] =>
      readdirSync('/proc/self/fd').flatMap((fd) => {
        try {
          const target = readlinkSync(`/proc/self/fd/${fd}`);
          return target.startsWith(h.dataDir) && target.endsWith('(deleted)') ? [target] : [];
        } catch {
          return [];
        }
      });
    await until('the deleted segments to be closed', () => deletedOpen().length === 0);
  });
});
