// CursusConsumer: a consumer-group member (spec §6 "Consumer Group Protocol", "SDK Offset and
// Group Contract") running the loop
//
//   JOIN_GROUP -> SYNC_GROUP -> FETCH_OFFSET per assigned partition
//   -> CONSUME (wait_ms long-poll) or STREAM (continuous push) -> your handler -> commit
//
// with HEARTBEAT every heartbeatIntervalMs (3 s, as the spec recommends) on a connection of its
// own. Commits carry member and generation: COMMIT_OFFSET after each batch, or one BATCH_COMMIT
// per round (`commit: 'batch'`), or none (`commit: false`, call commit() yourself). The committed
// value is the last processed offset + 1.
//
// Rebalance: GEN_MISMATCH, NOT_OWNER or member_not_found from HEARTBEAT or a commit stops
// consumption (streams are closed, no further commits), then the member joins again (with its
// member ID; with the requested one after member_not_found), syncs, fetches the committed
// offsets of its new assignment and resumes from them: the broker's committed offset is the
// source of truth, so a batch whose commit was refused is delivered again (at least once).
//
// OFFSET_OUT_OF_RANGE (CONSUME's error, STREAM's CLOSE reason) applies autoOffsetReset with the
// broker's figures: 'earliest' resumes from `earliest`, 'latest' from `latest`, 'error' ends run()
// with the error. A fresh group (FETCH_OFFSET 0) with 'latest' starts at LIST_OFFSETS' latest.
// Transaction control records (read_uncommitted) are skipped, their offsets passed.

import { EventEmitter } from 'node:events';
import type { CursusRecord, StreamClose } from '../../protocols/cursus/codec/index.js';
import type { CursusClient, Isolation } from './client.js';
import type { DedicatedConnection } from './client-core.js';
import { CursusClosedError, CursusError, isCursusClientError, isRebalance } from './errors.js';
import type { CursusStream } from './stream.js';

export interface CursusConsumerOptions {
  topic: string;
  group: string;
  /** The member ID to join with; the broker appends a suffix (default `quartet-<pid>`). */
  member?: string;
  /** 'consume': CONSUME with wait_ms long-polls (default); 'stream': one STREAM per partition. */
  mode?: 'consume' | 'stream';
  /** Default read_committed. */
  isolation?: Isolation;
  /** Default 'earliest'. */
  autoOffsetReset?: 'earliest' | 'latest' | 'error';
  /** Records per CONSUME or STREAM batch at most (default: the broker's, 8192). */
  batch?: number;
  /** CONSUME long-poll when a round found nothing (default 500 ms, spread over the partitions). */
  waitMs?: number;
  /** Default 3000. */
  heartbeatIntervalMs?: number;
  /** 'offset' (default): COMMIT_OFFSET per batch; 'batch': BATCH_COMMIT per round; false: commit() yourself. */
  commit?: 'offset' | 'batch' | false;
  /** Wait after a retryable failure before going on (default 200 ms). */
  retryBackoffMs?: number;
}

/** What the handler gets: one partition's records, in offset order. */
export interface ConsumedBatch {
  topic: string;
  partition: number;
  records: CursusRecord[];
  /** The membership the records were read under. */
  memberId: string;
  generation: number;
}

export type BatchHandler = (batch: ConsumedBatch) => Promise<void> | void;

interface Membership {
  memberId: string;
  generation: number;
  partitions: number[];
}

/** A control record (transaction marker): not delivered. */
function isControl(r: CursusRecord): boolean {
  return r.controlBatchType !== undefined || r.transactionMarker !== undefined;
}

/**
 * Events: 'assigned' (Membership), 'rebalance' (the CursusError that caused it), 'reset'
 * ({ partition, policy, from, to }), 'commitError' (error), 'heartbeatError' (error).
 */
export class CursusConsumer extends EventEmitter {
  readonly topic: string;
  readonly group: string;
  readonly requestedMember: string;
  private readonly mode: 'consume' | 'stream';
  private readonly isolation: Isolation;
  private readonly autoOffsetReset: 'earliest' | 'latest' | 'error';
  private readonly waitMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly commitMode: 'offset' | 'batch' | false;
  private readonly retryBackoffMs: number;
  private membership: Membership | null = null;
  /** Next offset to read per assigned partition. */
  private readonly positions = new Map<number, number>();
  /** Next offset last committed per partition (this membership). */
  private readonly committed = new Map<number, number>();
  /** Set by a heartbeat or commit that learned the membership is stale. */
  private rebalance: CursusError | null = null;
  private data: DedicatedConnection | null = null;
  private beat: DedicatedConnection | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private heartbeatInFlight = false;
  private readonly streams = new Set<CursusStream>();
  private running: Promise<void> | null = null;
  private closed = false;
  private wake: (() => void) | null = null;
  /** Handler calls run one at a time (stream mode reads partitions in parallel). */
  private handlerTurn: Promise<void> = Promise.resolve();
  /** CONSUME mode: the last round delivered nothing, so this one long-polls. */
  private lastRoundEmpty = false;
  /** A join is under way: heartbeats of the old membership say nothing new. */
  private joining = false;
  /** The membership must be (re)established before consuming: at start, and after a failed join. */
  private pendingJoin = true;
  /** The member ID the broker gave at the last successful JOIN_GROUP. */
  private lastMemberId: string | null = null;

