// The peer the SDK's flow tests (flows.test.ts) run against: by default Quartet itself (the whole
// server as `npm start` runs it, in this process, on a temporary data directory, with only the
// Cursus listener); with CURSUS_PEER=fake the scripted fake and its in-memory broker; with
// CURSUS_PEER_ADDR=host:port a Cursus Wire v2 broker already listening there. Flow tests use the
// SDK only, never a peer's internals, and name their topics and groups uniquely, so the same tests
// hold against every peer.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../src/base/logger.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer } from '../../../src/server/server.js';
import { FakeCursusBroker } from './fake-broker.js';

export interface CursusPeer {
  readonly addr: string;
  /** What the tests run against, for their names and diagnostics. */
  readonly kind: 'quartet' | 'fake' | 'broker';
  close(): Promise<void>;
}

export async function startPeer(): Promise<CursusPeer> {
  const given = process.env['CURSUS_PEER_ADDR'];
  if (given !== undefined && given !== '') return { addr: given, kind: 'broker', close: async () => {} };
  if (process.env['CURSUS_PEER'] === 'fake') {
    const fake = await FakeCursusBroker.start();
    return { addr: fake.addr, kind: 'fake', close: () => fake.close() };
  }
  return startQuartet();
}

async function startQuartet(): Promise<CursusPeer> {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-cursus-sdk-'));
  const { config } = loadConfig({
    flags: { 'data-dir': join(dir, 'data'), 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'cursus-addr': '127.0.0.1:0', 'kafka-enabled': false, 'iggy-enabled': false },
    env: { QUARTET_ROOT_PASSWORD: 'root-password' },
    cwd: dir,
  });
  const server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
  await server.ready;
  return {
    addr: `127.0.0.1:${server.listenerAddresses().get('cursus')!.port}`,
    kind: 'quartet',
    close: async () => {
      await server.stop('test done');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A topic or group name no earlier run used. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}
