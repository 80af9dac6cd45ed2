// Publishing (notes §8 "Publishing"; docs/protocols/felix-wire-v1.md §4.3, §5.2, §5.3): JSON
// `publish` / `publish_batch` and binary publish batches (0x0001, acked 0x0008, keyed 0x0040),
// each appended through the core as one stored Felix batch (codec/felix-format.ts: the record
// list as it arrived behind a small head).
//
// Routing: a keyed batch goes to shard FNV-1a 64(key) mod the stream's shards (base/hash.ts, as
// Cursus routes keys), an unkeyed one to shard 0. Answers: JSON publishes with `ack` absent or
// per_message / per_batch get publish_ok / publish_error{request_id} (without request_id:
// "missing request_id for acked publish", the stream goes on); ack "none" gets nothing, failures
// included. An acked binary batch gets a binary ack (ok, or error with the reason); an unacked one
// nothing. A batch of no records is acknowledged and appends nothing.

import { isQuartetError } from '../../../base/errors.js';
import { fnv1a64Mod } from '../../../base/hash.js';
import type { Topic } from '../../../core/catalog.js';
import {
  ErrorText,
  encodePublishAck,
  encodeRecords,
  felixAppendRequest,
  type BinaryPublishBatch,
  type MessageOf,
  type RecordList,
} from '../codec/index.js';
import { FelixFailure, felixHandler, type FelixHandler, type FelixStreamContext } from '../handler.js';
import type { StreamName } from '../streams.js';

/** The shard a batch goes to. */
export function shardOf(topic: Topic, key: Buffer | null): number {
  return key === null ? 0 : fnv1a64Mod(key, topic.partitions);
}

/** A record list of payloads (one buffer, as a binary batch carries it). */
export function recordListOf(payloads: readonly Buffer[]): RecordList {
  const { chunks, length } = encodeRecords(payloads);
  let payloadBytes = 0;
  for (const p of payloads) payloadBytes += p.length;
  return { count: payloads.length, bytes: Buffer.concat(chunks, length), payloadBytes };
}

/** The text a failed publish is answered with: the reference's for a FelixFailure, else the core error's. */
export function publishErrorText(error: unknown): string {
  if (error instanceof FelixFailure) return error.message;
  if (isQuartetError(error)) return error.message;
  throw error;
}

/** Appends a record list to the stream it names; resolves with the shard's last offset (-1: nothing appended). */
export async function appendRecords(ctx: FelixStreamContext, name: StreamName, key: Buffer | null, records: RecordList): Promise<number> {
  const { broker } = ctx.services;
  const topic = ctx.services.streams.resolve(ctx, name, 'send');
  if (records.count === 0) return -1;
  const shard = shardOf(topic, key);
  const request = felixAppendRequest(records, key, broker.now());
  broker.checkBatchBytes(topic, request.payload.length);
  const result = await broker.append(topic, shard, request);
  return result.lastOffset;
}

async function publishJson(ctx: FelixStreamContext, m: MessageOf<'publish' | 'publish_batch'>): Promise<void> {
  const ack = m.ack ?? 'per_message';
  if (ack !== 'none' && m.requestId === undefined) throw new FelixFailure(ErrorText.missingRequestId);
  const records = recordListOf(m.type === 'publish' ? [m.payload] : m.payloads);
  try {
    await appendRecords(ctx, m, m.key ?? null, records);
  } catch (error) {
    const message = publishErrorText(error);
    if (ack === 'none' || m.requestId === undefined) return void ctx.services.logger.debug('felix publish failed', { message });
    return ctx.send({ type: 'publish_error', requestId: m.requestId, message });
  }
  if (ack !== 'none' && m.requestId !== undefined) ctx.send({ type: 'publish_ok', requestId: m.requestId });
}

/** A binary publish batch (0x0001, with 0x0008 / 0x0040); answered with a binary ack when acked. */
export async function publishBinary(ctx: FelixStreamContext, batch: BinaryPublishBatch): Promise<void> {
  let error: string | null = null;
  try {
    await appendRecords(ctx, batch, batch.key, batch.records);
  } catch (e) {
    error = publishErrorText(e);
  }
  if (batch.acked !== null) ctx.sendFrames([encodePublishAck({ requestId: batch.acked.requestId, error, owner: null })]);
  else if (error !== null) ctx.services.logger.debug('felix publish failed', { message: error });
}

export const publishHandlers: readonly FelixHandler[] = [felixHandler(['publish', 'publish_batch'], publishJson)];
