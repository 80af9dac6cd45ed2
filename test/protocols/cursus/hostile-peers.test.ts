// The Cursus listener against peers that try to exhaust the broker rather than use it: large
// frames declared and sent slowly on many connections (the listener-wide request-byte budget,
// cursus.requestBytesMax, within the broker's requestBytesMax), and compression bombs. A well-behaved client on another
// connection is served throughout. Every wait has a deadline; nothing sleeps.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandId, Compression, FrameKind, encodeCommandPayload, encodeFrame } from '../../../src/protocols/cursus/codec/index.js';
import { rootName, rootPassword, startCursus } from './harness.js';
import { assertError, jsonOf, okFields, type CursusWireClient } from './wire-client.js';

const waitMs = 5_000;

/** Polls `check` until it holds, or fails after the deadline. */
async function eventually(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${waitMs} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A whole PUBLISH request frame carrying `messageBytes` bytes of message. */
function publishFrame(c: CursusWireClient, topic: string, messageBytes: number): { requestId: bigint; bytes: Buffer } {
  const requestId = c.requestId();
  const payload = encodeCommandPayload({ topic, producerId: 'p', acks: '1', message: Buffer.alloc(messageBytes, 0x61) });
  return { requestId, bytes: Buffer.concat(encodeFrame({ kind: FrameKind.request, command: CommandId.PUBLISH!, requestId }, payload)) };
}

describe('large frames against the request-byte budget', () => {
  it('a peer holding unfinished large frames takes the budget only: a frame beyond it is skipped and answered retryable, the connection goes on', async (t) => {
    const budget = 1024 * 1024;
    const h = await startCursus(t, { settings: { requestBytesMax: budget } });
    const good = await h.client();
    okFields((await good.request('CREATE', { topic: 'orders' }))[0]!);

    // The slow peer declares a 700 KiB frame and sends a seventh of it.
    const slow = await h.client();
    const held = publishFrame(slow, 'orders', 700 * 1024);
    slow.send(held.bytes.subarray(0, 100 * 1024));
    await eventually('the slow frame is held', () => h.frontend.requestBytes.heldBytes === held.bytes.length);

    // Another connection's large frame does not fit: its payload is read and dropped.
    const other = await h.client();
    const refused = publishFrame(other, 'orders', 700 * 1024);
    other.send(refused.bytes);
    const error = assertError(await other.replies(refused.requestId), 'request_bytes_exhausted', { command: 'PUBLISH' });
    assert.equal(error.retryable, true);
    assert.equal(h.frontend.requestBytes.heldBytes, held.bytes.length, 'the refused frame holds nothing');

    // The same connection's next request is framed and served, and so is the good client's.
    const [small] = await other.request('PUBLISH', { topic: 'orders', producerId: 'o', acks: '1', message: 'after' });
    assert.equal(jsonOf(small!).status, 'OK');
    const [ack] = await good.request('PUBLISH', { topic: 'orders', producerId: 'g', acks: '1', message: 'meanwhile' });
    assert.equal(jsonOf(ack!).status, 'OK');

    // The slow peer goes: its bytes come back, and a large frame fits again.
    slow.destroy();
    await eventually('the slow frame is given back', () => h.frontend.requestBytes.heldBytes === 0);
    const retried = publishFrame(other, 'orders', 700 * 1024);
    other.send(retried.bytes);
    const [done] = await other.replies(retried.requestId);
    assert.equal(jsonOf(done!).status, 'OK');
    await eventually('every handled frame is given back', () => h.frontend.requestBytes.heldBytes === 0);
  });

  it('large frames count in the broker\'s request bytes too, shared with Kafka and Iggy: a frame beyond what is left of them is refused', async (t) => {
    const h = await startCursus(t, { broker: { requestBytesMax: 1024 * 1024 } });
    const shared = h.broker.requestBytes;
    const c = await h.client();
    okFields((await c.request('CREATE', { topic: 'orders' }))[0]!);
    const slow = await h.client();
    const held = publishFrame(slow, 'orders', 700 * 1024);
    slow.send(held.bytes.subarray(0, 100 * 1024));
    await eventually('the slow frame is held in the broker budget', () => shared.heldBytes === held.bytes.length);
    // Another listener's frames hold the rest (as a Kafka or Iggy frame being received would).
    assert.equal(shared.take(1024 * 1024 - held.bytes.length), true);
    const refused = publishFrame(c, 'orders', 100 * 1024);
    c.send(refused.bytes);
    assertError(await c.replies(refused.requestId), 'request_bytes_exhausted', { command: 'PUBLISH' });
    assert.equal(h.frontend.requestBytes.heldBytes, held.bytes.length, 'the refused frame holds nothing of the listener\'s bytes');
    shared.give(1024 * 1024 - held.bytes.length);
    slow.destroy();
    await eventually('the slow frame is given back to both', () => shared.heldBytes === 0 && h.frontend.requestBytes.heldBytes === 0);
    const accepted = publishFrame(c, 'orders', 100 * 1024);
    c.send(accepted.bytes);
    assert.equal(jsonOf((await c.replies(accepted.requestId))[0]!).status, 'OK');
  });

  it('with authentication required, a peer that has not authenticated holds listener bytes only, none of the broker\'s', async (t) => {
    const h = await startCursus(t, { settings: { requireAuth: true } });
    const shared = h.broker.requestBytes;
    const anonymous = await h.client();
    const unproven = publishFrame(anonymous, 'orders', 700 * 1024);
    anonymous.send(unproven.bytes.subarray(0, 100 * 1024));
    await eventually('the frame is held by the listener', () => h.frontend.requestBytes.heldBytes === unproven.bytes.length);
    assert.equal(shared.heldBytes, 0);
    const proven = await h.client();
    okFields((await proven.request('AUTH', { principal: rootName, token: rootPassword }))[0]!);
    const frame = publishFrame(proven, 'orders', 700 * 1024);
    proven.send(frame.bytes.subarray(0, 100 * 1024));
    await eventually('the authenticated peer\'s frame is held by both', () => shared.heldBytes === frame.bytes.length);
    anonymous.destroy();
    proven.destroy();
    await eventually('both give their bytes back', () => shared.heldBytes === 0 && h.frontend.requestBytes.heldBytes === 0);
  });

  it('a compression bomb (a few KiB of gzip that inflate to 64 MiB) is refused before it is inflated while the budget is short', async (t) => {
    const h = await startCursus(t, { settings: { requestBytesMax: 32 * 1024 * 1024 } });
    const c = await h.client([Compression.gzip]);
    const payload = Buffer.concat(encodeCommandPayload({ topic: 'orders', producerId: 'p', message: Buffer.alloc(64 * 1024 * 1024 - 1024) }));
    const requestId = c.requestId();
    c.send(encodeFrame({ kind: FrameKind.request, command: CommandId.PUBLISH!, requestId, compression: Compression.gzip }, [payload]));
    assertError(await c.replies(requestId), 'request_bytes_exhausted', { command: 'PUBLISH' });
    assert.equal(h.frontend.requestBytes.heldBytes, 0);
    const [ok] = await c.request('CREATE', { topic: 'orders' });
    okFields(ok!);
  });
});
