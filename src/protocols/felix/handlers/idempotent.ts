// Idempotent producers (notes §8 "Publishing"; feature IDEMPOTENT_PRODUCER): producer_init hands
// out a producer id from the core's producer state (core/producer-state.ts); publish_idempotent
// carries the id and one sequence per batch, checked against the producer's window on the shard
// the batch goes to as it is appended:
//
//   sequence = last + 1 (or the producer's first batch on the shard)  → appended, publish_ok
//   one of the last 64 batches again (a retry)                        → publish_ok, nothing appended
//   sequence > last + 1                                               → publish_refused sequence_gap{expected}
//   sequence <= last, older than the window                           → publish_refused sequence_expired
//   an id the broker never handed out                                 → publish_refused unknown_producer
//
// The batch goes to the log with the producer id and sequence in its envelope (epoch 0), and the
// core checks it there, as it checks a Kafka producer's, counting one sequence per Felix batch
// (sequencesOf): check and offset assignment are one synchronous step, a retry of a batch still
// being written is answered when it is written, and the window comes back after a restart (from
// the producer snapshot of a clean stop, or by replaying the log's envelopes after a crash). This
// handler looks at the window first only to tell an expired sequence from a gap, which the core
// refuses alike.

import { isQuartetError } from '../../../base/errors.js';
import { BatchFormat } from '../../../base/batch.js';
import { partitionKey, sequenceMax } from '../../../core/producer-state.js';
import type { MessageOf, PublishRefusalReason } from '../codec/index.js';
import { Feature, felixAppendRequest } from '../codec/index.js';
import { felixHandler, type FelixHandler, type FelixStreamContext } from '../handler.js';
import { publishErrorText, recordListOf, shardOf } from './publish.js';

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
  const producerId = Number(m.producerId);
  const sequence = Number(m.sequence);
  const window = broker.producers.window(stateKey, producerId);
  const last = window?.batches[window.batches.length - 1]?.lastSeq;
  if (window !== null && last !== undefined && sequence <= last && !window.batches.some((b) => b.firstSeq === sequence)) {
    return refused(ctx, requestId, { kind: 'sequence_expired' }, `sequence ${sequence} is older than the producer's remembered batches`);
  }
  const records = recordListOf(m.payloads);
  try {
    if (records.count === 0) {
      // Nothing to append: the sequence is checked, not taken.
      broker.producers.check(stateKey, { producerId, producerEpoch: 0, baseSequence: sequence, recordCount: 1, format: BatchFormat.felix });
    } else {
      const request = felixAppendRequest(records, key, broker.now(), { producerId, sequence });
      broker.checkBatchBytes(topic, request.payload.length);
      await broker.append(topic, shard, request);
    }
  } catch (error) {
    if (!isQuartetError(error)) throw error;
    if (error.code === 'unknown_producer') return refused(ctx, requestId, { kind: 'unknown_producer' }, error.message);
    if (error.code === 'out_of_order_sequence') return refused(ctx, requestId, { kind: 'sequence_gap', expected: BigInt((last ?? -1) + 1) }, error.message);
    return ctx.send({ type: 'publish_error', requestId, message: error.message });
  }
  ctx.send({ type: 'publish_ok', requestId });
}

export const idempotentHandlers: readonly FelixHandler[] = [
  felixHandler(['producer_init'], producerInit, Feature.idempotentProducer),
  felixHandler(['publish_idempotent'], publishIdempotent, Feature.idempotentProducer),
];
