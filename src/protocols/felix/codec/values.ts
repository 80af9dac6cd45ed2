// The field types of Felix JSON messages (docs/protocols/felix-wire-v1.md §4.2): how each reads
// from a parsed JSON value and how it is written. Integers follow their Rust width: u16 and u32
// are numbers, u64 and i64 are bigints (a producer id is 64 random bits); a float, a negative
// unsigned or a value out of range is refused. Byte fields are standard base64 with padding and
// canonical trailing bits, as the reference's base64 STANDARD engine requires.

import { JsonNumber, jsonKind, jsonString, type JsonValue } from './json.js';
import type { Decoded } from './frame.js';

export interface FieldType<T> {
  /** Reads a present, non-null value; `what` names the field in the reason. */
  read(v: JsonValue, what: string): Decoded<T>;
  write(v: T): string;
}

function wrong<T>(what: string, v: JsonValue, want: string): Decoded<T> {
  return { ok: false, reason: `${what}: invalid type: ${jsonKind(v)}, expected ${want}` };
}

function integerType(name: string, min: bigint, max: bigint): FieldType<bigint> {
  return {
    read(v, what) {
      if (!(v instanceof JsonNumber) || !v.integer) return wrong(what, v, name);
      const n = BigInt(v.text);
      if (n < min || n > max) return { ok: false, reason: `${what}: ${v.text} is out of range for ${name}` };
      return { ok: true, value: n };
    },
    write: (v) => v.toString(),
  };
}

function smallIntegerType(name: string, max: number): FieldType<number> {
  const wide = integerType(name, 0n, BigInt(max));
  return {
    read(v, what) {
      const r = wide.read(v, what);
      return r.ok ? { ok: true, value: Number(r.value) } : r;
    },
    write: (v) => String(v),
  };
}

export const u16: FieldType<number> = smallIntegerType('u16', 0xffff);
export const u32: FieldType<number> = smallIntegerType('u32', 0xffff_ffff);
export const u64: FieldType<bigint> = integerType('u64', 0n, 0xffff_ffff_ffff_ffffn);
export const i64: FieldType<bigint> = integerType('i64', -(1n << 63n), (1n << 63n) - 1n);

export const str: FieldType<string> = {
  read: (v, what) => (typeof v === 'string' ? { ok: true, value: v } : wrong(what, v, 'a string')),
  write: jsonString,
};

export const bool: FieldType<boolean> = {
  read: (v, what) => (typeof v === 'boolean' ? { ok: true, value: v } : wrong(what, v, 'a boolean')),
  write: (v) => (v ? 'true' : 'false'),
};

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict standard base64: the alphabet, padding, and zero trailing bits. */
export function decodeBase64(s: string): Buffer | null {
  if (!base64Pattern.test(s)) return null;
  const b = Buffer.from(s, 'base64');
  return b.toString('base64') === s ? b : null;
}

export const bytes: FieldType<Buffer> = {
  read(v, what) {
    if (typeof v !== 'string') return wrong(what, v, 'a base64 string');
    const b = decodeBase64(v);
    return b === null ? { ok: false, reason: `${what}: invalid base64` } : { ok: true, value: b };
  },
  write: (v) => `"${v.toString('base64')}"`,
};

/** An array of one field type. */
export function listOf<T>(item: FieldType<T>): FieldType<T[]> {
  return {
    read(v, what) {
      if (!Array.isArray(v)) return wrong(what, v, 'an array');
      const out: T[] = [];
      for (let i = 0; i < v.length; i++) {
        const r = item.read(v[i]!, `${what}[${i}]`);
        if (!r.ok) return r;
        out.push(r.value);
      }
      return { ok: true, value: out };
    },
    write: (v) => `[${v.map((x) => item.write(x)).join(',')}]`,
  };
}

