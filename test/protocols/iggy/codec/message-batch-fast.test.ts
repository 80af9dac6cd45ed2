// The allocation-free batch paths against the frame-object ones they replace: validateBatch and
// validateSendMessagesBatch against parseBatch('full') (same rejections, codes and reasons, over
// valid and corrupted batches), stampValidatedBatch against stampBatch, encodeBatchBytes against
// the per-frame streaming encoder it replaced, and sliceStoredBatch against parseBatch('layout')
// frame by frame (every frame in range and not older than a timestamp poll's time), and
// splitValidatedBatch against sliceBatch of the stamped whole batch.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { xxh3 } from '@node-rs/xxhash';
import {
  batchHeaderBytes,
  encodeBatchBytes,
  isBatchRejection,
  numericId,
  parseBatch,
  computeBatchChecksum,
  appendRequestFromBatch,
  iggyFormatCodec,
  sliceBatch,
  sliceStoredBatch,
  splitValidatedBatch,
  stampBatch,
  stampValidatedBatch,
  validateBatch,
  validateSendMessagesBatch,
  writeBatchHeader,
  writeU128,
  type BatchHeader,
  type BatchRejection,
  type BatchStamp,
  type MessageInput,
  type ParseBatchOptions,
  type ParsedBatch,
} from '../../../../src/protocols/iggy/codec/index.js';
import type { SendMessagesRequest } from '../../../../src/protocols/iggy/codec/commands/messages.js';
import { vector } from './vectors.js';

const messageArb = fc.record({
  id: fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
  originTimestamp: fc.bigInt({ min: 1_000_000n, max: 1_000_100_000n }),
  payload: fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
  userHeaders: fc.uint8Array({ maxLength: 12 }).map((a) => Buffer.from(a)),
});

const u64Arb = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });

/** The encoder encodeBatchBytes replaced: chunk per part, one streaming XXH3 per frame. */
function referenceEncode(messages: readonly MessageInput[], stamp?: BatchStamp): Buffer {
  let origin = messages.length > 0 ? messages[0]!.originTimestamp : 0n;
  for (const m of messages) if (m.originTimestamp < origin) origin = m.originTimestamp;
  const chunks: Buffer[] = [];
  const header = Buffer.alloc(batchHeaderBytes);
  chunks.push(header);
  const checksumInput = Buffer.allocUnsafe(44 + 8 * messages.length);
  let blobBytes = 0;
  messages.forEach((m, i) => {
    const userHeaders = m.userHeaders ?? Buffer.alloc(0);
    const fh = Buffer.alloc(48);
    writeU128(fh, m.id!, 8);
    fh.writeUInt32LE(m.offsetDelta ?? i, 24);
    fh.writeUInt32LE(Number(m.originTimestamp - origin), 28);
    fh.writeUInt32LE(userHeaders.length, 32);
    fh.writeUInt32LE(m.payload.length, 36);
    const hasher = xxh3.Xxh3.withSeed(0n);
    hasher.update(fh.subarray(8));
    hasher.update(m.payload);
    hasher.update(userHeaders);
    fh.writeBigUInt64LE(hasher.digest(), 0);
    fh.copy(checksumInput, 44 + 8 * i, 0, 8);
    chunks.push(fh, m.payload, userHeaders);
    blobBytes += 48 + m.payload.length + userHeaders.length;
  });
  const h = {
    partitionId: stamp?.partitionId ?? 0n,
    baseOffset: stamp?.baseOffset ?? 0n,
    baseTimestamp: stamp?.baseTimestamp ?? 0n,
    originTimestamp: origin,
    batchLength: BigInt(batchHeaderBytes + blobBytes),
    batchChecksum: 0n,
    messageCount: messages.length,
  };
  checksumInput.writeBigUInt64LE(h.partitionId, 0);
  checksumInput.writeBigUInt64LE(h.baseOffset, 8);
  checksumInput.writeBigUInt64LE(h.baseTimestamp, 16);
  checksumInput.writeBigUInt64LE(h.originTimestamp, 24);
  checksumInput.writeBigUInt64LE(h.batchLength, 32);
  checksumInput.writeUInt32LE(h.messageCount, 40);
  h.batchChecksum = xxh3.xxh64(checksumInput);
  writeBatchHeader(header, h);
  return Buffer.concat(chunks);
}

