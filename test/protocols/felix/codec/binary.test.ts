// Felix binary frames: publish batches (acked, keyed), publish acks (with the forwarded owner) and
// event batches encoded once for many subscribers. Decoders hand out views and refuse malformed
// payloads with a reason; encoders never copy a large payload and share one chunk list.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EventBatchFrames,
  Flag,
  decodeEventBatch,
  decodeFrame,
  decodePublishAck,
  decodePublishBatch,
  encodePublishAck,
  encodePublishBatch,
  encodePublishBatchFrame,
  inlineRecordBytesMax,
  peekAckedPrefix,
  publishPayloads,
  recordPayloads,
  scanRecords,
  type PublishBatchInput,
} from '../../../../src/protocols/felix/codec/index.js';

const large = Buffer.alloc(4096, 0x61);
const input: PublishBatchInput = {
  acked: { requestId: 0xffff_ffff_ffff_fffen, ackMode: 'per_message' },
  key: Buffer.from('user-42'),
  tenantId: 'tenant é',
  namespace: 'default',
  stream: 'orders',
  payloads: [Buffer.from('small'), large, Buffer.alloc(0)],
};

describe('felix binary publish batch', () => {
  it('round-trips acked and keyed, handing out the records as stored and the payloads as views', () => {
    const frame = encodePublishBatchFrame(input);
    assert.equal(frame.readUInt16BE(6), Flag.binaryPublishBatch | Flag.binaryPublishAcked | Flag.binaryPublishKeyed);
    const payload = frame.subarray(12);
    const d = decodePublishBatch(payload, { acked: true, keyed: true });
    assert.ok(d.ok, d.ok ? '' : d.reason);
    assert.deepEqual(d.value.acked, input.acked);
    assert.equal(d.value.key?.toString(), 'user-42');
    assert.deepEqual([d.value.tenantId, d.value.namespace, d.value.stream], ['tenant é', 'default', 'orders']);
    assert.equal(d.value.records.count, 3);
    assert.equal(d.value.records.payloadBytes, 5 + 4096);
    const payloads = publishPayloads(d.value);
    assert.deepEqual(payloads, input.payloads);
    assert.equal(payloads[1]!.buffer, frame.buffer, 'a view of the frame');
    // The record list is the tail of the payload, exactly.
    assert.ok(d.value.records.bytes.equals(payload.subarray(payload.length - d.value.records.bytes.length)));
  });

  it('does not copy a payload of inlineRecordBytesMax or more into the frame chunks', () => {
    const chunks = encodePublishBatch(input);
    assert.ok(chunks.includes(large), 'the large payload is its own chunk');
    assert.ok(!chunks.includes(input.payloads[0]!), 'the small one is inlined');
    assert.ok(inlineRecordBytesMax <= large.length);
  });

  it('reads the acked prefix alone, so a malformed body can still be answered', () => {
    const frame = encodePublishBatchFrame(input);
    const broken = frame.subarray(12, frame.length - 1);
    assert.deepEqual(peekAckedPrefix(broken), { ok: true, value: input.acked });
    const d = decodePublishBatch(broken, { acked: true, keyed: true });
    assert.ok(!d.ok);
    assert.match(d.reason, /record 2: incomplete length|exceeds/);
    assert.match((peekAckedPrefix(Buffer.alloc(8)) as { reason: string }).reason, /incomplete acked prefix/);
    assert.match((peekAckedPrefix(Buffer.from('000000000000000103', 'hex')) as { reason: string }).reason, /invalid ack mode 3/);
  });

  it('refuses names over u16 and keys over u16 when encoding (a programmer error)', () => {
    assert.throws(() => encodePublishBatch({ ...input, stream: 'x'.repeat(70_000) }), RangeError);
    assert.throws(() => encodePublishBatch({ ...input, key: Buffer.alloc(70_000) }), RangeError);
  });

  it('refuses a truncated name, a hostile count and trailing bytes', () => {
    const plain = encodePublishBatchFrame({ ...input, acked: null, key: null }).subarray(12);
    for (let cut = 0; cut < plain.length; cut++) {
      const d = decodePublishBatch(plain.subarray(0, cut), { acked: false, keyed: false });
      assert.ok(!d.ok, `cut at ${cut}`);
    }
    const hostile = Buffer.from(plain);
    const countAt = 2 + 'tenant é'.length + 1 + 2 + 7 + 2 + 6;
    hostile.writeUInt32BE(0xffff_ffff, countAt);
    const d = decodePublishBatch(hostile, { acked: false, keyed: false });
    assert.ok(!d.ok);
    assert.match(d.reason, /record count 4294967295 exceeds/);
  });
});