  constructor(
    readonly client: CursusClient,
    readonly options: CursusConsumerOptions,
  ) {
    super();
    this.topic = options.topic;
    this.group = options.group;
    this.requestedMember = options.member ?? `quartet-${process.pid}`;
    this.mode = options.mode ?? 'consume';
    this.isolation = options.isolation ?? 'read_committed';
    this.autoOffsetReset = options.autoOffsetReset ?? 'earliest';
    this.waitMs = options.waitMs ?? 500;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 3_000;
    this.commitMode = options.commit ?? 'offset';
    this.retryBackoffMs = options.retryBackoffMs ?? 200;
  }

  /** The current membership (member ID, generation, partitions), or null before the first join. */
  get assignment(): Readonly<Membership> | null {
    return this.membership;
  }

  /**
   * Runs the loop, calling `handler` with each batch, until close(). Rejects with what ends it
   * otherwise: autoOffsetReset 'error' on OFFSET_OUT_OF_RANGE, or a non-retryable broker error.
   */
  run(handler: BatchHandler): Promise<void> {
    if (this.running !== null) throw new Error('the consumer is already running');
    this.running = this.loop(handler).finally(() => this.shutdown());
    return this.running;
  }

  /** COMMIT_OFFSET for a partition of the current assignment (`nextOffset`: last processed + 1). */
  async commit(partition: number, nextOffset: number): Promise<void> {
    const m = this.membership;
    if (m === null) throw new CursusClosedError('the consumer has no membership');
    await this.client.commitOffset({ topic: this.topic, partition, group: this.group, offset: nextOffset, member: m.memberId, generation: m.generation }, { via: this.channel() });
    this.committed.set(partition, nextOffset);
  }

  /** Stops the loop (after the handler call under way), leaves the group, closes its connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.interrupt();
    this.stopStreams();
    if (this.running !== null) await this.running.catch(() => {});
    else await this.shutdown();
  }

  private async loop(handler: BatchHandler): Promise<void> {
    while (!this.closed) {
      try {
        if (this.pendingJoin || this.rebalance !== null) await this.join();
        if (this.closed) break;
        if (this.mode === 'consume') await this.consumeRound(handler);
        else await this.streamAll(handler);
      } catch (err) {
        if (this.closed) break;
        if (isRebalance(err)) {
          this.noteRebalance(err);
          continue;
        }
        if (isCursusClientError(err) && err.retryable) {
          await this.sleep(this.retryBackoffMs);
          continue;
        }
        throw err;
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Membership

  private channel(): DedicatedConnection {
    this.data ??= this.client.dedicated();
    return this.data;
  }

  /** JOIN_GROUP, SYNC_GROUP, FETCH_OFFSET per partition; heartbeats start. */
  private async join(): Promise<void> {
    this.joining = true;
    try {
      await this.rejoin();
    } finally {
      this.joining = false;
    }
  }

  private async rejoin(): Promise<void> {
    const stale = this.rebalance;
    this.rebalance = null;
    this.pendingJoin = true;
    this.stopStreams();
    // Rejoin as the same member unless the broker no longer knows it.
    const member = this.lastMemberId !== null && stale?.code !== 'member_not_found' ? this.lastMemberId : this.requestedMember;
    const via = this.channel();
    const joined = await this.client.joinGroup({ group: this.group, member, topic: this.topic }, { via });
    this.lastMemberId = joined.memberId;
    const partitions = await this.client.syncGroup({ group: this.group, member: joined.memberId, generation: joined.generation, topic: this.topic }, { via });
    const positions = new Map<number, number>();
    const committed = new Map<number, number>();
    for (const partition of partitions) {
      const offset = await this.client.fetchOffset({ topic: this.topic, partition, group: this.group }, { via });
      positions.set(partition, offset === 0 && this.autoOffsetReset === 'latest' ? await this.latest(partition) : offset);
      committed.set(partition, offset);
    }
    // Only a complete join replaces the membership: a failure above leaves pendingJoin set.
    this.membership = { memberId: joined.memberId, generation: joined.generation, partitions };
    this.positions.clear();
    this.committed.clear();
    for (const [p, o] of positions) this.positions.set(p, o);
    for (const [p, o] of committed) this.committed.set(p, o);
    this.pendingJoin = false;
    this.lastRoundEmpty = false;
    this.startHeartbeats();
    this.emit('assigned', { ...this.membership, partitions: [...partitions] });
  }

