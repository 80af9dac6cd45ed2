import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { decodeBatch, encodeBatch, type CursusRecord } from '../../../src/protocols/cursus/codec/index.js';
import { cbv2ToV1Batch, decodeV1Batch, encodeV1Batch, v1BatchToCbv2, type V1Batch } from '../../../src/protocols/cursus/v1/index.js';
import { badReasons, notesExampleHex, vectors, vectorsDir } from '../../vectors/cursus-v1/build.js';

function file(name: string): Buffer {
  return Buffer.from(readFileSync(path.join(vectorsDir, `${name}.hex`), 'utf8').trim(), 'hex');
}

/** The body of a vector (its frame without the 4 length bytes). */
function body(name: string): Buffer {
  const f = file(name);
  assert.equal(f.readUInt32BE(0), f.length - 4, `${name}: the frame length is the body's`);
  return f.subarray(4);
}

function decoded(name: string): V1Batch {
  const r = decodeV1Batch(body(name));
  assert.ok(r.ok, r.ok ? '' : `${name}: ${r.reason}`);
  return r.value;
}

const positive = ['batch_publish_idempotent', 'batch_consume', 'batch_consume_empty', 'batch_control_marker'];

describe('Cursus v1 vectors', () => {
  it('the files are what build.ts assembles, and the notes example is batch_publish_idempotent', () => {
    const built = vectors();
    const files = readdirSync(vectorsDir).filter((f) => f.endsWith('.hex')).map((f) => f.slice(0, -4)).sort();
    assert.deepEqual(files, Object.keys(built).sort());
    for (const [name, bytes] of Object.entries(built)) assert.equal(file(name).toString('hex'), bytes.toString('hex'), name);
    assert.equal(file('batch_publish_idempotent').toString('hex'), notesExampleHex.replace(/\s+/g, ''));
    const readme = readFileSync(path.join(vectorsDir, 'README.md'), 'utf8');
    for (const name of files) assert.ok(readme.includes(`\`${name}.hex\``), `README lists ${name}`);
  });
});

describe('0xBA7C codec', () => {
  it('decodes the notes example field by field', () => {
    const b = decoded('batch_publish_idempotent');
    assert.equal(b.topic.toString(), 'orders');
    assert.equal(b.partition, 0);
    assert.equal(b.acks.toString(), '1');
    assert.equal(b.idempotent, true);
    assert.deepEqual([b.batchStart, b.batchEnd], [1n, 1n]);
    assert.equal(b.records.length, 1);
    const r = b.records[0]!;
    assert.deepEqual(
      [r.offset, r.seqNum, r.producerId.toString(), r.key.toString(), r.epoch, r.payload.toString(), r.eventType.length, r.schemaVersion, r.aggregateVersion, r.metadata.length],
      [0n, 1n, 'p1', 'k', 0n, 'hi', 0, 1, 0n, 0],
    );
  });

  it('re-encodes every positive vector byte for byte', () => {
    for (const name of positive) {
      const b = decoded(name);
      assert.equal(Buffer.concat(encodeV1Batch(b, b.records)).toString('hex'), body(name).toString('hex'), name);
    }
  });

  it('refuses the bad vectors with the words v1 uses', () => {
    for (const [name, reason] of Object.entries(badReasons)) {
      const r = decodeV1Batch(body(name));
      assert.deepEqual(r, { ok: false, reason }, name);
    }
  });

  it('refuses every truncation of a batch, with Go\'s EOF or unexpected EOF, and never throws', () => {
    const full = body('batch_consume');
    for (let n = 2; n < full.length; n++) {
      const r = decodeV1Batch(full.subarray(0, n));
      assert.equal(r.ok, false, `${n} bytes`);
      if (!r.ok) assert.match(r.reason, /^failed to read .*: (EOF|unexpected EOF)$/, `${n} bytes: ${r.reason}`);
    }
    assert.deepEqual(decodeV1Batch(full.subarray(0, 1)), { ok: false, reason: 'data too short' });
  });

  it('ignores bytes after the last record, as v1 does', () => {
    const r = decodeV1Batch(Buffer.concat([body('batch_consume'), Buffer.from('trailing')]));
    assert.ok(r.ok);
    assert.equal(r.value.records.length, 2);
  });
});

