// CRQ2, OK lines, errors, negotiation and the command table, and their agreement with the pinned
// document's tables (docs/protocols/cursus-wire-v2.md §5 and §8.1).

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import {
  classifyError,
  commandSpecs,
  cursusError,
  cursusErrorRegistry,
  decodeCommandPayload,
  decodeErrorPayload,
  decodeOkLine,
  encodeCommandPayload,
  encodeErrorPayload,
  encodeOkLine,
  negotiate,
  parseLine,
} from '../../../../src/protocols/cursus/codec/index.js';

const doc = readFileSync(fileURLToPath(new URL('../../../../docs/protocols/cursus-wire-v2.md', import.meta.url)), 'utf8');

/** Rows of the markdown table that follows `heading`. */
function tableRows(heading: string): string[][] {
  const start = doc.indexOf(heading);
  assert.ok(start >= 0, heading);
  const lines = doc.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

describe('the document and the codec agree', () => {
  it('on every command ID, its fields and its reply shape', () => {
    const rows = tableRows('## 5. Command IDs').filter((r) => r[1] !== '(reserved)');
    assert.deepEqual(rows.map((r) => [Number(r[0]), r[1]]), commandSpecs.map((c) => [c.id, c.name]));
    for (const [row, spec] of rows.map((r, i) => [r, commandSpecs[i]!] as const)) {
      const keys = [...row[2]!.matchAll(/`([a-zA-Z_]+)(\*?)`/g)];
      if (spec.internal === true || spec.reply === 'negotiation') continue;
      assert.deepEqual(keys.filter((k) => k[2] === '*').map((k) => k[1]), [...spec.required], spec.name);
      assert.deepEqual(keys.filter((k) => k[2] === '').map((k) => k[1]), [...spec.optional], spec.name);
      assert.ok(row[3]!.startsWith(spec.reply), `${spec.name}: reply ${row[3]} is ${spec.reply}`);
    }
  });

  it('on the error registry', () => {
    const rows = tableRows('### 8.1 Error registry');
    const fromDoc = Object.fromEntries(rows.map((r) => [r[0]!.replace(/`/g, ''), { class: r[1], retryable: r[2] === 'true' }]));
    assert.deepEqual(fromDoc, cursusErrorRegistry);
  });

  // The reference copy of the spec sits beside the repository clone (../shared/specs), when it does.
  const specPath = fileURLToPath(new URL('../../../../../shared/specs/cursus-wire-v2.md', import.meta.url));
  it('has every error code the spec names, in its ERROR lines and its error table', { skip: !existsSync(specPath) && 'no ../shared/specs beside the clone' }, () => {
    const spec = readFileSync(specPath, 'utf8');
    const codes = new Set([...spec.matchAll(/ERROR: ([A-Za-z_]+)/g)].map((m) => m[1]!));
    // Prose, not codes: "a new static ERROR: emission", "another ERROR: response".
    codes.delete('emission');
    codes.delete('response');
    const table = spec.slice(spec.indexOf('Error\tCause\tClient Action'), spec.indexOf('Leader Redirect'));
    for (const line of table.split('\n').slice(1)) if (/^[A-Za-z_]+/.test(line)) codes.add(/^[A-Za-z_]+/.exec(line)![0]);
    assert.ok(codes.size > 50);
    assert.deepEqual([...codes].filter((c) => !(c in cursusErrorRegistry)), []);
  });
});

describe('CRQ2', () => {
  it('round-trips any fields, keys sorted, values as bytes', () => {
    const key = fc.stringMatching(/^[a-z_][a-zA-Z0-9_]{0,20}$/);
    fc.assert(
      fc.property(fc.dictionary(key, fc.uint8Array({ maxLength: 40 })), fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }), (dict, positional) => {
        const fields = Object.fromEntries(Object.entries(dict).map(([k, v]) => [k, Buffer.from(v)]));
        const bytes = Buffer.concat(encodeCommandPayload(fields, positional));
        const d = decodeCommandPayload(bytes);
        assert.ok(d.ok, d.ok ? '' : d.reason);
        assert.deepEqual([...d.value.fields.keys()], Object.keys(fields).sort());
        for (const [k, v] of d.value.fields) assert.deepEqual(v, fields[k]);
        assert.deepEqual(d.value.positional, positional);
      }),
    );
  });

  it('rejects every truncation of a valid payload', () => {
    const bytes = Buffer.concat(encodeCommandPayload({ topic: 'orders', message: 'a b=c', partition: '0' }, ['x']));
    for (let n = 0; n < bytes.length; n++) assert.equal(decodeCommandPayload(bytes.subarray(0, n)).ok, false, `${n} bytes`);
  });

  it('rejects a field count over the limit before reading fields', () => {
    const b = Buffer.from('435251320002000001010000', 'hex');
    assert.match(decodeCommandPayload(b).ok ? '' : (decodeCommandPayload(b) as { reason: string }).reason, /257 fields/);
  });
});

describe('OK lines', () => {
  it('round-trips any values, quoting only what must be', () => {
    const key = fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/);
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(key, fc.string({ maxLength: 20 })), { selector: (t) => t[0], maxLength: 6 }), (fields) => {
        const line = encodeOkLine(fields);
        const back = decodeOkLine(line);
        assert.ok(back.ok, back.ok ? '' : back.reason);
        assert.deepEqual(back.value, fields);
      }),
    );
    assert.equal(encodeOkLine([['a', 'x y'], ['b', '"q'], ['c', 'é'], ['d', '']]).toString(), 'OK a="x y" b="\\"q" c="é" d=');
  });

  it('rejects malformed lines', () => {
    for (const bad of ['NOPE', 'OK  a=1', 'OK a', 'OK A=1', 'OK a=1 a=2', 'OK a="x', 'OKa=1']) assert.equal(parseLine(bad, 'OK').ok, false, bad);
  });
});

describe('errors', () => {
  it('classifies codes outside the registry as Cursus v1 does', () => {
    assert.deepEqual(classifyError('invalid_thing'), { class: 'validation', retryable: false });
    assert.deepEqual(classifyError('widget_not_found'), { class: 'not_found', retryable: false });
    assert.deepEqual(classifyError('not_authorized_x'), { class: 'authorization', retryable: false });
    assert.deepEqual(classifyError('something_else'), { class: 'internal', retryable: false });
    assert.deepEqual(classifyError('NOT_LEADER'), { class: 'routing', retryable: true });
  });

  it('round-trips and rejects every truncation', () => {
    const bytes = encodeErrorPayload(cursusError('GEN_MISMATCH', [['current', '4'], ['requested', '3'], ['group', 'g'], ['member', 'm-1']], 'stale generation'));
    const d = decodeErrorPayload(bytes);
    assert.ok(d.ok);
    assert.deepEqual([d.value.class, d.value.retryable, d.value.message], ['fencing', false, 'stale generation']);
    for (let n = 0; n < bytes.length; n++) assert.equal(decodeErrorPayload(bytes.subarray(0, n)).ok, false, `${n} bytes`);
  });
});

describe('negotiate', () => {
  it('picks the first supported compression, skipping unknown ids', () => {
    assert.deepEqual(negotiate({ minimumVersion: 1, maximumVersion: 3, compressions: [9, 2, 1] }), { ok: true, value: { version: 2, compression: 2 } });
    assert.deepEqual(negotiate({ minimumVersion: 2, maximumVersion: 2, compressions: [3] }, [0, 1]), { ok: false, code: 'unsupported_compression', fields: [['requested', '3']] });
    const r = negotiate({ minimumVersion: 3, maximumVersion: 4, compressions: [0] });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.code, 'UNSUPPORTED_PROTOCOL_VERSION');
  });
});
