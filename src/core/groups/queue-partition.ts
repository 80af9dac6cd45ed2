// One partition of a queue group (queue.ts): which of its records are claimed, by whom and until
// when, which wait for redelivery, which are settled, and the group's position in it. Pure state,
// no I/O and no timers: the engine reads the log, keeps the clock and persists `snapshot()`.
//
// The window: records from the position up to `fetchedTo` (the first offset never delivered) that
// are claimed, waiting for redelivery, or acked above an unsettled one are tracked one by one
// (KIP-932's in-flight records, SharePartition's start and end offsets); offsets in the window
// that are not tracked hold no record the group sees (markers, gaps) or are settled. The position
// is the lowest tracked unsettled offset (fetchedTo when none). Dead letters leave the window
// as settled and are kept as offsets of this partition; a redriven one is tracked again below the
// position without moving it back (the acked records after it stay acked).

import assert from 'node:assert/strict';

export type TrackedState = 'available' | 'claimed' | 'acked';

export interface TrackedRecord {
  readonly offset: number;
  /** Deliveries so far: each claim counts one (KIP-932's delivery count); 0 for a redriven dead letter. */
  attempts: number;
  state: TrackedState;
  /** claimed: its holder (a member id; null for a claim with no member); null otherwise. */
  holder: string | null;
  /** claimed: when the claim lapses; available: when it may be delivered again (a nack's delay); clock ms. */
  dueMs: number;
}

/** How a partition is kept in the group store (JSON). Claims are not: see queue.ts. */
export interface StoredQueuePartition {
  topicInternalId: number;
  partition: number;
  position: number;
  fetchedTo: number;
  /** Tracked records: [offset, attempts, acked (1) or not (0)]. */
  records: Array<[number, number, number]>;
  deadLetters: number[];
}

/** What releasing a record did. */
export type ReleaseOutcome = 'released' | 'dead_lettered';

export class QueuePartition {
  readonly records = new Map<number, TrackedRecord>();
  readonly deadLetters = new Set<number>();
  /** The position last written to the offset store (the engine commits when it differs). */
  committedPosition: number;

  constructor(
    readonly topicInternalId: number,
    readonly partition: number,
    public position: number,
    public fetchedTo: number,
  ) {
    assert.ok(Number.isSafeInteger(position) && position >= 0 && fetchedTo >= position, `queue window [${position}, ${fetchedTo})`);
    this.committedPosition = position;
  }

  static restore(stored: StoredQueuePartition, position: number): QueuePartition {
    const from = Math.max(position, stored.position);
    const p = new QueuePartition(stored.topicInternalId, stored.partition, from, Math.max(from, stored.fetchedTo));
    p.committedPosition = position;
    for (const [offset, attempts, acked] of stored.records) {
      // Claims do not survive a restart: what was claimed is available again, its deliveries counted.
      if (offset >= from || acked === 0) p.records.set(offset, { offset, attempts, state: acked === 1 ? 'acked' : 'available', holder: null, dueMs: 0 });
    }
    for (const offset of stored.deadLetters) p.deadLetters.add(offset);
    p.advancePosition();
    return p;
  }

  snapshot(): StoredQueuePartition {
    const records: Array<[number, number, number]> = [];
    for (const r of this.records.values()) records.push([r.offset, r.attempts, r.state === 'acked' ? 1 : 0]);
    records.sort((a, b) => a[0] - b[0]);
    return { topicInternalId: this.topicInternalId, partition: this.partition, position: this.position, fetchedTo: this.fetchedTo, records, deadLetters: this.sortedDeadLetters() };
  }

  /** Records tracked now (the window's size, bounded by the group's claimsMax). */
  get tracked(): number {
    return this.records.size;
  }

  /** Records waiting for redelivery that may go now, lowest offset first, at most `max`. */
  redeliverable(nowMs: number, max: number): TrackedRecord[] {
    const due: TrackedRecord[] = [];
    for (const r of this.records.values()) if (r.state === 'available' && r.dueMs <= nowMs) due.push(r);
    return due.sort((a, b) => a.offset - b.offset).slice(0, Math.max(0, max));
  }

  /** Claims a tracked record waiting for redelivery: one more delivery. */
  claim(record: TrackedRecord, holder: string | null, deadlineMs: number): void {
    assert.equal(record.state, 'available', `offset ${record.offset} claimed twice`);
    record.state = 'claimed';
    record.holder = holder;
    record.dueMs = deadlineMs;
    record.attempts++;
  }

