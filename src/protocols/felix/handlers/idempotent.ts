// Idempotent producers (notes §8 "Publishing"; feature IDEMPOTENT_PRODUCER): producer_init hands
// out a producer id from the core's producer state (core/producer-state.ts); publish_idempotent
// carries the id and one sequence per batch, checked against the producer's window on the shard
// the batch goes to before it is appended:
//
//   sequence = last + 1 (or the producer's first batch on the shard)  → appended, publish_ok
//   a batch of the window again (a retry)                             → publish_ok, nothing appended
//   sequence > last + 1                                               → publish_refused sequence_gap{expected}
//   sequence <= last, older than the window                           → publish_refused sequence_expired
//   an id the broker never handed out                                 → publish_refused unknown_producer
//
// Each batch is one core sequence (the core's window keeps the last producerWindowBatches
// batches per producer and shard, and its snapshots keep them across a clean restart). The
// checks and the append of one producer on one shard run one at a time.

import { QuartetError, isQuartetError } from '../../../base/errors.js';
import { partitionKey, sequenceMax, type ProducerBatch } from '../../../core/producer-state.js';
import type { MessageOf, PublishRefusalReason } from '../codec/index.js';
import { Feature, felixAppendRequest } from '../codec/index.js';
import { felixHandler, type FelixHandler, type FelixServices, type FelixStreamContext } from '../handler.js';
import { publishErrorText, recordListOf, shardOf } from './publish.js';

/** The turns of each (shard, producer) of a front-end: one check-and-append at a time. */
const turnsOf = new WeakMap<FelixServices, Map<string, Promise<void>>>();

async function inTurn<T>(services: FelixServices, key: string, work: () => Promise<T>): Promise<T> {
  let turns = turnsOf.get(services);
  if (turns === undefined) turnsOf.set(services, (turns = new Map()));
  const before = turns.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const chained = before.then(() => mine);
  turns.set(key, chained);
  await before;
  try {
    return await work();
  } finally {
    release();
    if (turns.get(key) === chained) turns.delete(key);
  }
}

async function producerInit(ctx: FelixStreamContext, m: MessageOf<'producer_init'>): Promise<void> {
  const { producerId } = await ctx.services.broker.producers.initProducer();
  ctx.send({ type: 'producer_init_ok', requestId: m.requestId, producerId: BigInt(producerId) });
}

function refused(ctx: FelixStreamContext, requestId: bigint, reason: PublishRefusalReason, message: string): void {
  ctx.send({ type: 'publish_refused', requestId, reason, message });
}

async function publishIdempotent(ctx: FelixStreamContext, m: MessageOf<'publish_idempotent'>): Promise<void> {
  const { broker, streams } = ctx.services;
  const requestId = m.requestId;
  if (m.producerId > BigInt(Number.MAX_SAFE_INTEGER)) return refused(ctx, requestId, { kind: 'unknown_producer' }, `producer ${m.producerId} is not known to this broker`);
  if (m.sequence > BigInt(sequenceMax)) return refused(ctx, requestId, { kind: 'sequence_expired' }, `sequence ${m.sequence} is beyond ${sequenceMax}`);
  let topic;
  try {
    topic = streams.resolve(ctx, m, 'send');
  } catch (error) {
    return ctx.send({ type: 'publish_error', requestId, message: publishErrorText(error) });
  }
  const key = m.key ?? null;
  const shard = shardOf(topic, key);
  const stateKey = partitionKey(topic.internalId, shard);
  const batch: ProducerBatch = { producerId: Number(m.producerId), producerEpoch: 0, baseSequence: Number(m.sequence), recordCount: 1 };
  const producers = broker.producers;
  await inTurn(ctx.services, `${stateKey}:${batch.producerId}`, async () => {
    const window = producers.window(stateKey, batch.producerId);
    const last = window?.batches[window.batches.length - 1]?.lastSeq;
    if (window !== null && last !== undefined && batch.baseSequence <= last && !window.batches.some((b) => b.firstSeq === batch.baseSequence)) {
      return refused(ctx, requestId, { kind: 'sequence_expired' }, `sequence ${batch.baseSequence} is older than the producer's remembered batches`);
    }
    let verdict;
    try {
      verdict = producers.check(stateKey, batch);
    } catch (error) {
      if (!isQuartetError(error)) throw error;
      if (error.code === 'unknown_producer') return refused(ctx, requestId, { kind: 'unknown_producer' }, error.message);
      if (error.code === 'out_of_order_sequence') return refused(ctx, requestId, { kind: 'sequence_gap', expected: BigInt((last ?? -1) + 1) }, error.message);
      throw error;
    }
    if (verdict.kind === 'duplicate') {
      await verdict.written;
      return ctx.send({ type: 'publish_ok', requestId });
    }
    const records = recordListOf(m.payloads);
    if (records.count === 0) return ctx.send({ type: 'publish_ok', requestId });
    try {
      const request = felixAppendRequest(records, key, broker.now());
      broker.checkBatchBytes(topic, request.payload.length);
      const result = await broker.append(topic, shard, request);
      // One sequence per batch, whatever its record count: the window holds the batch at its last offset.
      producers.recordAppend(stateKey, batch, { baseOffset: result.lastOffset, lastOffset: result.lastOffset, appendTime: result.appendTime });
    } catch (error) {
      if (!(error instanceof QuartetError)) throw error;
      return ctx.send({ type: 'publish_error', requestId, message: error.message });
    }
    ctx.send({ type: 'publish_ok', requestId });
  });
}

export const idempotentHandlers: readonly FelixHandler[] = [
  felixHandler(['producer_init'], producerInit, Feature.idempotentProducer),
  felixHandler(['publish_idempotent'], publishIdempotent, Feature.idempotentProducer),
];
