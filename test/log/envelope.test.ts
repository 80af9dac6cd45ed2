import { crc32c } from '@node-rs/crc32';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  checkEnvelope,
  decodeEnvelopeHeader,
  encodeEnvelopeHeader,
  envelopeHeaderBytes,
  envelopeHeadValid,
  envelopePayloadValid,
  type EnvelopeFields,
} from '../../src/log/envelope.js';
import { BatchFlags, BatchFormat } from '../../src/log/types.js';

const fields: EnvelopeFields & { baseOffset: number } = {
  format: BatchFormat.kafka,
  flags: BatchFlags.transactional,
  baseOffset: 2 ** 40 + 7,
  recordCount: 5,
  firstTimestamp: 1_700_000_000_123,
  maxTimestamp: 1_700_000_000_999,
  producerId: -1,
  producerEpoch: -1,
  baseSequence: 42,
};

function envelope(payload: Buffer, f: EnvelopeFields & { baseOffset: number } = fields): Buffer {
  return Buffer.concat([encodeEnvelopeHeader(f, f.baseOffset, payload), payload]);
}

describe('envelope', () => {
  it('lays out the header as documented', () => {
    const payload = Buffer.from('hello');
    const h = encodeEnvelopeHeader(fields, fields.baseOffset, payload);
    assert.equal(h.length, envelopeHeaderBytes);
    assert.equal(h.readUInt32BE(0), 0x514c4f47);
    assert.equal(h.readUInt8(8), 1);
    assert.equal(h.readUInt8(9), BatchFormat.kafka);
    assert.equal(h.readUInt16BE(10), BatchFlags.transactional);
    assert.equal(h.readUInt32BE(12), 5);
    assert.equal(h.readBigInt64BE(16), BigInt(fields.baseOffset));
    assert.equal(h.readUInt32BE(24), 5);
    assert.equal(h.readBigInt64BE(32), BigInt(fields.firstTimestamp));
    assert.equal(h.readBigInt64BE(40), BigInt(fields.maxTimestamp));
    assert.equal(h.readBigInt64BE(48), -1n);
    assert.equal(h.readInt16BE(56), -1);
    assert.equal(h.readInt32BE(60), 42);
    assert.equal(h.readUInt32BE(28), crc32c(payload), 'payloadCrc covers the whole payload by default');
    assert.equal(h.readUInt16BE(58), 0);
  });

  it('stores a supplied payload checksum and checks both checksums', () => {
    // A Kafka-like payload: 21 leading bytes the broker patches, then a CRC-covered body.
    const payload = Buffer.alloc(200);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7) & 0xff;
    const supplied = { from: 21, value: crc32c(payload.subarray(21)) };
    const good = envelope(payload, { ...fields, payloadCrc32c: supplied });
    assert.equal(good.readUInt32BE(28), supplied.value);
    assert.equal(good.readUInt16BE(58), 21);
    const decoded = checkEnvelope(good);
    assert.ok(typeof decoded !== 'string');
    assert.equal(decoded.checksumFrom, 21);
    // A flipped byte before `from` is caught by the header crc, one after it by payloadCrc.
    for (const at of [envelopeHeaderBytes + 3, envelopeHeaderBytes + 150]) {
      const bad = Buffer.from(good);
      bad[at]! ^= 0x10;
      assert.equal(checkEnvelope(bad), 'checksum mismatch', `flip at ${at}`);
    }
    // A wrong supplied value is stored as given and then fails validation: never trusted blindly.
    const lied = envelope(payload, { ...fields, payloadCrc32c: { from: 21, value: supplied.value ^ 1 } });
    assert.equal(checkEnvelope(lied), 'checksum mismatch');
    assert.throws(() => encodeEnvelopeHeader({ ...fields, payloadCrc32c: { from: 201, value: 0 } }, fields.baseOffset, payload), RangeError);
  });

  it('checks the header on its own (with the payload bytes before `from`) before the payload is there', () => {
    const payload = Buffer.alloc(200, 5);
    const good = envelope(payload, { ...fields, payloadCrc32c: { from: 21, value: crc32c(payload.subarray(21)) } });
    const header = decodeEnvelopeHeader(good);
    assert.ok(typeof header !== 'string');
    assert.equal(envelopeHeadValid(good.subarray(0, envelopeHeaderBytes + 21), 0, header), true, 'the head alone suffices');
    assert.equal(envelopeHeadValid(good.subarray(0, envelopeHeaderBytes + 20), 0, header), null, 'one byte short: cannot tell');
    assert.equal(envelopePayloadValid(good.subarray(envelopeHeaderBytes), header), true);
    // At a position inside a larger buffer, as a read finds it.
    const inside = Buffer.concat([Buffer.alloc(7), good]);
    assert.equal(envelopeHeadValid(inside, 7, header), true);
    for (const at of [12, envelopeHeaderBytes + 20]) {
      const bad = Buffer.from(good);
      bad[at]! ^= 0x01;
      assert.equal(envelopeHeadValid(bad, 0, header), false, `flip at ${at}`);
    }
    const badPayload = Buffer.from(good);
    badPayload[envelopeHeaderBytes + 100]! ^= 0x01;
    assert.equal(envelopeHeadValid(badPayload, 0, header), true, 'the head does not cover the body');
    assert.equal(envelopePayloadValid(badPayload.subarray(envelopeHeaderBytes), header), false);
  });

  it('round-trips every field', () => {
    fc.assert(
      fc.property(
        fc.record({
          format: fc.constantFrom(...Object.values(BatchFormat)),
          flags: fc.integer({ min: 0, max: 3 }),
          baseOffset: fc.integer({ min: 0, max: 2 ** 52 }),
          recordCount: fc.integer({ min: 1, max: 100_000 }),
          firstTimestamp: fc.integer({ min: -(2 ** 50), max: 2 ** 50 }),
          maxTimestamp: fc.integer({ min: -(2 ** 50), max: 2 ** 50 }),
          producerId: fc.integer({ min: -1, max: 2 ** 50 }),
          producerEpoch: fc.integer({ min: -1, max: 32_767 }),
          baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
        }),
        fc.uint8Array({ maxLength: 300 }),
        (f, bytes) => {
          const payload = Buffer.from(bytes);
          const decoded = checkEnvelope(envelope(payload, f));
          assert.ok(typeof decoded !== 'string', String(decoded));
          const { crc: _crc, payloadLength, payloadCrc, checksumFrom, ...rest } = decoded;
          assert.equal(payloadLength, payload.length);
          assert.equal(payloadCrc, crc32c(payload));
          assert.equal(checksumFrom, 0);
          assert.deepEqual(rest, { ...f });
        },
      ),
    );
  });

  it('returns reasons for bad input instead of throwing', () => {
    const good = envelope(Buffer.from('payload'));
    assert.equal(decodeEnvelopeHeader(good.subarray(0, 63)), 'truncated');
    assert.equal(checkEnvelope(good.subarray(0, good.length - 1)), 'truncated');
    const badMagic = Buffer.from(good);
    badMagic[0] = 0;
    assert.equal(decodeEnvelopeHeader(badMagic), 'bad magic');
    const badVersion = Buffer.from(good);
    badVersion[8] = 9;
    assert.equal(decodeEnvelopeHeader(badVersion), 'unsupported version');
    const badFormat = Buffer.from(good);
    badFormat[9] = 77;
    assert.equal(decodeEnvelopeHeader(badFormat), 'unknown format');
    const badLength = Buffer.from(good);
    badLength.writeUInt32BE(0xffffffff, 12);
    assert.equal(decodeEnvelopeHeader(badLength), 'bad length');
    const badCount = Buffer.from(good);
    badCount.writeUInt32BE(0, 24);
    assert.equal(decodeEnvelopeHeader(badCount), 'bad record count');
  });

  it('detects any single flipped bit after the magic by checksum or structure', () => {
    const good = envelope(Buffer.from('some payload bytes'));
    fc.assert(
      fc.property(fc.integer({ min: 4, max: good.length - 1 }), fc.integer({ min: 0, max: 7 }), (at, bit) => {
        const bad = Buffer.from(good);
        bad[at]! ^= 1 << bit;
        assert.equal(typeof checkEnvelope(bad), 'string');
      }),
    );
  });
});