  /** Claims a record delivered for the first time (at or past fetchedTo); fetchedTo moves past it. */
  claimNew(offset: number, holder: string | null, deadlineMs: number): TrackedRecord {
    assert.ok(offset >= this.fetchedTo, `offset ${offset} below the fetched end ${this.fetchedTo}`);
    const record: TrackedRecord = { offset, attempts: 1, state: 'claimed', holder, dueMs: deadlineMs };
    this.records.set(offset, record);
    this.fetchedTo = offset + 1;
    return record;
  }

  /** Nothing the group sees lies below `offset` past fetchedTo (a read passed over it). */
  fetchedUpTo(offset: number): void {
    if (offset > this.fetchedTo) this.fetchedTo = offset;
  }

  /** The claim on `offset`, if any, held by `holder` (any holder when `holder` is undefined). */
  claimOf(offset: number, holder: string | null | undefined): TrackedRecord | undefined {
    const r = this.records.get(offset);
    if (r === undefined || r.state !== 'claimed') return undefined;
    return holder === undefined || r.holder === holder ? r : undefined;
  }

  ack(record: TrackedRecord): void {
    record.state = 'acked';
    record.holder = null;
    record.dueMs = 0;
  }

  /**
   * Gives the record back for redelivery after `delayMs`, or, once it has been delivered
   * `attemptsMax` times, to the dead letters.
   */
  release(record: TrackedRecord, nowMs: number, delayMs: number, attemptsMax: number, deadLettersMax: number): ReleaseOutcome {
    if (record.attempts >= attemptsMax) {
      this.deadLetter(record, deadLettersMax);
      return 'dead_lettered';
    }
    record.state = 'available';
    record.holder = null;
    record.dueMs = nowMs + Math.max(0, delayMs);
    return 'released';
  }

  /** Settles the record as a dead letter; past deadLettersMax the oldest dead letter is dropped (returned). */
  deadLetter(record: TrackedRecord, deadLettersMax: number): number | null {
    this.records.delete(record.offset);
    this.deadLetters.add(record.offset);
    if (this.deadLetters.size <= deadLettersMax) return null;
    const oldest = this.sortedDeadLetters()[0]!;
    this.deadLetters.delete(oldest);
    return oldest;
  }

  /** Claims whose deadline passed (clock ms), lowest offset first. */
  lapsed(nowMs: number): TrackedRecord[] {
    const out: TrackedRecord[] = [];
    for (const r of this.records.values()) if (r.state === 'claimed' && r.dueMs <= nowMs) out.push(r);
    return out.sort((a, b) => a.offset - b.offset);
  }

  /** Whether any record is claimed now. */
  hasClaims(): boolean {
    for (const r of this.records.values()) if (r.state === 'claimed') return true;
    return false;
  }

  /** The claims `holder` holds. */
  claimsOf(holder: string): TrackedRecord[] {
    const out: TrackedRecord[] = [];
    for (const r of this.records.values()) if (r.state === 'claimed' && r.holder === holder) out.push(r);
    return out;
  }

  /** The earliest claim deadline or end of a nack's delay (clock ms), or null when nothing waits on time. */
  nextDueMs(nowMs: number): number | null {
    let next: number | null = null;
    for (const r of this.records.values()) {
      const waits = r.state === 'claimed' || (r.state === 'available' && r.dueMs > nowMs);
      if (waits && (next === null || r.dueMs < next)) next = r.dueMs;
    }
    return next;
  }

  /** A dead letter back to delivery, its deliveries counted from zero; false if it is not one. */
  redrive(offset: number): boolean {
    if (!this.deadLetters.delete(offset)) return false;
    this.records.set(offset, { offset, attempts: 0, state: 'available', holder: null, dueMs: 0 });
    return true;
  }

  /** Forgets a dead letter; false if it is not one. */
  discard(offset: number): boolean {
    return this.deadLetters.delete(offset);
  }

  /** The record is no longer in the log (retention, compaction): settled, it will not be delivered. */
  gone(record: TrackedRecord): void {
    this.records.delete(record.offset);
  }

  /** Dead letters retention has removed from the log are forgotten. */
  dropDeadLettersBelow(logStartOffset: number): void {
    for (const offset of this.deadLetters) if (offset < logStartOffset) this.deadLetters.delete(offset);
  }

  /** Moves the position to the lowest tracked unsettled offset; true if it moved. */
  advancePosition(): boolean {
    let lowest = this.fetchedTo;
    for (const r of this.records.values()) if (r.state !== 'acked' && r.offset >= this.position && r.offset < lowest) lowest = r.offset;
    for (const r of [...this.records.values()]) if (r.state === 'acked' && r.offset < lowest) this.records.delete(r.offset);
    const moved = lowest !== this.position;
    this.position = lowest;
    return moved;
  }

  sortedDeadLetters(): number[] {
    return [...this.deadLetters].sort((a, b) => a - b);
  }
}
