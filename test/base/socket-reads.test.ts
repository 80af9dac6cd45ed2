// SocketReads: reads land in the shared buffer, or in place in a target a DirectReads offers;
// chunks read before a handler is attached are kept and replayed.
import assert from 'node:assert/strict';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SocketReads, sharedReadBuffer } from '../../src/base/socket-reads.js';

const sent = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7) & 0xff));

// Every connection gets `sent`, then end.
let server: Server;
let port = 0;
before(async () => {
  server = createServer((s) => s.end(sent));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('SocketReads', () => {
  const open = (reads: SocketReads): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, onread: reads.onread });
      socket.once('connect', () => resolve(socket));
      socket.once('error', reject);
    });
  const ended = (socket: Socket): Promise<void> => new Promise((resolve) => socket.once('end', resolve));

  it('reads in place into the offered target, the rest through chunks of the shared buffer', async () => {
    const reads = new SocketReads();
    const target = Buffer.alloc(150_000);
    let filled = 0;
    let directCalls = 0;
    const chunks: Buffer[] = [];
    reads.attach((chunk) => {
      assert.equal(chunk.buffer, sharedReadBuffer.buffer, 'chunks are views of the shared buffer');
      chunks.push(Buffer.from(chunk));
    }, {
      target: () => (filled < target.length ? target.subarray(filled) : null),
      filled: (into, bytes) => {
        assert.equal(into.byteOffset, target.byteOffset + filled, 'the target handed out is the one filled');
        directCalls++;
        filled += bytes;
      },
    });
    const socket = await open(reads);
    await ended(socket);
    socket.destroy();
    assert.ok(directCalls > 0);
    assert.equal(filled, target.length, 'reads stop at the end of the target');
    assert.deepEqual(Buffer.concat([target, ...chunks]), sent);
  });

  it('keeps chunks that arrive before a handler is attached and replays them in order', async () => {
    const reads = new SocketReads();
    const socket = await open(reads);
    await ended(socket);
    socket.destroy();
    const chunks: Buffer[] = [];
    reads.attach((chunk) => chunks.push(Buffer.from(chunk)));
    assert.deepEqual(Buffer.concat(chunks), sent);
  });
});

describe('SocketReads with a faulty DirectReads', () => {
  for (const [name, target] of [
    ['throws', (): Buffer => { throw new Error('no target'); }],
    ['offers an empty buffer (libuv would answer ENOBUFS)', (): Buffer => Buffer.alloc(0)],
  ] as const) {
    it(`reads into the shared buffer when target() ${name}`, async () => {
      const reads = new SocketReads();
      const chunks: Buffer[] = [];
      reads.attach((chunk) => chunks.push(Buffer.from(chunk)), { target, filled: () => assert.fail('nothing is read in place') });
      const socket = connect({ host: '127.0.0.1', port, onread: reads.onread });
      await new Promise<void>((resolve, reject) => {
        socket.once('end', resolve);
        socket.once('error', reject);
      });
      socket.destroy();
      assert.deepEqual(Buffer.concat(chunks), sent);
    });
  }
});
