// PUBLISH (spec §4 "Publishing", §8 "Partition Keys", §9; docs/protocols/cursus-wire-v2.md
// §10.1): a CRQ2 text message (topic*, producerId*, message*, acks, partition, key, seqNum, epoch,
// isIdempotent) made into a one-record CBV2 batch, or a CBV2 batch as the client sent it. Either
// is appended through the core as a stored CBV2 batch (cursusAppendRequest; the log stamps its
// partition and offsets) and answered with the AckResponse JSON, or with no frame for acks=0.
//
// Checks, in order, all before anything is appended or any producer state changes: acks (0, 1,
// -1, all; an idempotent request needs -1/all: invalid_acks); no transaction metadata
// (transaction_metadata_forbidden command=PUBLISH: transactions use TXN_PUBLISH); the topic
// (topic_not_found), which must not be an aggregate_replay topic (invalid_topic_policy: those take
// APPEND_STREAM); write authorization; the partition (explicit, else FNV-1a 64 of the key mod the
// partition count under partitioner=hash_key, else round-robin); for -1/all, the in-sync replicas
// against the effective min_in_sync_replicas (one node: -1/all is 1 when that is 1, else
// not_enough_replicas); the topic's largest batch (invalid_message_size); then the idempotent
// producer's sequence (producers.ts).

import type { AppendResult } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { isQuartetError } from '../../base/errors.js';
import { optionalBool, optionalBytes, optionalInt, optionalText, requiredBytes, requiredText } from './args.js';
import { acksValues, cursusAppendRequest, encodeBatch, type Acks, type CursusRecord } from './codec/index.js';
import { dataFailure, type CursusDataPath, type DataTopic } from './data-path.js';
import { CursusFailure, type CursusContext, type CursusReply, type CursusRequest, type CursusRequestBatch } from './handler.js';
import type { PublishedBatch } from './published-batch.js';
import { outOfOrder, staleEpoch, type Admission, type ProducerClaim } from './producers.js';
import { fnv1a64Mod } from './routing.js';

/** CRQ2 keys that carry transaction metadata, which only the broker writes (spec: "broker-internal on PUBLISH"). */
const transactionKeys = ['transactional_id', 'transaction_state', 'transaction_marker', 'control_batch_type', 'control_batch_version', 'control_batch_coordinator_epoch', 'control_key', 'control_value'];

/** A PUBLISH made uniform: what routing, the checks and the AckResponse need. */
interface Publish {
  readonly topic: string;
  /** null: the broker chooses. */
  readonly partition: number | null;
  /** The routing key (hash_key). */
  readonly key: Buffer | null;
  readonly acks: Acks;
  /** The request declares itself idempotent (isIdempotent=true, or the batch flag). */
  readonly idempotent: boolean;
  /** The producer and seqNums to deduplicate on, when dedup applies. */
  readonly claim: ProducerClaim | null;
  /** The AckResponse's producer fields. */
  readonly ack: { producerId: string; epoch: number; seqStart: number; seqEnd: number };
  /** The CBV2 batch to append. */
  readonly bytes: Buffer;
}

function forbidden(): CursusFailure {
  return CursusFailure.of('transaction_metadata_forbidden', [['command', 'PUBLISH']], 'transaction metadata is written by the broker: use INIT_PRODUCER_ID, BEGIN_TXN, TXN_PUBLISH and END_TXN');
}

function invalidAcks(req: CursusRequest, reason: string): CursusFailure {
  return CursusFailure.of('invalid_acks', [['command', req.command]], reason);
}

