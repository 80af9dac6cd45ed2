// IggyConsumer: a poll loop exposed as an async iterator of messages.
//
// Single-consumer mode (`consumer`): polls the given partitions (default: all of the topic's) in
// rotation. The first poll of a partition uses `strategy` (next, first, last, an offset or a
// timestamp); later polls continue from the last delivered offset + 1, tracked here.
// Consumer-group mode (`group`): joins the group (creating it by name unless createGroup is
// false), asks for its assignment (SyncConsumerGroup) and polls its assigned partitions in
// rotation, each by id with strategy `next` (the group's stored offset + 1), as the reference SDKs
// do (the reference server wants the partition of a group poll named). It syncs again after a
// round with no messages (a rebalance may have moved partitions), when a poll is refused with
// 5009 (partition not owned any more) or 5006, 5000 or 5003 (not a member, or the group was
// deleted: it joins again, creating the group again if it may), and when a reply
// names partition u32::MAX (the reference server's "re-sync" answer to a fenced poll). It re-joins
// after a reconnect (a new session loses the membership) and leaves the group on close().
//
// Commits (`autoCommit`):
//   'poll'  (default) the poll itself stores the offset server-side (auto_commit = 1);
//   'after' the offset of the last message of a batch is stored once the loop has yielded the
//           whole batch, i.e. after your code handled it (at-least-once); in group mode a commit
//           the server refuses because a rebalance moved the partition away (5009), the
//           membership was lost (5006) or the group deleted (5000, 5003) is dropped and the loop
//           syncs (or joins) again: the new owner reads
//           on from the group's last stored offset (so the batch may be seen twice);
//   false   nothing is stored; call commit(message) yourself.
//
// After an empty round the loop waits pollIntervalMs. Retriable errors (a dropped connection)
// wait and retry; other errors end the iteration by throwing.

import { IggyErrorCode, resyncPartitionId } from '../../protocols/iggy/codec/index.js';
import type { IggyClient } from './client.js';
import type { ConsumerInput, Id, PollStrategyInput } from './inputs.js';
import { IggyClosedError, IggyError, isIggyClientError } from './errors.js';
import type { IggyMessage } from './messages.js';

export interface IggyConsumerOptions {
  streamId: Id;
  topicId: Id;
  /** Single-consumer mode: the consumer's id or name (default 'quartet-consumer' unless `group`). */
  consumer?: Id;
  /** Consumer-group mode: the group's id or name. */
  group?: Id;
  /** Create the group (by name) when it does not exist; default true. */
  createGroup?: boolean;
  /** Single-consumer mode: which partitions (default all, from GetTopic). */
  partitions?: number[];
  /** Single-consumer mode: where each partition starts (default 'next'). */
  strategy?: PollStrategyInput;
  /** Messages per poll (default 100). */
  batchSize?: number;
  /** Wait after an empty round (default 100 ms). */
  pollIntervalMs?: number;
  autoCommit?: 'poll' | 'after' | false;
  /** Wait before retrying after a retriable error (default 200 ms). */
  retryBackoffMs?: number;
}

export class IggyConsumer implements AsyncIterable<IggyMessage> {
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly autoCommit: 'poll' | 'after' | false;
  private readonly retryBackoffMs: number;
  private readonly consumerRef: ConsumerInput;
  private partitionList: number[] = [];
  private cursor = 0;
  /** Group mode: the assignment is stale and must be fetched before the next poll. */
  private needsSync = true;
  private readonly nextOffsets = new Map<number, bigint>();
  private joined = false;
  private needsJoin = true;
  private started: Promise<void> | null = null;
  private closed = false;
  private wake: (() => void) | null = null;
  private readonly onConnect = (): void => {
    this.needsJoin = true;
    this.needsSync = true;
  };

