// The Cursus Wire v2 golden vectors (test/vectors/cursus): the files are what build.ts assembles
// from the pinned document, the codec decodes every positive vector and encodes it back byte for
// byte, and rejects every `bad_` one. A .hex file without a check fails the suite.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  Compression,
  CursusFramer,
  FrameKind,
  Status,
  decodeBatch,
  decodeCommandPayload,
  decodeErrorPayload,
  decodeFrameHeader,
  decodeJsonEnvelope,
  decodeNegotiationRequest,
  decodeNegotiationResponse,
  decodeOkLine,
  decodeStreamControl,
  encodeBatch,
  encodeCommandPayload,
  encodeErrorPayload,
  encodeFrame,
  encodeNegotiationRequest,
  encodeNegotiationResponse,
  encodeOkLine,
  encodeStreamClose,
  isStreamControl,
  openFrame,
  renderError,
  type CursusBatch,
  type FrameHeader,
} from '../../../../src/protocols/cursus/codec/index.js';
import { vectors, vectorsDir } from '../../../vectors/cursus/build.js';

function vector(name: string): Buffer {
  return Buffer.from(readFileSync(path.join(vectorsDir, `${name}.hex`), 'utf8').trim(), 'hex');
}

/** Header and decoded payload of a frame vector, through the framer and openFrame. */
function open(name: string): { header: FrameHeader; payload: Buffer } {
  const bytes = vector(name);
  const results = new CursusFramer().push(bytes);
  assert.equal(results.length, 1);
  const r = results[0]!;
  assert.ok(r.ok, r.ok ? '' : r.reason);
  const opened = openFrame(r.frame.header, r.frame.payload);
  assert.ok(opened.ok, opened.ok ? '' : opened.reason);
  return { header: r.frame.header, payload: opened.value };
}

/** Encodes the frame again from its header fields and decoded payload: must give the vector. */
function reencode(name: string, header: FrameHeader, payload: Buffer | Buffer[]): void {
  const chunks = encodeFrame(
    { kind: header.kind, command: header.command, requestId: header.requestId, status: header.status, compression: header.compression, end: header.end },
    Array.isArray(payload) ? payload : [payload],
  );
  assert.deepEqual(Buffer.concat(chunks), vector(name));
}

/** A compressed vector: decoded, then compressed by the codec and decoded again to the same payload. */
function compressedRoundTrip(name: string, compression: Compression): Buffer {
  const { header, payload } = open(name);
  assert.equal(header.compression, compression);
  const again = Buffer.concat(encodeFrame({ kind: header.kind, command: header.command, requestId: header.requestId, compression }, [payload]));
  const h = decodeFrameHeader(again);
  assert.ok(h.ok);
  const reopened = openFrame(h.value, again.subarray(32));
  assert.ok(reopened.ok);
  assert.deepEqual(reopened.value, payload);
  return payload;
}

function batchRoundTrip(name: string): CursusBatch {
  const bytes = vector(name);
  const b = decodeBatch(bytes);
  assert.ok(b.ok, b.ok ? '' : b.reason);
  assert.deepEqual(Buffer.concat(encodeBatch(b.value)), bytes);
  return b.value;
}

function rejectsFrame(name: string, pattern: RegExp): void {
  const results = new CursusFramer().push(vector(name));
  assert.equal(results.length, 1, name);
  const r = results[0]!;
  assert.equal(r.ok, false, name);
  if (!r.ok) assert.match(r.reason, pattern);
}

function rejects(result: { ok: boolean; reason?: string }, pattern: RegExp): void {
  assert.equal(result.ok, false);
  assert.match(result.reason ?? '', pattern);
}

