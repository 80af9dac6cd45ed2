// The sparse time index of one segment (`<base>.timeindex`). An entry (T, O) says: every batch of
// the segment up to and including the batch ending at offset O has maxTimestamp <= T, and the
// batch ending at O has maxTimestamp T. Entries are added next to offset-index entries, only when
// the segment's max timestamp grew, plus one final entry when the segment is sealed, so the last
// entry of a sealed segment is its max timestamp.
//
// File layout: a flat array of 12-byte entries, big-endian, no header.
//
// | offset | size | field          | notes                                          |
// |--------|------|----------------|------------------------------------------------|
// | 0      | 8    | timestamp      | i64 ms: the segment's max timestamp so far     |
// | 8      | 4    | relativeOffset | last offset of the batch that has it - base    |
//
// Invariants: timestamps and relative offsets strictly increase.

import assert from 'node:assert/strict';

export const timeIndexEntryBytes = 12;
const initialCapacity = 64;
const twoPow32 = 2 ** 32;

export interface TimeIndexEntry {
  timestamp: number;
  offset: number;
}

export class TimeIndex {
  // Float64 holds every safe-integer millisecond timestamp exactly.
  private timestamps = new Float64Array(initialCapacity);
  private relativeOffsets = new Uint32Array(initialCapacity);
  private length = 0;

  constructor(readonly baseOffset: number) {}

  get entryCount(): number {
    return this.length;
  }

  get fileBytes(): number {
    return this.length * timeIndexEntryBytes;
  }

  last(): TimeIndexEntry | null {
    if (this.length === 0) return null;
    return this.entryAt(this.length - 1);
  }

  entryAt(i: number): TimeIndexEntry {
    assert.ok(i >= 0 && i < this.length);
    return { timestamp: this.timestamps[i]!, offset: this.baseOffset + this.relativeOffsets[i]! };
  }

  /** Adds (timestamp, offset) if the timestamp grew; returns the 12 file bytes, or null. */
  maybeAppend(timestamp: number, offset: number): Buffer | null {
    const last = this.last();
    if (last !== null && timestamp <= last.timestamp) return null;
    const relative = offset - this.baseOffset;
    assert.ok(relative >= 0 && relative <= 0xffffffff, `offset ${offset} outside the segment's u32 span`);
    assert.ok(last === null || offset > last.offset, 'time index offsets must increase');
    this.grow();
    this.timestamps[this.length] = timestamp;
    this.relativeOffsets[this.length] = relative;
    this.length++;
    return encodeEntry(timestamp, relative);
  }

  /**
   * Where a search for the first batch with maxTimestamp >= `timestamp` may start: the offset
   * after the last entry whose timestamp is below it (every batch up to that entry is too old),
   * or the segment base when there is none.
   */
  scanStart(timestamp: number): number {
    let lo = 0;
    let hi = this.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timestamps[mid]! < timestamp) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? this.baseOffset : this.baseOffset + this.relativeOffsets[found]! + 1;
  }

  /** Drops entries whose offset is at or beyond `offset`. */
  truncateToOffset(offset: number): void {
    while (this.length > 0 && this.baseOffset + this.relativeOffsets[this.length - 1]! >= offset) this.length--;
  }

  truncateToCount(count: number): void {
    assert.ok(count >= 0 && count <= this.length);
    this.length = count;
  }

  encode(from = 0, to = this.length): Buffer {
    assert.ok(from >= 0 && from <= to && to <= this.length);
    const out = Buffer.allocUnsafe((to - from) * timeIndexEntryBytes);
    for (let i = from; i < to; i++) encodeEntry(this.timestamps[i]!, this.relativeOffsets[i]!).copy(out, (i - from) * timeIndexEntryBytes);
    return out;
  }

  /** Parses index file bytes, returning a reason when they are not a valid index. */
  static decode(baseOffset: number, bytes: Buffer): TimeIndex | string {
    if (bytes.length % timeIndexEntryBytes !== 0) return 'partial entry';
    const index = new TimeIndex(baseOffset);
    for (let at = 0; at < bytes.length; at += timeIndexEntryBytes) {
      const timestamp = bytes.readInt32BE(at) * twoPow32 + bytes.readUInt32BE(at + 4);
      const relative = bytes.readUInt32BE(at + 8);
      if (index.length > 0) {
        if (timestamp <= index.timestamps[index.length - 1]!) return 'timestamps not increasing';
        if (relative <= index.relativeOffsets[index.length - 1]!) return 'offsets not increasing';
      }
      index.grow();
      index.timestamps[index.length] = timestamp;
      index.relativeOffsets[index.length] = relative;
      index.length++;
    }
    return index;
  }

  private grow(): void {
    if (this.length < this.timestamps.length) return;
    const timestamps = new Float64Array(this.timestamps.length * 2);
    timestamps.set(this.timestamps);
    const offsets = new Uint32Array(this.relativeOffsets.length * 2);
    offsets.set(this.relativeOffsets);
    this.timestamps = timestamps;
    this.relativeOffsets = offsets;
  }
}

function encodeEntry(timestamp: number, relative: number): Buffer {
  const entry = Buffer.allocUnsafe(timeIndexEntryBytes);
  const hi = Math.floor(timestamp / twoPow32);
  entry.writeInt32BE(hi, 0);
  entry.writeUInt32BE(timestamp - hi * twoPow32, 4);
  entry.writeUInt32BE(relative, 8);
  return entry;
}
