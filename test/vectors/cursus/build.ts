// Assembles the Cursus Wire v2 golden vectors field by field from docs/protocols/cursus-wire-v2.md,
// without the codec under test (only node's Buffer and @node-rs/crc32). `vectors()` is what the
// .hex files beside this script must hold (test/protocols/cursus/codec/golden-vectors.test.ts
// checks both); run `node --import tsx test/vectors/cursus/build.ts` to rewrite the files.

import { crc32c } from '@node-rs/crc32';
import { readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Big-endian byte assembly: each call appends one field. */
class B {
  private parts: Buffer[] = [];
  u8(v: number): this {
    this.parts.push(Buffer.from([v]));
    return this;
  }
  u16(v: number): this {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    this.parts.push(b);
    return this;
  }
  u32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v);
    this.parts.push(b);
    return this;
  }
  i32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    this.parts.push(b);
    return this;
  }
  u64(v: bigint | number): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(v));
    this.parts.push(b);
    return this;
  }
  i64(v: bigint | number): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(v));
    this.parts.push(b);
    return this;
  }
  /** u32 length + bytes (docs: strings and byte arrays). */
  str(s: string | Buffer): this {
    const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    return this.u32(b.length).raw(b);
  }
  raw(b: Buffer | string): this {
    this.parts.push(typeof b === 'string' ? Buffer.from(b, 'hex') : b);
    return this;
  }
  get(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const CRS2 = 0x43525332;
const CRQ2 = 0x43525132;
const CBV2 = 0x43425632;

interface Hdr {
  kind: number;
  flags?: number;
  command: number;
  status?: number;
  requestId: bigint | number;
  decodedLength?: number;
  /** Overrides (negative vectors). */
  encodedLength?: number;
  crc?: number;
  magic?: number;
  version?: number;
}

/** §2: 32-byte header + encoded payload; CRC32C over the encoded payload. */
function frame(h: Hdr, encoded: Buffer): Buffer {
  return new B()
    .u32(h.magic ?? CRS2)
    .u16(h.version ?? 2)
    .u8(h.kind)
    .u8(h.flags ?? 0)
    .u16(h.command)
    .u16(h.status ?? 0)
    .u64(h.requestId)
    .u32(h.encodedLength ?? encoded.length)
    .u32(h.decodedLength ?? encoded.length)
    .u32(h.crc ?? (encoded.length === 0 ? 0 : crc32c(encoded) >>> 0))
    .raw(encoded)
    .get();
}

/** §6: CRQ2 with keys already in ascending order. */
function crq2(fields: Array<[string, string | Buffer]>, positional: string[] = []): Buffer {
  const b = new B().u32(CRQ2).u16(2).u16(positional.length);
  for (const p of positional) b.str(p);
  b.u16(fields.length);
  for (const [k, v] of fields) b.str(k).str(v);
  return b.get();
}

/** §8: the binary error payload. Classes: 1 validation .. 8 internal. */
function errorPayload(code: string, cls: number, retryable: boolean, message: string, fields: Array<[string, string]>): Buffer {
  const b = new B().str(code).u8(cls).u8(retryable ? 1 : 0).str(message).u16(fields.length);
  for (const [k, v] of fields) b.str(k).str(v);
  return b.get();
}

/** §9 record: version, presence, required fields, then optional ones in bit order. */
function record(presence: bigint, topic: string, partition: number, offset: number, payload: string, optional: (b: B) => void = () => {}): Buffer {
  const b = new B().u16(2).u64(presence).str(topic).i32(partition).u64(offset).str(payload);
  optional(b);
  return b.get();
}

function batch(flags: number, topic: string, partition: number, acks: string, start: number, end: number, records: Buffer[], count = records.length): Buffer {
  const b = new B().u32(CBV2).u16(2).u16(flags).str(topic).i32(partition).str(acks).u64(start).u64(end).u32(count);
  for (const r of records) b.u32(r.length).raw(r);
  return b.get();
}

// Commands (§5).
const CREATE = 1;
const LIST = 3;
const PUBLISH = 4;
const CONSUME = 5;
const STREAM = 6;
const NEGOTIATE = 33;

/** A gzip member holding `data` in one stored (uncompressed) DEFLATE block, with CRC32 and ISIZE. */
function gzipStored(data: Buffer, crc32: number): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt16LE(data.length, 0);
  len.writeUInt16LE(~data.length & 0xffff, 2);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32 >>> 0, 0);
  trailer.writeUInt32LE(data.length, 4);
  return Buffer.concat([Buffer.from('1f8b0800000000000003', 'hex'), Buffer.from([0x01]), len, data, trailer]);
}