  private async latest(partition: number): Promise<number> {
    const [p] = await this.client.listOffsets(this.topic, partition, { via: this.channel() });
    return p?.latest ?? 0;
  }

  private noteRebalance(err: CursusError): void {
    if (this.rebalance !== null) return;
    this.rebalance = err;
    this.emit('rebalance', err);
    this.stopStreams();
    this.interrupt();
  }

  private startHeartbeats(): void {
    if (this.heartbeatTimer !== null) return;
    const tick = (): void => {
      this.heartbeatTimer = setTimeout(() => {
        void this.heartbeat().finally(() => {
          if (!this.closed && this.heartbeatTimer !== null) tick();
        });
      }, this.heartbeatIntervalMs);
    };
    tick();
  }

  private async heartbeat(): Promise<void> {
    const m = this.membership;
    if (m === null || this.heartbeatInFlight || this.closed || this.joining || this.pendingJoin || this.rebalance !== null) return;
    this.heartbeatInFlight = true;
    this.beat ??= this.client.dedicated();
    try {
      await this.client.heartbeat({ topic: this.topic, group: this.group, member: m.memberId, generation: m.generation }, { via: this.beat });
    } catch (err) {
      // A heartbeat for a membership already replaced says nothing about the new one.
      if (isRebalance(err) && this.membership === m && !this.joining) this.noteRebalance(err);
      else this.emit('heartbeatError', err);
    } finally {
      this.heartbeatInFlight = false;
    }
  }

  // -------------------------------------------------------------------------------------------
  // CONSUME mode

  /** One CONSUME per assigned partition; long-polls when the previous round found nothing. */
  private async consumeRound(handler: BatchHandler): Promise<void> {
    const m = this.membership!;
    if (m.partitions.length === 0) {
      await this.sleep(this.heartbeatIntervalMs);
      return;
    }
    const waitMs = this.lastRoundEmpty ? Math.max(1, Math.floor(this.waitMs / m.partitions.length)) : 0;
    let delivered = false;
    for (const partition of m.partitions) {
      if (this.closed || this.rebalance !== null) return;
      const offset = this.positions.get(partition)!;
      let records: CursusRecord[];
      try {
        const batch = await this.client.consume(
          {
            topic: this.topic,
            partition,
            offset,
            member: m.memberId,
            group: this.group,
            isolation: this.isolation,
            batch: this.options.batch,
            waitMs: waitMs > 0 ? waitMs : undefined,
            ...(this.autoOffsetReset !== 'error' ? { autoOffsetReset: this.autoOffsetReset } : {}),
          },
          { via: this.channel() },
        );
        records = batch.records;
      } catch (err) {
        if (err instanceof CursusError && err.code === 'OFFSET_OUT_OF_RANGE') {
          this.reset(partition, offset, err.numberField('earliest'), err.numberField('latest'), err);
          continue;
        }
        throw err;
      }
      if (await this.deliver(handler, m, partition, records)) delivered = true;
      if (this.commitMode === 'offset') await this.commitPositions(m, [partition]);
    }
    if (this.commitMode === 'batch') await this.commitPositions(m, m.partitions);
    this.lastRoundEmpty = !delivered;
  }

  /** Hands the records past the position to the handler; moves the position. True if any were delivered. */
  private async deliver(handler: BatchHandler, m: Membership, partition: number, records: CursusRecord[]): Promise<boolean> {
    const from = this.positions.get(partition) ?? 0;
    const fresh = records.filter((r) => r.offset >= from);
    if (fresh.length === 0) return false;
    const data = fresh.filter((r) => !isControl(r));
    if (data.length > 0) {
      const turn = this.handlerTurn.then(() => handler({ topic: this.topic, partition, records: data, memberId: m.memberId, generation: m.generation }));
      this.handlerTurn = turn.catch(() => {});
      await turn;
    }
    if (this.membership === m) this.positions.set(partition, fresh[fresh.length - 1]!.offset + 1);
    return data.length > 0;
  }

  /** Commits the positions that moved past the last commit, with this membership's fence. */
  private async commitPositions(m: Membership, partitions: readonly number[]): Promise<void> {
    if (this.commitMode === false || this.membership !== m || this.rebalance !== null) return;
    const moved = partitions.filter((p) => this.positions.get(p)! > (this.committed.get(p) ?? -1));
    if (moved.length === 0) return;
    const via = this.channel();
    try {
      if (this.commitMode === 'batch') {
        await this.client.batchCommit({ topic: this.topic, group: this.group, member: m.memberId, generation: m.generation, offsets: moved.map((p) => [p, this.positions.get(p)!] as const) }, { via });
      } else {
        for (const p of moved) await this.client.commitOffset({ topic: this.topic, partition: p, group: this.group, offset: this.positions.get(p)!, member: m.memberId, generation: m.generation }, { via });
      }
      for (const p of moved) this.committed.set(p, this.positions.get(p)!);
    } catch (err) {
      if (isRebalance(err)) throw err;
      // offset_regression and the like: the commit failed; the broker's offset stands (spec §6).
      this.emit('commitError', err);
      if (!(isCursusClientError(err) && err.retryable) && !(err instanceof CursusError && err.class === 'conflict')) throw err;
    }
  }