  constructor(
    readonly client: IggyClient,
    readonly options: IggyConsumerOptions,
  ) {
    if (options.group !== undefined && options.consumer !== undefined) throw new RangeError('set either consumer or group, not both');
    this.batchSize = options.batchSize ?? 100;
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.autoCommit = options.autoCommit ?? 'poll';
    this.retryBackoffMs = options.retryBackoffMs ?? 200;
    this.consumerRef = options.group !== undefined ? { group: options.group } : { consumer: options.consumer ?? 'quartet-consumer' };
    if (options.group !== undefined) client.on('connect', this.onConnect);
  }

  get isGroup(): boolean {
    return this.options.group !== undefined;
  }

  /** Joins the group or resolves the partitions; the iterator calls it for you. */
  start(): Promise<void> {
    this.started ??= this.isGroup ? this.join() : this.loadPartitions();
    return this.started;
  }

  [Symbol.asyncIterator](): AsyncIterator<IggyMessage> {
    return this.messages();
  }

  /** The poll loop. Ending the iteration early (break) closes the consumer. */
  async *messages(): AsyncGenerator<IggyMessage, void, undefined> {
    try {
      await this.start();
      while (!this.closed) {
        let batch: IggyMessage[];
        try {
          batch = await this.poll();
        } catch (err) {
          if (this.closed || err instanceof IggyClosedError) return;
          if (isIggyClientError(err) && err.retriable) {
            await this.sleep(this.retryBackoffMs);
            continue;
          }
          throw err;
        }
        if (batch.length === 0) {
          await this.sleep(this.pollIntervalMs);
          continue;
        }
        for (const m of batch) {
          yield m;
          if (this.closed) return;
        }
        if (this.autoCommit === 'after') await this.commitLast(batch);
      }
    } finally {
      await this.close();
    }
  }

  /**
   * One poll: the partitions (in group mode, the member's assigned ones) are tried in rotation
   * until one has messages or a whole round came back empty.
   */
  async poll(): Promise<IggyMessage[]> {
    if (this.closed) throw new IggyClosedError('the consumer is closed');
    await this.start();
    const { streamId, topicId } = this.options;
    const autoCommit = this.autoCommit === 'poll';
    if (this.isGroup) return this.pollGroup(autoCommit);
    for (let tried = 0; tried < this.partitionList.length; tried++) {
      const partitionId = this.partitionList[this.cursor % this.partitionList.length]!;
      this.cursor = (this.cursor + 1) % this.partitionList.length;
      const next = this.nextOffsets.get(partitionId);
      const strategy: PollStrategyInput = next === undefined ? (this.options.strategy ?? 'next') : { offset: next };
      const r = await this.client.pollMessages({ streamId, topicId, consumer: this.consumerRef, partitionId, strategy, count: this.batchSize, autoCommit });
      if (r.messages.length > 0) {
        this.nextOffsets.set(partitionId, r.messages[r.messages.length - 1]!.offset + 1n);
        return r.messages;
      }
      // The partition ends below where this consumer left off: it was emptied (purged, or deleted
      // and made again) and holds new messages, or will. Start again as at the beginning (its
      // stored offset went with the old messages), instead of waiting for it to grow past there.
      if (next !== undefined && r.currentOffset + 1n < next) this.nextOffsets.delete(partitionId);
    }
    return [];
  }

  /** Stores `message.offset` as this consumer's (or group's) offset for its partition. */
  async commit(message: Pick<IggyMessage, 'partitionId' | 'offset'>): Promise<void> {
    await this.client.storeConsumerOffset({
      consumer: this.consumerRef,
      streamId: this.options.streamId,
      topicId: this.options.topicId,
      partitionId: message.partitionId,
      offset: message.offset,
    });
  }

