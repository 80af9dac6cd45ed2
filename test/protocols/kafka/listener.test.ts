// The Kafka listener as the server builds it from its configuration (builtinListenerFactories), on
// real loopback sockets: with SASL required, a connection that does not authenticate within
// listeners.kafka.authTimeoutMs is closed and counted while one that did stays; the per-peer limit
// reaches the listener from the configuration.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Broker } from '../../../src/core/broker.js';
import { silentLogger } from '../../../src/base/logger.js';
import { MetricsRegistry } from '../../../src/core/metrics.js';
import { ApiKey } from '../../../src/protocols/kafka/codec/api-keys.js';
import { Framer } from '../../../src/protocols/kafka/codec/framer.js';
import { decodeResponse, encodeRequest } from '../../../src/protocols/kafka/codec/frames.js';
import type { RequestInputOf, ResponseOf, SchemaApiKey } from '../../../src/protocols/kafka/codec/messages/index.js';
import { builtinFormats, builtinListenerFactories } from '../../../src/server/listeners.js';
import { loadConfig } from '../../../src/server/config.js';

const waitMsMax = 5_000;
type After = { after(fn: () => Promise<void> | void): void };

async function kafkaListener(t: After, flags: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-kafka-listener-'));
  const config = loadConfig({ flags: { 'data-dir': dir, 'kafka-addr': '127.0.0.1:0', ...flags }, env: {}, cwd: dir }).config;
  const broker = await Broker.open({ formats: builtinFormats(), dataDir: dir, memory: true, maintenanceIntervalMs: 0, scryptCost: { N: 1024, r: 8, p: 1 } });
  const metrics = new MetricsRegistry();
  const listener = builtinListenerFactories.get('kafka')!({ name: 'kafka', broker, settings: config.listeners.kafka, config, logger: silentLogger, metrics });
  const { port } = await listener.start();
  const clients: Client[] = [];
  t.after(async () => {
    for (const c of clients) c.socket.destroy();
    await listener.stop(1_000);
    await broker.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    broker,
    metrics,
    async client(): Promise<Client> {
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      const c = new Client(socket);
      clients.push(c);
      return c;
    },
  };
}

class Client {
  private readonly framer = new Framer({ frameBytesMax: 1 << 20 });
  private readonly frames: Buffer[] = [];
  private wake: (() => void) | null = null;
  private correlationId = 0;
  closed = false;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.frames.push(...this.framer.push(chunk).frames);
      this.wake?.();
    });
    socket.once('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  async call<K extends SchemaApiKey>(apiKey: K, version: number, body: RequestInputOf<K>): Promise<ResponseOf<K>> {
    this.socket.write(Buffer.concat(encodeRequest(apiKey, version, ++this.correlationId, 'listener-test', body)));
    await this.until(() => this.frames.length > 0, 'a response');
    const r = decodeResponse(apiKey, version, this.frames.shift()!);
    if (!r.ok) throw new Error(r.reason);
    return r.body;
  }

  whenClosed(): Promise<void> {
    return this.until(() => this.closed, 'the connection to close');
  }

  private async until(check: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + waitMsMax;
    while (!check()) {
      if (this.closed) throw new Error(`connection closed while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }
}

const apiVersionsBody = { clientSoftwareName: 't', clientSoftwareVersion: '1' };

describe('kafka listener', () => {
  it('with SASL required, closes a connection that has not authenticated within authTimeoutMs; an authenticated one stays', async (t) => {
    const h = await kafkaListener(t, { 'kafka-sasl-required': 'true', 'kafka-auth-timeout-ms': '300' });
    await h.broker.users.create({ username: 'dora', password: 'dora-password' });
    const member = await h.client();
    assert.equal((await member.call(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' })).errorCode, 0);
    assert.equal((await member.call(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from('\0dora\0dora-password') })).errorCode, 0);
    // One that asks only what is allowed before SASL: answered, but its deadline runs.
    const lazy = await h.client();
    const opened = Date.now();
    assert.equal((await lazy.call(ApiKey.ApiVersions, 3, apiVersionsBody)).errorCode, 0);
    await lazy.whenClosed();
    assert.ok(Date.now() - opened >= 200, 'not before the deadline');
    assert.match(h.metrics.render(), /quartet_listener_auth_timeouts_total\{listener="kafka"\} 1/);
    assert.equal((await member.call(ApiKey.ApiVersions, 3, apiVersionsBody)).errorCode, 0, 'the authenticated connection is still open');
  });

  it('takes connectionsPerPeerMax from the configuration', async (t) => {
    const h = await kafkaListener(t, { 'kafka-connections-per-peer-max': '2' });
    const a = await h.client();
    const b = await h.client();
    assert.equal((await a.call(ApiKey.ApiVersions, 3, apiVersionsBody)).errorCode, 0);
    assert.equal((await b.call(ApiKey.ApiVersions, 3, apiVersionsBody)).errorCode, 0);
    const refused = await h.client();
    await refused.whenClosed();
    assert.match(h.metrics.render(), /quartet_listener_peer_rejected_total\{listener="kafka"\} 1/);
  });
});