function fromText(req: CursusRequest, dedupTopic: (name: string) => boolean, now: number): Publish {
  for (const key of transactionKeys) if (optionalBytes(req, key) !== undefined) throw forbidden();
  const topic = requiredText(req, 'topic');
  const producerId = requiredText(req, 'producerId');
  const message = requiredBytes(req, 'message');
  const acks = optionalText(req, 'acks') ?? '1';
  if (!(acksValues as readonly string[]).includes(acks)) throw invalidAcks(req, 'acks must be 0, 1, -1 or all');
  const partition = optionalInt(req, 'partition', -1, 0x7fff_ffff);
  const key = optionalBytes(req, 'key') ?? null;
  const seqNum = optionalInt(req, 'seqNum', 0) ?? 0;
  const epoch = optionalInt(req, 'epoch') ?? 0;
  const idempotent = optionalBool(req, 'isIdempotent') ?? false;
  const record: CursusRecord = { topic, partition: -1, offset: 0, payload: message, producerId, producerEpoch: epoch, timestamp: now };
  if (seqNum > 0) record.seqNum = seqNum;
  if (key !== null) record.key = key;
  const bytes = Buffer.concat(encodeBatch({ idempotent, topic, partition: -1, acks: acks as Acks, batchStart: seqNum, batchEnd: seqNum, records: [record] }));
  const claim = seqNum > 0 && (idempotent || dedupTopic(topic)) ? { producerId, epoch, seqStart: seqNum, seqEnd: seqNum } : null;
  return { topic, partition: partition === undefined || partition < 0 ? null : partition, key, acks: acks as Acks, idempotent, claim, ack: { producerId, epoch, seqStart: seqNum, seqEnd: seqNum }, bytes };
}

function batchFailure(reason: string): CursusFailure {
  return CursusFailure.of('batch_decode_failed', [['reason', reason]]);
}

/**
 * The producer claim of a CBV2 batch (published-batch.ts claimProblem): an idempotent one (or any
 * with batch_start > 0 on an idempotent topic) names one producer and epoch on every record and
 * seqNums batch_start to batch_end on them in order; batch_start 0 disables dedup, as seqNum 0 does.
 */
function batchClaim(b: PublishedBatch, dedup: boolean): ProducerClaim | null {
  if (!dedup || b.batchStart === 0 || b.first === null) return null;
  if (b.claimProblem !== null) throw batchFailure(b.claimProblem);
  return { producerId: b.first.producerId!, epoch: b.first.producerEpoch, seqStart: b.batchStart, seqEnd: b.batchEnd };
}

function fromBatch(batch: CursusRequestBatch, dedupTopic: (name: string) => boolean): Publish {
  const b = batch.summary;
  if (b.transactionMetadata) throw forbidden();
  if (b.first === null) throw batchFailure('a published batch holds at least one record');
  const first = b.first;
  const claim = batchClaim(b, b.idempotent || dedupTopic(b.topic));
  return {
    topic: b.topic,
    partition: b.partition < 0 ? null : b.partition,
    key: first.key,
    acks: b.acks,
    idempotent: b.idempotent,
    claim,
    ack: { producerId: first.producerId ?? '', epoch: first.producerEpoch, seqStart: b.batchStart, seqEnd: b.batchEnd },
    bytes: batch.bytes,
  };
}

/**
 * The partition a publish goes to: explicit, else by key (hash_key), else round-robin. A
 * deduplicated publish with neither goes by its producer id instead of round-robin, so that its
 * retries meet its sequence on the same partition.
 */
function route(data: CursusDataPath, t: DataTopic, p: Publish): number {
  if (p.partition !== null) {
    data.checkPartition(t.topic, p.partition);
    return p.partition;
  }
  if (t.view.partitioner === 'hash_key' && p.key !== null && p.key.length > 0) return fnv1a64Mod(p.key, t.topic.partitions);
  if (p.claim !== null) return fnv1a64Mod(Buffer.from(p.claim.producerId, 'utf8'), t.topic.partitions);
  return data.nextRoundRobin(t.topic);
}

/** acks=-1/all: refused before the append while the in-sync replicas are fewer than the effective minimum. */
function checkInSync(data: CursusDataPath, t: DataTopic, partition: number): void {
  const min = t.view.minInSyncReplicas ?? data.settings.minInSyncReplicas;
  const isr = data.broker.leadership(t.topic, partition).inSyncReplicas.length;
  if (isr < min) {
    throw CursusFailure.of(
      'not_enough_replicas',
      [
        ['topic', t.view.name],
        ['partition', String(partition)],
        ['isr', String(isr)],
        ['min_in_sync_replicas', String(min)],
      ],
      'acks=all needs at least min_in_sync_replicas in-sync replicas',
    );
  }
}

