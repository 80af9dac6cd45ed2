// Binary publish acknowledgements (docs/protocols/felix-wire-v1.md §5.3): flag 0x0010, the
// broker's answer to an acked binary publish; with 0x0080 the batch was forwarded and the ack
// names the shard's owner (never on one node, and only to a client that advertised the bit).
//
//   payload := u8 status (0 ok, 1 error) | u64 request_id | u16 message_len | message (UTF-8)
//              [u16 node_id_len, node_id, u16 addr_len, addr, u64 generation]   if 0x0080
//
// An ok ack carries an empty message; an empty addr means none was published.

import { WireReader } from '../../../base/wire.js';
import { Flag, frameHeaderBytes, writeFrameHeader, type Decoded } from './frame.js';

export interface PublishOwner {
  nodeId: string;
  /** The owner's client address, or null when the cluster has not published one. */
  addr: string | null;
  generation: bigint;
}

export interface PublishAck {
  requestId: bigint;
  /** null on success, the error text on failure. */
  error: string | null;
  /** Set only for a forwarded batch (flag 0x0080). */
  owner: PublishOwner | null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const shortBytesMax = 0xffff;

function readText(r: WireReader, what: string): string {
  const raw = r.raw(r.uint16());
  if (r.error !== null || raw.length === 0) return '';
  try {
    return utf8.decode(raw);
  } catch {
    r.fail(`invalid ${what}: not UTF-8`);
    return '';
  }
}

/** Decodes the payload of a frame whose flags are 0x0010, with `owner` for 0x0080. */
export function decodePublishAck(payload: Buffer, shape: { owner: boolean }): Decoded<PublishAck> {
  const r = new WireReader(payload);
  const status = r.uint8();
  const requestId = r.uint64();
  const message = readText(r, 'ack message');
  if (r.error === null && status !== 0 && status !== 1) r.fail(`invalid ack status ${status}`);
  if (r.error === null && status === 0 && message !== '') r.fail('an ok ack carries a message');
  let owner: PublishOwner | null = null;
  if (shape.owner) {
    const nodeId = readText(r, 'owner node id');
    const addr = readText(r, 'owner address');
    const generation = r.uint64();
    owner = { nodeId, addr: addr === '' ? null : addr, generation };
  }
  if (r.error === null && !r.complete()) r.fail(`${r.remaining} bytes after the ack`);
  if (r.error !== null) return { ok: false, reason: r.error };
  return { ok: true, value: { requestId, error: status === 0 ? null : message, owner } };
}

function textBytes(s: string, what: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  if (b.length > shortBytesMax) throw new RangeError(`${what} of ${b.length} bytes exceeds u16`);
  return b;
}

/** A whole publish ack frame (one buffer). */
export function encodePublishAck(ack: PublishAck): Buffer {
  const message = textBytes(ack.error ?? '', 'ack message');
  const nodeId = ack.owner !== null ? textBytes(ack.owner.nodeId, 'owner node id') : null;
  const addr = ack.owner !== null ? textBytes(ack.owner.addr ?? '', 'owner address') : null;
  const length = 11 + message.length + (nodeId !== null && addr !== null ? 12 + nodeId.length + addr.length : 0);
  const b = Buffer.allocUnsafe(frameHeaderBytes + length);
  writeFrameHeader(b, 0, Flag.binaryPublishAck | (ack.owner !== null ? Flag.binaryPublishAckOwner : 0), length);
  let pos = frameHeaderBytes;
  b[pos] = ack.error === null ? 0 : 1;
  b.writeBigUInt64BE(ack.requestId, pos + 1);
  b.writeUInt16BE(message.length, pos + 9);
  pos += 11 + message.copy(b, pos + 11);
  if (ack.owner !== null && nodeId !== null && addr !== null) {
    b.writeUInt16BE(nodeId.length, pos);
    pos += 2 + nodeId.copy(b, pos + 2);
    b.writeUInt16BE(addr.length, pos);
    pos += 2 + addr.copy(b, pos + 2);
    b.writeBigUInt64BE(ack.owner.generation, pos);
  }
  return b;
}