/** A raw snappy block of one literal (length preamble, tag (len-1)<<2, bytes); len <= 60. */
function snappyLiteral(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from([data.length, (data.length - 1) << 2]), data]);
}

/** An LZ4 frame (FLG 0x60, BD 0x40, HC 0x82) of one uncompressed block and the end mark. */
function lz4Uncompressed(data: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeUInt32LE((data.length | 0x80000000) >>> 0);
  return Buffer.concat([Buffer.from('04224d18604082', 'hex'), size, data, Buffer.alloc(4)]);
}

const publishRecords = [
  // producer_id, producer_epoch, seq_num, timestamp, key: bits 0-4.
  record(0x1fn, 'orders', -1, 0, 'hello', (b) => b.str('p1').i64(0).u64(1).i64(1_700_000_000_000).str('k1')),
  record(0x1fn, 'orders', -1, 0, 'world', (b) => b.str('p1').i64(0).u64(2).i64(1_700_000_000_001).str('k2')),
];

export interface Vector {
  bytes: Buffer;
  about: string;
}

export function vectors(): Record<string, Vector> {
  const v: Record<string, Vector> = {};
  const add = (name: string, about: string, bytes: Buffer): void => {
    v[name] = { bytes, about };
  };

  // ---- negotiation (§4) ----
  add('negotiation_request', 'kind 1 NEGOTIATE: versions 2..2, compressions lz4, gzip, none', frame({ kind: 1, command: NEGOTIATE, requestId: 0 }, new B().u16(2).u16(2).u16(3).u8(3).u8(1).u8(0).get()));
  add('negotiation_response', 'kind 2 NEGOTIATE status OK: version 2, compression lz4', frame({ kind: 2, command: NEGOTIATE, requestId: 0 }, new B().u16(2).u8(3).get()));
  add(
    'negotiation_response_error',
    'kind 2 NEGOTIATE status ERROR: UNSUPPORTED_PROTOCOL_VERSION (validation, not retryable) for a 3..4 request',
    frame({ kind: 2, command: NEGOTIATE, requestId: 0, status: 1 }, errorPayload('UNSUPPORTED_PROTOCOL_VERSION', 1, false, 'wire version 2 is outside 3..4', [['requested_min', '3'], ['requested_max', '4'], ['min', '2'], ['max', '2']])),
  );

  // ---- requests (§5, §6) ----
  add('request_list', 'kind 3 LIST, request ID 1, CRQ2 with no arguments', frame({ kind: 3, command: LIST, requestId: 1 }, crq2([])));
  add('request_create', 'kind 3 CREATE, request ID 2: partitions=3 topic=orders (keys ascending)', frame({ kind: 3, command: CREATE, requestId: 2 }, crq2([['partitions', '3'], ['topic', 'orders']])));
  add(
    'crq2_publish',
    'CRQ2 payload of PUBLISH: acks=all message="hello world=1" (spaces and = kept) producerId=p1 topic=orders',
    crq2([['acks', 'all'], ['message', 'hello world=1'], ['producerId', 'p1'], ['topic', 'orders']]),
  );
  add('request_list_snappy', 'kind 3 LIST, request ID 3, flags 0x02: the CRQ2 payload as one raw snappy literal block', (() => {
    const payload = crq2([]);
    return frame({ kind: 3, flags: 2, command: LIST, requestId: 3, decodedLength: payload.length }, snappyLiteral(payload));
  })());
  add('request_list_lz4', 'kind 3 LIST, request ID 4, flags 0x03: the CRQ2 payload in an LZ4 frame of one uncompressed block', (() => {
    const payload = crq2([]);
    return frame({ kind: 3, flags: 3, command: LIST, requestId: 4, decodedLength: payload.length }, lz4Uncompressed(payload));
  })());

  // ---- replies (§7, §8) ----
  add('response_ok_create', 'kind 4 CREATE status OK, request ID 2: `OK topic=orders partitions=3`', frame({ kind: 4, command: CREATE, requestId: 2 }, Buffer.from('OK topic=orders partitions=3')));
  add('ok_line_quoted', 'OK line payload: an empty value, embedded compact JSON, and a value quoted as a JSON string', Buffer.from('OK topics= snapshot={"version":5,"payload":"x"} reason="a b \\"c\\""'));
  add(
    'response_ack_json',
    'kind 4 PUBLISH status OK, request ID 5: the AckResponse JSON envelope',
    frame({ kind: 4, command: PUBLISH, requestId: 5 }, Buffer.from('{"status":"OK","last_offset":42,"producer_id":"p1","producer_epoch":0,"seq_start":1,"seq_end":2}')),
  );
  add(
    'error_offset_out_of_range',
    'error payload: OFFSET_OUT_OF_RANGE, conflict (5), not retryable, fields requested earliest latest',
    errorPayload('OFFSET_OUT_OF_RANGE', 5, false, 'offset 3 is before the log start 10', [['requested', '3'], ['earliest', '10'], ['latest', '20']]),
  );
  add(
    'response_error_not_leader',
    'kind 4 CONSUME status ERROR, request ID 6: NOT_LEADER, routing (3), retryable, leader=127.0.0.1:9000',
    frame({ kind: 4, command: CONSUME, requestId: 6, status: 1 }, errorPayload('NOT_LEADER', 3, true, '', [['leader', '127.0.0.1:9000']])),
  );

  // ---- stream frames (§3, §7.3) ----
  add('stream_keepalive_lz4', 'kind 5 STREAM status OK, request ID 7, flags 0x03 (lz4): keepalive, empty payload under compression', frame({ kind: 5, flags: 3, command: STREAM, requestId: 7 }, Buffer.alloc(0)));
  add('stream_close', 'kind 5 STREAM status OK, request ID 7, flags 0x08 (END): STREAM_CONTROL type=CLOSE reason=stopped offset=42', frame({ kind: 5, flags: 8, command: STREAM, requestId: 7 }, Buffer.from('STREAM_CONTROL type=CLOSE reason=stopped offset=42')));

  // ---- CBV2 (§9) ----
  add('batch_publish_idempotent', 'CBV2 PUBLISH: idempotent, topic orders, partition -1, acks all, seq 1..2, two records with producer_id, producer_epoch, seq_num, timestamp, key', batch(1, 'orders', -1, 'all', 1, 2, publishRecords));
  add(
    'batch_consume',
    'CBV2 as the broker sends it (flags 0, acks 1, batch_start = batch_end = 0): partition 0, records at offsets 7 (timestamp) and 8 (event-sourcing fields, bits 5-9)',
    batch(0, 'orders', 0, '1', 0, 0, [
      record(0x8n, 'orders', 0, 7, 'a', (b) => b.i64(1_700_000_000_000)),
      record(0x3e0n, 'orders', 0, 8, '{"total":5}', (b) => b.str('OrderCreated').u32(1).u64(1).str('{"src":"web"}').str('e-1')),
    ]),
  );
  add(
    'batch_control_record',
    'CBV2 read_uncommitted: a commit marker record with transactional_id, transaction_marker and the control fields (bits 10, 12-17)',
    batch(0, 'orders', 0, '1', 0, 0, [
      record(0x3f400n, 'orders', 0, 9, '', (b) => b.str('tx-1').str('commit').str('transaction').u16(2).i32(3).str(Buffer.from('00000000', 'hex')).str(Buffer.from('000000000003', 'hex'))),
    ]),
  );
  add('batch_empty', 'CBV2 with no records (a CONSUME that found nothing)', batch(0, 'orders', 0, '1', 0, 0, []));
  add('response_consume_gzip', 'kind 4 CONSUME status OK, request ID 8, flags 0x01: an empty CBV2 batch in a gzip member (stored block)', (() => {
    const payload = batch(0, 'orders', 0, '1', 0, 0, []);
    return frame({ kind: 4, flags: 1, command: CONSUME, requestId: 8, decodedLength: payload.length }, gzipStored(payload, crc32Ieee(payload)));
  })());

  // ---- negative vectors: each must be rejected ----
  const list = crq2([]);
  add('bad_frame_crc', 'negative: request_list with a CRC one off (checksum_mismatch)', frame({ kind: 3, command: LIST, requestId: 1, crc: (crc32c(list) + 1) >>> 0 }, list));
  add('bad_frame_reserved_flag', 'negative: request with flag bit 4 set', frame({ kind: 3, flags: 0x10, command: LIST, requestId: 1 }, list));
  add('bad_frame_compression_id', 'negative: request with compression id 4', frame({ kind: 3, flags: 0x04, command: LIST, requestId: 1 }, list));
  add('bad_frame_end_on_response', 'negative: END flag on a response (kind 4)', frame({ kind: 4, flags: 0x08, command: LIST, requestId: 1 }, Buffer.from('OK')));
  add('bad_frame_magic', 'negative: magic CRS1', frame({ kind: 3, command: LIST, requestId: 1, magic: 0x43525331 }, list));
  add('bad_frame_version', 'negative: header version 1', frame({ kind: 3, command: LIST, requestId: 1, version: 1 }, list));
  add('bad_frame_request_id_zero', 'negative: application request with request ID 0', frame({ kind: 3, command: LIST, requestId: 0 }, list));
  add('bad_frame_oversize', 'negative: header only, encoded_length 67,108,865 (one over the limit)', frame({ kind: 3, command: LIST, requestId: 1, encodedLength: 67_108_865, decodedLength: 67_108_865, crc: 0 }, Buffer.alloc(0)));
  add('bad_frame_length_mismatch', 'negative: uncompressed frame whose decoded_length differs from encoded_length', frame({ kind: 3, command: LIST, requestId: 1, decodedLength: list.length + 1 }, list));
  add('bad_frame_truncated_header', 'negative: the first 20 bytes of request_list', frame({ kind: 3, command: LIST, requestId: 1 }, list).subarray(0, 20));
  add('bad_negotiation_duplicate', 'negative: negotiation request payload naming gzip twice', new B().u16(2).u16(2).u16(2).u8(1).u8(1).get());
  add('bad_crq2_duplicate_key', 'negative: CRQ2 with topic twice', crq2([['topic', 'a'], ['topic', 'b']]));
  add('bad_crq2_key', 'negative: CRQ2 key starting with an upper-case letter', crq2([['Topic', 'a']]));
  add('bad_crq2_trailing', 'negative: CRQ2 with one byte after the last field', Buffer.concat([crq2([['topic', 'a']]), Buffer.from([0])]));
  add('bad_crq2_truncated', 'negative: CRQ2 cut inside a value', crq2([['topic', 'orders']]).subarray(0, 24));
  add('bad_error_class', 'negative: error payload with class 9', errorPayload('topic_not_found', 9, false, '', []));
  add('bad_error_retryable', 'negative: error payload with retryable byte 2', new B().str('topic_not_found').u8(7).u8(2).str('').u16(0).get());
  add('bad_batch_presence_bit', 'negative: CBV2 record with presence bit 18 set', batch(0, 'orders', 0, '1', 0, 0, [record(1n << 18n, 'orders', 0, 0, 'x')]));
  add('bad_batch_topic_conflict', 'negative: CBV2 record topic differs from the batch topic', batch(0, 'orders', 0, '1', 0, 0, [record(0n, 'other', 0, 0, 'x')]));
  add('bad_batch_partition_conflict', 'negative: CBV2 record partition differs from the batch partition', batch(0, 'orders', 0, '1', 0, 0, [record(0n, 'orders', 1, 0, 'x')]));
  add('bad_batch_too_many_records', 'negative: CBV2 header declaring 100,001 records', batch(0, 'orders', 0, '1', 0, 0, [], 100_001));
  add('bad_batch_trailing', 'negative: CBV2 with a byte after the last record', Buffer.concat([batch(0, 'orders', 0, '1', 0, 0, [record(0n, 'orders', 0, 0, 'x')]), Buffer.from([0])]));
  add('bad_batch_record_trailing', 'negative: CBV2 record one byte longer than its fields', batch(0, 'orders', 0, '1', 0, 0, [Buffer.concat([record(0n, 'orders', 0, 0, 'x'), Buffer.from([0])])]));
  add('bad_batch_flags', 'negative: CBV2 with batch flag bit 1 set', batch(2, 'orders', 0, '1', 0, 0, []));
  add('bad_batch_acks', 'negative: CBV2 with acks "2"', batch(0, 'orders', 0, '2', 0, 0, []));
  return v;
}

