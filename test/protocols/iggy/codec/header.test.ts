import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { xxh3 } from '@node-rs/xxhash';
import {
  EvictionReason,
  Operation,
  decodeEviction,
  decodeReplyHeader,
  decodeRequestHeader,
  encodeEviction,
  encodeReplyFrame,
  encodeRequestHeader,
  iggyProtocolVersion,
  iggyProtocolVersionMin,
  isProtocolCompatible,
  packVersion,
  validateRequestHeader,
  verifyRequestChecksum,
  type RequestHeader,
} from '../../../../src/protocols/iggy/codec/index.js';

function header(fields: Partial<{ size: number; client: bigint; request: bigint; operation: number; session: bigint }> = {}): RequestHeader {
  return decodeRequestHeader(
    encodeRequestHeader({ size: 256, client: 1n, request: 1n, operation: Operation.createStream, session: 3n, ...fields }),
  );
}

describe('request header', () => {
  it('decodes every field at its offset', () => {
    const b = Buffer.alloc(256);
    b.writeUInt32LE(300, 48);
    b[60] = 5;
    b.writeBigUInt64LE(0x11n, 128);
    b.writeBigUInt64LE(0x22n, 136);
    b.writeBigUInt64LE(0x33n, 144);
    b.writeBigUInt64LE(0x44n, 160);
    b.writeBigUInt64LE(0x55n, 168);
    b[176] = 2;
    b.writeBigUInt64LE(0x66n, 184);
    b.writeUInt32LE(0x77, 192);
    b.writeUInt32LE(201, 196);
    const h = decodeRequestHeader(b);
    assert.equal(h.size, 300);
    assert.equal(h.client, (0x22n << 64n) | 0x11n);
    assert.equal(h.requestChecksum, 0x33n);
    assert.equal(h.timestamp, 0x44n);
    assert.equal(h.request, 0x55n);
    assert.equal(h.operation, 2);
    assert.equal(h.session, 0x66n);
    assert.equal(h.userId, 0x77);
    assert.equal(h.commandCode, 201);
  });

  it('validates with reasons', () => {
    assert.equal(validateRequestHeader(header()), null);
    assert.deepEqual(validateRequestHeader(header({ size: 100 }))?.action, 'close');
    const big = validateRequestHeader(header({ size: 2000 }), 1000);
    assert.ok(big?.action === 'evict' && big.eviction === EvictionReason.invalidRequestBodySize);
    assert.equal(validateRequestHeader(header({ client: 0n }))?.action, 'close');
    const op0 = validateRequestHeader(header({ operation: 0 }));
    assert.ok(op0?.action === 'evict' && op0.eviction === EvictionReason.invalidRequestOperation);
    const internal = validateRequestHeader(header({ operation: 66 }));
    assert.ok(internal?.action === 'evict' && internal.eviction === EvictionReason.invalidRequestOperation);
    assert.notEqual(validateRequestHeader(header({ operation: Operation.register, session: 0n, request: 1n })), null);
    assert.equal(validateRequestHeader(header({ operation: Operation.register, session: 0n, request: 0n })), null);
    assert.notEqual(validateRequestHeader(header({ session: 0n })), null);
    assert.notEqual(validateRequestHeader(header({ request: 0n })), null);
    assert.equal(validateRequestHeader(header({ operation: Operation.nonReplicated, session: 0n, request: 0n })), null);
    const released = decodeRequestHeader(Buffer.from(encodeRequestHeader({ size: 256, client: 1n, request: 1n, operation: 128, session: 1n })));
    released.release = 1;
    assert.equal(validateRequestHeader(released)?.action, 'evict');
    released.release = 0;
    released.command = 8;
    assert.equal(validateRequestHeader(released)?.action, 'close');
  });

  it('verifies request_checksum = u128(XXH3_64(body)) only when non-zero', () => {
    const body = Buffer.from('0474657374', 'hex');
    const h = header();
    assert.equal(verifyRequestChecksum(h, body), true);
    h.requestChecksum = xxh3.xxh64(body);
    assert.equal(verifyRequestChecksum(h, body), true);
    h.requestChecksum += 1n;
    assert.equal(verifyRequestChecksum(h, body), false);
    h.requestChecksum = xxh3.xxh64(body) | (1n << 64n);
    assert.equal(verifyRequestChecksum(h, body), false);
  });
});

