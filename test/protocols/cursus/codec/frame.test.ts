import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { compressFrameSync } from 'lz4-napi';
import {
  Compression,
  FrameKind,
  Status,
  checkFlags,
  decodeFrameHeader,
  decompressPayload,
  encodeFrame,
  negotiateCommand,
  openFrame,
  payloadBytesMax,
} from '../../../../src/protocols/cursus/codec/index.js';

function header(over: Partial<Record<'kind' | 'flags' | 'command' | 'status', number>> & { requestId?: bigint; encoded?: number; decoded?: number } = {}): Buffer {
  const b = Buffer.alloc(32);
  b.writeUInt32BE(0x43525332, 0);
  b.writeUInt16BE(2, 4);
  b[6] = over.kind ?? FrameKind.request;
  b[7] = over.flags ?? 0;
  b.writeUInt16BE(over.command ?? 3, 8);
  b.writeUInt16BE(over.status ?? 0, 10);
  b.writeBigUInt64BE(over.requestId ?? 1n, 12);
  b.writeUInt32BE(over.encoded ?? 0, 20);
  b.writeUInt32BE(over.decoded ?? over.encoded ?? 0, 24);
  return b;
}

function reason(b: Buffer): string {
  const h = decodeFrameHeader(b);
  return h.ok ? '' : h.reason;
}

describe('frame header', () => {
  it('accepts the shapes of docs §2.1', () => {
    assert.ok(decodeFrameHeader(header()).ok);
    assert.ok(decodeFrameHeader(header({ kind: FrameKind.negotiationRequest, command: negotiateCommand, requestId: 0n })).ok);
    assert.ok(decodeFrameHeader(header({ kind: FrameKind.response, status: Status.error })).ok);
    assert.ok(decodeFrameHeader(header({ kind: FrameKind.stream, flags: 0x0b, encoded: 10, decoded: 40 })).ok);
  });

  it('rejects what docs §2.7 closes the connection for', () => {
    assert.match(reason(header({ kind: 0 })), /unknown frame kind 0/);
    assert.match(reason(header({ kind: 6 })), /unknown frame kind 6/);
    assert.match(reason(header({ status: 1 })), /status 1 on a client frame/);
    assert.match(reason(header({ kind: FrameKind.response, status: 2 })), /unknown status 2/);
    assert.match(reason(header({ kind: FrameKind.negotiationRequest, command: negotiateCommand })), /request ID 0/);
    assert.match(reason(header({ kind: FrameKind.negotiationRequest, requestId: 0n })), /negotiation frame with command 3/);
    assert.match(reason(header({ command: negotiateCommand })), /NEGOTIATE outside/);
    assert.match(reason(header({ kind: FrameKind.negotiationRequest, command: negotiateCommand, requestId: 0n, flags: 1 })), /uncompressed/);
    assert.match(reason(header({ flags: 1, encoded: 0, decoded: 5 })), /encoded length 0 with decoded length 5/);
    assert.match(reason(header({ encoded: 5, decoded: 6 })), /uncompressed frame/);
    assert.match(reason(header({ flags: 1, encoded: 5, decoded: payloadBytesMax + 1 })), /decoded length 67108865 exceeds/);
  });

  it('checks every flags byte for every kind', () => {
    for (let kind = 1; kind <= 5; kind++) {
      for (let flags = 0; flags < 256; flags++) {
        const ok = (flags & 0xf0) === 0 && (flags & 7) <= 3 && ((flags & 8) === 0 || kind === 5) && (kind > 2 || flags === 0);
        assert.equal(checkFlags(kind, flags) === null, ok, `kind ${kind} flags ${flags}`);
      }
    }
  });
});

describe('frame payloads', () => {
  const text = Buffer.from('the same payload, compressed four ways '.repeat(50));

  for (const compression of [Compression.none, Compression.gzip, Compression.snappy, Compression.lz4]) {
    it(`round-trips with compression ${compression}`, () => {
      const bytes = Buffer.concat(encodeFrame({ kind: FrameKind.response, command: 5, requestId: 7n, compression }, [text.subarray(0, 100), text.subarray(100)]));
      const h = decodeFrameHeader(bytes);
      assert.ok(h.ok);
      assert.equal(h.value.decodedLength, text.length);
      const opened = openFrame(h.value, bytes.subarray(32));
      assert.ok(opened.ok);
      assert.deepEqual(opened.value, text);
    });
  }

  it('refuses a payload that inflates to another size than the header says', () => {
    const gz = gzipSync(text);
    assert.equal(decompressPayload(Compression.gzip, gz, text.length - 1).ok, false);
    assert.equal(decompressPayload(Compression.gzip, gz, text.length + 1).ok, false);
    assert.equal(decompressPayload(Compression.snappy, Buffer.from([5, 0x10, 0x68, 0x65, 0x6c, 0x6c, 0x6f]), 4).ok, false);
    assert.equal(decompressPayload(Compression.lz4, Buffer.from('04224d18604082', 'hex'), 4).ok, false);
    assert.equal(decompressPayload(Compression.gzip, Buffer.from('not gzip'), 8).ok, false);
  });

  it('refuses an LZ4 frame whose blocks may hold far more than decoded_length before inflating it (a compression bomb)', () => {
    const bomb = compressFrameSync(Buffer.alloc(32 * 1024 * 1024));
    const r = decompressPayload(Compression.lz4, bomb, 100);
    assert.ok(!r.ok);
    assert.match(r.reason, /may hold more than/);
    const many = Buffer.alloc(9 * 1024 * 1024);
    for (let i = 0; i < many.length; i += 4096) many.writeUInt32BE(i, i);
    const honest = decompressPayload(Compression.lz4, compressFrameSync(many), many.length);
    assert.ok(honest.ok && honest.value.equals(many), 'a multi-block frame of the stated length still inflates');
  });

  it('reads xerial-framed snappy', () => {
    const xerial = Buffer.concat([Buffer.from('82534e41505059000000000100000001', 'hex'), Buffer.from([0, 0, 0, 7, 5, 0x10]), Buffer.from('hello')]);
    const r = decompressPayload(Compression.snappy, xerial, 5);
    assert.ok(r.ok);
    assert.equal(r.value.toString(), 'hello');
  });
});
