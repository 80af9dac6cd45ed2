import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  arr,
  decodeMessage,
  encodeMessage,
  f,
  list,
  message,
  parseVersions,
  struct,
} from '../../../../src/protocols/kafka/codec/schema.js';

const sample = message({
  name: 'Sample',
  apiKey: 1000,
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    f('a', 'int32', '0+'),
    f('b', 'string', '1+', { nullable: '1+', default: 'null' }),
    f('c', 'int64', '3+', { default: '-1' }),
    arr('d', 'int16', '0+', { nullable: '1+' }),
    list('e', '0+', [f('x', 'bool', '0+'), f('y', 'uuid', '2+')]),
    struct('t', '2+', [f('p', 'int32', '2+', { default: '-1' })], { tag: 4, tagged: '2+' }),
  ],
});

describe('schema interpreter', () => {
  it('parses version ranges', () => {
    assert.deepEqual(parseVersions('3+'), { min: 3, max: Infinity });
    assert.deepEqual(parseVersions('2-5'), { min: 2, max: 5 });
    assert.deepEqual(parseVersions('0'), { min: 0, max: 0 });
    assert.ok(parseVersions('none').min > parseVersions('none').max);
  });

  it('fills defaults for fields absent from a version and skips them on encode', () => {
    const bytes = encodeMessage(sample, 0, { a: 5, b: 'ignored at v0', c: 9, d: [1], e: [] }).toBuffer();
    assert.equal(bytes.toString('hex'), '00000005' + '00000001' + '0001' + '00000000');
    const r = decodeMessage(sample, 0, bytes);
    assert.ok(r.ok);
    assert.equal(r.value.b, null);
    assert.equal(r.value.c, -1);
    assert.deepEqual(r.value.t, { p: -1 });
  });

  it('writes tagged fields only when they differ from the default', () => {
    const plain = encodeMessage(sample, 2, { a: 1, d: null, e: [] }).toBuffer();
    assert.equal(plain.at(-1), 0, 'empty tagged section');
    const tagged = encodeMessage(sample, 2, { a: 1, d: null, e: [], t: { p: 7 } }).toBuffer();
    assert.equal(tagged.subarray(-8).toString('hex'), '0104050000000700');
    const r = decodeMessage(sample, 2, tagged);
    assert.ok(r.ok);
    assert.deepEqual(r.value.t, { p: 7 });
  });

  it('refuses null where the version does not allow it', () => {
    assert.throws(() => encodeMessage(sample, 0, { d: null }), /non-nullable/);
    const r = decodeMessage(sample, 0, Buffer.from('00000005ffffffff00000000', 'hex'));
    assert.equal(r.ok, false);
  });

  it('rejects versions outside the valid range', () => {
    assert.equal(decodeMessage(sample, 4, Buffer.alloc(0)).ok, false);
    assert.throws(() => encodeMessage(sample, 4, {}));
  });
});
