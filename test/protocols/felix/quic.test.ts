// Felix over real QUIC on 127.0.0.1 (UDP port 0): TLS 1.3 with ALPN felix/1 and a self-signed
// localhost certificate made at start; a client-opened bidirectional stream carrying an auth frame
// each way; a broker-opened unidirectional stream carrying event_stream_hello and a shared event
// batch; a client offering another ALPN refused; a client disconnecting while the broker writes
// an event stream (the stream closes without an error, and the server then stops cleanly); and one
// rough throughput figure (64 KiB writes over one stream for 2 s), printed as a test diagnostic.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Duplex, Readable, Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../src/base/logger.js';
import {
  EventBatchFrames,
  FelixFramer,
  authReply,
  decodeFrame,
  encodeMessage,
  recordPayloads,
  serverFlags,
  singleNodeFeatures,
  type FelixFrame,
} from '../../../src/protocols/felix/codec/index.js';
import {
  connectFelixQuic,
  isLoopbackHost,
  startFelixQuicServer,
  type FelixQuicConnection,
  type FelixQuicServer,
} from '../../../src/protocols/felix/quic.js';
import { certificateMatchesKey, selfSignedLocalhost } from '../../../src/protocols/felix/self-signed.js';

const logLines: string[] = [];
const logger = createLogger('warn', (line) => logLines.push(line));

/**
 * Collects decoded frames from a stream until `count` have arrived, leaving the stream open (a
 * `for await` that breaks would destroy it, and with it the QUIC stream).
 */
function readFrames(stream: Readable, count: number): Promise<FelixFrame[]> {
  const framer = new FelixFramer({ payloadBytesMax: 1 << 20 });
  const out: FelixFrame[] = [];
  return new Promise((resolve, reject) => {
    const finish = (err?: Error): void => {
      stream.off('data', onData).off('end', onEnd).off('error', finish);
      stream.pause();
      if (err !== undefined) reject(err);
      else resolve(out);
    };
    const onData = (chunk: Buffer): void => {
      for (const r of framer.push(chunk)) {
        if (!r.ok) return finish(new Error(r.reason));
        const d = decodeFrame(r.frame.header.flags, r.frame.payload);
        if (!d.ok) return finish(new Error(d.reason));
        out.push(d.value);
      }
      if (out.length >= count) finish();
    };
    const onEnd = (): void => finish(out.length >= count ? undefined : new Error(`stream ended after ${out.length} of ${count} frames`));
    stream.on('data', onData).on('end', onEnd).on('error', finish);
  });
}

function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)));
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

function writeChunks(stream: NodeJS.WritableStream, chunks: readonly Buffer[]): void {
  for (const c of chunks) stream.write(c);
}

