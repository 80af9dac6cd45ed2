// QUIC version 1 Initial packets (RFC 9000 §17.2.2, RFC 9001 §5) for tests: the Initial keys
// derived from a Destination Connection ID, header protection and AEAD removed and put back, the
// frames of a decrypted payload, and the TLS ClientHello carried in CRYPTO frames with its
// extensions. The listener tests use it to present the broker with a ClientHello no QUIC stack in
// Node will send (one that offers no ALPN) and to read what the broker answers.

import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';

/** RFC 9001 §5.2: the salt of version 1's Initial secrets. */
export const initialSaltV1 = Buffer.from('38762cf7f55934b34d179ae6a4c80cadccbb7f0a', 'hex');

export interface PacketKeys {
  key: Buffer;
  iv: Buffer;
  hp: Buffer;
}

export interface InitialKeys {
  client: PacketKeys;
  server: PacketKeys;
}

function hkdfExtract(salt: Buffer, ikm: Buffer): Buffer {
  return createHmac('sha256', salt).update(ikm).digest();
}

/** TLS 1.3's HKDF-Expand-Label (RFC 8446 §7.1) with an empty context, up to 32 bytes. */
export function hkdfExpandLabel(secret: Buffer, label: string, length: number): Buffer {
  const full = Buffer.from(`tls13 ${label}`, 'latin1');
  const info = Buffer.concat([Buffer.from([length >> 8, length & 0xff, full.length]), full, Buffer.from([0])]);
  return createHmac('sha256', secret).update(Buffer.concat([info, Buffer.from([1])])).digest().subarray(0, length);
}

function packetKeys(secret: Buffer): PacketKeys {
  return { key: hkdfExpandLabel(secret, 'quic key', 16), iv: hkdfExpandLabel(secret, 'quic iv', 12), hp: hkdfExpandLabel(secret, 'quic hp', 16) };
}

/** The client's and the server's Initial keys for a client's first Destination Connection ID. */
export function initialKeys(dcid: Buffer): InitialKeys {
  const initial = hkdfExtract(initialSaltV1, dcid);
  return { client: packetKeys(hkdfExpandLabel(initial, 'client in', 32)), server: packetKeys(hkdfExpandLabel(initial, 'server in', 32)) };
}

/** A QUIC variable-length integer at `offset`: its value and size, or null past the end. */
export function readVarint(b: Buffer, offset: number): { value: number; size: number } | null {
  if (offset >= b.length) return null;
  const size = 1 << (b[offset]! >> 6);
  if (offset + size > b.length) return null;
  let value = b[offset]! & 0x3f;
  for (let i = 1; i < size; i++) value = value * 256 + b[offset + i]!;
  return { value, size };
}

export function writeVarint(value: number): Buffer {
  if (value < 0x40) return Buffer.from([value]);
  if (value < 0x4000) return Buffer.from([0x40 | (value >> 8), value & 0xff]);
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value);
  b[0]! |= 0x80;
  return b;
}

/** A long-header Initial packet's parts, header protection not yet removed. */
export interface InitialHeader {
  version: number;
  dcid: Buffer;
  scid: Buffer;
  token: Buffer;
  /** Where the packet number starts. */
  pnOffset: number;
  /** The end of this packet in its datagram (the Length field's span). */
  end: number;
}

/** The header of the Initial packet at the start of `datagram`, or null if it is not one. */
export function parseInitialHeader(datagram: Buffer): InitialHeader | null {
  if (datagram.length < 7 || (datagram[0]! & 0xc0) !== 0xc0) return null;
  const version = datagram.readUInt32BE(1);
  if (version !== 1 || ((datagram[0]! >> 4) & 0x03) !== 0) return null;
  let at = 5;
  const dcidLen = datagram[at++]!;
  if (dcidLen > 20 || at + dcidLen >= datagram.length) return null;
  const dcid = datagram.subarray(at, (at += dcidLen));
  const scidLen = datagram[at++]!;
  if (scidLen > 20 || at + scidLen > datagram.length) return null;
  const scid = datagram.subarray(at, (at += scidLen));
  const tokenLen = readVarint(datagram, at);
  if (tokenLen === null || at + tokenLen.size + tokenLen.value > datagram.length) return null;
  at += tokenLen.size;
  const token = datagram.subarray(at, (at += tokenLen.value));
  const length = readVarint(datagram, at);
  if (length === null) return null;
  at += length.size;
  const end = at + length.value;
  // The header-protection sample starts 4 bytes past the packet number and is 16 bytes long.
  if (end > datagram.length || at + 4 + 16 > end) return null;
  return { version, dcid, scid, token, pnOffset: at, end };
}

