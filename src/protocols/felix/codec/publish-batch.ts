// Binary publish batches (docs/protocols/felix-wire-v1.md §5.2): flag 0x0001, with the modifiers
// 0x0008 (acked: a correlation prefix, the broker owes an ack) and 0x0040 (keyed: a routing key).
//
//   payload := [u64 request_id, u8 ack_mode]        if 0x0008 (1 per_message, 2 per_batch)
//              [u16 key_len, key]                   if 0x0040 (an empty key is a key)
//              u16 tenant_len, tenant, u16 ns_len, ns, u16 stream_len, stream
//              records (u32 count, count × (u32 len, payload))
//
// Names are UTF-8. The decoder hands out the record list as it arrived (a view, checked without
// splitting it): that is the form the log stores. `peekAckedPrefix` reads the correlation prefix
// alone, so a broker can answer a malformed body with an error ack the client can match.

import { WireReader } from '../../../base/wire.js';
import { Flag, chunksLength, frameHeaderBytes, writeFrameHeader, type Decoded } from './frame.js';
import { encodeRecords, recordPayloads, scanRecords, type RecordList } from './records.js';

export type BinaryAckMode = 'per_message' | 'per_batch';

export interface AckedPrefix {
  requestId: bigint;
  ackMode: BinaryAckMode;
}

export interface BinaryPublishBatch {
  /** The correlation prefix (flag 0x0008), or null for an unacknowledged batch. */
  acked: AckedPrefix | null;
  /** The routing key (flag 0x0040), or null: unkeyed, shard 0. */
  key: Buffer | null;
  tenantId: string;
  namespace: string;
  stream: string;
  records: RecordList;
}

/** What an encoder takes: the batch with its payloads. */
export interface PublishBatchInput {
  acked: AckedPrefix | null;
  key: Buffer | null;
  tenantId: string;
  namespace: string;
  stream: string;
  payloads: readonly Buffer[];
}

const ackModeByte: Record<BinaryAckMode, number> = { per_message: 1, per_batch: 2 };
const ackedPrefixBytes = 9;
const nameBytesMax = 0xffff;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function publishBatchFlags(b: { acked: AckedPrefix | null; key: Buffer | null }): number {
  return Flag.binaryPublishBatch | (b.acked !== null ? Flag.binaryPublishAcked : 0) | (b.key !== null ? Flag.binaryPublishKeyed : 0);
}

/** Reads the correlation prefix of an acked batch without the body. */
export function peekAckedPrefix(payload: Buffer): Decoded<AckedPrefix> {
  if (payload.length < ackedPrefixBytes) return { ok: false, reason: `incomplete acked prefix: ${payload.length} of ${ackedPrefixBytes} bytes` };
  const mode = payload[8]!;
  if (mode !== 1 && mode !== 2) return { ok: false, reason: `invalid ack mode ${mode}` };
  return { ok: true, value: { requestId: payload.readBigUInt64BE(0), ackMode: mode === 1 ? 'per_message' : 'per_batch' } };
}

function readName(r: WireReader, what: string): string {
  const raw = r.raw(r.uint16());
  if (r.error !== null) return '';
  try {
    return utf8.decode(raw);
  } catch {
    r.fail(`invalid ${what}: not UTF-8`);
    return '';
  }
}

/** Decodes the payload of a frame whose flags are 0x0001 with `acked` and `keyed` as given. */
export function decodePublishBatch(payload: Buffer, shape: { acked: boolean; keyed: boolean }): Decoded<BinaryPublishBatch> {
  let acked: AckedPrefix | null = null;
  let off = 0;
  if (shape.acked) {
    const p = peekAckedPrefix(payload);
    if (!p.ok) return p;
    acked = p.value;
    off = ackedPrefixBytes;
  }
  const r = new WireReader(payload, off);
  const key = shape.keyed ? r.raw(r.uint16()) : null;
  const tenantId = readName(r, 'tenant id');
  const namespace = readName(r, 'namespace');
  const stream = readName(r, 'stream name');
  if (r.error !== null) return { ok: false, reason: r.error };
  const records = scanRecords(payload, r.offset);
  if (!records.ok) return records;
  return { ok: true, value: { acked, key, tenantId, namespace, stream, records: records.value } };
}

/** The payloads of a decoded batch (views). */
export function publishPayloads(b: BinaryPublishBatch): Buffer[] {
  return recordPayloads(b.records);
}

function nameBytes(s: string, what: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  if (b.length > nameBytesMax) throw new RangeError(`${what} of ${b.length} bytes exceeds u16`);
  return b;
}

/** A whole binary publish frame as chunks: header and prefixes in one buffer, then the records. */
export function encodePublishBatch(b: PublishBatchInput): Buffer[] {
  const tenant = nameBytes(b.tenantId, 'tenant id');
  const ns = nameBytes(b.namespace, 'namespace');
  const stream = nameBytes(b.stream, 'stream name');
  if (b.key !== null && b.key.length > nameBytesMax) throw new RangeError(`key of ${b.key.length} bytes exceeds u16`);
  const records = encodeRecords(b.payloads);
  const prefixBytes = (b.acked !== null ? ackedPrefixBytes : 0) + (b.key !== null ? 2 + b.key.length : 0) + 6 + tenant.length + ns.length + stream.length;
  const head = Buffer.allocUnsafe(frameHeaderBytes + prefixBytes);
  writeFrameHeader(head, 0, publishBatchFlags(b), prefixBytes + records.length);
  let pos = frameHeaderBytes;
  if (b.acked !== null) {
    head.writeBigUInt64BE(b.acked.requestId, pos);
    head[pos + 8] = ackModeByte[b.acked.ackMode];
    pos += ackedPrefixBytes;
  }
  if (b.key !== null) {
    head.writeUInt16BE(b.key.length, pos);
    pos += 2 + b.key.copy(head, pos + 2);
  }
  for (const name of [tenant, ns, stream]) {
    head.writeUInt16BE(name.length, pos);
    pos += 2 + name.copy(head, pos + 2);
  }
  return [head, ...records.chunks];
}

/** A whole binary publish frame as one buffer. */
export function encodePublishBatchFrame(b: PublishBatchInput): Buffer {
  const chunks = encodePublishBatch(b);
  return Buffer.concat(chunks, chunksLength(chunks));
}
