// Replies with file slices (src/protocols/file-replies.ts) and the addon's SocketSender under
// them: bytes arrive in order and intact, a reader that stops makes the sender wait (and resume)
// rather than spin or drop bytes, and a socket that closes mid-reply rejects the write.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { nativeStatus, openSocketSender } from '../../src/base/native.js';
import { canSendFiles, isLoopbackAddress, sendFileMode, writeReply, type ReplyChunk } from '../../src/protocols/file-replies.js';

const notBuilt = 'native addon not built: run `npm install` (node-gyp, g++ and make)';
const skip = nativeStatus.loaded ? false : notBuilt;

/** A connected pair on 127.0.0.1: `server` is the accepted side. */
async function socketPair(t: { after(fn: () => unknown): void }): Promise<{ server: Socket; client: Socket }> {
  const listener: Server = createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const port = (listener.address() as { port: number }).port;
  const accepted = once(listener, 'connection');
  const client = connect(port, '127.0.0.1');
  const [server] = (await accepted) as [Socket];
  await once(client, 'connect').catch(() => undefined);
  listener.close();
  t.after(() => {
    server.destroy();
    client.destroy();
  });
  return { server, client };
}

/** Collects what `socket` receives until `bytes` have arrived. */
function receive(socket: Socket, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let got = 0;
    const onData = (chunk: Buffer): void => {
      parts.push(chunk);
      got += chunk.length;
      if (got >= bytes) {
        socket.off('data', onData);
        resolve(Buffer.concat(parts));
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

describe('when replies use file slices', () => {
  it('QUARTET_SENDFILE: 0 never, 1 always, anything else auto', () => {
    assert.equal(sendFileMode('0'), 'never');
    assert.equal(sendFileMode('1'), 'always');
    assert.equal(sendFileMode(undefined), 'auto');
    assert.equal(sendFileMode('auto'), 'auto');
  });

  it('recognises loopback peers', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(a), true, a);
    for (const a of ['10.0.0.1', '192.168.1.127', '::ffff:10.1.2.3', 'fe80::1', '2001:db8::1', undefined]) assert.equal(isLoopbackAddress(a), false, String(a));
  });
});

describe('replies with file slices (sendfile)', { skip }, () => {
  let dir: string;
  let fd: number;
  const content = randomBytes(24 * 1024 * 1024);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-file-replies-'));
    const path = join(dir, 'segment.log');
    writeFileSync(path, content);
    fd = openSync(path, 'r');
  });

  after(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('plain TCP sockets qualify; by default only for peers on other hosts', async (t) => {
    const { server } = await socketPair(t);
    assert.equal(canSendFiles(server, 'always'), true);
    assert.equal(canSendFiles(server, 'auto'), false, 'a loopback peer is served from buffers');
    assert.equal(canSendFiles(server, 'never'), false);
    server.destroy();
    assert.equal(canSendFiles(server, 'always'), false, 'a destroyed socket has no fd');
  });

  it('writes buffers and file slices in order, byte for byte', async (t) => {
    const { server, client } = await socketPair(t);
    const chunks: ReplyChunk[] = [
      Buffer.from('head:'),
      { fd, position: 1000, length: 70_000 },
      Buffer.from(':middle:'),
      { fd, position: 5, length: 3 },
      { fd, position: 2_000_000, length: 1_500_000 },
      Buffer.from(':tail'),
    ];
    const expected = Buffer.concat([
      Buffer.from('head:'),
      content.subarray(1000, 71_000),
      Buffer.from(':middle:'),
      content.subarray(5, 8),
      content.subarray(2_000_000, 3_500_000),
      Buffer.from(':tail'),
    ]);
    const whole = Buffer.concat([Buffer.from('before|'), expected, Buffer.from('|after')]);
    const received = receive(client, whole.length);
    // Something already queued on the socket goes first; what is written after, after.
    server.write('before|');
    await writeReply(server, chunks);
    server.write('|after');
    assert.deepEqual(await received, whole);
  });

  it('waits while the reader does not read, then sends the rest', async (t) => {
    const { server, client } = await socketPair(t);
    client.pause();
    let done = false;
    const writing = writeReply(server, [Buffer.from('x'), { fd, position: 0, length: content.length }]).then(() => (done = true));
    // 24 MiB cannot fit in the socket buffers of both ends: the sender must be waiting.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(done, false, 'the reply cannot be out while the reader holds back');
    const received = receive(client, content.length + 1);
    client.resume();
    await writing;
    assert.deepEqual(await received, Buffer.concat([Buffer.from('x'), content]));
  });

  it('rejects when the socket closes in the middle of a slice, and lets the connection go', { timeout: 10_000 }, async (t) => {
    const { server, client } = await socketPair(t);
    client.pause();
    const writing = writeReply(server, [{ fd, position: 0, length: content.length }]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    server.destroy();
    await assert.rejects(writing, /closed/);
    // The sender's duplicate fd is closed too: the peer sees the connection end.
    client.on('data', () => undefined);
    client.resume();
    await once(client, 'close');
  });

  it('rejects a slice past the end of its file (the file ended first)', async (t) => {
    const { server, client } = await socketPair(t);
    const received = receive(client, 10);
    await assert.rejects(writeReply(server, [{ fd, position: content.length - 10, length: 20 }]), /ended inside a file slice/);
    assert.deepEqual(await received, content.subarray(content.length - 10));
  });

  it('the native sender checks its arguments and refuses to work once closed', async (t) => {
    const { server } = await socketPair(t);
    const socketFd = (server as unknown as { _handle: { fd: number } })._handle.fd;
    assert.throws(() => openSocketSender(-1), TypeError);
    const sender = openSocketSender(socketFd)!;
    await assert.rejects(sender.sendFile(fd, -1, 1), TypeError);
    assert.throws(() => sender.waitWritable(undefined as unknown as () => void), TypeError);
    sender.close();
    sender.close();
    await assert.rejects(sender.sendFile(fd, 0, 1), /closed/);
    assert.throws(() => sender.waitWritable(() => undefined), /closed/);
  });

  it('a sender closed while its send runs on the thread pool keeps the socket until the send returns', async (t) => {
    const { server, client } = await socketPair(t);
    const socketFd = (server as unknown as { _handle: { fd: number } })._handle.fd;
    const sender = openSocketSender(socketFd)!;
    const chunks: Buffer[] = [];
    client.on('data', (chunk: Buffer) => chunks.push(chunk));
    const sending = sender.sendFile(fd, 0, 1_000_000);
    sender.close();
    const sent = await sending;
    assert.ok(sent > 0, `the send in flight completed on the duplicate (${sent})`);
    const deadline = Date.now() + 5_000;
    while (Buffer.concat(chunks).length < sent && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(Buffer.concat(chunks), content.subarray(0, sent));
  });
});
