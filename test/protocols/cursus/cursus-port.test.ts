import assert from 'node:assert/strict';
import { createServer, connect, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { silentLogger } from '../../../src/base/logger.js';
import { CursusPortConnection } from '../../../src/protocols/cursus/cursus-port.js';
import type { ConnectionContext } from '../../../src/protocols/transport.js';
import { V1Framer } from '../../../src/protocols/cursus/v1/framing.js';
import { startCursus } from './harness.js';
import { v1Frame, V1WireClient } from './v1-wire-client.js';

/** A connected pair of sockets: the broker's side, and the peer's. */
async function socketPair(t: TestContext): Promise<{ broker: Socket; peer: Socket }> {
  const server = createServer();
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const peer = connect({ host: '127.0.0.1', port });
  const broker = await accepted;
  t.after(() => {
    peer.destroy();
    broker.destroy();
    server.close();
  });
  return { broker, peer };
}

/** A listener context whose reads the test delivers itself, chunk by chunk (readInto). */
function fakeContext(): { context: ConnectionContext; deliver: (chunk: Buffer) => void; authenticated: () => boolean } {
  let onChunk: ((chunk: Buffer) => void) | null = null;
  let auth = false;
  const context: ConnectionContext = {
    id: 1,
    listener: 'cursus',
    remote: '127.0.0.1:1',
    tls: false,
    logger: silentLogger,
    beginRequest: () => () => {},
    inFlight: 0,
    authenticated: () => {
      auth = true;
    },
    unauthenticated: () => {},
    readInto: (handler) => {
      onChunk = handler;
    },
  };
  return { context, deliver: (chunk) => onChunk!(chunk), authenticated: () => auth };
}

/** The first v1 frame body the peer reads (bounded wait). */
function firstBody(peer: Socket): Promise<string> {
  const framer = new V1Framer();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no reply within the deadline')), 5_000);
    peer.on('data', (chunk: Buffer) => {
      const r = framer.push(chunk)[0];
      if (r === undefined) return;
      clearTimeout(timer);
      resolve(r.ok ? r.body.toString('utf8') : r.reason);
    });
  });
}

describe('the Cursus port with cursus.v1Compat', () => {
  it('waits for 4 bytes when the first allows v1, then serves v1 over every byte read, split as it came', async (t) => {
    const h = await startCursus(t, { settings: { v1Compat: true } });
    const { broker, peer } = await socketPair(t);
    const { context, deliver, authenticated } = fakeContext();
    const port = new CursusPortConnection(h.frontend, broker, context);
    const reply = firstBody(peer);
    const frame = v1Frame('LIST');
    deliver(frame.subarray(0, 1));
    deliver(frame.subarray(1, 3));
    assert.equal(port.protocol, null);
    deliver(frame.subarray(3, 5));
    assert.equal(port.protocol, 'v1');
    assert.ok(authenticated(), 'without requireAuth a v1 connection counts as authenticated at once');
    deliver(frame.subarray(5));
    assert.equal(await reply, 'OK count=0 topics=');
  });

  it('hands a connection that opens with CRS2 to Wire v2 at its first byte', async (t) => {
    const h = await startCursus(t, { settings: { v1Compat: true } });
    const { broker } = await socketPair(t);
    const { context, deliver } = fakeContext();
    const port = new CursusPortConnection(h.frontend, broker, context);
    deliver(Buffer.from('C'));
    assert.equal(port.protocol, 'v2');
  });

  it('serves Wire v2 and v1 clients side by side on one listener', async (t) => {
    const h = await startCursus(t, { settings: { v1Compat: true } });
    const v2 = await h.client();
    const v1 = await V1WireClient.connect(h.port);
    t.after(() => v1.destroy());
    assert.match(await v1.line('CREATE topic=both partitions=1'), /^OK topic=both /);
    assert.equal((await v2.request('LIST'))[0]!.payload.toString(), 'OK count=1 topics=both');
  });
});
