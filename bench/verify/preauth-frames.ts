// Pre-authentication frame caps, measured against a running broker: on each listener, N
// connections (default 30) declare a 60 MiB request before authenticating and send its body in
// 1 MiB chunks; the broker's RSS is sampled (VmRSS) every 100 ms. Each listener's run ends when
// every connection is closed or its body is sent, at most 30 s. Prints the peak growth of RSS
// and how many connections the broker closed, per listener. HOLD=1 leaves the last byte of each
// body unsent and holds the connections 5 s more (what a peer that declared large frames costs).
// IGGY_LOGIN=user:password logs each Iggy connection in first (its own client id), so that the
// frames measured are those of authenticated peers (the broker's request budget, requestBytesMax).
//
// Usage: node --import tsx bench/verify/preauth-frames.ts PID kafka=HOST:PORT iggy=HOST:PORT
//        cursus=HOST:PORT http=HOST:PORT felix=HOST:PORT:CERTFILE

import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { CommandCode, IggyFramer, decodeReply, encodeRequestFrame, encodeRequestHeader, iggyProtocolVersion, Operation } from '../../src/protocols/iggy/codec/index.js';
import { CommandId, FrameKind, encodeFrame, encodeFrameHeader as cursusHeader, Status, Compression, encodeNegotiationRequest, negotiateCommand } from '../../src/protocols/cursus/codec/index.js';
import { encodeFrameHeader as felixHeader } from '../../src/protocols/felix/codec/index.js';
import { connectFelixQuic } from '../../src/protocols/felix/quic.js';
import { silentLogger } from '../../src/base/logger.js';

const MiB = 1024 * 1024;
const bodyBytes = 60 * MiB;
const conns = Number(process.env['CONNS'] ?? 30);
const runMsMax = 30_000;
const pid = Number(process.argv[2]);
const targets = new Map(process.argv.slice(3).map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]));
const chunk = Buffer.alloc(MiB, 0x41);
/** HOLD=1: send all but the last byte of each body and hold the connections open 5 s more. */
const hold = process.env['HOLD'] === '1';

function rss(): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return Number(m![1]) / 1024;
}

/** Resolves on drain or close, or after 200 ms. */
function drained(w: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      w.off('drain', done);
      w.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, 200);
    w.once('drain', done);
    w.once('close', done);
  });
}

/** Writes `bytes` of chunk after `head`, respecting backpressure, until done, closed, or the deadline. */
async function pump(w: Writable, head: Buffer[], bytes: number, deadline: number): Promise<{ sent: number; closed: boolean }> {
  let closed = false;
  w.on('close', () => (closed = true));
  w.on('error', () => (closed = true));
  for (const h of head) w.write(h);
  let sent = 0;
  if (hold) bytes -= 1;
  while (sent < bytes && !closed && Date.now() < deadline) {
    const ok = w.write(chunk.subarray(0, Math.min(MiB, bytes - sent)));
    sent += Math.min(MiB, bytes - sent);
    if (!ok) await drained(w);
  }
  // Give the broker a moment to close the connection after the body.
  const until = Math.min(deadline, Date.now() + (hold ? 5000 : 1000));
  while (!closed && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return { sent, closed };
}

function tcp(addr: string): Promise<Socket> {
  const i = addr.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const s = connect({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)) }, () => resolve(s));
    s.once('error', reject);
  });
}

/** IGGY_LOGIN=user:password: the Iggy connections log in before sending their frames. */
const iggyLogin = process.env['IGGY_LOGIN'] ?? null;

