// Admin API record browsing: a page of a partition's records from an offset or a timestamp, in
// protocol-neutral form (offset, timestamp, key, value, headers), whatever protocol wrote them,
// for the web console's message browser and scripts. Bytes travel as base64; the reader chooses
// how to show them. Reading needs the poll right on the topic. Transaction markers are left out;
// records of open or aborted transactions are shown as stored (this is an operator's view, not a
// read_committed consumer's).

import { QuartetError } from '../../base/errors.js';
import { BatchFlags, type NeutralRecord } from '../../base/batch.js';
import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import type { AdminReply, AdminRequest, Route } from './api.js';
import { topicFromPath } from './topics.js';

/** Records in one page at most. */
export const ADMIN_RECORDS_PER_PAGE_MAX = 100;
/** Stored bytes read for one page at most (at least one batch is read). */
export const ADMIN_RECORDS_READ_BYTES_MAX = 1024 * 1024;

function wholeNumber(text: string, what: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new QuartetError('invalid_request', `${what} must be a non-negative integer, not "${text}"`);
  return Number(text);
}

function partitionOf(topic: Topic, text: string): number {
  const partition = wholeNumber(text, 'the partition');
  if (partition >= topic.partitions) throw new QuartetError('unknown_partition', `topic '${topic.namespace}/${topic.name}' has no partition ${partition}`);
  return partition;
}

function recordJson(r: NeutralRecord): Record<string, unknown> {
  return {
    offset: r.offset,
    timestamp: new Date(r.timestamp).toISOString(),
    timestampMs: r.timestamp,
    key: r.key === null ? null : r.key.toString('base64'),
    value: r.value === null ? null : r.value.toString('base64'),
    headers: r.headers.map((h) => ({ key: h.key, value: h.value === null ? null : h.value.toString('base64') })),
  };
}

/** Up to ADMIN_RECORDS_PER_PAGE_MAX records at offsets >= `from`, and where the next page starts. */
async function page(broker: Broker, topic: Topic, partition: number, from: number): Promise<AdminReply> {
  await broker.purgeInProgress(topic);
  const { logStartOffset, highWatermark } = broker.partition(topic, partition).stats();
  const start = Math.max(from, logStartOffset);
  const records: NeutralRecord[] = [];
  let next = start;
  if (start < highWatermark) {
    for (const batch of await broker.read(topic, partition, start, { maxBytes: ADMIN_RECORDS_READ_BYTES_MAX })) {
      if (records.length >= ADMIN_RECORDS_PER_PAGE_MAX) break;
      next = Math.max(next, batch.lastOffset + 1);
      if ((batch.flags & BatchFlags.control) !== 0) continue;
      const codec = broker.formats.get(batch.format);
      if (codec === undefined) throw new QuartetError('unsupported', `batch format ${batch.format} at offset ${batch.baseOffset} cannot be decoded by this build`);
      const wanted = ADMIN_RECORDS_PER_PAGE_MAX - records.length;
      const decoded = codec.decodeRange ? codec.decodeRange(batch, start, wanted) : codec.decode(batch).filter((r) => r.offset >= start);
      for (const r of decoded.slice(0, wanted)) {
        records.push(r);
        next = r.offset + 1;
      }
    }
  }
  return { body: { namespace: topic.namespace, topic: topic.name, partition, startOffset: logStartOffset, endOffset: highWatermark, nextOffset: Math.min(next, highWatermark), records: records.map(recordJson) } };
}

async function fromOffset(request: AdminRequest): Promise<AdminReply> {
  const topic = topicFromPath(request, 'poll');
  return page(request.broker, topic, partitionOf(topic, request.params.partition!), wholeNumber(request.params.offset!, 'the offset'));
}

async function fromTimestamp(request: AdminRequest): Promise<AdminReply> {
  const topic = topicFromPath(request, 'poll');
  const partition = partitionOf(topic, request.params.partition!);
  const timestamp = wholeNumber(request.params.timestamp!, 'the timestamp (ms since the epoch)');
  await request.broker.purgeInProgress(topic);
  const log = request.broker.partition(topic, partition);
  const offset = (await log.offsetForTimestamp(timestamp)) ?? log.stats().highWatermark;
  return page(request.broker, topic, partition, offset);
}

export const recordRoutes: readonly Route[] = [
  { method: 'GET', path: 'topics/:namespace/:topic/partitions/:partition/records/:offset', handler: fromOffset },
  { method: 'GET', path: 'topics/:namespace/:topic/partitions/:partition/records-at/:timestamp', handler: fromTimestamp },
];
