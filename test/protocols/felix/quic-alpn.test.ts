// ALPN at the Felix QUIC listener. The Initial-packet helper (quic-initial.ts) against RFC 9001
// Appendix A (the Initial keys of DCID 8394c8f03e515708, the sample client Initial's protected
// bytes, the sample server Initial decrypted) and against truncated and garbage packets. Then what
// the listener answers a ClientHello that offers no ALPN: no QUIC stack in Node sends one (quiche
// refuses to build it), so a UDP relay between a felix/1 client and the listener removes the ALPN
// extension from the client's ClientHello, and reads the listener's answer: CONNECTION_CLOSE with
// CRYPTO_ERROR 0x178 (TLS alert 120, no_application_protocol), which BoringSSL sends for every QUIC
// ClientHello without ALPN (docs/felix.md "ALPN"). The listener serves felix/1 clients after it.

import assert from 'node:assert/strict';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../src/base/logger.js';
import { connectFelixQuic, startFelixQuicServer, type FelixQuicServer } from '../../../src/protocols/felix/quic.js';
import {
  cryptoStream,
  decryptInitial,
  encryptInitial,
  initialKeys,
  parseClientHello,
  parseFrames,
  parseInitialHeader,
  rebuildClientHello,
  writeVarint,
  type Frame,
} from './quic-initial.js';

const logger = createLogger('error', () => {});
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// RFC 9001 Appendix A.
const rfcDcid = hex('8394c8f03e515708');
const rfcClientPayload = Buffer.concat([
  hex(`060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868
    04fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578
    616d706c652e636f6dff01000100000a00080006001d00170018001000070005
    04616c706e000500050100000000003300260024001d00209370b2c9caa47fba
    baf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b000302030400
    0d0010000e0403050306030203080408050806002d00020101001c0002400100
    3900320408ffffffffffffffff05048000ffff07048000ffff08011001048000
    75300901100f088394c8f03e51570806048000ffff`),
  Buffer.alloc(917),
]);
const rfcClientHeader = hex('c300000001088394c8f03e5157080000449e00000002');
const rfcServerPacket = hex(`cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a
  5816b6394100f37a1c69797554780bb38cc5a99f5ede4cf73c3ec2493a1839b3
  dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bded74b562bfb19fb84
  022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc4
  2158407dd074ee`);
const rfcServerPayload = hex(`02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf739
  88cfc79825df566dc5430b9a045a1200130100002e00330024001d00209d3c94
  0d89690b84d08a60993c144eca684d1081287c834d5311bcf32bb9da1a002b00
  020304`);

function rfcClientPacket(): Buffer {
  return encryptInitial(rfcClientHeader, 18, 2, rfcClientPayload, initialKeys(rfcDcid).client);
}

/** A deterministic byte source (xorshift32), so a failing garbage case can be replayed. */
function bytes(seed: number, n: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}

