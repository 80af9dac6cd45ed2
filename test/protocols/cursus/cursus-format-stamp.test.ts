// The CBV2 format codec's stamp (src/protocols/cursus/codec/cursus-format.ts): a batch appended
// through the log gets the assigned offsets in every record, and the partition given in its
// stamp input (docs/protocols/cursus-wire-v2.md §9.1).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryLog } from '../../../src/log/memory-log.js';
import { createFormatRegistry } from '../../../src/log/formats.js';
import { BatchFormat } from '../../../src/base/batch.js';
import { defaultLogConfig } from '../../../src/log/types.js';
import { decodeBatch, encodeBatch } from '../../../src/protocols/cursus/codec/batch.js';
import { cursusBatchFormatCodec, type CursusStampInput } from '../../../src/protocols/cursus/codec/cursus-format.js';

test('appending a CBV2 batch stamps its record offsets and the partition of its stamp input', async () => {
  const log = new MemoryLog(defaultLogConfig, { formats: createFormatRegistry().register(cursusBatchFormatCodec) });
  const batch = (values: string[], partition: number) =>
    Buffer.concat(encodeBatch({ idempotent: false, topic: 't', partition, acks: '1', batchStart: 0, batchEnd: 0, records: values.map((v) => ({ topic: 't', partition, offset: 0, payload: Buffer.from(v) })) }));
  const request = (payload: Buffer, stampInput?: CursusStampInput) => ({ format: BatchFormat.cursus, recordCount: 2, firstTimestamp: 1, maxTimestamp: 1, producerId: -1, producerEpoch: -1, baseSequence: -1, flags: 0, payload, ...(stampInput ? { stampInput } : {}) });
  await log.append(request(batch(['a', 'b'], 0)));
  await log.append(request(batch(['c', 'd'], -1), { partition: 3 }));
  const stored = await log.read(0, { maxBytes: 1 << 20 });
  const decoded = stored.map((s) => decodeBatch(s.payload));
  assert.ok(decoded.every((d) => d.ok));
  const records = decoded.flatMap((d) => (d.ok ? d.value.records : []));
  assert.deepEqual(records.map((r) => [r.offset, r.partition, r.payload.toString()]), [[0, 0, 'a'], [1, 0, 'b'], [2, 3, 'c'], [3, 3, 'd']]);
});