/** A unit-variant enum: one of the given strings. */
export function oneOf<T extends string>(values: readonly T[]): FieldType<T> {
  return {
    read(v, what) {
      if (typeof v !== 'string') return wrong(what, v, `one of ${values.join(', ')}`);
      return (values as readonly string[]).includes(v) ? { ok: true, value: v as T } : { ok: false, reason: `${what}: unknown variant ${JSON.stringify(v)}, expected one of ${values.join(', ')}` };
    },
    write: jsonString,
  };
}

/** How a field is present on the wire (docs §4.2). */
export type Presence =
  /** Always written; refused when absent or null. */
  | 'required'
  /** Written only when set; absent or null reads as unset. */
  | 'optional'
  /** Always written, `null` when unset; absent or null reads as null. */
  | 'nullable'
  /** Always written; absent reads as the default, null is refused. */
  | 'defaulted'
  /** Written only when not the default; absent reads as the default. */
  | 'omitDefault';

export interface FieldSpec {
  /** The TypeScript property; the wire name is its snake_case. */
  prop: string;
  wire: string;
  type: FieldType<unknown>;
  presence: Presence;
  /** The default of 'defaulted' and 'omitDefault' fields. */
  fallback?: unknown;
}

/** camelCase to snake_case: tenantId -> tenant_id. */
export function snakeCase(prop: string): string {
  return prop.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A field of a struct: reads, writes and presence in one place. */
export function field<T>(prop: string, type: FieldType<T>, presence: Presence = 'required', fallback?: T): FieldSpec {
  return { prop, wire: snakeCase(prop), type: type as FieldType<unknown>, presence, fallback };
}

/** Reads a struct's fields from a JSON object into `out`; unknown keys are ignored (serde). */
export function readFields(obj: Map<string, JsonValue>, fields: readonly FieldSpec[], out: Record<string, unknown>, where: string): string | null {
  for (const f of fields) {
    const v = obj.get(f.wire);
    const what = `${where}.${f.wire}`;
    if (v === undefined || v === null) {
      switch (f.presence) {
        case 'required':
          return v === undefined ? `${what}: missing field` : `${what}: invalid type: null`;
        case 'optional':
          continue;
        case 'nullable':
          out[f.prop] = null;
          continue;
        case 'defaulted':
          if (v === null) return `${what}: invalid type: null`;
          out[f.prop] = f.fallback;
          continue;
        case 'omitDefault':
          if (v === null) return `${what}: invalid type: null`;
          out[f.prop] = f.fallback;
          continue;
      }
    }
    const r = f.type.read(v, what);
    if (!r.ok) return r.reason;
    out[f.prop] = r.value;
  }
  return null;
}

/** Writes a struct's fields (each preceded by a comma) in declaration order. */
export function writeFields(value: Record<string, unknown>, fields: readonly FieldSpec[], leadingComma: boolean): string {
  let s = '';
  let first = !leadingComma;
  for (const f of fields) {
    const v = value[f.prop];
    let text: string;
    if (v === undefined || v === null) {
      if (f.presence === 'optional' || f.presence === 'omitDefault') continue;
      if (f.presence === 'nullable') text = 'null';
      else if (f.presence === 'defaulted') text = f.type.write(f.fallback);
      else throw new TypeError(`${f.wire} is required`);
    } else {
      if (f.presence === 'omitDefault' && v === f.fallback) continue;
      text = f.type.write(v);
    }
    s += `${first ? '' : ','}"${f.wire}":${text}`;
    first = false;
  }
  return s;
}

/** A struct (an object with fixed fields) as a field type. */
export function struct<T>(name: string, fields: readonly FieldSpec[]): FieldType<T> {
  return {
    read(v, what) {
      if (!(v instanceof Map)) return wrong(what, v, `struct ${name}`);
      const out: Record<string, unknown> = {};
      const problem = readFields(v, fields, out, what);
      return problem === null ? { ok: true, value: out as T } : { ok: false, reason: problem };
    },
    write: (v) => `{${writeFields(v as Record<string, unknown>, fields, false)}}`,
  };
}
