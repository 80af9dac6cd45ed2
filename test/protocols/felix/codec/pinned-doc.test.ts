// docs/protocols/felix-wire-v1.md and the codec stay in step: every message type is in the
// message table (with its fields in wire order), every error text is listed, and the advertised
// flags and features are the codec's.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ErrorText, knownFlags, messageFields, messageTypes, singleNodeFeatures } from '../../../../src/protocols/felix/codec/index.js';

const doc = readFileSync(new URL('../../../../docs/protocols/felix-wire-v1.md', import.meta.url), 'utf8');

/** The message table's rows: type(s) -> the field names in order. */
function tableRows(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of doc.split('\n')) {
    const m = /^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \| [CB] \|([^|]*)\|/.exec(line);
    if (m === null) continue;
    const fields = m[2]!
      .replace(/\[[^\]]*\]/g, '')
      .split(',')
      .map((f) => f.trim().split(/[ ?=(:]/)[0]!)
      .filter((f) => f !== '');
    for (const t of m[1]!.matchAll(/`([a-z_]+)`/g)) rows.set(t[1]!, fields);
  }
  return rows;
}

describe('the pinned Felix document', () => {
  it('lists every message type with its fields in wire order', () => {
    const rows = tableRows();
    assert.deepEqual([...rows.keys()].sort(), [...messageTypes].sort());
    for (const type of messageTypes) assert.deepEqual(rows.get(type), messageFields[type].map((f) => f.wire), type);
  });

  it('lists every error text', () => {
    for (const text of Object.values(ErrorText)) assert.ok(doc.includes(`\`${text}\``), text);
  });

  it('states the flags and features Quartet advertises', () => {
    assert.ok(doc.includes(`| \`server_flags\` | ${knownFlags} (\`0x00ff\`)`));
    assert.ok(doc.includes(`| \`server_features\` | ${singleNodeFeatures} (\`0x03fc\`)`));
  });
});
