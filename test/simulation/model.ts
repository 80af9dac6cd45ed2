// What the simulated clients know, and the invariants checked against what the broker serves.
//
// Every record carries a unique id. A record is `acked` (the broker answered with its offset),
// `maybe` (its request failed or died with the broker: it may or may not be in the log), or
// `seen` (a maybe record that a read returned: a consumer may have acted on it, so from then on
// it must stay exactly like an acked one). Transactions are `open` (includes aborted and failed:
// never visible to read_committed) or `committable` (EndTxn(commit) was sent: may be visible).

export interface RecordFacts {
  id: string;
  topic: string;
  partition: number;
  /** The acknowledged (or first seen) offset; null while unknown. */
  offset: number | null;
  state: 'acked' | 'maybe' | 'seen';
  /** Clock ms when it was sent (the batch timestamp retention goes by). */
  sentMs: number;
  /** The transaction it was written in, or null. */
  txn: number | null;
  /** The record key (compacted topics), or null. */
  key: string | null;
}

export interface TopicSpec {
  name: string;
  partitions: number;
  /** -1: retention never deletes. */
  retentionMs: number;
  /** cleanup.policy=compact: keyed Kafka records only; a record may go once a newer one has its key. */
  compacted: boolean;
  config: Record<string, string>;
}

/** A committed-offset register (a Kafka group's or an Iggy consumer's, per partition). */
export class OffsetRegister {
  /** The offset of the last commit the broker acknowledged, or null. */
  acked: number | null = null;
  /** Offsets of commits whose outcome is unknown since the last acknowledged one. */
  readonly maybe = new Set<number>();
  /** The newest value a read returned (never goes back). */
  lastRead: number | null = null;

  commit(offset: number, ok: boolean): void {
    if (ok) {
      this.acked = offset;
      this.maybe.clear();
    } else {
      this.maybe.add(offset);
    }
  }

  /** Checks a value the broker returned (null: nothing stored); returns a problem or null. */
  check(value: number | null): string | null {
    if (value === null) {
      if (this.acked !== null) return `the acknowledged commit ${this.acked} is gone`;
      if (this.lastRead !== null) return `the commit ${this.lastRead} once read is gone`;
      return null;
    }
    if (value !== this.acked && !this.maybe.has(value)) return `${value} was never committed (acknowledged: ${this.acked})`;
    if (this.lastRead !== null && value < this.lastRead) return `went back from ${this.lastRead} to ${value}`;
    this.lastRead = value;
    return null;
  }
}

export class Model {
  readonly records = new Map<string, RecordFacts>();
  /** Transaction number → whether read_committed may show it. */
  readonly txnCommittable = new Map<number, boolean>();
  /** Log start per partition key, as last observed (retention only moves it forward). */
  readonly logStart = new Map<string, number>();
  private nextId = 0;

  constructor(readonly seed: number) {}

  newId(): string {
    return `r${this.nextId++}`;
  }

  sent(id: string, topic: string, partition: number, sentMs: number, txn: number | null, key: string | null = null): void {
    this.records.set(id, { id, topic, partition, offset: null, state: 'maybe', sentMs, txn, key });
  }

  acked(id: string, offset: number): void {
    const r = this.records.get(id)!;
    if (r.offset !== null && r.offset !== offset) throw new Error(`record ${id} acknowledged at ${offset}, already known at ${r.offset}`);
    r.offset = offset;
    r.state = 'acked';
  }

  /** The record ids of a partition that must be readable at or above `logStart`. */
  mustHave(topic: string, partition: number): RecordFacts[] {
    const out: RecordFacts[] = [];
    for (const r of this.records.values()) if (r.topic === topic && r.partition === partition && r.state !== 'maybe') out.push(r);
    return out;
  }
}

export const partitionKey = (topic: string, partition: number): string => `${topic}/${partition}`;

/** The id a record value carries: `<id>:<padding>`. */
export function idOf(value: Buffer | string | null): string {
  if (value === null) return '<null>';
  const s = typeof value === 'string' ? value : value.toString('latin1');
  const colon = s.indexOf(':');
  return colon < 0 ? s : s.slice(0, colon);
}
