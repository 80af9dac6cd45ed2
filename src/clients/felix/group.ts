// A queue-group consumer (CONSUMER_GROUP; dead letters GROUP_DEAD_LETTERS) on one shard of a
// stream: the broker hands out records, each claimed for a visibility timeout; `ack` settles one,
// `nack` hands it back for redelivery (attempts counts deliveries), and a record that keeps failing
// goes to the group's dead letters, which can be listed, discarded or redriven.
//
// A poll with a wait holds its stream until records come or the wait ends, so it goes on a stream
// of its own (notes §6: [L] each group request uses its own stream) and never delays the
// acks and other requests pipelined on the cache pool's streams.

import type { CallOptions, FelixClient } from './client.js';
import { messageOf, requireFeature } from './client.js';

export interface GroupConsumerOptions {
  namespace?: string;
  /** Default 0. */
  shard?: number;
  /** Records per poll (default 100). */
  maxRecords?: number;
  /** How long a poll may wait for records, ms (default 0: answer at once). */
  waitMs?: number;
}

export interface GroupRecord {
  offset: bigint;
  payload: Buffer;
  /** Deliveries including this one; 0 when the broker does not report it. */
  attempts: number;
}

export interface PollOptions extends CallOptions {
  maxRecords?: number;
  waitMs?: number;
}

export class FelixGroupConsumer {
  readonly namespace: string;
  readonly shard: number;
  private closed = false;
  private running: Promise<void> | null = null;

  constructor(
    private readonly client: FelixClient,
    readonly stream: string,
    readonly group: string,
    private readonly options: GroupConsumerOptions,
  ) {
    this.namespace = options.namespace ?? client.options.namespace;
    this.shard = options.shard ?? 0;
  }

  private scope(): { tenantId: string; namespace: string; stream: string; shard: number; group: string } {
    return { tenantId: this.client.options.tenantId, namespace: this.namespace, stream: this.stream, shard: this.shard, group: this.group };
  }

  /** group_poll: up to maxRecords claimed records (empty when none came within waitMs). */
  async poll(options: PollOptions = {}): Promise<GroupRecord[]> {
    const waitMs = options.waitMs ?? this.options.waitMs ?? 0;
    const message = (requestId: bigint) => ({ type: 'group_poll' as const, ...this.scope(), maxRecords: options.maxRecords ?? this.options.maxRecords ?? 100, waitMs: BigInt(waitMs), requestId });
    if (waitMs === 0) return (await this.client.call('cache', message, ['group_records'], options)).records;
    // The answer may take the whole wait: the request timeout counts from its end.
    const timeoutMs = waitMs + (options.timeoutMs ?? this.client.options.requestTimeoutMs);
    const { stream } = await this.client.ownStream('cache');
    try {
      const requestId = this.client.requestId();
      const m = message(requestId);
      requireFeature(stream.capabilities, m.type);
      return messageOf(await stream.request(m, requestId, ['group_records'], timeoutMs), 'group_records').records;
    } finally {
      stream.close();
    }
  }

  /** group_ack: the record is done. */
  async ack(offset: bigint, options?: CallOptions): Promise<void> {
    await this.settle('group_ack', offset, options);
  }

  /** group_nack: the record goes back for redelivery (or to the dead letters when out of attempts). */
  async nack(offset: bigint, options?: CallOptions): Promise<void> {
    await this.settle('group_nack', offset, options);
  }

  /** group_dead_letters: offsets of the records that ran out of attempts. */
  async deadLetters(options?: CallOptions): Promise<bigint[]> {
    const list = await this.client.call('cache', (requestId) => ({ type: 'group_dead_letters', ...this.scope(), requestId }), ['group_dead_letter_list'], options);
    return list.offsets;
  }

  /** group_discard: drops a dead letter for good. */
  async discard(offset: bigint, options?: CallOptions): Promise<void> {
    await this.settle('group_discard', offset, options);
  }

  /** group_redrive: puts a dead letter back in the queue. */
  async redrive(offset: bigint, options?: CallOptions): Promise<void> {
    await this.settle('group_redrive', offset, options);
  }

  /**
   * Polls until close(): each record to `handler`, acked when it returns, nacked when it throws.
   * Resolves when closed; rejects with the first error of a poll, ack or nack.
   */
  run(handler: (record: GroupRecord) => unknown): Promise<void> {
    if (this.running !== null) throw new Error('the consumer is already running');
    const waitMs = this.options.waitMs !== undefined && this.options.waitMs > 0 ? this.options.waitMs : 1_000;
    this.running = (async () => {
      while (!this.closed) {
        const records = await this.poll({ waitMs });
        for (const r of records) {
          if (this.closed) return;
          let ok = true;
          try {
            await handler(r);
          } catch {
            ok = false;
          }
          await (ok ? this.ack(r.offset) : this.nack(r.offset));
        }
      }
    })();
    return this.running;
  }

  /** Stops run() after the poll under way; claimed records not yet acked come back after their timeout. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running?.catch(() => {});
    this.client.untrack(this);
  }

  private async settle(type: 'group_ack' | 'group_nack' | 'group_discard' | 'group_redrive', offset: bigint, options?: CallOptions): Promise<void> {
    await this.client.call('cache', (requestId) => ({ type, ...this.scope(), offset, requestId }), ['cache_ok'], options);
  }
}
