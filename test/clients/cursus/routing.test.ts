// Redirects and reconnects: NOT_LEADER and NOT_COORDINATOR send the request once more to the
// address they name, which the client then keeps for that route; a second redirect is the
// caller's; a broker that cannot be reached is retried with exponential backoff (short bounded
// timers, jitter fixed by an injected random), and a dropped connection is opened again.

import assert from 'node:assert/strict';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { CommandId, FrameKind, decodeErrorPayload, encodeFrame } from '../../../src/protocols/cursus/codec/index.js';
import { CursusClient, CursusConnectionError, CursusError, redirectOf, type CursusClientOptions } from '../../../src/clients/cursus/index.js';
import { vectorsDir } from '../../vectors/cursus/build.js';
import { FakeCursusBroker } from './fake-broker.js';

let a: FakeCursusBroker;
let b: FakeCursusBroker;
const clients: CursusClient[] = [];

function client(options: CursusClientOptions = {}): CursusClient {
  const c = new CursusClient({ addr: a.addr, compression: ['none'], requestTimeoutMs: 2_000, reconnect: { attemptsMax: 3, backoffMinMs: 5, backoffMaxMs: 20 }, random: () => 0.5, ...options });
  clients.push(c);
  return c;
}

before(async () => {
  a = await FakeCursusBroker.start();
  b = await FakeCursusBroker.start();
});
after(async () => {
  await a.close();
  await b.close();
});
beforeEach(() => {
  a.reset();
  b.reset();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

describe('redirects', () => {
  test('NOT_COORDINATOR host= port=: the group command goes to the coordinator, and the group stays there', async () => {
    const c = client();
    const redirects: string[] = [];
    c.on('redirect', (command: string, addr: string) => redirects.push(`${command} ${addr}`));
    a.handler = (req) => (req.command === 'FETCH_OFFSET' ? { error: 'NOT_COORDINATOR', fields: [['host', '127.0.0.1'], ['port', String(b.port)]] } : undefined);
    b.handler = (req) => (req.command === 'FETCH_OFFSET' ? { ok: [['offset', '17']] } : undefined);
    assert.equal(await c.fetchOffset({ topic: 't', partition: 0, group: 'g1' }), 17);
    assert.equal(await c.fetchOffset({ topic: 't', partition: 1, group: 'g1' }), 17);
    assert.deepEqual(a.commands(), ['FETCH_OFFSET']);
    assert.deepEqual(b.commands(), ['FETCH_OFFSET', 'FETCH_OFFSET']);
    assert.deepEqual(redirects, [`FETCH_OFFSET 127.0.0.1:${b.port}`]);
    // Another group, and commands of other routes, still go to the bootstrap address.
    await c.fetchOffset({ topic: 't', partition: 0, group: 'g2' }).catch(() => {});
    await c.listTopics();
    assert.deepEqual(a.commands(), ['FETCH_OFFSET', 'FETCH_OFFSET', 'LIST']);
  });

  test('NOT_LEADER leader=host:port redirects a CONSUME to the partition leader (the golden reply names where)', async () => {
    const golden = Buffer.from(readFileSync(path.join(vectorsDir, 'response_error_not_leader.hex'), 'utf8').trim(), 'hex');
    const decoded = decodeErrorPayload(golden.subarray(32));
    assert.ok(decoded.ok);
    assert.deepEqual(redirectOf(new CursusError(decoded.value, 'CONSUME')), { host: '127.0.0.1', port: 9000 });
    a.handler = (req) => (req.command === 'CONSUME' ? { error: 'NOT_LEADER', fields: [['leader', `127.0.0.1:${b.port}`]] } : undefined);
    const c = client();
    await c.createTopic('orders', { partitions: 1 });
    b.model.addTopic('orders', 1);
    const batch = await c.consume({ topic: 'orders', partition: 0, offset: 0, member: 'm' });
    assert.equal(batch.records.length, 0);
    assert.deepEqual(a.commands(), ['CREATE', 'CONSUME']);
    assert.deepEqual(b.commands(), ['CONSUME']);
  });

  test('a redirect is followed once: a second one is the caller\'s error', async () => {
    const c = client();
    a.handler = () => ({ error: 'NOT_LEADER', fields: [['leader', `127.0.0.1:${b.port}`]] });
    b.handler = () => ({ error: 'NOT_LEADER', fields: [['leader', `127.0.0.1:${a.port}`]] });
    const err = await c.createTopic('x').catch((e: unknown) => e);
    assert.ok(err instanceof CursusError && err.code === 'NOT_LEADER' && err.class === 'routing' && err.retryable);
    assert.deepEqual(redirectOf(err), { host: '127.0.0.1', port: a.port });
    assert.deepEqual([a.commands(), b.commands()], [['CREATE'], ['CREATE']]);
  });

  test('followRedirects: false surfaces the redirect', async () => {
    const c = client({ followRedirects: false });
    a.handler = () => ({ error: 'NOT_LEADER', fields: [['leader', `127.0.0.1:${b.port}`]] });
    await assert.rejects(c.listTopics(), (e: unknown) => e instanceof CursusError && e.code === 'NOT_LEADER');
    assert.deepEqual(b.commands(), []);
  });

  test('a dedicated connection moves to the redirect address', async () => {
    const c = client();
    const lane = c.dedicated();
    a.handler = (req) => (req.command === 'HEARTBEAT' ? { error: 'NOT_COORDINATOR', fields: [['host', '127.0.0.1'], ['port', String(b.port)]] } : undefined);
    b.handler = (req) => (req.command === 'HEARTBEAT' ? { ok: [['member', 'm-1'], ['generation', '3']] } : undefined);
    assert.deepEqual(await c.heartbeat({ topic: 't', group: 'g', member: 'm-1' }, { via: lane }), { memberId: 'm-1', generation: 3 });
    assert.equal(lane.address, `127.0.0.1:${b.port}`);
    await c.heartbeat({ topic: 't', group: 'g', member: 'm-1' }, { via: lane });
    assert.deepEqual([a.commands(), b.commands()], [['HEARTBEAT'], ['HEARTBEAT', 'HEARTBEAT']]);
    await c.closeDedicated(lane);
  });
});

describe('reconnects', () => {
  /** A port nothing listens on. */
  async function deadPort(): Promise<number> {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    return port;
  }

  test('connection attempts back off exponentially, then the request fails with the last error', async () => {
    const port = await deadPort();
    const c = client({ addr: `127.0.0.1:${port}`, reconnect: { attemptsMax: 4, backoffMinMs: 5, backoffMaxMs: 15 } });
    const delays: number[] = [];
    c.on('reconnect', (_attempt: number, delayMs: number) => delays.push(delayMs));
    const err = await c.listTopics().catch((e: unknown) => e);
    assert.ok(err instanceof CursusConnectionError);
    assert.match(err.message, /ECONNREFUSED/);
    // random() = 0.5: no jitter; 5, 10, then capped at 15.
    assert.deepEqual(delays, [5, 10, 15]);
  });

  test('the jitter stays within ±20 % of the exponential delay', async () => {
    const port = await deadPort();
    const low = client({ addr: `127.0.0.1:${port}`, reconnect: { attemptsMax: 3, backoffMinMs: 10, backoffMaxMs: 100 }, random: () => 0 });
    const high = client({ addr: `127.0.0.1:${port}`, reconnect: { attemptsMax: 3, backoffMinMs: 10, backoffMaxMs: 100 }, random: () => 1 });
    const seen: number[][] = [[], []];
    low.on('reconnect', (_: number, d: number) => seen[0]!.push(d));
    high.on('reconnect', (_: number, d: number) => seen[1]!.push(d));
    await Promise.allSettled([low.listTopics(), high.listTopics()]);
    assert.deepEqual(seen, [
      [8, 16],
      [12, 24],
    ]);
  });

  test('a broker that comes back is reached by the next attempt', async () => {
    const port = await deadPort();
    const c = client({ addr: `127.0.0.1:${port}`, reconnect: { attemptsMax: 10, backoffMinMs: 20, backoffMaxMs: 20 } });
    let late: net.Server | null = null;
    const sockets: net.Socket[] = [];
    c.on('reconnect', (attempt: number) => {
      if (attempt !== 2 || late !== null) return;
      // Listen on the refused port now: a minimal broker that negotiates and answers LIST.
      late = net.createServer((s) => {
        sockets.push(s);
        s.on('error', () => {});
        let negotiated = false;
        s.on('data', () => {
          if (!negotiated) {
            negotiated = true;
            s.write(Buffer.concat(encodeFrame({ kind: FrameKind.negotiationResponse, command: CommandId['NEGOTIATE']!, requestId: 0n }, [Buffer.from([0, 2, 0])])));
            return;
          }
          s.write(Buffer.concat(encodeFrame({ kind: FrameKind.response, command: CommandId['LIST']!, requestId: 1n }, [Buffer.from('OK count=1 topics=back')])));
        });
      });
      late.listen(port, '127.0.0.1');
    });
    try {
      assert.deepEqual(await c.listTopics(), ['back']);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => (late === null ? resolve() : (late as net.Server).close(() => resolve())));
    }
  });

  test('a dropped connection fails the request on it (retryable) and the next request reconnects', async () => {
    const c = client({ poolSize: 1 });
    const events: string[] = [];
    c.on('connect', () => events.push('connect'));
    c.on('disconnect', () => events.push('disconnect'));
    await c.listTopics();
    a.handler = (req) => (req.command === 'HELP' ? { close: true } : undefined);
    const err = await c.help().catch((e: unknown) => e);
    assert.ok(err instanceof CursusConnectionError && err.retryable);
    assert.deepEqual(await c.listTopics(), []);
    assert.deepEqual(events, ['connect', 'disconnect', 'connect']);
  });
});