describe('felix binary publish ack', () => {
  it('round-trips ok, error and forwarded acks', () => {
    const acks = [
      { requestId: 1n, error: null, owner: null },
      { requestId: 2n, error: 'stream not found: tenant=t namespace=n stream=s', owner: null },
      { requestId: 3n, error: null, owner: { nodeId: 'b', addr: '10.0.0.5:5000', generation: 9n } },
      { requestId: 4n, error: 'x', owner: { nodeId: 'b', addr: null, generation: 0n } },
    ];
    for (const ack of acks) {
      const frame = encodePublishAck(ack);
      assert.equal(frame.readUInt16BE(6), Flag.binaryPublishAck | (ack.owner !== null ? Flag.binaryPublishAckOwner : 0));
      assert.equal(frame.readUInt32BE(8), frame.length - 12);
      assert.deepEqual(decodePublishAck(frame.subarray(12), { owner: ack.owner !== null }), { ok: true, value: ack });
    }
  });

  it('refuses a bad status, a message on an ok ack, and trailing bytes', () => {
    const ok = encodePublishAck({ requestId: 1n, error: null, owner: null }).subarray(12);
    const withMessage = Buffer.from(encodePublishAck({ requestId: 1n, error: 'm', owner: null }).subarray(12));
    withMessage[0] = 0;
    assert.match((decodePublishAck(withMessage, { owner: false }) as { reason: string }).reason, /an ok ack carries a message/);
    assert.match((decodePublishAck(Buffer.concat([ok, Buffer.from([0])]), { owner: false }) as { reason: string }).reason, /1 bytes after the ack/);
    // An owner ack without the owner bit has trailing bytes; the owner bit without an owner is truncated.
    const owned = encodePublishAck({ requestId: 1n, error: null, owner: { nodeId: 'b', addr: null, generation: 1n } }).subarray(12);
    assert.ok(!decodePublishAck(owned, { owner: false }).ok);
    assert.ok(!decodePublishAck(ok, { owner: true }).ok);
  });
});

describe('felix event batches, encoded once', () => {
  const payloads = [Buffer.from('a'), large, Buffer.from('bc')];

  it('gives every subscriber of a variant the same chunk list, sharing the record chunks across variants', () => {
    const frames = new EventBatchFrames({ payloads }, 100n);
    const a = frames.shared(true);
    assert.equal(frames.shared(true), a, 'built once, handed to every subscriber');
    const plain = frames.shared(false);
    assert.notEqual(plain, a);
    assert.deepEqual(a.slice(1), plain.slice(1), 'the same record chunks');
    assert.ok(a.includes(large), 'the large payload is not copied');
    const legacy = frames.perSubscriber(7n, true);
    assert.equal(legacy[2], a[2], 'per-subscriber frames share the record chunks too');
  });

  it('encodes the layouts of §5.4 and decodes them back', () => {
    const frames = new EventBatchFrames({ payloads }, 100n);
    const cases: Array<[Buffer, number, bigint | null, bigint | null]> = [
      [Buffer.concat(frames.shared(true)), 0x0024, null, 100n],
      [Buffer.concat(frames.shared(false)), 0x0004, null, null],
      [Buffer.concat(frames.perSubscriber(7n, true)), 0x0022, 7n, 100n],
      [Buffer.concat(frames.perSubscriber(7n, false)), 0x0002, 7n, null],
    ];
    for (const [bytes, flags, subscriptionId, baseOffset] of cases) {
      assert.equal(bytes.readUInt16BE(6), flags);
      assert.equal(bytes.readUInt32BE(8), bytes.length - 12);
      const d = decodeFrame(flags, bytes.subarray(12));
      assert.ok(d.ok && d.value.kind === 'event_batch', d.ok ? '' : d.reason);
      assert.equal(d.value.batch.subscriptionId, subscriptionId);
      assert.equal(d.value.batch.baseOffset, baseOffset);
      assert.deepEqual(recordPayloads(d.value.batch.records), payloads);
    }
  });

  it('sends a stored record list as it is, byte-identical to encoding its payloads', () => {
    const fromPayloads = Buffer.concat(new EventBatchFrames({ payloads }, 5n).shared(true));
    const stored = scanRecords(fromPayloads, 20);
    assert.ok(stored.ok);
    const fromRecords = new EventBatchFrames({ records: stored.value }, 5n).shared(true);
    assert.equal(fromRecords.length, 2, 'head and the stored bytes');
    assert.equal(fromRecords[1], stored.value.bytes);
    assert.ok(Buffer.concat(fromRecords).equals(fromPayloads));
  });

  it('refuses a batch too short for its prefix', () => {
    assert.match((decodeEventBatch(Buffer.alloc(7), { shared: false, offsets: false }) as { reason: string }).reason, /truncated/);
    assert.match((decodeEventBatch(Buffer.alloc(10), { shared: true, offsets: true }) as { reason: string }).reason, /incomplete record count/);
  });
});