/** validateSendMessagesBatch as it was, on frame objects. */
function referenceValidateSend(req: SendMessagesRequest, messagesMax?: number): ParsedBatch | BatchRejection {
  if (req.batch.length < batchHeaderBytes) return { code: 'truncated', reason: 'no batch after the send metadata' };
  const parsed = parseBatch(req.batch, { verify: 'full', exact: true, requireSequentialDeltas: true, ...(messagesMax !== undefined ? { messagesMax } : {}) });
  if ('code' in parsed) return parsed;
  if (parsed.header.messageCount === 0) return { code: 'no_messages', reason: 'a batch carries at least one message' };
  if (parsed.header.messageCount !== req.messagesCount) return { code: 'bad_count', reason: 'metadata messages_count differs from the batch' };
  return parsed;
}

/** A corruption of a batch: byte flips, field writes where the checks look, truncation, growth. */
const mutationArb = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat(7) }),
  fc.record({
    kind: fc.constant('frameField' as const),
    frame: fc.nat(),
    field: fc.constantFrom(0, 24, 28, 32, 36, 40, 44),
    value: fc.oneof(fc.nat(60), fc.constant(0xffff_ffff), fc.nat()),
  }),
  fc.record({ kind: fc.constant('headerField' as const), field: fc.constantFrom(32, 36, 48, 52, 100, 255), value: fc.oneof(fc.nat(2000), fc.constant(0xffff_ffff)) }),
  fc.record({ kind: fc.constant('truncate' as const), by: fc.integer({ min: 1, max: 300 }) }),
  fc.record({ kind: fc.constant('append' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 60 }) }),
);
type Mutation = typeof mutationArb extends fc.Arbitrary<infer T> ? T : never;

function mutate(bytes: Buffer, mutations: readonly Mutation[]): Buffer {
  let b = Buffer.from(bytes);
  for (const m of mutations) {
    switch (m.kind) {
      case 'flip':
        if (b.length > 0) b[m.at % b.length]! ^= 1 << m.bit;
        break;
      case 'frameField': {
        // Walk to frame (m.frame mod frames) by the lengths as they currently are.
        const starts: number[] = [];
        let pos = batchHeaderBytes;
        while (pos + 48 <= b.length && starts.length < 64) {
          starts.push(pos);
          pos += 48 + b.readUInt32LE(pos + 32) + b.readUInt32LE(pos + 36);
        }
        if (starts.length > 0) b.writeUInt32LE(m.value >>> 0, starts[m.frame % starts.length]! + m.field);
        break;
      }
      case 'headerField':
        if (b.length >= m.field + 1) {
          if (m.field + 4 <= b.length && m.field < 52) b.writeUInt32LE(m.value >>> 0, m.field);
          else b[m.field] = m.value & 0xff;
        }
        break;
      case 'truncate':
        b = b.subarray(0, Math.max(0, b.length - m.by));
        break;
      case 'append':
        b = Buffer.concat([b, Buffer.from(m.bytes)]);
        break;
    }
  }
  return b;
}

function sameOutcome(fast: ReturnType<typeof validateBatch>, slow: ParsedBatch | BatchRejection): void {
  if (isBatchRejection(slow) || isBatchRejection(fast)) {
    assert.deepEqual(fast, slow);
    return;
  }
  assert.deepEqual(fast.header, slow.header);
  assert.ok(fast.bytes.equals(slow.bytes) && fast.bytes.buffer === slow.bytes.buffer && fast.bytes.byteOffset === slow.bytes.byteOffset);
  assert.equal(fast.firstTimestampDelta, slow.frames[0]?.timestampDelta ?? 0);
  assert.equal(fast.maxTimestampDelta, Math.max(0, ...slow.frames.map((f) => f.timestampDelta)));
  // Stamping through the kept checksum input writes what stampBatch writes.
  const stamp = { partitionId: 7n, baseOffset: 1234n, baseTimestamp: 99n };
  const a = Buffer.from(slow.bytes);
  const b = Buffer.from(fast.bytes);
  stampBatch(a, slow.frames, stamp);
  stampValidatedBatch(b, fast, stamp);
  assert.deepEqual(b, a);
}

