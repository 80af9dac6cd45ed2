// Failed-login throttling against a running broker: WORKERS loops (default 4) each guess a user's
// password over and over for SECONDS (default 10), one connection per guess, from one loopback
// address (LOCAL, default 127.0.0.1), through one protocol: Kafka SASL/SCRAM-SHA-256 or PLAIN, or
// Iggy. Prints the guesses per second, then whether the right password logs in right after.
// `scram-probe` instead prints the first SCRAM reply for a known and an unknown user, twice.
//
// Usage: node --import tsx bench/verify/login-guessing.ts scram|plain|iggy|scram-probe HOST:PORT USER RIGHT-PASSWORD

import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { CursusClient } from '../../src/clients/cursus/index.js';
import { FelixClient } from '../../src/clients/felix/index.js';
import { IggyClient } from '../../src/clients/iggy/index.js';
import { ApiKey } from '../../src/protocols/kafka/codec/api-keys.js';
import { decodeResponse, encodeRequest } from '../../src/protocols/kafka/codec/frames.js';
import { ScramClient } from '../../src/protocols/kafka/sasl/scram.js';

const [mode, addr, user, right] = process.argv.slice(2) as [string, string, string, string];
const host = addr.slice(0, addr.lastIndexOf(':'));
const port = Number(addr.slice(addr.lastIndexOf(':') + 1));
const workers = Number(process.env['WORKERS'] ?? 4);
const seconds = Number(process.env['SECONDS'] ?? 10);
const localAddress = process.env['LOCAL'] ?? '127.0.0.1';

/** A Kafka connection answering one request at a time. */
class Conn {
  private buf = Buffer.alloc(0);
  private waiter: ((b: Buffer) => void) | null = null;
  private corr = 1;
  constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      if (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readInt32BE(0) && this.waiter) {
        const frame = this.buf.subarray(4, 4 + this.buf.readInt32BE(0));
        this.buf = this.buf.subarray(4 + frame.length);
        const w = this.waiter;
        this.waiter = null;
        w(frame);
      }
    });
  }
  static open(): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const s = connect({ host, port, localAddress }, () => resolve(new Conn(s)));
      s.once('error', reject);
    });
  }
  call<K extends typeof ApiKey.SaslHandshake | typeof ApiKey.SaslAuthenticate>(key: K, version: number, body: never) {
    return new Promise<ReturnType<typeof decodeResponse<K>>>((resolve, reject) => {
      this.waiter = (frame) => resolve(decodeResponse(key, version, frame));
      this.socket.once('close', () => reject(new Error('closed')));
      for (const c of encodeRequest(key, version, this.corr++, 'guess', body)) this.socket.write(c);
    });
  }
}

async function kafkaLogin(mechanism: 'PLAIN' | 'SCRAM-SHA-256', password: string): Promise<{ ok: boolean; code: number; first?: string }> {
  const c = await Conn.open();
  try {
    const hs = await c.call(ApiKey.SaslHandshake, 1, { mechanism } as never);
    if (!hs.ok || hs.body.errorCode !== 0) return { ok: false, code: -1 };
    if (mechanism === 'PLAIN') {
      const r = await c.call(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from(`\0${user}\0${password}`) } as never);
      return { ok: r.ok && r.body.errorCode === 0, code: r.ok ? r.body.errorCode : -1 };
    }
    const client = new ScramClient('SCRAM-SHA-256', user, password);
    const first = await c.call(ApiKey.SaslAuthenticate, 2, { authBytes: client.firstMessage() } as never);
    if (!first.ok || first.body.errorCode !== 0) return { ok: false, code: first.ok ? first.body.errorCode : -1, first: first.ok ? `error ${first.body.errorCode} ${first.body.errorMessage}` : 'undecodable' };
    const firstText = Buffer.from(first.body.authBytes).toString();
    const final = await c.call(ApiKey.SaslAuthenticate, 2, { authBytes: client.finalMessage(Buffer.from(first.body.authBytes)) } as never);
    return { ok: final.ok && final.body.errorCode === 0, code: final.ok ? final.body.errorCode : -1, first: firstText };
  } catch {
    return { ok: false, code: -2 };
  } finally {
    c.socket.destroy();
  }
}

