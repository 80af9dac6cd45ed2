// The sparse offset index of one segment (`<base>.index`): one entry every indexIntervalBytes of
// log data, mapping a batch's base offset to the file position of its envelope. A lookup gives
// the last indexed position at or before an offset; the reader scans forward from there.
//
// File layout: a flat array of 8-byte entries, big-endian, no header.
//
// | offset | size | field          | notes                                   |
// |--------|------|----------------|-----------------------------------------|
// | 0      | 4    | relativeOffset | batch base offset - segment base offset |
// | 4      | 4    | position       | byte position of the envelope in .log   |
//
// Invariants: relative offsets and positions strictly increase.

import assert from 'node:assert/strict';

export const offsetIndexEntryBytes = 8;
const initialCapacity = 64;

export interface OffsetIndexEntry {
  offset: number;
  position: number;
}

export class OffsetIndex {
  private relativeOffsets = new Uint32Array(initialCapacity);
  private positions = new Uint32Array(initialCapacity);
  private length = 0;

  constructor(readonly baseOffset: number) {}

  get entryCount(): number {
    return this.length;
  }

  /** Bytes the index occupies on disk. */
  get fileBytes(): number {
    return this.length * offsetIndexEntryBytes;
  }

  last(): OffsetIndexEntry | null {
    if (this.length === 0) return null;
    return this.entryAt(this.length - 1);
  }

  entryAt(i: number): OffsetIndexEntry {
    assert.ok(i >= 0 && i < this.length);
    return { offset: this.baseOffset + this.relativeOffsets[i]!, position: this.positions[i]! };
  }

  /** Adds an entry and returns its 8 file bytes (the caller appends them to the file). */
  append(offset: number, position: number): Buffer {
    const relative = offset - this.baseOffset;
    assert.ok(relative >= 0 && relative <= 0xffffffff, `offset ${offset} outside the segment's u32 span`);
    assert.ok(position >= 0 && position <= 0xffffffff, `position ${position} above u32`);
    if (this.length > 0) {
      assert.ok(relative > this.relativeOffsets[this.length - 1]!, 'offset index offsets must increase');
      assert.ok(position > this.positions[this.length - 1]!, 'offset index positions must increase');
    }
    this.grow();
    this.relativeOffsets[this.length] = relative;
    this.positions[this.length] = position;
    this.length++;
    const entry = Buffer.allocUnsafe(offsetIndexEntryBytes);
    entry.writeUInt32BE(relative, 0);
    entry.writeUInt32BE(position, 4);
    return entry;
  }

  /** The last entry whose offset is <= `offset`, or the segment start when there is none. */
  lookup(offset: number): OffsetIndexEntry {
    const relative = offset - this.baseOffset;
    let lo = 0;
    let hi = this.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.relativeOffsets[mid]! <= relative) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? { offset: this.baseOffset, position: 0 } : this.entryAt(found);
  }

  /**
   * The first entry at a file position after `position`, or null: where walking a segment can go
   * on past a batch whose header cannot be trusted (integrity.ts).
   */
  entryAfterPosition(position: number): OffsetIndexEntry | null {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.positions[mid]! <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.length ? this.entryAt(lo) : null;
  }

  /**
   * The position of the first entry whose offset is >= `offset`, or null when there is none.
   * Entries are batch starts, so every batch with a base offset below `offset` ends at or before
   * it: a read that wants nothing from `offset` on need not read past it.
   */
  positionAtOrAfter(offset: number): number | null {
    const relative = offset - this.baseOffset;
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.relativeOffsets[mid]! < relative) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.length ? this.positions[lo]! : null;
  }

  /** Drops entries at or beyond `position` (after the log was truncated there). */
  truncateToPosition(position: number): void {
    while (this.length > 0 && this.positions[this.length - 1]! >= position) this.length--;
  }

  /** Drops entries beyond the first `count`. */
  truncateToCount(count: number): void {
    assert.ok(count >= 0 && count <= this.length);
    this.length = count;
  }

  /** All entries as file bytes (for a rebuilt index). */
  encode(from = 0, to = this.length): Buffer {
    assert.ok(from >= 0 && from <= to && to <= this.length);
    const out = Buffer.allocUnsafe((to - from) * offsetIndexEntryBytes);
    for (let i = from; i < to; i++) {
      out.writeUInt32BE(this.relativeOffsets[i]!, (i - from) * offsetIndexEntryBytes);
      out.writeUInt32BE(this.positions[i]!, (i - from) * offsetIndexEntryBytes + 4);
    }
    return out;
  }

  /**
   * Parses index file bytes. Returns a reason instead of throwing: the file may be torn or stale.
   * A trailing partial entry is a problem ('partial entry'): the caller rebuilds.
   */
  static decode(baseOffset: number, bytes: Buffer, logBytes: number): OffsetIndex | string {
    if (bytes.length % offsetIndexEntryBytes !== 0) return 'partial entry';
    const index = new OffsetIndex(baseOffset);
    for (let at = 0; at < bytes.length; at += offsetIndexEntryBytes) {
      const relative = bytes.readUInt32BE(at);
      const position = bytes.readUInt32BE(at + 4);
      if (position >= logBytes) return 'entry beyond the log';
      if (index.length > 0) {
        if (relative <= index.relativeOffsets[index.length - 1]!) return 'offsets not increasing';
        if (position <= index.positions[index.length - 1]!) return 'positions not increasing';
      }
      index.grow();
      index.relativeOffsets[index.length] = relative;
      index.positions[index.length] = position;
      index.length++;
    }
    return index;
  }

  private grow(): void {
    if (this.length < this.relativeOffsets.length) return;
    const offsets = new Uint32Array(this.relativeOffsets.length * 2);
    offsets.set(this.relativeOffsets);
    const positions = new Uint32Array(this.positions.length * 2);
    positions.set(this.positions);
    this.relativeOffsets = offsets;
    this.positions = positions;
  }
}
