// One cache watch (CacheService.watch): an async source of the changes of one key, or of the keys
// under a prefix, in one shard of a cache, in log order. What it delivers, in order:
//
//   1. the snapshot: the matching entries as they were at resumeOffset (a retained watch, or a
//      resume whose history compaction collapsed: resnapshot);
//   2. the replay: a resumed watch's changes from fromOffset up to resumeOffset, read from the
//      log lazily, a chunk at a time, as the consumer asks;
//   3. live changes (offsets >= resumeOffset), pushed by the cache as it applies them into a
//      bounded queue.
//
// A consumer too slow for the queue loses nothing silently: the watch ends, after what it already
// holds, with { kind: 'lagged', resumeFrom } where resumeFrom is the first change it did not
// deliver; watching again from there is gapless. A replay that meets history compaction removed
// meanwhile ends the same way (the re-watch then gets a resnapshot).
//
// One consumer per watch: next() is not called again before the previous call settles.

import type { CacheRecord } from './records.js';

/** One change of a watched key: value null = deleted or expired. */
export interface CacheChange {
  key: string;
  value: Buffer | null;
  /** The change's offset in its shard: the resume anchor. */
  offset: number;
  /** Absolute expiry, Unix ms; 0 = never. */
  expiresAtMillis: number;
}

/** Why a watch ended (CacheWatch.endedBy). */
export type CacheWatchEnd =
  /** The consumer fell behind (or the replay met compacted history): watch again from resumeFrom. */
  | { kind: 'lagged'; resumeFrom: number }
  /** close() was called, or the service closed. */
  | { kind: 'closed' }
  /** The cache's topic was deleted or purged: its offsets mean nothing any more. */
  | { kind: 'cache_gone' };

/** The filter of a watch: exactly one of the two. */
export type CacheWatchFilter = { key: string } | { prefix: string };

/** A read of one chunk of a shard's log for a replay (the service's). */
export type ReplayReader = (from: number, end: number) => Promise<ReplayChunk>;

export interface ReplayChunk {
  /** The records read, ascending, all in [from, end). */
  records: CacheRecord[];
  /** Where the next read starts. */
  next: number;
  /** The first offset of a stretch compaction (or retention) removed, or null. */
  gapAt: number | null;
}

export interface CacheWatchInit {
  shard: number;
  filter: CacheWatchFilter;
  resumeOffset: number;
  resnapshot: boolean;
  /** Present when the watch asked for retained delivery. */
  retained: boolean;
  snapshot: CacheChange[];
  /** A resumed watch's history to replay: [from, resumeOffset). */
  replayFrom: number | null;
  readReplay: ReplayReader;
  queueEventsMax: number;
  /** Called once when the watch ends (the cache forgets it). */
  onEnd(watch: CacheWatch, end: CacheWatchEnd): void;
}

export class CacheWatch implements AsyncIterable<CacheChange> {
  readonly shard: number;
  /** Live delivery begins here: every change at or past it is delivered; the snapshot or replay covers what is before. */
  readonly resumeOffset: number;
  /** fromOffset named history compaction collapsed: the watch begins with a snapshot instead. */
  readonly resnapshot: boolean;
  /** How many snapshot changes come first when the watch asked for retained delivery; null otherwise. */
  readonly retainedCount: number | null;
  /** How many snapshot changes come first (retained, or a resnapshot); 0 for a live or replayed start. */
  readonly snapshotCount: number;
  readonly filter: CacheWatchFilter;

  private readonly snapshot: CacheChange[];
  private snapshotAt = 0;
  private replay: { next: number; buffered: CacheChange[] } | null;
  private queue: CacheChange[] = [];
  private queueAt = 0;
  private end: CacheWatchEnd | null = null;
  /** The consumer saw the end (or closed): next() answers done at once. */
  private finished = false;
  private wake: (() => void) | null = null;

  constructor(private readonly init: CacheWatchInit) {
    this.shard = init.shard;
    this.resumeOffset = init.resumeOffset;
    this.resnapshot = init.resnapshot;
    this.retainedCount = init.retained ? init.snapshot.length : null;
    this.snapshotCount = init.snapshot.length;
    this.filter = init.filter;
    this.snapshot = init.snapshot;
    this.replay = init.replayFrom === null || init.replayFrom >= init.resumeOffset ? null : { next: init.replayFrom, buffered: [] };
  }