describe('message batch fast paths', () => {
  it('encodeBatchBytes writes exactly what the streaming per-frame encoder wrote (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 8 }),
        fc.option(fc.record({ partitionId: u64Arb, baseOffset: u64Arb, baseTimestamp: u64Arb }), { nil: undefined }),
        fc.boolean(),
        (messages, stamp, gaps) => {
          const inputs: MessageInput[] = messages.map((m, i) => ({ ...m, ...(gaps ? { offsetDelta: i * 3 + 1 } : {}) }));
          assert.deepEqual(encodeBatchBytes(inputs, stamp), referenceEncode(inputs, stamp));
        },
      ),
      { numRuns: 300 },
    );
    const vectorBatch = vector('send_messages_batch');
    assert.deepEqual(
      encodeBatchBytes([
        { id: 7n, originTimestamp: 1000n, payload: Buffer.from('first-payload') },
        { id: 8n, originTimestamp: 1050n, payload: Buffer.from('second-payload'), userHeaders: Buffer.from('user-header-bytes') },
      ]),
      vectorBatch,
    );
    assert.throws(() => encodeBatchBytes([
      { id: 1n, originTimestamp: 0n, payload: Buffer.from('a') },
      { id: 2n, originTimestamp: 1n << 32n, payload: Buffer.from('b') },
    ]), RangeError);
    // Fields a caller gives are checked: an offset_delta outside u32, an id slot that is no integer.
    assert.throws(() => encodeBatchBytes([{ id: 1n, originTimestamp: 0n, payload: Buffer.from('a'), offsetDelta: -1 }]), RangeError);
    assert.throws(() => encodeBatchBytes([{ id: 1n, originTimestamp: 0n, payload: Buffer.from('a'), offsetDelta: 2 ** 32 }]), RangeError);
    assert.throws(() => encodeBatchBytes([{ idBytes: Buffer.alloc(32), idAt: 1.5, originTimestamp: 0n, payload: Buffer.from('a') }]), RangeError);
    assert.throws(() => encodeBatchBytes([{ idBytes: Buffer.alloc(16), idAt: 8, originTimestamp: 0n, payload: Buffer.from('a') }]), RangeError);
  });

  it('validateBatch rejects exactly what parseBatch("full") rejects, with the same reasons (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 6 }),
        fc.array(mutationArb, { maxLength: 3 }),
        fc.record({ exact: fc.boolean(), requireSequentialDeltas: fc.boolean(), messagesMax: fc.option(fc.nat(8), { nil: undefined }) }),
        (messages, mutations, o) => {
          const bytes = mutate(encodeBatchBytes(messages), mutations);
          const options: ParseBatchOptions = { exact: o.exact, requireSequentialDeltas: o.requireSequentialDeltas, ...(o.messagesMax !== undefined ? { messagesMax: o.messagesMax } : {}) };
          sameOutcome(validateBatch(bytes, options), parseBatch(bytes, { ...options, verify: 'full' }));
        },
      ),
      { numRuns: 2000 },
    );
    // Arbitrary bytes, too.
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (raw) => {
        const bytes = Buffer.from(raw);
        sameOutcome(validateBatch(bytes), parseBatch(bytes, { verify: 'full' }));
      }),
      { numRuns: 300 },
    );
  });

  it('validateSendMessagesBatch admits and refuses exactly what the frame-object validator did (fast-check)', () => {
    const codes = new Set<string>();
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 6 }),
        fc.array(mutationArb, { maxLength: 2 }),
        fc.integer({ min: -1, max: 1 }),
        fc.option(fc.nat(8), { nil: undefined }),
        (messages, mutations, countSkew, messagesMax) => {
          const batch = mutate(encodeBatchBytes(messages), mutations);
          const req: SendMessagesRequest = { streamId: numericId(1), topicId: numericId(1), partitioning: { kind: 'balanced' }, messagesCount: messages.length + countSkew, batch };
          const slow = referenceValidateSend(req, messagesMax);
          const fast = validateSendMessagesBatch(req, messagesMax);
          codes.add(isBatchRejection(slow) ? slow.code : 'ok');
          sameOutcome(fast, slow);
        },
      ),
      { numRuns: 2000 },
    );
    for (const code of ['ok', 'truncated', 'bad_length', 'reserved_field', 'bad_count', 'message_checksum', 'batch_checksum', 'offset_delta']) {
      assert.ok(codes.has(code), `the generator reached ${code}`);
    }
    const good = vector('send_messages_batch');
    const ok = validateSendMessagesBatch({ streamId: numericId(1), topicId: numericId(1), partitioning: { kind: 'balanced' }, messagesCount: 2, batch: good });
    assert.ok(!isBatchRejection(ok));
  });

  it('sliceStoredBatch keeps exactly the frames in the offset range, at most countMax (fast-check against parseBatch("layout"))', () => {
    /** A poll's stored-batch slice, frame by frame from parseBatch, with no shortcut. */
    function reference(payload: Buffer, from: number, to: number, countMax: number): { bytes: Buffer; whole: boolean; count: number; lastOffset: number; runs: number } | null {
      const parsed = parseBatch(payload, { verify: 'layout', exact: true });
      if (isBatchRejection(parsed)) return null;
      const h = parsed.header;
      const base = Number(h.baseOffset);
      const kept = parsed.frames.filter((f) => base + f.offsetDelta >= from && base + f.offsetDelta < to).slice(0, countMax);
      if (kept.length === 0) return null;
      const lastOffset = base + kept[kept.length - 1]!.offsetDelta;
      if (kept.length === parsed.frames.length) return { bytes: payload, whole: true, count: kept.length, lastOffset, runs: 1 };
      const frames = kept.map((f) => payload.subarray(f.start, f.end));
      const sub: BatchHeader = { ...h, batchLength: BigInt(batchHeaderBytes + frames.reduce((n, f) => n + f.length, 0)), messageCount: kept.length };
      const header = Buffer.from(payload.subarray(0, batchHeaderBytes));
      writeBatchHeader(header, { ...sub, batchChecksum: computeBatchChecksum(payload, sub, kept) });
      const runs = kept.filter((f, i) => i === 0 || kept[i - 1]!.end !== f.start).length;
      return { bytes: Buffer.concat([header, ...frames]), whole: false, count: kept.length, lastOffset, runs };
    }
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        fc.array(fc.record({ payload: fc.uint8Array({ maxLength: 20 }), gap: fc.nat(2), time: fc.nat(5000) }), { minLength: 1, maxLength: 8 }),
        fc.nat(1_000_000),
        fc.array(mutationArb, { maxLength: 1 }),
        fc.integer({ min: -2, max: 30 }),
        fc.nat(30),
        fc.boolean(),
        fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 8 })),
        (frames, base, mutations, fromRel, span, zeroOrigin, countMax) => {
          let delta = -1;
          const inputs: MessageInput[] = frames.map((f, i) => {
            delta += 1 + f.gap;
            return { id: BigInt(i + 1), originTimestamp: zeroOrigin ? 0n : 1_000_000n + BigInt(f.time), payload: Buffer.from(f.payload), offsetDelta: delta };
          });
          const payload = mutate(encodeBatchBytes(inputs, { partitionId: 2n, baseOffset: BigInt(base), baseTimestamp: 5n }), mutations);
          const from = base + fromRel;
          const to = from + span;
          const fast = sliceStoredBatch(payload, from, to, countMax);
          const slow = reference(payload, from, to, countMax);
          seen.add(slow === null ? 'null' : slow.whole ? 'whole' : 'partial');
          if (slow === null || fast === null) {
            assert.equal(fast, slow);
            return;
          }
          assert.equal(fast.count, slow.count);
          assert.equal(fast.lastOffset, slow.lastOffset);
          if (slow.whole) assert.deepEqual(fast.chunks, [payload]);
          else assert.equal(fast.chunks.length, 1 + slow.runs, 'a new header, then one view per run of adjacent frames');
          assert.deepEqual(Buffer.concat(fast.chunks), slow.bytes);
          if (!slow.whole && mutations.length === 0) assert.ok(!isBatchRejection(parseBatch(slow.bytes, { verify: 'full', exact: true })), 'the slice verifies as a batch');
        },
      ),
      { numRuns: 3000 },
    );
    assert.deepEqual([...seen].sort(), ['null', 'partial', 'whole']);
  });

  it('splitValidatedBatch cuts a batch into parts that, stamped, are exactly the slices of the stamped whole (fast-check)', () => {
    const shapes = new Set<string>();
    fc.assert(
      fc.property(
        fc.array(fc.record({ payload: fc.nat(300), time: fc.nat(5000) }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: batchHeaderBytes + 48, max: 2500 }),
        fc.nat(1_000_000),
        (frames, partBytesMax, base) => {
          const inputs: MessageInput[] = frames.map((f, i) => ({ id: BigInt(i + 7), originTimestamp: 1_000_000n + BigInt(f.time), payload: Buffer.alloc(f.payload, i % 251) }));
          const batch = encodeBatchBytes(inputs);
          const validated = validateSendMessagesBatch({ streamId: numericId(1), topicId: numericId(1), partitioning: { kind: 'balanced' }, messagesCount: inputs.length, batch });
          assert.ok(!isBatchRejection(validated));
          const stamp: BatchStamp = { partitionId: 2n, baseOffset: BigInt(base), baseTimestamp: 77n };
          const parts = splitValidatedBatch(validated, partBytesMax);
          shapes.add(parts.length === 1 ? 'whole' : 'split');
          if (parts.length === 1) assert.equal(parts[0]!.bytes, validated.bytes, 'a batch that fits is not copied');
          // The oracle: the whole batch stamped, then sliced over each part's offsets.
          const whole = Buffer.from(validated.bytes);
          const stampedWhole = parseBatch(whole, { verify: 'full', exact: true }) as ParsedBatch;
          stampBatch(whole, stampedWhole.frames, stamp);
          const reference = parseBatch(whole, { verify: 'full', exact: true }) as ParsedBatch;
          let next = 0;
          // One server time for the whole batch: later parts, appended a few ms after the first, keep its base_timestamp.
          const sharedBaseTimestamp: { micros: bigint | null } = { micros: null };
          for (const [k, part] of parts.entries()) {
            const count = part.header.messageCount;
            assert.equal(part.firstOffsetDelta, next, 'parts follow one another');
            assert.ok(part.bytes.length <= partBytesMax || count === 1, 'a part exceeds the bound only when it is one frame');
            // Stamped as the broker stores it (its first offset base + firstOffsetDelta, appendRequestFromBatch).
            const request = appendRequestFromBatch(part, { partitionId: 2, firstOffsetDelta: part.firstOffsetDelta, sharedBaseTimestamp });
            const stored = Buffer.from(request.payload);
            iggyFormatCodec.stamp!({ ...request, payload: stored }, { baseOffset: base + part.firstOffsetDelta, appendTime: k, appendMicros: 77 + k * 1000 });
            const slice = sliceBatch(reference, BigInt(base + next), BigInt(base + next + count));
            assert.ok(slice !== null);
            assert.deepEqual(stored, Buffer.concat(slice));
            const times = reference.frames.slice(next, next + count).map((f) => Number((reference.header.originTimestamp + BigInt(f.timestampDelta)) / 1000n));
            assert.equal(request.recordCount, count);
            assert.equal(request.firstTimestamp, times[0]);
            assert.equal(request.maxTimestamp, Math.max(...times));
            next += count;
          }
          assert.equal(next, inputs.length, 'every frame is in exactly one part');
        },
      ),
      { numRuns: 500 },
    );
    assert.deepEqual([...shapes].sort(), ['split', 'whole']);
  });
});
