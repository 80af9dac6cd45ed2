// Assembles Quartet's own Felix wire v1 vectors field by field from
// docs/protocols/felix-wire-v1.md, without the codec under test (node's Buffer only): the frames
// the public set in ../shared/vectors/felix lacks (event batches, plain and empty-key publish
// batches, owner acks, the JSON messages beyond the fifteen public ones) and `bad_` frames the
// codec must refuse. `vectors()` is what the .hex files beside this script must hold
// (test/protocols/felix/codec/golden-vectors.test.ts checks both); run
// `node --import tsx test/vectors/felix/build.ts` to rewrite the files and README.md.

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
  u64(v: bigint | number): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(v));
    this.parts.push(b);
    return this;
  }
  /** u16 length + UTF-8 bytes (names, keys, ack texts). */
  s16(s: string): this {
    const b = Buffer.from(s, 'utf8');
    return this.u16(b.length).raw(b);
  }
  raw(b: Buffer | string): this {
    this.parts.push(typeof b === 'string' ? Buffer.from(b, 'utf8') : b);
    return this;
  }
  /** The record list: u32 count, then u32 length + bytes per payload. */
  records(payloads: readonly string[]): this {
    this.u32(payloads.length);
    for (const p of payloads) this.u32(Buffer.byteLength(p)).raw(p);
    return this;
  }
  get(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const FLX1 = 0x464c5831;

/** §2: 12-byte header + payload. Overrides make the negative vectors. */
function frame(flags: number, payload: Buffer, o: { magic?: number; version?: number; length?: number } = {}): Buffer {
  const h = new B()
    .u32(o.magic ?? FLX1)
    .u16(o.version ?? 1)
    .u16(flags)
    .u32(o.length ?? payload.length)
    .get();
  return Buffer.concat([h, payload]);
}

/** A JSON frame: the text as written here (flags 0). */
function json(text: string): Buffer {
  return frame(0, Buffer.from(text, 'utf8'));
}

const scope = '"tenant_id":"t1","namespace":"default"';
const groupScope = `${scope},"stream":"orders","shard":0,"group":"workers"`;

export interface Vector {
  bytes: Buffer;
  about: string;
}

export function vectors(): Record<string, Vector> {
  const v: Record<string, Vector> = {};
  const add = (name: string, about: string, bytes: Buffer): void => {
    v[name] = { bytes, about };
  };

  // ---- event batches (§5.4): no public vector exists ----
  add('event_batch_shared', 'flags 0x0004: shared batch, records "a", "bc"', frame(0x0004, new B().records(['a', 'bc']).get()));
  add('event_batch_shared_offsets', 'flags 0x0024: shared batch with base_offset 41, records "a", "bc" (offsets 41, 42)', frame(0x0024, new B().u64(41).records(['a', 'bc']).get()));
  add('event_batch_shared_empty', 'flags 0x0004: shared batch of no records', frame(0x0004, new B().records([]).get()));
  add('event_batch_legacy', 'flags 0x0002: per-subscriber batch, subscription_id 7, records "hello"', frame(0x0002, new B().u64(7).records(['hello']).get()));
  add('event_batch_legacy_offsets', 'flags 0x0022: per-subscriber batch, subscription_id 7, base_offset 1000, records "x", "", "yz"', frame(0x0022, new B().u64(7).u64(1000).records(['x', '', 'yz']).get()));

  // ---- publish batches and acks (§5.2, §5.3) the public set lacks ----
  add('binary_publish_batch', 'flags 0x0001: unacked, unkeyed, t1/default/demo, records "hello", "world"', frame(0x0001, new B().s16('t1').s16('default').s16('demo').records(['hello', 'world']).get()));
  add('binary_publish_acked_per_message', 'flags 0x0009: request_id 8, ack_mode 1 (per_message), t1/default/demo, records "a"', frame(0x0009, new B().u64(8).u8(1).s16('t1').s16('default').s16('demo').records(['a']).get()));
  add('binary_publish_keyed_empty_key', 'flags 0x0041: the empty key (a key, not unkeyed), t1/default/demo, records "a"', frame(0x0041, new B().s16('').s16('t1').s16('default').s16('demo').records(['a']).get()));
  add('binary_publish_ack_owner', 'flags 0x0090: ok ack of request_id 7, forwarded to broker-b at 10.0.0.5:5000, generation 3', frame(0x0090, new B().u8(0).u64(7).u16(0).s16('broker-b').s16('10.0.0.5:5000').u64(3).get()));
  add('binary_publish_ack_owner_no_addr', 'flags 0x0090: ok ack of request_id 7, forwarded to broker-b, no published address, generation 4', frame(0x0090, new B().u8(0).u64(7).u16(0).s16('broker-b').u16(0).u64(4).get()));

  // ---- JSON messages (§4) beyond the public set, fields in the reference's order ----
  const messages: Array<[string, string, string]> = [
    ['auth_legacy', 'auth without client_flags (answered with ok)', `{"type":"auth","tenant_id":"t1","token":"demo-token"}`],
    ['auth_with_features', 'auth offering flags 0x00ff and features 0x0206', `{"type":"auth","tenant_id":"t1","token":"demo-token","client_flags":255,"client_features":518}`],
    ['auth_ok_quartet', "Quartet's auth_ok on one node: server_flags 0x00ff, server_features 0x03fc", `{"type":"auth_ok","server_flags":255,"server_features":1020}`],
    ['topology', 'topology request', `{"type":"topology"}`],
    ['topology_view', 'topology_view with one broker', `{"type":"topology_view","brokers":[{"node_id":"broker-a","addr":"10.0.0.4:5000"}]}`],
    ['not_leader', 'not_leader with addr and generation', `{"type":"not_leader","node_id":"broker-b","addr":"10.0.0.5:5000","generation":7}`],
    ['stream_shards', 'stream_shards request', `{"type":"stream_shards",${scope},"stream":"orders","request_id":3}`],
    ['stream_shards_view', 'stream_shards_view: 4 shards', `{"type":"stream_shards_view","shards":4,"request_id":3}`],
    ['publish_batch_acked', 'publish_batch with key, request_id and ack per_batch', `{"type":"publish_batch",${scope},"stream":"demo","payloads":["aGVsbG8=","d29ybGQ="],"key":"azc=","request_id":5,"ack":"per_batch"}`],
    ['publish_ok', 'publish_ok', `{"type":"publish_ok","request_id":5}`],
    ['publish_error', 'publish_error with the stream-not-found text', `{"type":"publish_error","request_id":5,"message":"stream not found: tenant=t1 namespace=default stream=demo"}`],
    ['producer_init', 'producer_init', `{"type":"producer_init","request_id":1}`],
    ['producer_init_ok', 'producer_init_ok with a 64-bit producer id above 2^53', `{"type":"producer_init_ok","request_id":1,"producer_id":18364758544493064720}`],
    ['publish_idempotent', 'publish_idempotent: sequence 0, keyed', `{"type":"publish_idempotent",${scope},"stream":"demo","payloads":["aGk="],"key":"azc=","request_id":2,"producer_id":18364758544493064720,"sequence":0}`],
    ['publish_refused_gap', 'publish_refused: sequence_gap expected 3', `{"type":"publish_refused","request_id":2,"reason":{"sequence_gap":{"expected":3}},"message":"sequence gap"}`],
    ['publish_refused_unknown_producer', 'publish_refused: unknown_producer', `{"type":"publish_refused","request_id":2,"reason":"unknown_producer","message":"unknown producer"}`],
    ['publish_refused_not_leader', 'publish_refused: not_leader without addr', `{"type":"publish_refused","request_id":2,"reason":{"not_leader":{"node_id":"broker-b"}},"message":"not leader"}`],
    ['subscribe_offset', 'subscribe from offset 42 on shard 1, with a subscription_id', `{"type":"subscribe",${scope},"stream":"demo","subscription_id":9,"start":{"offset":42},"shard":1}`],
    ['subscribe_earliest', 'subscribe from earliest', `{"type":"subscribe",${scope},"stream":"demo","start":"earliest"}`],
    ['subscribed', 'subscribed with start_offset and live_offset', `{"type":"subscribed","subscription_id":9,"start_offset":42,"live_offset":50}`],
    ['subscribe_cursor_error', 'subscribe_cursor_error too_old', `{"type":"subscribe_cursor_error","reason":"too_old","requested":3,"available":10}`],
    ['event_stream_hello', 'event_stream_hello', `{"type":"event_stream_hello","subscription_id":9}`],
    ['event_offset', 'JSON event with an offset', `{"type":"event",${scope},"stream":"demo","payload":"d29ybGQ=","offset":42}`],
    ['event_batch_json', 'JSON event_batch with base_offset', `{"type":"event_batch",${scope},"stream":"demo","payloads":["YQ==","YmM="],"base_offset":41}`],
    ['cache_put_no_ttl', 'cache_put with request_id and a null ttl_ms (always written)', `{"type":"cache_put",${scope},"cache":"primary","key":"k","value":"dg==","request_id":4,"ttl_ms":null}`],
    ['cache_delete', 'cache_delete with request_id', `{"type":"cache_delete",${scope},"cache":"primary","key":"k","request_id":4}`],
    ['cache_value_miss', 'cache_value of a miss: value null, with request_id', `{"type":"cache_value",${scope},"cache":"primary","key":"k","value":null,"request_id":4}`],
    ['cache_ok', 'cache_ok', `{"type":"cache_ok","request_id":4}`],
    ['cache_watch_prefix', 'cache_watch of a prefix on shard 0 with retained', `{"type":"cache_watch",${scope},"cache":"primary","prefix":"user:","shard":0,"retained":true}`],
    ['cache_watch_resume', 'cache_watch of a key from offset 17', `{"type":"cache_watch",${scope},"cache":"primary","key":"k","from_offset":17}`],
    ['cache_watch_started', 'cache_watch_started (resnapshot always written) with retained_count', `{"type":"cache_watch_started","subscription_id":11,"resume_offset":20,"resnapshot":false,"retained_count":0}`],
    ['cache_event_put', 'cache_event of a put (expires_at_millis always written)', `{"type":"cache_event","key":"k","value":"dg==","offset":18,"expires_at_millis":0}`],
    ['cache_event_delete', 'cache_event of a delete: no value', `{"type":"cache_event","key":"k","offset":19,"expires_at_millis":0}`],
    ['cache_watch_lagged', 'cache_watch_lagged', `{"type":"cache_watch_lagged","resume_from":21}`],
    ['counter_add', 'counter_add of -5', `{"type":"counter_add",${scope},"cache":"primary","key":"hits","delta":-5,"request_id":6}`],
    ['counter_get', 'counter_get', `{"type":"counter_get",${scope},"cache":"primary","key":"hits","request_id":6}`],
    ['counter_value', 'counter_value -5', `{"type":"counter_value","value":-5,"request_id":6}`],
    ['counter_value_unwritten', 'counter_value of a counter never written: no value', `{"type":"counter_value","request_id":6}`],
    ['group_poll', 'group_poll (wait_ms always written)', `{"type":"group_poll",${groupScope},"max_records":10,"wait_ms":0,"request_id":7}`],
    ['group_records', 'group_records with one record (attempts always written)', `{"type":"group_records","records":[{"offset":5,"payload":"aGk=","attempts":1}],"request_id":7}`],
    ['group_ack', 'group_ack', `{"type":"group_ack",${groupScope},"offset":5,"request_id":8}`],
    ['group_nack', 'group_nack', `{"type":"group_nack",${groupScope},"offset":5,"request_id":8}`],
    ['group_dead_letters', 'group_dead_letters', `{"type":"group_dead_letters",${groupScope},"request_id":9}`],
    ['group_dead_letter_list', 'group_dead_letter_list', `{"type":"group_dead_letter_list","offsets":[3,5],"request_id":9}`],
    ['group_discard', 'group_discard', `{"type":"group_discard",${groupScope},"offset":3,"request_id":10}`],
    ['group_redrive', 'group_redrive', `{"type":"group_redrive",${groupScope},"offset":5,"request_id":10}`],
  ];
  for (const [name, about, text] of messages) add(name, about, json(text));

  // ---- negative vectors: refused, with a reason ----
  const hello = frame(0, Buffer.from('{"type":"ok"}'));
  add('bad_magic', 'negative: magic FLX2', frame(0, Buffer.from('{"type":"ok"}'), { magic: 0x464c5832 }));
  add('bad_version', 'negative: version 2', frame(0, Buffer.from('{"type":"ok"}'), { version: 2 }));
  add('bad_truncated_header', 'negative: the first 10 bytes of an ok frame', hello.subarray(0, 10));
  add('bad_preauth_oversize', 'negative: header alone, length 65,537 (one over the pre-auth limit)', frame(0, Buffer.alloc(0), { length: 65_537 }));
  add('bad_flags_unknown_bit', 'negative (flags refused): flag 0x0100, not in the v0.5.0 wire', frame(0x0101, new B().s16('t1').s16('default').s16('demo').records([]).get()));
  add('bad_flags_modifier_alone', 'negative (flags refused): 0x0008 without 0x0001', frame(0x0008, Buffer.from('{"type":"ok"}')));
  add('bad_flags_two_event_bases', 'negative (flags refused): 0x0002 and 0x0004 together', frame(0x0006, new B().u64(1).records([]).get()));
  add('bad_json_unknown_type', 'negative: JSON of an unknown message type', json('{"type":"frobnicate"}'));
  add('bad_json_duplicate_field', 'negative: JSON with tenant_id twice', json(`{"type":"subscribe",${scope},"tenant_id":"t2","stream":"demo"}`));
  add('bad_json_float_u64', 'negative: request_id 1.0 (a float where a u64 goes)', json('{"type":"publish_ok","request_id":1.0}'));
  add('bad_json_missing_field', 'negative: error without message', json('{"type":"error"}'));
  add('bad_json_base64', 'negative: publish with a payload that is not canonical base64', json(`{"type":"publish",${scope},"stream":"demo","payload":"aGVsbG9="}`));
  add('bad_json_trailing', 'negative: a second value after the object', json('{"type":"ok"} {}'));
  add('bad_publish_count', 'negative: publish batch declaring 1,000,000 records in 4 bytes', frame(0x0001, new B().s16('t1').s16('default').s16('demo').u32(1_000_000).u32(0).get()));
  add('bad_publish_trailing', 'negative: publish batch with one byte after the last record', frame(0x0001, new B().s16('t1').s16('default').s16('demo').records(['a']).u8(0).get()));
  add('bad_publish_ack_mode', 'negative: acked publish with ack_mode 0', frame(0x0009, new B().u64(8).u8(0).s16('t1').s16('default').s16('demo').records(['a']).get()));
  add('bad_publish_tenant_utf8', 'negative: tenant id bytes ff fe (not UTF-8)', frame(0x0001, new B().u16(2).raw(Buffer.from([0xff, 0xfe])).s16('default').s16('demo').records(['a']).get()));
  add('bad_ack_status', 'negative: publish ack with status 2', frame(0x0010, new B().u8(2).u64(7).u16(0).get()));
  add('bad_event_record_length', 'negative: shared event batch whose record length runs past the frame', frame(0x0004, new B().u32(1).u32(10).raw('abc').get()));
  return v;
}

export const vectorsDir = path.dirname(fileURLToPath(import.meta.url));

function readme(all: Record<string, Vector>): string {
  const rows = Object.entries(all)
    .map(([name, vec]) => `| \`${name}.hex\` | ${vec.about} |`)
    .join('\n');
  return `# Felix wire v1 vectors of our own

Byte-exact frames of docs/protocols/felix-wire-v1.md that the public vectors
(\`../shared/vectors/felix\`, from the Felix repository) do not cover: event batches (none are
public), the plain and empty-key publish batches, acks naming a forwarded owner, every JSON
message type beyond the public fifteen, and \`bad_\` frames the codec refuses. One lowercase hex
string per file, a whole frame (12-byte header and payload), with a trailing newline.

\`build.ts\` assembles each field by field from the document, without the codec
(\`node --import tsx test/vectors/felix/build.ts\` rewrites the files and this README);
\`test/protocols/felix/codec/golden-vectors.test.ts\` checks the files match it, that the codec
decodes every positive vector to the expected fields and encodes it back byte for byte, and that
it refuses every \`bad_\` one.

| file | what it is |
|---|---|
${rows}
`;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const all = vectors();
  for (const f of readdirSync(vectorsDir)) if (f.endsWith('.hex') && !(f.slice(0, -4) in all)) unlinkSync(path.join(vectorsDir, f));
  for (const [name, vec] of Object.entries(all)) writeFileSync(path.join(vectorsDir, `${name}.hex`), `${vec.bytes.toString('hex')}\n`);
  writeFileSync(path.join(vectorsDir, 'README.md'), readme(all));
}

export { readme };
