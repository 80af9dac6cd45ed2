// Connection slots against a running broker: OPEN idle connections (default 500) that never
// authenticate, spread over loopback addresses 127.0.0.2.. (PER_ADDR each); then an Iggy client
// logs in. Prints how many idle connections the broker closed, whether (and how fast) the login
// worked, and, with ONE_PEER=n, how many of n connections from 127.0.0.250 alone were refused.
//
// Usage: node --import tsx bench/verify/idle-slots.ts HOST:PORT USER PASSWORD

import { connect, type Socket } from 'node:net';
import { IggyClient } from '../../src/clients/iggy/index.js';

const [addr, username, password] = process.argv.slice(2) as [string, string, string];
const host = addr.slice(0, addr.lastIndexOf(':'));
const port = Number(addr.slice(addr.lastIndexOf(':') + 1));
const count = Number(process.env['OPEN'] ?? 500);
const perAddr = Number(process.env['PER_ADDR'] ?? 100);
const onePeer = Number(process.env['ONE_PEER'] ?? 0);

function open(localAddress: string): Promise<{ socket: Socket; closed: () => boolean }> {
  return new Promise((resolve) => {
    let closed = false;
    const socket = connect({ host, port, localAddress });
    socket.on('error', () => undefined);
    socket.on('close', () => (closed = true));
    socket.once('connect', () => resolve({ socket, closed: () => closed }));
    socket.once('close', () => resolve({ socket, closed: () => true }));
  });
}

const idle = [];
for (let i = 0; i < count; i++) idle.push(await open(`127.0.0.${2 + Math.floor(i / perAddr)}`));
await new Promise((r) => setTimeout(r, 500));
console.log(`${count} idle unauthenticated connections: ${idle.filter((c) => c.closed()).length} closed by the broker`);
const t0 = Date.now();
const client = new IggyClient({ host, port, credentials: { username, password } });
try {
  await client.connect();
  console.log(`an Iggy client connected and logged in after ${Date.now() - t0} ms; idle connections closed by then: ${idle.filter((c) => c.closed()).length}`);
} catch (err) {
  console.log(`the Iggy client failed after ${Date.now() - t0} ms: ${(err as Error).message}`);
}
await client.close();
if (onePeer > 0) {
  const mine = [];
  for (let i = 0; i < onePeer; i++) mine.push(await open('127.0.0.250'));
  await new Promise((r) => setTimeout(r, 500));
  console.log(`${onePeer} connections from 127.0.0.250: ${mine.filter((c) => c.closed()).length} closed by the broker`);
  for (const c of mine) c.socket.destroy();
}
for (const c of idle) c.socket.destroy();
process.exit(0);
