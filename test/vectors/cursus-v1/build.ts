// Assembles the Cursus v1 vectors field by field from the layouts in cursus-notes.md §2, §3 and §8
// (real Cursus util/encode.go), without the code under test (node's Buffer only). `vectors()` is
// what the .hex files beside this script must hold (test/protocols/cursus/v1-batch.test.ts checks
// both); run `node --import tsx test/vectors/cursus-v1/build.ts` to rewrite the files.

import { readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const vectorsDir = path.dirname(fileURLToPath(import.meta.url));

/** Big-endian byte assembly: each call appends one field. */
class B {
  private parts: Buffer[] = [];
  private int(bytes: number, write: (b: Buffer) => void): this {
    const b = Buffer.alloc(bytes);
    write(b);
    this.parts.push(b);
    return this;
  }
  u8(v: number): this {
    return this.int(1, (b) => b.writeUInt8(v));
  }
  u16(v: number): this {
    return this.int(2, (b) => b.writeUInt16BE(v));
  }
  i32(v: number): this {
    return this.int(4, (b) => b.writeInt32BE(v));
  }
  u32(v: number): this {
    return this.int(4, (b) => b.writeUInt32BE(v));
  }
  u64(v: bigint | number): this {
    return this.int(8, (b) => b.writeBigUInt64BE(BigInt(v)));
  }
  i64(v: bigint | number): this {
    return this.int(8, (b) => b.writeBigInt64BE(BigInt(v)));
  }
  /** u16 length + UTF-8 text (topic, producer id, key, event type, metadata). */
  s16(s: string): this {
    const b = Buffer.from(s, 'utf8');
    return this.u16(b.length).raw(b);
  }
  raw(b: Buffer | string): this {
    this.parts.push(typeof b === 'string' ? Buffer.from(b, 'utf8') : b);
    return this;
  }
  get(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** A v1 frame: u32 body length, then the body. */
function frame(body: Buffer): Buffer {
  return new B().u32(body.length).raw(body).get();
}

interface Rec {
  offset: number;
  seq: number;
  producer: string;
  key: string;
  epoch: number;
  payload: string;
  eventType?: string;
  schemaVersion?: number;
  aggregateVersion?: number;
  metadata?: string;
}

/** A 0xBA7C body: header, then each record with its four event-sourcing fields (always sent). */
function batch(topic: string, partition: number, acks: string, idempotent: boolean, start: number, end: number, records: Rec[], count = records.length): Buffer {
  const b = new B().u16(0xba7c).s16(topic).i32(partition).u8(Buffer.byteLength(acks)).raw(acks).u8(idempotent ? 1 : 0).u64(start).u64(end).i32(count);
  for (const r of records) {
    b.u64(r.offset).u64(r.seq).s16(r.producer).s16(r.key).i64(r.epoch).u32(Buffer.byteLength(r.payload)).raw(r.payload);
    b.s16(r.eventType ?? '').u32(r.schemaVersion ?? 0).u64(r.aggregateVersion ?? 0).s16(r.metadata ?? '');
  }
  return b.get();
}

/** The worked example of cursus-notes.md §8, as printed there. */
export const notesExampleHex = `
00 00 00 5a  ba 7c 00 06 6f 72 64 65 72 73 00 00 00 00 01 31 01
00 00 00 00 00 00 00 01  00 00 00 00 00 00 00 01  00 00 00 01
00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 01  00 02 70 31  00 01 6b
00 00 00 00 00 00 00 00  00 00 00 02 68 69  00 00  00 00 00 01
00 00 00 00 00 00 00 00  00 00`;

export function vectors(): Record<string, Buffer> {
  const publish = batch('orders', 0, '1', true, 1, 1, [{ offset: 0, seq: 1, producer: 'p1', key: 'k', epoch: 0, payload: 'hi', schemaVersion: 1 }]);
  const consumed: Rec[] = [
    { offset: 7, seq: 3, producer: 'p1', key: '', epoch: 5, payload: 'hello' },
    { offset: 8, seq: 4, producer: 'p1', key: 'k', epoch: 5, payload: '{"n":1}', eventType: 'Created', schemaVersion: 2, aggregateVersion: 1, metadata: '{}' },
  ];
  return {
    frame_list_raw: frame(Buffer.from('LIST')),
    frame_list_envelope: frame(new B().u16(0).raw('LIST').get()),
    frame_keepalive: frame(Buffer.alloc(0)),
    batch_publish_idempotent: frame(publish),
    batch_consume: frame(batch('orders', 0, '1', false, 3, 4, consumed)),
    batch_consume_empty: frame(batch('orders', 2, '1', false, 0, 0, [])),
    batch_control_marker: frame(batch('orders', 0, '1', false, 0, 0, [{ offset: 9, seq: 0, producer: 'txp', key: '', epoch: 1, payload: '__cursus_txn_control_marker__' }])),
    bad_batch_truncated_payload: frame(publish.subarray(0, 37 + 36)), // header, the record up to its payload length, one payload byte of two
    bad_batch_negative_count: frame(batch('orders', 0, '1', false, 0, 0, [], -1)),
    bad_batch_too_many: frame(batch('orders', 0, '1', false, 0, 0, [], 100_001)),
  };
}

/** What decoding each bad_ vector answers (the reason of `ERROR: batch_decode_failed reason=`). */
export const badReasons: Record<string, string> = {
  bad_batch_truncated_payload: 'failed to read message[0] payload bytes: unexpected EOF',
  bad_batch_negative_count: 'invalid negative message count: -1',
  bad_batch_too_many: 'message count too high: 100001 (max: 100000)',
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const f of readdirSync(vectorsDir)) if (f.endsWith('.hex')) unlinkSync(path.join(vectorsDir, f));
  for (const [name, bytes] of Object.entries(vectors())) writeFileSync(path.join(vectorsDir, `${name}.hex`), `${bytes.toString('hex')}\n`);
}