function mask(hp: Buffer, sample: Buffer): Buffer {
  const c = createCipheriv('aes-128-ecb', hp, null);
  return c.update(sample);
}

function nonce(iv: Buffer, pn: number): Buffer {
  const n = Buffer.from(iv);
  for (let i = 0; i < 6; i++) n[11 - i]! ^= Math.floor(pn / 2 ** (8 * i)) & 0xff;
  return n;
}

export interface DecryptedInitial {
  header: InitialHeader;
  packetNumber: number;
  pnLength: number;
  /** The unprotected header (the AEAD's associated data). */
  headerBytes: Buffer;
  payload: Buffer;
}

/** Removes header protection and decrypts the Initial at the start of `datagram`; null if it does not authenticate. */
export function decryptInitial(datagram: Buffer, keys: PacketKeys): DecryptedInitial | null {
  const header = parseInitialHeader(datagram);
  if (header === null) return null;
  const packet = Buffer.from(datagram.subarray(0, header.end));
  const m = mask(keys.hp, packet.subarray(header.pnOffset + 4, header.pnOffset + 20));
  packet[0]! ^= m[0]! & 0x0f;
  const pnLength = (packet[0]! & 0x03) + 1;
  let packetNumber = 0;
  for (let i = 0; i < pnLength; i++) {
    packet[header.pnOffset + i]! ^= m[1 + i]!;
    packetNumber = packetNumber * 256 + packet[header.pnOffset + i]!;
  }
  const headerBytes = packet.subarray(0, header.pnOffset + pnLength);
  const sealed = packet.subarray(header.pnOffset + pnLength);
  if (sealed.length < 16) return null;
  try {
    const d = createDecipheriv('aes-128-gcm', keys.key, nonce(keys.iv, packetNumber));
    d.setAAD(headerBytes);
    d.setAuthTag(sealed.subarray(sealed.length - 16));
    const payload = Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
    return { header, packetNumber, pnLength, headerBytes: Buffer.from(headerBytes), payload };
  } catch {
    return null;
  }
}

/** Encrypts `payload` under an unprotected header (its Length field must already fit) and protects the header. */
export function encryptInitial(headerBytes: Buffer, pnOffset: number, packetNumber: number, payload: Buffer, keys: PacketKeys): Buffer {
  const c = createCipheriv('aes-128-gcm', keys.key, nonce(keys.iv, packetNumber));
  c.setAAD(headerBytes);
  const sealed = Buffer.concat([c.update(payload), c.final(), c.getAuthTag()]);
  const packet = Buffer.concat([headerBytes, sealed]);
  const pnLength = (headerBytes[0]! & 0x03) + 1;
  const m = mask(keys.hp, packet.subarray(pnOffset + 4, pnOffset + 20));
  packet[0]! ^= m[0]! & 0x0f;
  for (let i = 0; i < pnLength; i++) packet[pnOffset + i]! ^= m[1 + i]!;
  return packet;
}

export type Frame = { type: 'padding' } | { type: 'ping' } | { type: 'ack' } | { type: 'crypto'; offset: number; data: Buffer } | { type: 'close'; frameType: number; errorCode: number; reason: string };