  /** Stops the loop; in group mode leaves the group (best effort). The client stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.client.off('connect', this.onConnect);
    if (this.isGroup && this.joined && this.client.state === 'ready') {
      this.joined = false;
      await this.client.leaveConsumerGroup(this.options.streamId, this.options.topicId, this.options.group!).catch(() => {});
    }
  }

  private async commitLast(batch: readonly IggyMessage[]): Promise<void> {
    const last = new Map<number, IggyMessage>();
    for (const m of batch) last.set(m.partitionId, m);
    for (const m of last.values()) {
      try {
        await this.commit(m);
      } catch (err) {
        if (!(err instanceof IggyError)) throw err;
        // The partition was emptied under the batch (purged, or deleted and made again): there is
        // nothing to store the offset against any more.
        if (err.code === IggyErrorCode.invalidOffset) continue;
        if (!this.isGroup || !this.lostPartition(err.code)) throw err;
      }
    }
  }

  /** In group mode: whether `code` says the assignment changed under this member (and notes what to redo). */
  private lostPartition(code: number): boolean {
    if (code === IggyErrorCode.consumerGroupPartitionNotOwned) {
      this.needsSync = true;
      return true;
    }
    if (code === IggyErrorCode.consumerGroupMemberNotFound || code === IggyErrorCode.consumerGroupIdNotFound || code === IggyErrorCode.consumerGroupNameNotFound) {
      this.needsJoin = true;
      this.needsSync = true;
      return true;
    }
    return false;
  }

  private async pollGroup(autoCommit: boolean): Promise<IggyMessage[]> {
    const { streamId, topicId } = this.options;
    if (this.needsJoin) await this.join();
    if (this.needsSync) await this.sync();
    for (let tried = 0; tried < this.partitionList.length; tried++) {
      const partitionId = this.partitionList[this.cursor % this.partitionList.length]!;
      this.cursor = (this.cursor + 1) % this.partitionList.length;
      let r;
      try {
        r = await this.client.pollMessages({ streamId, topicId, consumer: this.consumerRef, partitionId, strategy: 'next', count: this.batchSize, autoCommit });
      } catch (err) {
        if (err instanceof IggyError && this.lostPartition(err.code)) return [];
        throw err;
      }
      if (r.partitionId === resyncPartitionId) {
        this.needsSync = true;
        return [];
      }
      if (r.messages.length > 0) return r.messages;
    }
    // Nothing anywhere (or no partitions assigned): look again at the assignment next time.
    this.needsSync = true;
    return [];
  }

  /** Fetches this member's assigned partitions; not a member any more → joins again first. */
  private async sync(): Promise<void> {
    const { streamId, topicId, group } = this.options;
    let assignment = await this.client.syncConsumerGroup(streamId, topicId, group!);
    if (assignment === null) {
      await this.join();
      assignment = await this.client.syncConsumerGroup(streamId, topicId, group!);
    }
    this.partitionList = assignment === null ? [] : [...assignment.partitions];
    this.cursor = 0;
    this.needsSync = false;
  }

  private async loadPartitions(): Promise<void> {
    if (this.options.partitions !== undefined) {
      this.partitionList = [...this.options.partitions];
    } else {
      const topic = await this.client.getTopic(this.options.streamId, this.options.topicId);
      if (topic === null) throw new IggyError(IggyErrorCode.topicIdNotFound, 'consumer');
      this.partitionList = topic.partitions.length > 0 ? topic.partitions.map((p) => p.id) : [...Array(topic.partitionsCount).keys()];
    }
    if (this.partitionList.length === 0) throw new IggyError(IggyErrorCode.partitionNotFound, 'consumer', 'consumer: no partitions to poll');
  }

  private async join(): Promise<void> {
    const { streamId, topicId, group } = this.options;
    this.needsJoin = false;
    try {
      await this.client.joinConsumerGroup(streamId, topicId, group!);
    } catch (err) {
      const missing = err instanceof IggyError && (err.code === IggyErrorCode.consumerGroupIdNotFound || err.code === IggyErrorCode.consumerGroupNameNotFound);
      if (!missing || this.options.createGroup === false || typeof group !== 'string') {
        this.needsJoin = true;
        throw err;
      }
      await this.client.createConsumerGroup(streamId, topicId, group).catch((e: unknown) => {
        if (!(e instanceof IggyError && e.code === IggyErrorCode.consumerGroupNameAlreadyExists)) throw e;
      });
      await this.client.joinConsumerGroup(streamId, topicId, group);
    }
    this.joined = true;
  }

  private sleep(ms: number): Promise<void> {
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