/** Logs `socket` in as IGGY_LOGIN with client id `client`; resolves to the session. */
function login(socket: Socket, client: bigint): Promise<bigint> {
  const [username, password] = [iggyLogin!.slice(0, iggyLogin!.indexOf(':')), iggyLogin!.slice(iggyLogin!.indexOf(':') + 1)];
  const framer = new IggyFramer();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no login reply in 10 s')), 10_000);
    const onData = (chunk: Buffer): void => {
      for (const r of framer.push(chunk)) {
        socket.off('data', onData);
        clearTimeout(timer);
        const decoded = r.ok ? decodeReply(CommandCode.loginRegister, Buffer.from(r.frame.body)) : null;
        if (decoded === null || !decoded.ok || decoded.value.rejected) reject(new Error('login refused'));
        else resolve(decoded.value.value.session);
        return;
      }
    };
    socket.on('data', onData);
    const request = { versionInfo: { protocolVersion: iggyProtocolVersion, sdkName: 'preauth-frames', sdkVersion: '0' }, username, password, context: null };
    for (const b of encodeRequestFrame(CommandCode.loginRegister, request, { client, request: 0n, session: 0n })) socket.write(b);
  });
}

function heads(listener: string, client = 1n, session = 0n): Buffer[] {
  switch (listener) {
    case 'kafka': {
      const h = Buffer.alloc(14);
      h.writeInt32BE(bodyBytes + 10, 0); h.writeInt16BE(0, 4); h.writeInt16BE(7, 6); h.writeInt32BE(1, 8); h.writeInt16BE(-1, 12);
      return [h];
    }
    case 'iggy': return [encodeRequestHeader({ size: 256 + bodyBytes, client, request: 1n, operation: Operation.nonReplicated, session, commandCode: 101 })];
    case 'cursus': return [
      ...encodeFrame({ kind: FrameKind.negotiationRequest, command: negotiateCommand, requestId: 0n }, [encodeNegotiationRequest({ minimumVersion: 2, maximumVersion: 2, compressions: [Compression.none] })]),
      cursusHeader({ kind: FrameKind.request, compression: Compression.none, end: false, command: CommandId.PUBLISH!, status: Status.ok, requestId: 1n, encodedLength: bodyBytes, decodedLength: bodyBytes, crc32c: 0 }),
    ];
    case 'http': return [Buffer.from(`POST /api/v1/topics HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${bodyBytes}\r\n\r\n`)];
    default: throw new Error(listener);
  }
}

async function run(listener: string, addr: string): Promise<void> {
  const start = rss();
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 100);
  const deadline = Date.now() + runMsMax;
  const t0 = Date.now();
  let results: Array<{ sent: number; closed: boolean }>;
  if (listener === 'felix') {
    const [host, port, cert] = addr.split(':');
    const ca = readFileSync(cert!, 'utf8');
    const clients = await Promise.all(Array.from({ length: conns }, () => connectFelixQuic({ host: host!, port: Number(port), ca, logger: silentLogger })));
    results = await Promise.all(clients.map((c) => pump(c.openBidi(), [felixHeader(0, bodyBytes)], bodyBytes, deadline)));
    await Promise.allSettled(clients.map((c) => c.close()));
  } else {
    const sockets = await Promise.all(Array.from({ length: conns }, () => tcp(addr)));
    const loggedIn = listener === 'iggy' && iggyLogin !== null;
    const sessions = loggedIn ? await Promise.all(sockets.map((s, i) => login(s, BigInt(i + 1)))) : sockets.map(() => 0n);
    results = await Promise.all(sockets.map((s, i) => pump(s, heads(listener, loggedIn ? BigInt(i + 1) : 1n, sessions[i]!), bodyBytes, deadline)));
    for (const s of sockets) s.destroy();
  }
  clearInterval(sampler);
  peak = Math.max(peak, rss());
  const closed = results.filter((r) => r.closed).length;
  const sentMiB = results.reduce((a, r) => a + r.sent, 0) / MiB;
  console.log(`${listener}: RSS ${start.toFixed(0)} -> peak ${peak.toFixed(0)} MiB (+${(peak - start).toFixed(0)}), ${closed}/${conns} closed by the broker, ${sentMiB.toFixed(0)} MiB written by clients, ${Date.now() - t0} ms`);
}

for (const [listener, addr] of targets) {
  await run(listener, addr);
  await new Promise((r) => setTimeout(r, 1000));
}
process.exit(0);
