import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writer, joinChunks } from '../../../../src/protocols/kafka/codec/writer.js';

describe('Writer', () => {
  it('appends large byte fields as their own chunks without copying', () => {
    const big = Buffer.alloc(4096, 7);
    const w = new Writer();
    w.int32(1).bytes(big).int16(2);
    const chunks = w.toChunks();
    assert.ok(chunks.includes(big), 'the big buffer is a chunk of its own');
    assert.equal(w.length, 4 + 4 + 4096 + 2);
    const all = joinChunks(chunks);
    assert.equal(all.readInt32BE(0), 1);
    assert.equal(all.readInt32BE(4), 4096);
    assert.equal(all.readInt16BE(8 + 4096), 2);
  });

  it('grows its scratch buffer across many small writes', () => {
    const w = new Writer(16);
    for (let i = 0; i < 1000; i++) w.int32(i);
    const b = w.toBuffer();
    assert.equal(b.length, 4000);
    for (let i = 0; i < 1000; i++) assert.equal(b.readInt32BE(i * 4), i);
  });

  it('prepends a size prefix without moving the body', () => {
    const w = new Writer();
    w.string('abc');
    const chunks = w.sizePrefixed();
    assert.deepEqual(joinChunks(chunks), Buffer.from('00000005000361626300'.slice(0, 18), 'hex'));
  });

  it('encodes compact strings as length+1 and null as 0', () => {
    const w = new Writer();
    w.compactString('').compactNullableString(null).compactString('hi');
    assert.deepEqual(w.toBuffer(), Buffer.from([1, 0, 3, 0x68, 0x69]));
  });

  it('rejects values outside the uvarint range', () => {
    assert.throws(() => new Writer().uvarint(-1));
    assert.throws(() => new Writer().uvarint(2 ** 32));
  });
});