const checks: Record<string, () => void> = {
  negotiation_request() {
    const { header, payload } = open('negotiation_request');
    assert.equal(header.kind, FrameKind.negotiationRequest);
    const r = decodeNegotiationRequest(payload);
    assert.ok(r.ok);
    assert.deepEqual(r.value, { minimumVersion: 2, maximumVersion: 2, compressions: [3, 1, 0] });
    reencode('negotiation_request', header, encodeNegotiationRequest(r.value));
  },
  negotiation_response() {
    const { header, payload } = open('negotiation_response');
    const r = decodeNegotiationResponse(payload);
    assert.ok(r.ok);
    assert.deepEqual(r.value, { version: 2, compression: Compression.lz4 });
    reencode('negotiation_response', header, encodeNegotiationResponse(r.value));
  },
  negotiation_response_error() {
    const { header, payload } = open('negotiation_response_error');
    assert.equal(header.status, Status.error);
    const e = decodeErrorPayload(payload);
    assert.ok(e.ok);
    assert.equal(renderError(e.value), 'ERROR: UNSUPPORTED_PROTOCOL_VERSION class=validation retryable=false requested_min=3 requested_max=4 min=2 max=2');
    reencode('negotiation_response_error', header, encodeErrorPayload(e.value));
  },
  request_list() {
    const { header, payload } = open('request_list');
    assert.deepEqual([header.kind, header.command, header.requestId], [FrameKind.request, 3, 1n]);
    const c = decodeCommandPayload(payload);
    assert.ok(c.ok);
    assert.equal(c.value.fields.size, 0);
    reencode('request_list', header, encodeCommandPayload({}));
  },
  request_create() {
    const { header, payload } = open('request_create');
    const c = decodeCommandPayload(payload);
    assert.ok(c.ok);
    assert.deepEqual([...c.value.fields].map(([k, v]) => [k, v.toString()]), [['partitions', '3'], ['topic', 'orders']]);
    // Given in another order, the encoder sorts the keys.
    reencode('request_create', header, encodeCommandPayload({ topic: 'orders', partitions: '3' }));
  },
  crq2_publish() {
    const c = decodeCommandPayload(vector('crq2_publish'));
    assert.ok(c.ok);
    assert.equal(c.value.fields.get('message')!.toString(), 'hello world=1');
    assert.deepEqual(Buffer.concat(encodeCommandPayload({ topic: 'orders', producerId: 'p1', message: 'hello world=1', acks: 'all' })), vector('crq2_publish'));
  },
  request_list_snappy() {
    const payload = compressedRoundTrip('request_list_snappy', Compression.snappy);
    assert.ok(decodeCommandPayload(payload).ok);
  },
  request_list_lz4() {
    const payload = compressedRoundTrip('request_list_lz4', Compression.lz4);
    assert.ok(decodeCommandPayload(payload).ok);
  },
  response_ok_create() {
    const { header, payload } = open('response_ok_create');
    const f = decodeOkLine(payload);
    assert.ok(f.ok);
    assert.deepEqual(f.value, [['topic', 'orders'], ['partitions', '3']]);
    reencode('response_ok_create', header, encodeOkLine(f.value));
  },
  ok_line_quoted() {
    const f = decodeOkLine(vector('ok_line_quoted'));
    assert.ok(f.ok, f.ok ? '' : f.reason);
    assert.deepEqual(f.value, [['topics', ''], ['snapshot', '{"version":5,"payload":"x"}'], ['reason', 'a b "c"']]);
    assert.deepEqual(encodeOkLine(f.value), vector('ok_line_quoted'));
  },
  response_ack_json() {
    const { header, payload } = open('response_ack_json');
    const j = decodeJsonEnvelope(payload);
    assert.ok(j.ok);
    assert.equal(j.value['status'], 'OK');
    assert.equal(j.value['last_offset'], 42);
    reencode('response_ack_json', header, Buffer.from(JSON.stringify(j.value)));
  },
  error_offset_out_of_range() {
    const e = decodeErrorPayload(vector('error_offset_out_of_range'));
    assert.ok(e.ok);
    assert.equal(renderError(e.value), 'ERROR: OFFSET_OUT_OF_RANGE class=conflict retryable=false requested=3 earliest=10 latest=20');
    assert.deepEqual(encodeErrorPayload(e.value), vector('error_offset_out_of_range'));
  },
  response_error_not_leader() {
    const { header, payload } = open('response_error_not_leader');
    const e = decodeErrorPayload(payload);
    assert.ok(e.ok);
    assert.deepEqual([e.value.code, e.value.class, e.value.retryable, e.value.fields], ['NOT_LEADER', 'routing', true, [['leader', '127.0.0.1:9000']]]);
    reencode('response_error_not_leader', header, encodeErrorPayload(e.value));
  },
  stream_keepalive_lz4() {
    const { header, payload } = open('stream_keepalive_lz4');
    assert.deepEqual([header.kind, header.compression, header.end, payload.length], [FrameKind.stream, Compression.lz4, false, 0]);
    reencode('stream_keepalive_lz4', header, []);
  },
  stream_close() {
    const { header, payload } = open('stream_close');
    assert.equal(header.end, true);
    assert.ok(isStreamControl(payload));
    const c = decodeStreamControl(payload);
    assert.ok(c.ok);
    assert.deepEqual(c.value, { reason: 'stopped', offset: 42 });
    reencode('stream_close', header, encodeStreamClose(c.value));
  },
  batch_publish_idempotent() {
    const b = batchRoundTrip('batch_publish_idempotent');
    assert.deepEqual([b.idempotent, b.partition, b.acks, b.batchStart, b.batchEnd], [true, -1, 'all', 1, 2]);
    assert.deepEqual(b.records.map((r) => [r.payload.toString(), r.producerId, r.producerEpoch, r.seqNum, r.timestamp, r.key?.toString()]), [
      ['hello', 'p1', 0, 1, 1_700_000_000_000, 'k1'],
      ['world', 'p1', 0, 2, 1_700_000_000_001, 'k2'],
    ]);
  },
  batch_consume() {
    const b = batchRoundTrip('batch_consume');
    assert.equal(b.records[0]!.timestamp, 1_700_000_000_000);
    const es = b.records[1]!;
    assert.deepEqual([es.offset, es.eventType, es.schemaVersion, es.aggregateVersion, es.metadata, es.eventId], [8, 'OrderCreated', 1, 1, '{"src":"web"}', 'e-1']);
  },
  batch_control_record() {
    const r = batchRoundTrip('batch_control_record').records[0]!;
    assert.deepEqual([r.transactionalId, r.transactionMarker, r.controlBatchType, r.controlBatchVersion, r.controlBatchCoordinatorEpoch], ['tx-1', 'commit', 'transaction', 2, 3]);
    assert.deepEqual([r.controlKey?.toString('hex'), r.controlValue?.toString('hex')], ['00000000', '000000000003']);
  },
  batch_empty() {
    assert.equal(batchRoundTrip('batch_empty').records.length, 0);
  },
  response_consume_gzip() {
    const payload = compressedRoundTrip('response_consume_gzip', Compression.gzip);
    assert.ok(decodeBatch(payload).ok);
  },

  bad_frame_crc() {
    const h = decodeFrameHeader(vector('bad_frame_crc'));
    assert.ok(h.ok);
    const r = openFrame(h.value, vector('bad_frame_crc').subarray(32));
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.code, 'checksum_mismatch');
  },
  bad_frame_reserved_flag: () => rejectsFrame('bad_frame_reserved_flag', /reserved flag bits/),
  bad_frame_compression_id: () => rejectsFrame('bad_frame_compression_id', /unknown compression id 4/),
  bad_frame_end_on_response: () => rejectsFrame('bad_frame_end_on_response', /END flag on a frame of kind 4/),
  bad_frame_magic: () => rejectsFrame('bad_frame_magic', /bad magic/),
  bad_frame_version: () => rejectsFrame('bad_frame_version', /wire version 1/),
  bad_frame_request_id_zero: () => rejectsFrame('bad_frame_request_id_zero', /request ID 0/),
  bad_frame_oversize: () => rejectsFrame('bad_frame_oversize', /exceeds 67108864/),
  bad_frame_length_mismatch: () => rejectsFrame('bad_frame_length_mismatch', /uncompressed frame/),
  bad_frame_truncated_header() {
    const bytes = vector('bad_frame_truncated_header');
    rejects(decodeFrameHeader(bytes), /truncated frame header/);
    const framer = new CursusFramer();
    assert.deepEqual(framer.push(bytes), []);
    assert.equal(framer.bufferedBytes, 20);
  },
  bad_negotiation_duplicate: () => rejects(decodeNegotiationRequest(vector('bad_negotiation_duplicate')), /twice/),
  bad_crq2_duplicate_key: () => rejects(decodeCommandPayload(vector('bad_crq2_duplicate_key')), /topic given twice/),
  bad_crq2_key: () => rejects(decodeCommandPayload(vector('bad_crq2_key')), /not allowed/),
  bad_crq2_trailing: () => rejects(decodeCommandPayload(vector('bad_crq2_trailing')), /1 trailing bytes/),
  bad_crq2_truncated: () => rejects(decodeCommandPayload(vector('bad_crq2_truncated')), /truncated/),
  bad_error_class: () => rejects(decodeErrorPayload(vector('bad_error_class')), /unknown error class 9/),
  bad_error_retryable: () => rejects(decodeErrorPayload(vector('bad_error_retryable')), /retryable byte 2/),
  bad_batch_presence_bit: () => rejects(decodeBatch(vector('bad_batch_presence_bit')), /unknown presence bits 0x40000/),
  bad_batch_topic_conflict: () => rejects(decodeBatch(vector('bad_batch_topic_conflict')), /differs from the batch/),
  bad_batch_partition_conflict: () => rejects(decodeBatch(vector('bad_batch_partition_conflict')), /partition 1 differs/),
  bad_batch_too_many_records: () => rejects(decodeBatch(vector('bad_batch_too_many_records')), /100001 records/),
  bad_batch_trailing: () => rejects(decodeBatch(vector('bad_batch_trailing')), /1 bytes after the last record/),
  bad_batch_record_trailing: () => rejects(decodeBatch(vector('bad_batch_record_trailing')), /record 0: record: 1 trailing bytes/),
  bad_batch_flags: () => rejects(decodeBatch(vector('bad_batch_flags')), /reserved batch flag bits/),
  bad_batch_acks: () => rejects(decodeBatch(vector('bad_batch_acks')), /invalid acks/),
};

describe('cursus golden vectors', () => {
  it('the files are what build.ts assembles from the document', () => {
    const built = vectors();
    const files = readdirSync(vectorsDir).filter((f) => f.endsWith('.hex')).map((f) => f.slice(0, -4)).sort();
    assert.deepEqual(files, Object.keys(built).sort());
    for (const name of files) assert.deepEqual(vector(name), built[name]!.bytes, name);
    const readme = readFileSync(path.join(vectorsDir, 'README.md'), 'utf8');
    for (const name of files) assert.ok(readme.includes(`\`${name}.hex\``), `README.md names ${name}`);
  });

  it('every vector has a check', () => {
    assert.deepEqual(Object.keys(vectors()).filter((n) => !(n in checks)), []);
  });

  for (const [name, check] of Object.entries(checks)) it(name, check);
});