describe('QUIC Initial packets (RFC 9001 Appendix A)', () => {
  it('derives the Initial keys of the sample DCID', () => {
    const k = initialKeys(rfcDcid);
    assert.equal(k.client.key.toString('hex'), '1f369613dd76d5467730efcbe3b1a22d');
    assert.equal(k.client.iv.toString('hex'), 'fa044b2f42a3fd3b46fb255c');
    assert.equal(k.client.hp.toString('hex'), '9f50449e04a0e810283a1e9933adedd2');
    assert.equal(k.server.key.toString('hex'), 'cf3a5331653c364c88f0f379b6067e37');
    assert.equal(k.server.iv.toString('hex'), '0ac1493ca1905853b0bba03e');
    assert.equal(k.server.hp.toString('hex'), 'c206b8d9b9f0f37644430b490eeaa314');
  });

  it('protects the sample client Initial to the RFC bytes, and reads its ClientHello back', () => {
    const packet = rfcClientPacket();
    assert.equal(packet.length, 1200);
    assert.equal(packet.subarray(0, 38).toString('hex'), 'c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11d242b123dc9b');
    assert.equal(packet.subarray(-48).toString('hex'), '7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241e221af44860018ab0856972e194cd934');
    const d = decryptInitial(packet, initialKeys(rfcDcid).client);
    assert.ok(d !== null);
    assert.equal(d.packetNumber, 2);
    assert.deepEqual(d.payload, rfcClientPayload);
    const frames = parseFrames(d.payload);
    assert.ok(frames !== null);
    const hello = parseClientHello(cryptoStream(frames));
    assert.ok(hello !== null);
    assert.deepEqual(hello.alpn, ['alpn']);
    assert.deepEqual(
      hello.extensions.map((e) => e.type),
      [0, 65281, 10, 16, 5, 51, 43, 13, 45, 28, 57],
    );
    const without = parseClientHello(rebuildClientHello(cryptoStream(frames), hello, hello.extensions.filter((e) => e.type !== 16)));
    assert.equal(without?.alpn, null);
    assert.equal(without?.extensions.length, 10);
  });

  it('decrypts the sample server Initial to the RFC payload', () => {
    const d = decryptInitial(rfcServerPacket, initialKeys(rfcDcid).server);
    assert.ok(d !== null);
    assert.equal(d.packetNumber, 1);
    assert.deepEqual(d.payload, rfcServerPayload);
    assert.deepEqual(parseFrames(d.payload)?.map((f) => f.type), ['ack', 'crypto']);
  });

  it('answers null, never throws, for truncated, altered and garbage packets', () => {
    const packet = rfcClientPacket();
    const keys = initialKeys(rfcDcid).client;
    for (let n = 0; n < packet.length; n += 7) assert.equal(decryptInitial(packet.subarray(0, n), keys), null, `truncated to ${n}`);
    for (const at of [0, 5, 18, 40, 600, 1199]) {
      const altered = Buffer.from(packet);
      altered[at]! ^= 0x40;
      assert.equal(decryptInitial(altered, keys), null, `byte ${at} altered`);
    }
    assert.equal(decryptInitial(packet, initialKeys(hex('0001020304050607')).client), null, 'keys of another DCID');
    for (let seed = 1; seed <= 500; seed++) {
      const junk = bytes(seed, 1 + (seed % 1300));
      if (seed % 2 === 0) junk[0] = 0xc0; // a long-header Initial's first byte
      if (seed % 4 === 0) junk.writeUInt32BE(1, 1);
      assert.equal(decryptInitial(junk, keys), null);
      parseInitialHeader(junk);
      parseFrames(junk);
      parseClientHello(junk);
    }
    // The CRYPTO frame is the first 245 bytes of the payload (4 of header, a 241-byte ClientHello).
    const d = decryptInitial(packet, keys)!;
    for (let n = 0; n < 245; n += 3) {
      const frames = parseFrames(d.payload.subarray(0, n));
      if (frames !== null) assert.equal(parseClientHello(cryptoStream(frames)), null, `CRYPTO cut at ${n}`);
    }
  });
});

/**
 * A UDP relay from a client to `serverPort` that removes the ALPN extension from every ClientHello
 * it passes on, and reports the frames of the server's Initial packets.
 */
class AlpnStrippingRelay {
  readonly front: Socket = createSocket('udp4');
  private readonly back: Socket = createSocket('udp4');
  private client: RemoteInfo | null = null;
  private dcid: Buffer | null = null;
  /** The ALPN lists of the ClientHellos passed on, after the rewrite. */
  readonly forwardedAlpn: (string[] | null)[] = [];
  readonly serverFrames: Frame[] = [];

  constructor(private readonly serverPort: number) {
    this.front.on('message', (m, from) => this.fromClient(m, from));
    this.back.on('message', (m) => this.fromServer(m));
  }

  async start(): Promise<number> {
    this.front.bind(0, '127.0.0.1');
    this.back.bind(0, '127.0.0.1');
    await Promise.all([once(this.front, 'listening'), once(this.back, 'listening')]);
    return this.front.address().port;
  }