/** The frames of a decrypted Initial payload (those an Initial may carry); null when malformed. */
export function parseFrames(payload: Buffer): Frame[] | null {
  const frames: Frame[] = [];
  let at = 0;
  const v = (): number | null => {
    const r = readVarint(payload, at);
    if (r === null) return null;
    at += r.size;
    return r.value;
  };
  while (at < payload.length) {
    const type = v();
    if (type === null) return null;
    if (type === 0x00) frames.push({ type: 'padding' });
    else if (type === 0x01) frames.push({ type: 'ping' });
    else if (type === 0x02 || type === 0x03) {
      const parts = [v(), v(), v(), v()];
      if (parts.includes(null)) return null;
      for (let i = 0; i < parts[2]! * 2; i++) if (v() === null) return null;
      if (type === 0x03 && [v(), v(), v()].includes(null)) return null;
      frames.push({ type: 'ack' });
    } else if (type === 0x06) {
      const offset = v();
      const length = v();
      if (offset === null || length === null || at + length > payload.length) return null;
      frames.push({ type: 'crypto', offset, data: payload.subarray(at, (at += length)) });
    } else if (type === 0x1c || type === 0x1d) {
      const errorCode = v();
      const frameType = type === 0x1c ? v() : 0;
      const reasonLength = v();
      if (errorCode === null || frameType === null || reasonLength === null || at + reasonLength > payload.length) return null;
      frames.push({ type: 'close', errorCode, frameType, reason: payload.subarray(at, (at += reasonLength)).toString('latin1') });
    } else return null;
  }
  return frames;
}

/** The CRYPTO frames' bytes in order from offset 0 (a gap ends them). */
export function cryptoStream(frames: readonly Frame[]): Buffer {
  const pieces = frames.filter((f): f is Extract<Frame, { type: 'crypto' }> => f.type === 'crypto').sort((a, b) => a.offset - b.offset);
  let out = Buffer.alloc(0);
  for (const p of pieces) {
    if (p.offset > out.length) break;
    out = Buffer.concat([out, p.data.subarray(out.length - p.offset)]);
  }
  return out;
}

export interface ClientHello {
  /** Extension types in order. */
  extensions: { type: number; data: Buffer }[];
  /** The ALPN protocols offered (extension 16), or null when there is no such extension. */
  alpn: string[] | null;
  /** Where the extensions block (its u16 length) starts, and the message's total length. */
  extensionsAt: number;
  length: number;
}

/** The ClientHello at the start of a CRYPTO stream; null when incomplete or malformed. */
export function parseClientHello(b: Buffer): ClientHello | null {
  if (b.length < 4 || b[0] !== 1) return null;
  const length = 4 + b.readUIntBE(1, 3);
  if (b.length < length) return null;
  let at = 4 + 2 + 32;
  const skip = (prefix: 1 | 2): boolean => {
    if (at + prefix > length) return false;
    const n = prefix === 1 ? b[at]! : b.readUInt16BE(at);
    at += prefix + n;
    return at <= length;
  };
  if (!skip(1) || !skip(2) || !skip(1)) return null;
  const extensionsAt = at;
  if (at + 2 > length) return null;
  const end = at + 2 + b.readUInt16BE(at);
  if (end !== length) return null;
  at += 2;
  const extensions: ClientHello['extensions'] = [];
  while (at < end) {
    if (at + 4 > end) return null;
    const type = b.readUInt16BE(at);
    const n = b.readUInt16BE(at + 2);
    if (at + 4 + n > end) return null;
    extensions.push({ type, data: b.subarray(at + 4, at + 4 + n) });
    at += 4 + n;
  }
  const ext16 = extensions.find((e) => e.type === 16);
  let alpn: string[] | null = null;
  if (ext16 !== undefined) {
    alpn = [];
    const d = ext16.data;
    if (d.length < 2 || d.readUInt16BE(0) !== d.length - 2) return null;
    for (let i = 2; i < d.length; ) {
      const n = d[i]!;
      if (n === 0 || i + 1 + n > d.length) return null;
      alpn.push(d.subarray(i + 1, i + 1 + n).toString('latin1'));
      i += 1 + n;
    }
  }
  return { extensions, alpn, extensionsAt, length };
}

/** The ClientHello `b` with its extensions replaced by `extensions` (lengths rewritten). */
export function rebuildClientHello(b: Buffer, hello: ClientHello, extensions: readonly { type: number; data: Buffer }[]): Buffer {
  const body = Buffer.concat(
    extensions.map((e) => {
      const h = Buffer.alloc(4);
      h.writeUInt16BE(e.type);
      h.writeUInt16BE(e.data.length, 2);
      return Buffer.concat([h, e.data]);
    }),
  );
  const extLen = Buffer.alloc(2);
  extLen.writeUInt16BE(body.length);
  const out = Buffer.concat([b.subarray(0, hello.extensionsAt), extLen, body]);
  out.writeUIntBE(out.length - 4, 1, 3);
  return out;
}