  /** Applies autoOffsetReset to a partition whose offset is out of the retained range. */
  private reset(partition: number, from: number, earliest: number | undefined, latest: number | undefined, cause: CursusError): number {
    const policy = this.autoOffsetReset;
    const to = policy === 'earliest' ? earliest : policy === 'latest' ? latest : undefined;
    if (to === undefined) throw cause;
    this.positions.set(partition, to);
    this.emit('reset', { partition, policy, from, to });
    return to;
  }

  // -------------------------------------------------------------------------------------------
  // STREAM mode

  /** One STREAM per assigned partition until a rebalance or close(); each reopens after a CLOSE. */
  private async streamAll(handler: BatchHandler): Promise<void> {
    const m = this.membership!;
    if (m.partitions.length === 0) {
      await this.sleep(this.heartbeatIntervalMs);
      return;
    }
    const failures: unknown[] = [];
    await Promise.all(
      m.partitions.map((p) =>
        this.streamPartition(handler, m, p).catch((err: unknown) => {
          failures.push(err);
          this.interrupt();
          this.stopStreams();
        }),
      ),
    );
    const fatal = failures.find((e) => !isRebalance(e) && !(isCursusClientError(e) && e.retryable));
    if (fatal !== undefined) throw fatal;
    const rebalance = failures.find(isRebalance);
    if (rebalance !== undefined) throw rebalance;
    if (failures.length > 0) throw failures[0];
  }

  private async streamPartition(handler: BatchHandler, m: Membership, partition: number): Promise<void> {
    while (!this.closed && this.rebalance === null && this.membership === m) {
      const stream = this.client.stream({ topic: this.topic, partition, member: m.memberId, group: this.group, isolation: this.isolation, batch: this.options.batch });
      this.streams.add(stream);
      let close: StreamClose | null = null;
      try {
        for await (const event of stream) {
          if (event.type === 'batch') {
            await this.deliver(handler, m, partition, event.batch.records);
            if (this.commitMode !== false) await this.commitPositions(m, [partition]);
          } else if (event.type === 'close') {
            close = event.close;
          }
        }
      } catch (err) {
        if (this.closed || this.rebalance !== null) return;
        if (!(isCursusClientError(err) && err.retryable)) throw err;
        // A dropped stream resumes from the committed offset (spec §4 STREAM).
        this.positions.set(partition, this.committed.get(partition) ?? 0);
      } finally {
        this.streams.delete(stream);
        stream.stop();
      }
      if (close?.reason === 'offset_out_of_range' && close.range !== undefined) {
        const to = this.reset(partition, close.range.requested, close.range.earliest, close.range.latest, new CursusError({ code: 'OFFSET_OUT_OF_RANGE', class: 'conflict', retryable: false, message: 'stream closed: offset_out_of_range', fields: [['requested', String(close.range.requested)], ['earliest', String(close.range.earliest)], ['latest', String(close.range.latest)]] }, 'STREAM'));
        // STREAM starts from the committed offset: the reset moves it.
        if (to > (this.committed.get(partition) ?? 0)) {
          await this.client.commitOffset({ topic: this.topic, partition, group: this.group, offset: to, member: m.memberId, generation: m.generation }, { via: this.channel() });
          this.committed.set(partition, to);
        }
        continue;
      }
      if (!this.closed && this.rebalance === null) await this.sleep(this.retryBackoffMs);
    }
  }

  private stopStreams(): void {
    for (const s of this.streams) s.stop();
    this.streams.clear();
  }

  // -------------------------------------------------------------------------------------------

  private async shutdown(): Promise<void> {
    this.closed = true;
    if (this.heartbeatTimer !== null) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = null;
    this.stopStreams();
    const m = this.membership;
    const data = this.data;
    if (m !== null && data !== null && this.client.state !== 'closed') {
      await this.client.leaveGroup({ topic: this.topic, group: this.group, member: m.memberId }, { via: data, timeoutMs: 2_000 }).catch(() => {});
    }
    this.membership = null;
    if (data !== null) await this.client.closeDedicated(data);
    if (this.beat !== null) await this.client.closeDedicated(this.beat);
    this.data = null;
    this.beat = null;
  }

  private interrupt(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private sleep(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
