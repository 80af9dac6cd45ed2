// Shared fixtures for the Felix listener tests: a broker on a temp data dir, the Felix listener
// (createFelixListener) on 127.0.0.1 UDP port 0, and raw-frame clients over real QUIC (quic.ts's
// client and the codec). Every wait has a deadline; nothing sleeps.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { Broker, type BrokerOptions } from '../../../src/core/broker.js';
import { createLogger, silentLogger } from '../../../src/base/logger.js';
import { MetricsRegistry } from '../../../src/core/metrics.js';
import { FelixFramer, decodeFrame, encodeMessage, type FelixFrame, type FelixMessage } from '../../../src/protocols/felix/codec/index.js';
import { createFelixListener, type FelixListener } from '../../../src/protocols/felix/listener.js';
import { connectFelixQuic, type FelixQuicClient } from '../../../src/protocols/felix/quic.js';
import type { FelixSettings } from '../../../src/protocols/felix/settings.js';
import type { ListenerSettings } from '../../../src/protocols/transport.js';
import { builtinFormats, builtinTransactionOptions } from '../../../src/server/listeners.js';

export const testScryptCost = { N: 1024, r: 8, p: 1 };
export const rootPassword = 'secret-root';

type After = { after(fn: () => Promise<void> | void): void };

/** What a FrameReader yields: a decoded frame, a frame that did not decode, or the stream's end. */
export type Received = { kind: 'frame'; frame: FelixFrame } | { kind: 'bad'; reason: string } | { kind: 'end' };

/** Decoded frames of a readable stream, one at a time with a deadline. */
export class FrameReader {
  private readonly framer = new FelixFramer({ payloadBytesMax: 1 << 26 });
  private readonly queue: Received[] = [];
  private waiter: (() => void) | null = null;
  private ended = false;

  constructor(readonly stream: Readable) {
    stream.on('data', (chunk: Buffer) => {
      for (const r of this.framer.push(chunk)) {
        if (!r.ok) this.queue.push({ kind: 'bad', reason: r.reason });
        else {
          const d = decodeFrame(r.frame.header.flags, Buffer.from(r.frame.payload));
          this.queue.push(d.ok ? { kind: 'frame', frame: d.value } : { kind: 'bad', reason: d.reason });
        }
      }
      this.wake();
    });
    const end = (): void => {
      this.ended = true;
      this.wake();
    };
    stream.once('end', end);
    stream.once('close', end);
    stream.on('error', end);
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  /** The next thing received, within `ms`. */
  async next(ms = 5_000): Promise<Received> {
    const deadline = Date.now() + ms;
    for (;;) {
      const r = this.queue.shift();
      if (r !== undefined) return r;
      if (this.ended) return { kind: 'end' };
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no frame within the deadline');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The next frame, which must be a JSON message. */
  async message(ms?: number): Promise<FelixMessage> {
    const r = await this.next(ms);
    if (r.kind !== 'frame' || r.frame.kind !== 'message') throw new Error(`expected a JSON message, got ${JSON.stringify(r.kind === 'frame' ? r.frame.kind : r)}`);
    return r.frame.message;
  }

  /** The stream ends (with nothing more received). */
  async end(ms?: number): Promise<void> {
    const r = await this.next(ms);
    if (r.kind !== 'end') throw new Error(`expected the end of the stream, got ${JSON.stringify(r.kind === 'frame' ? r.frame.kind : r)}`);
  }
}

/** A client-opened bidirectional stream: write frames, read frames. */
export interface TestStream {
  write(chunks: readonly Buffer[] | Buffer): void;
  send(m: FelixMessage): void;
  reader: FrameReader;
  raw: Writable;
}

export interface FelixHarness {
  dataDir: string;
  broker: Broker;
  listener: FelixListener;
  port: number;
  metrics: MetricsRegistry;
  connect(): Promise<TestClient>;
  stop(): Promise<void>;
}

export class TestClient {
  /** Event streams the broker opened, in order. */
  readonly uni: FrameReader[] = [];
  private uniWaiters: Array<() => void> = [];

  constructor(readonly quic: FelixQuicClient) {
    quic.on('uni', (s: Readable) => {
      this.uni.push(new FrameReader(s));
      for (const w of this.uniWaiters.splice(0)) w();
    });
  }

  stream(): TestStream {
    const d = this.quic.openBidi();
    const reader = new FrameReader(d);
    return {
      write: (chunks) => {
        for (const c of Buffer.isBuffer(chunks) ? [chunks] : chunks) d.write(c);
      },
      send: (m) => {
        for (const c of encodeMessage(m)) d.write(c);
      },
      reader,
      raw: d,
    };
  }

  /** A stream that has authenticated (legacy `ok`, or auth_ok with `clientFlags`). */
  async authed(tenantId = 'default', token = 'any', clientFlags?: number): Promise<TestStream> {
    const s = this.stream();
    s.send({ type: 'auth', tenantId, token, ...(clientFlags !== undefined ? { clientFlags, clientFeatures: 0x3ff } : {}) });
    const reply = await s.reader.message();
    if (reply.type !== 'ok' && reply.type !== 'auth_ok') throw new Error(`auth answered ${JSON.stringify(reply)}`);
    return s;
  }

  /** The `n`th event stream the broker opened (0-based), within a deadline. */
  async eventStream(n: number, ms = 5_000): Promise<FrameReader> {
    const deadline = Date.now() + ms;
    while (this.uni.length <= n) {
      if (Date.now() > deadline) throw new Error('no event stream within the deadline');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.uniWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.uni[n]!;
  }

  close(): Promise<void> {
    return this.quic.close();
  }
}

export interface FelixHarnessOptions {
  dataDir?: string;
  keepDataDir?: boolean;
  settings?: Partial<FelixSettings>;
  listener?: Partial<ListenerSettings>;
  broker?: Partial<BrokerOptions>;
}

export async function openBroker(dataDir: string, options: Partial<BrokerOptions> = {}): Promise<Broker> {
  return Broker.open({
    formats: builtinFormats(),
    transactions: builtinTransactionOptions(),
    dataDir,
    maintenanceIntervalMs: 0,
    scryptCost: testScryptCost,
    rootUser: { username: 'root', password: rootPassword },
    ...options,
  });
}

/** `t`: whose after() stops the harness (null: the caller stops it). */
export async function startFelix(t: After | null, options: FelixHarnessOptions = {}): Promise<FelixHarness> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'quartet-felix-'));
  const broker = await openBroker(dataDir, options.broker);
  const metrics = new MetricsRegistry();
  const listener = createFelixListener(
    {
      name: 'felix',
      broker,
      logger: process.env.FELIX_TEST_LOG ? createLogger('debug', (l) => process.stderr.write(l + '\n')) : silentLogger,
      metrics,
      settings: { addr: { host: '127.0.0.1', port: 0 }, maxConnections: 100, tlsCertFile: null, tlsKeyFile: null, advertisedAddr: null, ...options.listener },
    },
    options.settings,
  );
  const address = await listener.start();
  const clients: TestClient[] = [];
  let stopped = false;
  const h: FelixHarness = {
    dataDir,
    broker,
    listener,
    port: address.port,
    metrics,
    async connect() {
      const quic = await connectFelixQuic({ host: '127.0.0.1', port: address.port, ca: listener.certificate!, logger: silentLogger });
      const c = new TestClient(quic);
      clients.push(c);
      return c;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.allSettled(clients.map((c) => c.close()));
      await listener.stop(1_000);
      await broker.close();
      if (options.keepDataDir !== true && options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  t?.after(() => h.stop());
  return h;
}