  close(): void {
    this.front.close();
    this.back.close();
  }

  private fromClient(datagram: Buffer, from: RemoteInfo): void {
    this.client = from;
    this.back.send(this.strip(datagram), this.serverPort, '127.0.0.1');
  }

  private strip(datagram: Buffer): Buffer {
    const header = parseInitialHeader(datagram);
    if (header === null) return datagram;
    this.dcid = Buffer.from(header.dcid);
    const keys = initialKeys(header.dcid).client;
    const d = decryptInitial(datagram, keys);
    const frames = d === null ? null : parseFrames(d.payload);
    const crypto = frames === null ? null : cryptoStream(frames);
    const hello = crypto === null ? null : parseClientHello(crypto);
    if (d === null || crypto === null || hello === null) return datagram;
    const rewritten = rebuildClientHello(crypto, hello, hello.extensions.filter((e) => e.type !== 16));
    const frame = Buffer.concat([Buffer.from([0x06, 0x00]), writeVarint(rewritten.length), rewritten]);
    // The payload keeps its length (the rest is PADDING), so the header stays as it was.
    const payload = Buffer.concat([frame, Buffer.alloc(d.payload.length - frame.length)]);
    this.forwardedAlpn.push(parseClientHello(rewritten)?.alpn ?? null);
    return Buffer.concat([encryptInitial(d.headerBytes, header.pnOffset, d.packetNumber, payload, keys), datagram.subarray(header.end)]);
  }

  private fromServer(datagram: Buffer): void {
    if (this.dcid !== null && parseInitialHeader(datagram) !== null) {
      const d = decryptInitial(datagram, initialKeys(this.dcid).server);
      const frames = d === null ? null : parseFrames(d.payload);
      if (frames !== null) this.serverFrames.push(...frames);
    }
    if (this.client !== null) this.front.send(datagram, this.client.port, this.client.address);
  }
}

describe('the Felix QUIC listener and ALPN', () => {
  let server: FelixQuicServer;
  let accepted = 0;

  before(async () => {
    server = await startFelixQuicServer({ host: '127.0.0.1', port: 0, logger, onConnection: () => void accepted++ });
  });
  after(() => server.close());

  it('completes a handshake with a client offering felix/1', async () => {
    const client = await connectFelixQuic({ host: '127.0.0.1', port: server.port, ca: server.certificate, connectTimeoutMs: 3_000, logger });
    await client.close();
    assert.equal(accepted, 1);
  });

  it('refuses a ClientHello without ALPN with CRYPTO_ERROR 0x178 (no_application_protocol), then serves felix/1 clients', async () => {
    const relay = new AlpnStrippingRelay(server.port);
    const port = await relay.start();
    try {
      await assert.rejects(connectFelixQuic({ host: '127.0.0.1', port, ca: server.certificate, connectTimeoutMs: 1_500, logger }), /376/);
      assert.ok(relay.forwardedAlpn.length > 0 && relay.forwardedAlpn.every((a) => a === null), 'the listener saw ClientHellos without ALPN');
      const close = relay.serverFrames.find((f) => f.type === 'close');
      assert.deepEqual(close, { type: 'close', errorCode: 0x100 + 120, frameType: 0, reason: '' });
      assert.equal(accepted, 1, 'no connection was accepted');
    } finally {
      relay.close();
    }
    const client = await connectFelixQuic({ host: '127.0.0.1', port: server.port, ca: server.certificate, connectTimeoutMs: 3_000, logger });
    await client.close();
    assert.equal(accepted, 2);
  });

  it('refuses a client offering only another ALPN with the same error', async () => {
    await assert.rejects(connectFelixQuic({ host: '127.0.0.1', port: server.port, ca: server.certificate, alpn: ['other/1'], connectTimeoutMs: 1_500, logger }), /376/);
    assert.equal(accepted, 2);
  });
});