describe('reply header', () => {
  it('echoes the request and carries status, op = session and commit', () => {
    const req = decodeRequestHeader(
      encodeRequestHeader({ size: 260, client: 77n, request: 9n, operation: 128, session: 5n, requestChecksum: 123n, timestamp: 42n }),
    );
    const chunks = encodeReplyFrame(req, [Buffer.from([0, 0, 0, 0])], { session: 5n, commit: 17n });
    const bytes = Buffer.concat(chunks);
    assert.equal(bytes.length, 260);
    const h = decodeReplyHeader(bytes);
    assert.deepEqual(
      [h.size, h.command, h.requestChecksum, h.client, h.op, h.commit, h.timestamp, h.request, h.operation, h.status],
      [260, 8, 123n, 77n, 5n, 17n, 42n, 9n, 128, 0],
    );
    assert.ok(bytes.subarray(0, 32).every((b) => b === 0), 'checksums zero');
    assert.ok(bytes.subarray(220, 256).every((b) => b === 0), 'reserved zero');
    const denied = decodeReplyHeader(encodeReplyFrame(req, [], { session: 0n, commit: 0n, status: 40 })[0]!);
    assert.equal(denied.status, 40);
    assert.equal(denied.size, 256);
    assert.throws(() => encodeReplyFrame(req, [Buffer.from([1])], { session: 0n, commit: 0n, status: 41 }));
  });
});

describe('eviction', () => {
  it('round-trips and validates', () => {
    const e = encodeEviction({ client: 9n, reason: EvictionReason.malformedLogin });
    assert.equal(e.length, 256);
    assert.equal(e[255], 15);
    assert.equal(e.readUInt32LE(48), 256);
    assert.equal(e[60], 13);
    const d = decodeEviction(e);
    assert.ok(typeof d !== 'string');
    assert.equal(d.reason, 15);
    assert.equal(d.serverProtocolVersion, 0);
    const v = decodeEviction(
      encodeEviction({ client: 9n, reason: EvictionReason.incompatibleProtocol, serverProtocolVersion: iggyProtocolVersion, serverProtocolVersionMin: iggyProtocolVersionMin }),
    );
    assert.ok(typeof v !== 'string');
    assert.equal(v.serverProtocolVersion, 0x2c00);
    assert.equal(typeof decodeEviction(encodeEviction({ client: 0n, reason: 1 })), 'string');
    assert.equal(typeof decodeEviction(encodeEviction({ client: 1n, reason: 0 as EvictionReason })), 'string');
    const smuggled = encodeEviction({ client: 1n, reason: 1 });
    smuggled[200] = 1;
    assert.equal(typeof decodeEviction(smuggled), 'string');
    assert.equal(typeof decodeEviction(encodeEviction({ client: 1n, reason: 14, serverProtocolVersion: 1, serverProtocolVersionMin: 0 })), 'string');
  });
});

describe('protocol version', () => {
  it('packs 0.11.0 as 11264 and gates by minor', () => {
    assert.equal(iggyProtocolVersion, 11264);
    assert.ok(isProtocolCompatible(packVersion(0, 11, 0)));
    assert.ok(isProtocolCompatible(packVersion(0, 11, 7)));
    assert.ok(!isProtocolCompatible(packVersion(0, 12, 0)));
    assert.ok(!isProtocolCompatible(packVersion(0, 10, 9)));
    assert.ok(!isProtocolCompatible(0xc0002c00));
  });
});
