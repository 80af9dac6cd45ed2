// Binary event batches (docs/protocols/felix-wire-v1.md §5.4), the frames of a broker-opened
// event stream after its event_stream_hello:
//
//   shared (0x0004):       [u64 base_offset if 0x0020] | records
//   per-subscriber (0x0002): u64 subscription_id | [u64 base_offset if 0x0020] | records
//   records := u32 count | count × (u32 len, payload); payload i is at offset base_offset + i
//
// A shared batch names no subscription, so one encoding serves every subscriber of a stream:
// `EventBatchFrames` builds the record chunks once and hands each subscriber the same chunk list,
// headed for its variant (with or without base_offset, as it negotiated 0x0020). Variants are
// built on first use and kept; the record chunks are never copied per subscriber.

import { WireReader } from '../../../base/wire.js';
import { Flag, frameHeaderBytes, writeFrameHeader, type Decoded } from './frame.js';
import { encodeRecords, scanRecords, type RecordList } from './records.js';

export interface BinaryEventBatch {
  /** The subscription of a per-subscriber batch (0x0002); null for a shared one (0x0004). */
  subscriptionId: bigint | null;
  /** The offset of the first payload (flag 0x0020), or null. */
  baseOffset: bigint | null;
  records: RecordList;
}

/** Decodes the payload of an event batch frame of the given shape. */
export function decodeEventBatch(payload: Buffer, shape: { shared: boolean; offsets: boolean }): Decoded<BinaryEventBatch> {
  const r = new WireReader(payload);
  const subscriptionId = shape.shared ? null : r.uint64();
  const baseOffset = shape.offsets ? r.uint64() : null;
  if (r.error !== null) return { ok: false, reason: r.error };
  const records = scanRecords(payload, r.offset);
  if (!records.ok) return records;
  return { ok: true, value: { subscriptionId, baseOffset, records: records.value } };
}

/** One batch of events, encoded once for any number of subscribers. */
export class EventBatchFrames {
  private readonly records: readonly Buffer[];
  private readonly recordsLength: number;
  private withOffsets: readonly Buffer[] | null = null;
  private withoutOffsets: readonly Buffer[] | null = null;

  /**
   * `payloads` are the events in offset order, the first at `baseOffset`; or pass `records`, a
   * checked record list as stored (its bytes are sent as they are).
   */
  constructor(
    source: { payloads: readonly Buffer[] } | { records: RecordList },
    readonly baseOffset: bigint,
  ) {
    if ('records' in source) {
      this.records = [source.records.bytes];
      this.recordsLength = source.records.bytes.length;
    } else {
      const r = encodeRecords(source.payloads);
      this.records = r.chunks;
      this.recordsLength = r.length;
    }
  }

  /** Payload bytes of the shared frame without offsets (the record list). */
  get recordsBytes(): number {
    return this.recordsLength;
  }

  /**
   * The shared frame (0x0004) for a subscriber, with base_offset when it negotiated 0x0020. The
   * same array is returned on every call: callers write it and never modify it.
   */
  shared(offsets: boolean): readonly Buffer[] {
    if (offsets) return (this.withOffsets ??= this.headed(Flag.binaryEventBatchShared | Flag.eventBatchOffsets, null));
    return (this.withoutOffsets ??= this.headed(Flag.binaryEventBatchShared, null));
  }

  /** The per-subscriber frame (0x0002) of one subscription: its own head, the shared records. */
  perSubscriber(subscriptionId: bigint, offsets: boolean): Buffer[] {
    return this.headed(Flag.binaryEventBatch | (offsets ? Flag.eventBatchOffsets : 0), subscriptionId);
  }

  private headed(flags: number, subscriptionId: bigint | null): Buffer[] {
    const offsets = (flags & Flag.eventBatchOffsets) !== 0;
    const prefix = (subscriptionId !== null ? 8 : 0) + (offsets ? 8 : 0);
    const head = Buffer.allocUnsafe(frameHeaderBytes + prefix);
    writeFrameHeader(head, 0, flags, prefix + this.recordsLength);
    let pos = frameHeaderBytes;
    if (subscriptionId !== null) {
      head.writeBigUInt64BE(subscriptionId, pos);
      pos += 8;
    }
    if (offsets) head.writeBigUInt64BE(this.baseOffset, pos);
    return [head, ...this.records];
  }
}