async function append(data: CursusDataPath, topic: Topic, partition: number, p: Publish, admission: Admission | null): Promise<number> {
  if (admission?.kind === 'duplicate') return admission.lastOffset;
  const producer = admission?.producer;
  const request = cursusAppendRequest(p.bytes, { partition, now: data.clock.now(), ...(producer !== undefined ? { producer } : {}) });
  if (!request.ok) throw batchFailure(request.reason);
  let result: AppendResult;
  try {
    result = await data.broker.append(topic, partition, request.value);
  } catch (err) {
    // The core checks the sequence again: another PUBLISH of the producer (another connection)
    // got in between. Admitted again, the claim gets the precise Cursus answer.
    if (p.claim === null || !isQuartetError(err) || (err.code !== 'producer_fenced' && err.code !== 'out_of_order_sequence')) throw err;
    const again = await data.producers.admit(topic, partition, p.claim);
    if (again.kind === 'duplicate') return again.lastOffset;
    throw err.code === 'producer_fenced' ? staleEpoch(p.claim.producerId, p.claim.epoch, p.claim.epoch) : outOfOrder(p.claim.producerId, p.claim.seqStart, p.claim.seqStart);
  }
  return result.lastOffset;
}

async function publishOne(ctx: CursusContext, p: Publish): Promise<number> {
  const data = ctx.services.data;
  if (p.idempotent && p.acks !== '-1' && p.acks !== 'all') throw CursusFailure.of('invalid_acks', [['command', 'PUBLISH']], 'idempotent publishing requires acks=all or acks=-1');
  const t = data.topic(p.topic);
  if (t.view.aggregateReplay) {
    throw CursusFailure.of('invalid_topic_policy', [['topic', p.topic], ['command', 'PUBLISH']], 'PUBLISH is not accepted on an aggregate_replay topic: use APPEND_STREAM');
  }
  await data.authorize(ctx, t.view, 'write');
  const partition = route(data, t, p);
  try {
    if (p.acks === '-1' || p.acks === 'all') checkInSync(data, t, partition);
    data.broker.checkBatchBytes(t.topic, p.bytes.length);
    const admission = p.claim === null ? null : await data.producers.admit(t.topic, partition, p.claim);
    return await append(data, t.topic, partition, p, admission);
  } catch (err) {
    throw dataFailure(isQuartetError(err) && err.code === 'record_too_large' ? CursusFailure.of('invalid_message_size', [['bytes', String(p.bytes.length)]], err.message) : err, p.topic, partition);
  }
}

/**
 * PUBLISH: the AckResponse (docs §7.2). With acks=0 there is no frame at all, whatever happens
 * (spec: "no response frame"): a failure is only logged.
 */
export async function publish(ctx: CursusContext, req: CursusRequest): Promise<CursusReply> {
  const data = ctx.services.data;
  const dedupTopic = (name: string): boolean => {
    try {
      return data.topic(name).view.idempotent;
    } catch {
      return false;
    }
  };
  const acks = req.batch !== null ? req.batch.summary.acks : optionalText(req, 'acks');
  if (acks === '0') {
    try {
      await publishOne(ctx, req.batch !== null ? fromBatch(req.batch, dedupTopic) : fromText(req, dedupTopic, data.clock.now()));
    } catch (err) {
      data.logger.debug('PUBLISH with acks=0 failed', { peer: ctx.peer, error: err });
    }
    return { kind: 'none' };
  }
  const p = req.batch !== null ? fromBatch(req.batch, dedupTopic) : fromText(req, dedupTopic, data.clock.now());
  const lastOffset = await publishOne(ctx, p);
  return {
    kind: 'json',
    value: { status: 'OK', last_offset: lastOffset, producer_id: p.ack.producerId, producer_epoch: p.ack.epoch, seq_start: p.ack.seqStart, seq_end: p.ack.seqEnd },
  };
}
