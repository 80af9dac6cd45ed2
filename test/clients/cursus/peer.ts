// The peer the SDK's flow tests (flows.test.ts) run against: the scripted fake with its in-memory
// broker by default, or a Cursus Wire v2 broker already listening at CURSUS_PEER_ADDR (host:port),
// e.g. Quartet's listener once it is merged (`quartet serve`, then
// `CURSUS_PEER_ADDR=127.0.0.1:9000 node --import tsx --test test/clients/cursus/flows.test.ts`).
// Flow tests use the SDK only, never the fake's model, and name their topics and groups uniquely,
// so the same tests hold against either peer.

import { randomBytes } from 'node:crypto';
import { FakeCursusBroker } from './fake-broker.js';

export interface CursusPeer {
  readonly addr: string;
  /** What the tests run against, for their names and diagnostics. */
  readonly kind: 'fake' | 'broker';
  close(): Promise<void>;
}

export async function startPeer(): Promise<CursusPeer> {
  const given = process.env['CURSUS_PEER_ADDR'];
  if (given !== undefined && given !== '') return { addr: given, kind: 'broker', close: async () => {} };
  const fake = await FakeCursusBroker.start();
  return { addr: fake.addr, kind: 'fake', close: () => fake.close() };
}

/** A topic or group name no earlier run used. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}
