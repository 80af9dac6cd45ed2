// fast-check arbitraries derived from the message schema tables: a random message valid at a
// given version (fields absent from the version hold their defaults, so decode(encode(x)) == x).
import fc from 'fast-check';
import {
  fieldDefault,
  inRange,
  type Field,
  type Fields,
  type PrimType,
} from '../../../../src/protocols/kafka/codec/schema.js';

function primArb(type: PrimType): fc.Arbitrary<unknown> {
  switch (type) {
    case 'bool':
      return fc.boolean();
    case 'int8':
      return fc.integer({ min: -128, max: 127 });
    case 'int16':
      return fc.integer({ min: -32768, max: 32767 });
    case 'uint16':
      return fc.integer({ min: 0, max: 65535 });
    case 'int32':
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case 'uint32':
      return fc.integer({ min: 0, max: 2 ** 32 - 1 });
    case 'int64':
      return fc.maxSafeInteger();
    case 'float64':
      return fc.double({ noNaN: true });
    case 'string':
      return fc.string({ maxLength: 12 });
    case 'bytes':
    case 'records':
      return fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b));
    case 'uuid':
      return fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b));
  }
}

function fieldArb(field: Field, version: number): fc.Arbitrary<unknown> {
  if (!inRange(field.versions, version)) return fc.constant(fieldDefault(field));
  let arb: fc.Arbitrary<unknown>;
  switch (field.kind) {
    case 'prim':
      arb = primArb(field.type);
      break;
    case 'primArray':
      arb = fc.array(primArb(field.type), { maxLength: 3 });
      break;
    case 'structArray':
      arb = fc.array(structArb(field.fields, version), { maxLength: 2 });
      break;
    case 'struct':
      arb = structArb(field.fields, version);
      break;
  }
  if (inRange(field.nullableVersions, version)) return fc.option(arb, { nil: null });
  return arb;
}

export function structArb(fields: Fields, version: number): fc.Arbitrary<Record<string, unknown>> {
  const rec: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of fields) rec[f.name] = fieldArb(f, version);
  return fc.record(rec).map((o) => ({ ...o })) as fc.Arbitrary<Record<string, unknown>>;
}