describe('0xBA7C to CBV2', () => {
  it('turns the notes example into the CBV2 batch a v2 PUBLISH handler takes', () => {
    const c = v1BatchToCbv2(decoded('batch_publish_idempotent'));
    assert.ok(c.ok, c.ok ? '' : c.line);
    const { value, bytes } = c.value;
    assert.deepEqual(
      { idempotent: value.idempotent, topic: value.topic, partition: value.partition, acks: value.acks, batchStart: value.batchStart, batchEnd: value.batchEnd },
      { idempotent: true, topic: 'orders', partition: 0, acks: '1', batchStart: 1, batchEnd: 1 },
    );
    assert.deepEqual(value.records, [{ topic: 'orders', partition: 0, offset: 0, payload: Buffer.from('hi'), producerId: 'p1', seqNum: 1, key: Buffer.from('k'), schemaVersion: 1 }]);
    const back = decodeBatch(bytes);
    assert.ok(back.ok, back.ok ? '' : back.reason);
    assert.deepEqual(back.value, value, 'the bytes are the CBV2 encoding of the value');
  });

  it('reads acks as v1 does: any case, empty means 1, anything else is invalid_acks', () => {
    const withAcks = (acks: string): ReturnType<typeof v1BatchToCbv2> => v1BatchToCbv2({ ...decoded('batch_consume_empty'), acks: Buffer.from(acks) });
    const all = withAcks('ALL');
    assert.ok(all.ok && all.value.value.acks === 'all');
    const empty = withAcks('');
    assert.ok(empty.ok && empty.value.value.acks === '1');
    assert.deepEqual(withAcks('2'), { ok: false, line: 'ERROR: invalid_acks value=2' });
  });

  it('refuses what CBV2 cannot carry as undecodable', () => {
    const big = v1BatchToCbv2({ ...decoded('batch_consume'), topic: Buffer.alloc(250, 0x61) });
    assert.equal(big.ok, false);
    if (!big.ok) assert.match(big.line, /^ERROR: batch_decode_failed reason="topic of 250 bytes/);
    const b = decoded('batch_consume');
    b.records[0]!.seqNum = 2n ** 60n;
    const seq = v1BatchToCbv2(b);
    assert.equal(seq.ok, false);
    if (!seq.ok) assert.match(seq.line, /seqNum 1152921504606846976 is beyond/);
  });
});

describe('CBV2 to 0xBA7C', () => {
  const rec = (r: Partial<CursusRecord> & { offset: number; payload: Buffer }): CursusRecord => ({ topic: 'orders', partition: 0, ...r });

  it('writes a v2 CONSUME batch as v1 does: the asked topic, acks 1, seq range from the records', () => {
    const chunks = encodeBatch({
      idempotent: false,
      topic: 'orders',
      partition: 0,
      acks: '1',
      batchStart: 0,
      batchEnd: 0,
      records: [
        rec({ offset: 7, payload: Buffer.from('hello'), producerId: 'p1', producerEpoch: 5, seqNum: 3, timestamp: 1_700_000_000_000 }),
        rec({ offset: 8, payload: Buffer.from('{"n":1}'), producerId: 'p1', producerEpoch: 5, seqNum: 4, key: Buffer.from('k'), eventType: 'Created', schemaVersion: 2, aggregateVersion: 1, metadata: '{}', eventId: 'e1' }),
      ],
    });
    const out = cbv2ToV1Batch(chunks, Buffer.from('orders'), 0);
    assert.ok(out.ok, out.ok ? '' : out.line);
    assert.equal(Buffer.concat(out.value.chunks).toString('hex'), body('batch_consume').toString('hex'));
    assert.equal(out.value.nextOffset, 9);
  });

  it('writes an empty batch, and a transaction marker with the payload v1 gives markers', () => {
    const empty = cbv2ToV1Batch(encodeBatch({ idempotent: false, topic: 'orders', partition: 2, acks: '1', batchStart: 0, batchEnd: 0, records: [] }), Buffer.from('orders'), 2);
    assert.ok(empty.ok);
    assert.equal(Buffer.concat(empty.value.chunks).toString('hex'), body('batch_consume_empty').toString('hex'));
    assert.equal(empty.value.nextOffset, null);
    const marker = rec({ offset: 9, payload: Buffer.alloc(0), producerId: 'txp', producerEpoch: 1, controlBatchType: 'transaction', controlBatchVersion: 2, controlKey: Buffer.from('00000000', 'hex') });
    const m = cbv2ToV1Batch(encodeBatch({ idempotent: false, topic: 'orders', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: [marker] }), Buffer.from('orders'), 0);
    assert.ok(m.ok);
    assert.equal(Buffer.concat(m.value.chunks).toString('hex'), body('batch_control_marker').toString('hex'));
  });

  it('fails as v1 fails to encode a key longer than a u16 length', () => {
    const chunks = encodeBatch({ idempotent: false, topic: 't', partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: [{ topic: 't', partition: 0, offset: 0, payload: Buffer.alloc(0), key: Buffer.alloc(70_000) }] });
    assert.deepEqual(cbv2ToV1Batch(chunks, Buffer.from('t'), 0), { ok: false, line: 'ERROR: command_failed reason="failed to encode batch: key too long: 70000 bytes"' });
  });
});