describe('felix over QUIC', () => {
  let server: FelixQuicServer;
  const connections: FelixQuicConnection[] = [];
  /** What the server does with each new bidi stream (set by each test). */
  let onBidi: (stream: Duplex, connection: FelixQuicConnection) => void = () => {};

  before(async () => {
    server = await startFelixQuicServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      onConnection(connection) {
        connections.push(connection);
        connection.on('bidi', (stream: Duplex) => {
          // A client closing its connection ends the server's streams with an error.
          stream.on('error', () => {});
          onBidi(stream, connection);
        });
      },
    });
  });

  after(async () => {
    await server.close();
  });

  it('makes a self-signed localhost certificate when none is configured, and warns', () => {
    assert.ok(server.port > 0);
    const cert = new X509Certificate(server.certificate);
    assert.equal(cert.subject, 'CN=localhost');
    assert.ok(cert.checkHost('localhost'));
    assert.ok(cert.checkIP('127.0.0.1'));
    assert.ok(logLines.some((l) => l.includes('self-signed certificate')), 'a warning was logged');
    assert.ok(certificateMatchesKey(selfSignedLocalhost()));
  });

  it('exchanges auth frames over a client-opened bidi stream and delivers a broker-opened uni stream', async () => {
    onBidi = (stream, connection) => {
      void (async () => {
        const [first] = await readFrames(stream, 1);
        assert.ok(first?.kind === 'message' && first.message.type === 'auth');
        const { reply } = authReply(first.message, { flags: serverFlags, features: singleNodeFeatures });
        writeChunks(stream, encodeMessage(reply));
        const events = connection.openUni();
        writeChunks(events, encodeMessage({ type: 'event_stream_hello', subscriptionId: 9n }));
        writeChunks(events, new EventBatchFrames({ payloads: [Buffer.from('a'), Buffer.from('bc')] }, 41n).shared(true));
        events.end();
      })().catch((err: unknown) => stream.destroy(err as Error));
    };
    const client = await connectFelixQuic({ host: '127.0.0.1', port: server.port, ca: server.certificate, logger });
    try {
      const uni = once(client, 'uni') as Promise<[Readable]>;
      const bidi = client.openBidi();
      writeChunks(bidi, encodeMessage({ type: 'auth', tenantId: 't1', token: 'demo-token', clientFlags: 0xff, clientFeatures: 0 }));
      const [reply] = await readFrames(bidi, 1);
      assert.deepEqual(reply, { kind: 'message', message: { type: 'auth_ok', serverFlags: 0xff, serverFeatures: 0x3fc } });
      const [events] = await uni;
      const frames = await readFrames(events, 2);
      assert.deepEqual(frames[0], { kind: 'message', message: { type: 'event_stream_hello', subscriptionId: 9n } });
      const batch = frames[1]!;
      assert.ok(batch.kind === 'event_batch');
      assert.equal(batch.batch.baseOffset, 41n);
      assert.deepEqual(recordPayloads(batch.batch.records).map(String), ['a', 'bc']);
      bidi.end();
    } finally {
      await client.close();
    }
  });

  it('sizes the UDP socket buffers as configured', async () => {
    const asked = 1 << 20;
    const own = await startFelixQuicServer({ host: '127.0.0.1', port: 0, limits: { socketBufferBytes: asked }, logger, onConnection() {} });
    try {
      assert.ok(own.udpBuffers !== undefined, 'the UDP socket was reached');
      let rmemMax = Infinity;
      try {
        rmemMax = Number(readFileSync('/proc/sys/net/core/rmem_max', 'utf8'));
      } catch {
        // not Linux: the kernel's cap is unknown
      }
      // Linux reports twice what was asked, up to twice its cap.
      if (Number.isFinite(rmemMax)) assert.equal(own.udpBuffers.receiveBytes, 2 * Math.min(asked, rmemMax));
      else assert.ok(own.udpBuffers.receiveBytes > 0);
    } finally {
      await own.close();
    }
  });

  it('takes 127.0.0.0/8, ::1 and localhost for loopback (large UDP payloads), nothing else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost', '::ffff:127.0.0.1']) assert.ok(isLoopbackHost(host), host);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '128.0.0.1', '1127.0.0.1']) assert.ok(!isLoopbackHost(host), host);
  });

  it('refuses a client that offers another ALPN', async () => {
    await assert.rejects(connectFelixQuic({ host: '127.0.0.1', port: server.port, ca: server.certificate, alpn: ['other/1'], connectTimeoutMs: 3_000, logger }));
  });

  it('closes a broker-opened stream without an error when the client disconnects mid-write, and stops cleanly', async () => {
    // The library ends the streams of a connection the peer closed with ErrorQUICConnectionPeer;
    // as an 'error' event on a stream with no error listener, that was an uncaught exception.
    const errorsSeen: Error[] = [];
    let written = 0;
    let resolveClosed: (events: Writable) => void = () => {};
    const closed = new Promise<Writable>((resolve) => (resolveClosed = resolve));
    const own = await startFelixQuicServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      onConnection(connection) {
        const events = connection.openUni();
        events.on('error', (err: Error) => errorsSeen.push(err));
        events.on('close', () => resolveClosed(events));
        const chunk = Buffer.alloc(64 << 10, 0x33);
        const pump = (): void => {
          while (!events.destroyed && written < 256 << 20) {
            written += chunk.length;
            if (!events.write(chunk)) return;
          }
        };
        events.on('drain', pump);
        pump();
      },
    });
    try {
      const client = await connectFelixQuic({ host: '127.0.0.1', port: own.port, ca: own.certificate, logger });
      const [uni] = (await once(client, 'uni')) as [Readable];
      uni.on('error', () => {});
      await once(uni, 'data');
      await client.close();
      const events = await withDeadline(closed, 10_000, 'the broker-opened stream did not close');
      assert.ok(events.destroyed);
      assert.deepEqual(errorsSeen, [], "closed without an 'error' event");
      assert.ok(written < 256 << 20, 'the writer was still writing when the client left');
    } finally {
      await own.close();
    }
    assert.deepEqual(errorsSeen, [], 'stopping the server raised nothing either');
  });

  it('carries 64 KiB writes over one stream for 2 s (a rough throughput figure)', async (t) => {
    let received = 0;
    const done = new Promise<number>((resolve, reject) => {
      onBidi = (stream) => {
        stream.on('data', (c: Buffer) => (received += c.length));
        stream.on('end', () => resolve(received));
        stream.on('error', reject);
      };
    });
    const client = await connectFelixQuic({ host: '127.0.0.1', port: server.port, ca: server.certificate, logger });
    try {
      const stream = client.openBidi(64 << 10);
      const chunk = Buffer.alloc(64 << 10, 0x5a);
      const started = performance.now();
      const deadline = started + 2_000;
      let sent = 0;
      while (performance.now() < deadline) {
        sent += chunk.length;
        if (!stream.write(chunk)) await once(stream, 'drain');
      }
      stream.end();
      const bytes = await done;
      const seconds = (performance.now() - started) / 1000;
      assert.equal(bytes, sent, 'every byte written arrived');
      const mbps = bytes / seconds / 1e6;
      t.diagnostic(`QUIC one stream, 64 KiB writes: ${(bytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(2)} s = ${mbps.toFixed(1)} MB/s`);
      assert.ok(mbps > 0);
    } finally {
      await client.close();
    }
  });
});
