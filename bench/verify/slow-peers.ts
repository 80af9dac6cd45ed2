// Pre-authentication timeouts, measured against a running broker: on each TCP listener given, N
// connections (default 20) send a request one byte a second and never authenticate; prints when
// the broker closed them (min / max seconds after opening) and how many were still open at the end
// (at most 40 s). With TLS=1 the connections instead open TCP and never start (or finish) a TLS
// handshake.
//
// Usage: node --import tsx bench/verify/slow-peers.ts NAME=HOST:PORT ...

import { connect, type Socket } from 'node:net';

const conns = Number(process.env['CONNS'] ?? 20);
const runMsMax = Number(process.env['RUN_MS'] ?? 40_000);
const tls = process.env['TLS'] === '1';
const targets = process.argv.slice(2).map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as const);

function open(addr: string): Promise<Socket> {
  const i = addr.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const s = connect({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)) }, () => resolve(s));
    s.once('error', reject);
  });
}

/** The first bytes of a request that never completes, per listener. */
function slowBytes(name: string): Buffer {
  if (tls) return Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]); // a ClientHello record, never finished
  if (name === 'http') return Buffer.from('GET /live HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(100));
  if (name === 'kafka') return Buffer.from([0, 0, 0, 96, ...Buffer.alloc(96, 1)]);
  return Buffer.alloc(100, 0x01);
}

async function one(name: string, addr: string): Promise<number | null> {
  const s = await open(addr);
  const t0 = Date.now();
  const bytes = slowBytes(name);
  let closedAt: number | null = null;
  s.on('error', () => undefined);
  s.on('close', () => (closedAt = Date.now() - t0));
  for (let i = 0; closedAt === null && Date.now() - t0 < runMsMax; i++) {
    if (i < bytes.length && !s.destroyed) s.write(bytes.subarray(i, i + 1));
    await new Promise((r) => setTimeout(r, 1000));
  }
  s.destroy();
  return closedAt;
}

const results = await Promise.all(targets.map(async ([name, addr]) => [name, await Promise.all(Array.from({ length: conns }, () => one(name, addr)))] as const));
for (const [name, times] of results) {
  const closed = times.filter((t): t is number => t !== null);
  console.log(`${name}${tls ? ' (TLS never finished)' : ' (1 byte/s)'}: ${closed.length}/${conns} closed by the broker, after ${closed.length ? (Math.min(...closed) / 1000).toFixed(1) : '-'}..${closed.length ? (Math.max(...closed) / 1000).toFixed(1) : '-'} s; ${conns - closed.length} still open after ${runMsMax / 1000} s`);
}