/** CRC-32 (IEEE, as gzip's trailer), bit by bit: small and independent of zlib. */
function crc32Ieee(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

export const vectorsDir = path.dirname(fileURLToPath(import.meta.url));

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const f of readdirSync(vectorsDir)) if (f.endsWith('.hex')) unlinkSync(path.join(vectorsDir, f));
  const all = vectors();
  for (const [name, vec] of Object.entries(all)) writeFileSync(path.join(vectorsDir, `${name}.hex`), `${vec.bytes.toString('hex')}\n`);
  const lines = Object.entries(all).map(([name, vec]) => `| \`${name}.hex\` | ${vec.about} |`);
  writeFileSync(
    path.join(vectorsDir, 'README.md'),
    `# Cursus Wire v2 golden vectors\n\nByte-exact examples of docs/protocols/cursus-wire-v2.md, one lowercase hex string per file\n(a trailing newline). \`build.ts\` assembles each field by field from the document, without the\ncodec; \`test/protocols/cursus/codec/golden-vectors.test.ts\` checks that the files match it and that\nthe codec decodes and re-encodes the positive vectors byte for byte and rejects the \`bad_\` ones.\nFrames carry their 32-byte header; the \`crq2_\`, \`ok_line_\`, \`error_\` and \`batch_\` files are\npayloads alone.\n\n| file | what it is |\n|---|---|\n${lines.join('\n')}\n`,
  );
  console.log(`${Object.keys(all).length} vectors written to ${vectorsDir}`);
}