  /** Why the watch ended; null while it is live. Set before the iterator reports done. */
  get endedBy(): CacheWatchEnd | null {
    return this.end;
  }

  /** Changes waiting for the consumer in the live queue. */
  get queued(): number {
    return this.queue.length - this.queueAt;
  }

  matches(key: string): boolean {
    return 'key' in this.filter ? key === this.filter.key : key.startsWith(this.filter.prefix);
  }

  /** Ends the watch; next() answers done from now on. */
  close(): void {
    this.finish({ kind: 'closed' });
    this.finished = true;
    this.queue = [];
    this.queueAt = 0;
    this.wakeUp();
  }

  /** @internal The cache applied a change of this shard (offset >= resumeOffset). */
  deliver(change: CacheChange): void {
    if (this.end !== null || !this.matches(change.key)) return;
    if (this.queued >= this.init.queueEventsMax) {
      // During a replay the queue's changes come after history not yet read: resume from there.
      this.finish({ kind: 'lagged', resumeFrom: this.replay?.next ?? change.offset });
      if (this.replay !== null) {
        this.queue = [];
        this.queueAt = 0;
      }
      return;
    }
    this.queue.push(change);
    this.wakeUp();
  }

  /** @internal Ends the watch (once) and tells the cache. */
  finish(end: CacheWatchEnd): void {
    if (this.end !== null) return;
    this.end = end;
    this.init.onEnd(this, end);
    this.wakeUp();
  }

  async next(): Promise<IteratorResult<CacheChange, undefined>> {
    for (;;) {
      if (this.finished) return { done: true, value: undefined };
      if (this.snapshotAt < this.snapshot.length) return this.yield(this.snapshot[this.snapshotAt++]!);
      const replayed = this.replay?.buffered.shift();
      if (replayed !== undefined) return this.yield(replayed);
      // A lag during the replay ends it: what comes after is not delivered (resumeFrom names it).
      if (this.replay !== null && this.end === null) {
        await this.readReplay(this.replay);
        continue;
      }
      this.replay = null;
      if (this.queued > 0) return this.yield(this.takeQueued());
      if (this.end !== null) {
        this.finished = true;
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<CacheChange, undefined> {
    return {
      next: () => this.next(),
      return: () => {
        this.close();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  private async readReplay(replay: { next: number; buffered: CacheChange[] }): Promise<void> {
    if (replay.next >= this.resumeOffset) {
      this.replay = null;
      return;
    }
    let chunk: ReplayChunk;
    try {
      chunk = await this.init.readReplay(replay.next, this.resumeOffset);
    } catch {
      // The log could not be read (deleted, purged, closing): a re-watch from here says what is left.
      this.endReplay(replay, replay.next);
      return;
    }
    for (const r of chunk.records) if (this.matches(r.key)) replay.buffered.push({ key: r.key, value: r.value, offset: r.offset, expiresAtMillis: r.expiresAtMillis });
    if (chunk.gapAt !== null || chunk.next <= replay.next) {
      this.endReplay(replay, chunk.gapAt ?? replay.next);
      return;
    }
    replay.next = chunk.next;
  }

  /** The replay cannot go on past `at`: what it read before is delivered, then lagged (the live queue comes after `at`, so it goes). */
  private endReplay(replay: { next: number }, at: number): void {
    replay.next = at;
    this.queue = [];
    this.queueAt = 0;
    this.finish({ kind: 'lagged', resumeFrom: at });
  }

  private takeQueued(): CacheChange {
    const change = this.queue[this.queueAt++]!;
    // Drop the delivered head now and then, so the array does not grow with the watch's age.
    if (this.queueAt >= 1024 && this.queueAt * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.queueAt);
      this.queueAt = 0;
    }
    return change;
  }

  private yield(change: CacheChange): IteratorResult<CacheChange, undefined> {
    return { done: false, value: change };
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