async function iggyLogin(password: string): Promise<{ ok: boolean; code: number }> {
  const client = new IggyClient({ host, port, credentials: { username: user, password } });
  try {
    await client.connect();
    return { ok: true, code: 0 };
  } catch (err) {
    return { ok: false, code: Number((err as { code?: unknown }).code ?? -1) };
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function cursusLogin(password: string): Promise<{ ok: boolean; code: number }> {
  const client = new CursusClient({ host, port, credentials: { principal: user, token: password }, reconnect: false, poolSize: 1 });
  try {
    await client.connect();
    return { ok: true, code: 0 };
  } catch (err) {
    return { ok: false, code: String((err as Error).message).length };
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function felixLogin(password: string): Promise<{ ok: boolean; code: number }> {
  const client = new FelixClient({ host, port, ca: readFileSync(process.env['FELIX_CA']!, 'utf8'), token: `${user}:${password}`, requestTimeoutMs: 20_000 });
  try {
    await client.connect();
    await client.stream('cache');
    return { ok: true, code: 0 };
  } catch (err) {
    if (process.env['DEBUG']) console.log((err as Error).message);
    return { ok: false, code: String((err as Error).message).length };
  } finally {
    await client.close().catch(() => undefined);
  }
}

function login(password: string) {
  if (mode === 'cursus') return cursusLogin(password);
  if (mode === 'felix') return felixLogin(password);
  return mode === 'iggy' ? iggyLogin(password) : kafkaLogin(mode === 'plain' ? 'PLAIN' : 'SCRAM-SHA-256', password);
}

if (mode === 'scram-probe') {
  for (const name of [user, 'no-such-user-xyz', user, 'no-such-user-xyz']) {
    const c = await Conn.open();
    await c.call(ApiKey.SaslHandshake, 1, { mechanism: 'SCRAM-SHA-256' } as never);
    const r = await c.call(ApiKey.SaslAuthenticate, 2, { authBytes: new ScramClient('SCRAM-SHA-256', name, 'x').firstMessage() } as never);
    const text = r.ok ? (r.body.errorCode === 0 ? Buffer.from(r.body.authBytes).toString() : `error ${r.body.errorCode}`) : 'undecodable';
    console.log(`${name}: ${text.replace(/r=[^,]*,/, 'r=<nonce>,')}`);
    c.socket.destroy();
  }
  // The whole exchange with a wrong password, for the known user and an unknown one: the same answer?
  for (const name of [user, 'no-such-user-xyz']) {
    const c = await Conn.open();
    await c.call(ApiKey.SaslHandshake, 1, { mechanism: 'SCRAM-SHA-256' } as never);
    const client = new ScramClient('SCRAM-SHA-256', name, 'wrong-password');
    const first = await c.call(ApiKey.SaslAuthenticate, 2, { authBytes: client.firstMessage() } as never);
    const t = Date.now();
    const final = first.ok && first.body.errorCode === 0 ? await c.call(ApiKey.SaslAuthenticate, 2, { authBytes: client.finalMessage(Buffer.from(first.body.authBytes)) } as never) : first;
    console.log(`${name}, wrong password: final answer ${final.ok ? `error ${final.body.errorCode} ${JSON.stringify(final.body.errorMessage)}` : 'undecodable'} in ${Date.now() - t} ms`);
    c.socket.destroy();
  }
  process.exit(0);
}

const t0 = Date.now();
let tries = 0;
const codes = new Map<number, number>();
const lat: number[] = [];
await Promise.all(
  Array.from({ length: workers }, async () => {
    while (Date.now() - t0 < seconds * 1000) {
      const s = Date.now();
      const r = await login(`wrong-${tries}`);
      lat.push(Date.now() - s);
      tries++;
      codes.set(r.code, (codes.get(r.code) ?? 0) + 1);
    }
  }),
);
const elapsed = (Date.now() - t0) / 1000;
lat.sort((a, b) => a - b);
console.log(`${mode} as ${user} from ${localAddress}: ${tries} wrong guesses in ${elapsed.toFixed(1)} s = ${(tries / elapsed).toFixed(1)}/s with ${workers} workers; answers ${JSON.stringify([...codes])}; per-guess ms p50 ${lat[lat.length >> 1]} max ${lat[lat.length - 1]}`);
const s = Date.now();
const after = await login(right);
console.log(`right password right after: ${after.ok ? 'logged in' : `refused (code ${after.code})`} in ${Date.now() - s} ms`);
process.exit(0);
