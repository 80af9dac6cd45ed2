// CRQ2, the command payload of a request frame (docs/protocols/cursus-wire-v2.md §6):
//
//   magic u32 'CRQ2' | schema_version u16 = 2
//   positional_count u16 (<= 64)  | positional string × count
//   field_count u16 (<= 256)      | (key string, value bytes) × count
//
// Keys: 1-64 bytes, [a-z_][a-zA-Z0-9_]*. The encoder writes keys in ascending byte order (one
// request, one encoding); the decoder takes any order and rejects a key given twice. Values are
// views of the payload.

import type { Decoded } from './frame.js';
import { payloadBytesMax } from './frame.js';
import { Reader, Writer, checkKey, keyBytesMax } from './primitives.js';

export const crq2Magic = 0x43525132;
export const crq2SchemaVersion = 2;
export const crq2PositionalMax = 64;
export const crq2FieldsMax = 256;

export interface CommandPayload {
  positional: string[];
  /** Field values by key, in the order they were read (or are to be written, once sorted). */
  fields: Map<string, Buffer>;
}

/** Byte-wise ascending order of keys (the keys are ASCII, so string order is byte order). */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Encodes a CRQ2 payload; string values are written as UTF-8. Throws on a bad key (a programmer error). */
export function encodeCommandPayload(fields: Readonly<Record<string, string | Buffer>> | ReadonlyMap<string, string | Buffer>, positional: readonly string[] = []): Buffer[] {
  const entries = fields instanceof Map ? [...fields.entries()] : Object.entries(fields);
  entries.sort((a, b) => compareKeys(a[0], b[0]));
  if (positional.length > crq2PositionalMax || entries.length > crq2FieldsMax) throw new RangeError('too many CRQ2 arguments');
  const w = new Writer();
  w.uint32(crq2Magic).uint16(crq2SchemaVersion).uint16(positional.length);
  for (const p of positional) w.string(p);
  w.uint16(entries.length);
  for (const [key, value] of entries) {
    const bad = checkKey(key);
    if (bad !== null) throw new Error(bad);
    w.string(key).bytes(typeof value === 'string' ? Buffer.from(value, 'utf8') : value);
  }
  return w.toChunks();
}

export function isCommandPayload(p: Buffer): boolean {
  return p.length >= 4 && p.readUInt32BE(0) === crq2Magic;
}

export function decodeCommandPayload(p: Buffer): Decoded<CommandPayload> {
  const r = new Reader(p);
  const magic = r.uint32();
  if (r.error === null && magic !== crq2Magic) return { ok: false, reason: `not a CRQ2 payload (magic 0x${magic.toString(16).padStart(8, '0')})` };
  const version = r.uint16();
  if (r.error === null && version !== crq2SchemaVersion) return { ok: false, reason: `CRQ2 schema version ${version} (want 2)` };
  const positionalCount = r.uint16();
  if (positionalCount > crq2PositionalMax) return { ok: false, reason: `${positionalCount} positional strings (at most ${crq2PositionalMax})` };
  const positional: string[] = [];
  for (let i = 0; i < positionalCount && r.error === null; i++) positional.push(r.string('positional string', payloadBytesMax));
  const fieldCount = r.uint16();
  if (fieldCount > crq2FieldsMax) return { ok: false, reason: `${fieldCount} fields (at most ${crq2FieldsMax})` };
  const fields = new Map<string, Buffer>();
  for (let i = 0; i < fieldCount && r.error === null; i++) {
    const key = r.string('field name', keyBytesMax);
    const value = r.bytes('field value', payloadBytesMax);
    if (r.error !== null) break;
    const bad = checkKey(key);
    if (bad !== null) return { ok: false, reason: bad };
    if (fields.has(key)) return { ok: false, reason: `field ${key} given twice` };
    fields.set(key, value);
  }
  const done = r.done();
  if (done !== null) return { ok: false, reason: `CRQ2: ${done}` };
  return { ok: true, value: { positional, fields } };
}

/** A field's value as UTF-8 text, or undefined when absent. */
export function textField(p: CommandPayload, key: string): string | undefined {
  const v = p.fields.get(key);
  return v === undefined ? undefined : v.toString('utf8');
}
