// The peer the SDK's flow tests (flows.test.ts) run against, chosen by FELIX_PEER:
//   quartet (the default): Quartet itself (the whole server as `npm start` runs it, in this
//        process, on a temporary data directory, with only the Felix listener and a certificate
//        made here);
//   fake: the scripted peer of ./fake-peer.ts, on the real QUIC server, in this process;
// and with FELIX_PEER_ADDR=host:port (plus FELIX_PEER_CA=<PEM file>, FELIX_PEER_TENANT,
// FELIX_PEER_TOKEN) a Felix broker already listening there. Flow tests use the SDK only, never a
// peer's internals, and name their streams, caches and groups uniquely; what a test needs to
// exist it asks of the peer first (prepare), since Felix has no request that creates a stream.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../src/base/logger.js';
import { selfSignedLocalhost } from '../../../src/protocols/felix/self-signed.js';
import { FakeFelixPeer } from './fake-peer.js';

export interface FelixPeer {
  readonly addr: string;
  /** The PEM the client trusts. */
  readonly ca: string;
  readonly tenantId: string;
  readonly token: string;
  readonly kind: 'fake' | 'quartet' | 'broker';
  /** Makes the streams (with their shard counts) and cache scopes a test uses exist. */
  prepare(what: { streams?: Array<{ name: string; shards?: number }>; caches?: string[] }): Promise<void>;
  close(): Promise<void>;
}

export async function startPeer(): Promise<FelixPeer> {
  const given = process.env['FELIX_PEER_ADDR'];
  if (given !== undefined && given !== '') return externalBroker(given);
  const kind = process.env['FELIX_PEER'] ?? 'quartet';
  if (kind === 'fake') return startFake();
  if (kind === 'quartet') return startQuartet();
  throw new Error(`FELIX_PEER=${kind}: fake or quartet`);
}

async function startFake(): Promise<FelixPeer> {
  const fake = await FakeFelixPeer.start();
  const tenantId = 'default';
  return {
    addr: fake.addr,
    ca: fake.certificate,
    tenantId,
    token: 'test-token',
    kind: 'fake',
    async prepare(what) {
      for (const s of what.streams ?? []) fake.model.createStream(tenantId, 'default', s.name, s.shards ?? 1);
      for (const c of what.caches ?? []) fake.model.createCache(tenantId, 'default', c);
    },
    close: () => fake.close(),
  };
}

function externalBroker(addr: string): FelixPeer {
  const caFile = process.env['FELIX_PEER_CA'];
  if (caFile === undefined || caFile === '') throw new Error('FELIX_PEER_ADDR needs FELIX_PEER_CA, the PEM file of the broker certificate (or its CA)');
  return {
    addr,
    ca: readFileSync(caFile, 'utf8'),
    tenantId: process.env['FELIX_PEER_TENANT'] ?? 'default',
    token: process.env['FELIX_PEER_TOKEN'] ?? '',
    kind: 'broker',
    // Streams and caches of an external broker are made by its operator beforehand.
    prepare: async () => {},
    close: async () => {},
  };
}

/**
 * Quartet with only its Felix listener, a certificate made here, and the root user's token. A
 * Felix stream is a topic of the default namespace (docs/mapping.md); a cache scope needs nothing.
 */
async function startQuartet(): Promise<FelixPeer> {
  // Loaded here: the whole server is a lot to load for the tests that run against the fake.
  const { loadConfig } = await import('../../../src/server/config.js');
  const { startServer } = await import('../../../src/server/server.js');
  const dir = mkdtempSync(join(tmpdir(), 'quartet-felix-sdk-'));
  const tls = selfSignedLocalhost();
  writeFileSync(join(dir, 'cert.pem'), tls.cert);
  writeFileSync(join(dir, 'key.pem'), tls.key);
  const { config } = loadConfig({
    flags: {
      'data-dir': join(dir, 'data'),
      'http-addr': '127.0.0.1:0',
      'felix-addr': '127.0.0.1:0',
      'felix-enabled': true,
      'felix-tls-cert': join(dir, 'cert.pem'),
      'felix-tls-key': join(dir, 'key.pem'),
      'kafka-enabled': false,
      'iggy-enabled': false,
      'cursus-enabled': false,
    },
    env: { QUARTET_ROOT_PASSWORD: 'root-password' },
    cwd: dir,
  });
  const server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
  await server.ready;
  const felix = [...server.listenerAddresses()].find(([name]) => String(name) === 'felix')?.[1];
  if (felix === undefined) {
    await server.stop('no Felix listener');
    throw new Error('FELIX_PEER=quartet: this build has no Felix listener');
  }
  const broker = server.broker()!;
  return {
    addr: `127.0.0.1:${felix.port}`,
    ca: tls.cert,
    tenantId: 'default',
    token: 'root-password',
    kind: 'quartet',
    async prepare(what) {
      for (const s of what.streams ?? []) await broker.createTopic('default', s.name, { partitions: s.shards ?? 1 });
    },
    close: async () => {
      await server.stop('test done');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A stream, cache or group name no earlier run used. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}
