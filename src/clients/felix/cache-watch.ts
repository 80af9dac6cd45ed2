// A cache watch (spec "CacheWatch"; CACHE_WATCH, retained delivery CACHE_WATCH_RETAINED): one
// key or a key prefix of one cache shard. Established like a subscription (event-subscription.ts):
// `cache_watch` answered `cache_watch_started{resume_offset, resnapshot, retained_count}`, and an
// event stream of JSON `cache_event`s (an absent value is a delete), ended by the broker with
// `cache_watch_lagged{resume_from}` when the watch fell behind.
//
// Offsets on a watch are sparse (other keys use them), so a gap is no loss signal here: lagged is.
// The watch keeps its resume anchor (the offset after the last change seen, or resume_offset
// before any) and, after lagged or a lost connection, watches again from it (from_offset; the
// broker replays from there, gapless), emitting 'lagged' and 'rewatched'. A resume whose history
// was compacted starts with a snapshot: 'started' says so with resnapshot true.
//
// Events: 'started' (WatchStarted), 'change' (CacheChange), 'lagged' ({ resumeFrom }),
// 'rewatched' ({ subscriptionId, from }), 'end' (the error that ended it, or null after close()).

import { Feature, type FelixFrame } from '../../protocols/felix/codec/index.js';
import { requireFeature, type FelixClient } from './client.js';
import { FelixProtocolError, type FelixClientError } from './errors.js';
import { ResumingSubscription, establish, type ResumeOptions } from './event-subscription.js';

export interface WatchOptions extends ResumeOptions {
  /** Exactly one of key and prefix (an empty prefix is every key of the shard). */
  key?: string;
  prefix?: string;
  /** A prefix watch's shard (default 0); a key watch finds its own. */
  shard?: number;
  /** Replay from this offset (the first change not seen); absent: live changes only. */
  fromOffset?: bigint | number;
  /** Each matching key's current value first (not with fromOffset). */
  retained?: boolean;
  timeoutMs?: number;
}

export interface WatchStarted {
  subscriptionId: bigint;
  resumeOffset: bigint;
  resnapshot: boolean;
  /** How many retained values come first (only for a retained watch). */
  retainedCount: bigint | null;
}

export interface CacheChange {
  key: string;
  /** null: the key was deleted. */
  value: Buffer | null;
  offset: bigint;
  /** Absolute Unix ms, 0n: never. */
  expiresAtMillis: bigint;
}

export class FelixCacheWatch extends ResumingSubscription {
  /** The last cache_watch_started. */
  started: WatchStarted | null = null;
  /** Where a resume starts: after the last change seen, or the last resume_offset. */
  resumeFrom: bigint | null = null;

  constructor(
    client: FelixClient,
    readonly cache: string,
    readonly namespace: string,
    private readonly options: WatchOptions,
  ) {
    super(client, options, 'rewatched');
    if ((options.key === undefined) === (options.prefix === undefined)) throw new RangeError('a watch takes exactly one of key and prefix');
    if (options.retained === true && options.fromOffset !== undefined) throw new RangeError('a watch takes retained or fromOffset, not both');
  }

  async start(): Promise<void> {
    const from = this.options.fromOffset !== undefined ? BigInt(this.options.fromOffset) : undefined;
    await this.watchOnce(from, this.options.retained === true);
  }

  /** Watches again from the resume anchor (retained again only when there is none). */
  protected async again(): Promise<{ subscriptionId: bigint | undefined; from: bigint | undefined }> {
    const from = this.resumeFrom ?? undefined;
    await this.watchOnce(from, from === undefined && this.options.retained === true);
    return { subscriptionId: this.started?.subscriptionId, from };
  }

  private async watchOnce(fromOffset: bigint | undefined, retained: boolean): Promise<void> {
    const o = this.options;
    const { answer, detach } = await establish(
      this.client,
      (subscriptionId) => ({
        type: 'cache_watch',
        tenantId: this.client.options.tenantId,
        namespace: this.namespace,
        cache: this.cache,
        ...(o.key !== undefined ? { key: o.key } : { prefix: o.prefix! }),
        ...(o.key === undefined && o.shard !== undefined ? { shard: o.shard } : {}),
        ...(fromOffset !== undefined ? { fromOffset } : {}),
        retained,
        subscriptionId,
      }),
      'cache_watch_started',
      o.timeoutMs ?? this.client.options.requestTimeoutMs,
      (conn) => this.sink(conn, `a watch of cache ${this.cache}`),
      (stream, message) => requireFeature(stream.capabilities, message.type, retained ? Feature.cacheWatchRetained : 0),
    );
    if (this.closed) return detach();
    this.detach = detach;
    this.started = { subscriptionId: answer.subscriptionId, resumeOffset: answer.resumeOffset, resnapshot: answer.resnapshot, retainedCount: answer.retainedCount ?? null };
    // Replayed and retained changes come below resume_offset: the anchor moves only forward.
    if (this.resumeFrom === null) this.resumeFrom = fromOffset ?? answer.resumeOffset;
    this.emit('started', this.started);
  }

  protected onFrame(f: FelixFrame): FelixClientError | null {
    if (f.kind !== 'message') return new FelixProtocolError(`a ${f.kind} frame on a cache watch's event stream`);
    const m = f.message;
    if (m.type === 'cache_event') {
      const next = m.offset + 1n;
      if (this.resumeFrom === null || next > this.resumeFrom) this.resumeFrom = next;
      this.emit('change', { key: m.key, value: m.value ?? null, offset: m.offset, expiresAtMillis: m.expiresAtMillis } satisfies CacheChange);
      return null;
    }
    if (m.type === 'cache_watch_lagged') {
      this.resumeFrom = m.resumeFrom;
      this.emit('lagged', { resumeFrom: m.resumeFrom });
      return null;
    }
    return new FelixProtocolError(`unexpected ${m.type} on a cache watch's event stream`);
  }
}
