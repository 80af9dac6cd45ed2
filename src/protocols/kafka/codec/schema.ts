// A schema-driven codec for Kafka messages. Each API's request and response is transcribed from
// apache/kafka clients/src/main/resources/common/message/<Name>{Request,Response}.json into a
// compact table (messages/<api>.ts) built with the helpers below; one interpreter encodes and
// decodes any of them at any version:
//
// - "versions": a field is on the wire only in its version range; absent fields decode to their
//   default and are skipped when encoding.
// - "nullableVersions": null is allowed (and encoded as length -1 / compact 0) only there.
// - "flexibleVersions" (KIP-482): strings, bytes and arrays switch to compact (uvarint length+1)
//   encodings and every struct ends with a TAGGED_FIELDS section.
// - "tag"/"taggedVersions": the field lives in the tagged section, written only when it differs
//   from its default; unknown tags are skipped when decoding.
// - "records" fields stay raw byte views (RecordBatch bytes are never decoded here).
// - int64 fields are JS numbers (exact below 2^53: offsets, timestamps, producer ids).
//
// Field names are the schema's names camelCased (ThrottleTimeMs -> throttleTimeMs). TypeScript
// types for each message are inferred from the tables (Struct<F> for decoded values,
// StructInput<F> for encoder input, where every field is optional and falls back to its default).

import { Reader, emptyBuffer, zeroUuid } from './reader.js';
import { Writer } from './writer.js';
import type { FileSlice } from '../../../base/batch.js';

export type PrimType =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint16'
  | 'uint32'
  | 'float64'
  | 'string'
  | 'bytes'
  | 'records'
  | 'uuid';

export interface VersionRange {
  readonly min: number;
  /** Inclusive; Infinity for "N+". An empty range has min > max. */
  readonly max: number;
}

const noVersions: VersionRange = { min: 1, max: 0 };

/** Parses "0+", "3-5", "7" or "none". */
export function parseVersions(spec: string): VersionRange {
  if (spec === 'none') return noVersions;
  if (spec.endsWith('+')) return { min: Number(spec.slice(0, -1)), max: Infinity };
  const dash = spec.indexOf('-');
  if (dash > 0) return { min: Number(spec.slice(0, dash)), max: Number(spec.slice(dash + 1)) };
  const v = Number(spec);
  if (!Number.isInteger(v)) throw new Error(`bad version spec ${spec}`);
  return { min: v, max: v };
}

export function inRange(r: VersionRange, v: number): boolean {
  return v >= r.min && v <= r.max;
}

interface FieldCommon<N extends string, Nl extends boolean> {
  readonly name: N;
  readonly versions: VersionRange;
  readonly nullableVersions: VersionRange;
  /** Type-level marker: true when the field is nullable in some version. */
  readonly nullable: Nl;
  /** -1 when the field is not tagged. */
  readonly tag: number;
  readonly taggedVersions: VersionRange;
  /** "default" from the schema, as a string, or undefined. */
  readonly defaultSpec: string | number | boolean | null | undefined;
}

export interface PrimField<N extends string, T extends PrimType, Nl extends boolean> extends FieldCommon<N, Nl> {
  readonly kind: 'prim';
  readonly type: T;
}
export interface PrimArrayField<N extends string, T extends PrimType, Nl extends boolean> extends FieldCommon<N, Nl> {
  readonly kind: 'primArray';
  readonly type: T;
}
export interface StructArrayField<N extends string, F extends Fields, Nl extends boolean> extends FieldCommon<N, Nl> {
  readonly kind: 'structArray';
  readonly fields: F;
}
export interface StructField<N extends string, F extends Fields, Nl extends boolean> extends FieldCommon<N, Nl> {
  readonly kind: 'struct';
  readonly fields: F;
}

export type Field =
  | PrimField<string, PrimType, boolean>
  | PrimArrayField<string, PrimType, boolean>
  | StructArrayField<string, Fields, boolean>
  | StructField<string, Fields, boolean>;
export type Fields = readonly Field[];

// ---- type inference ----

export type PrimValue<T extends PrimType> = T extends 'bool'
  ? boolean
  : T extends 'string'
    ? string
    : T extends 'bytes' | 'records' | 'uuid'
      ? Buffer
      : number;

type Nullify<T, Nl extends boolean> = Nl extends true ? T | null : T;

export type FieldValue<F> =
  F extends PrimField<string, infer T, infer Nl>
    ? Nullify<PrimValue<T>, Nl>
    : F extends PrimArrayField<string, infer T, infer Nl>
      ? Nullify<PrimValue<T>[], Nl>
      : F extends StructArrayField<string, infer S, infer Nl>
        ? Nullify<Struct<S>[], Nl>
        : F extends StructField<string, infer S, infer Nl>
          ? Nullify<Struct<S>, Nl>
          : never;

export type FieldInput<F> =
  // A records section may be given as the list of batch views it consists of: the writer sends
  // them as separate chunks behind one length prefix, without joining them (Fetch responses);
  // a batch may also be a range of a segment file, sent with sendfile (file-replies.ts).
  F extends PrimField<string, 'records', infer Nl>
    ? Nullify<Buffer | readonly (Buffer | FileSlice)[], Nl>
    : F extends PrimField<string, infer T, infer Nl>
    ? Nullify<PrimValue<T>, Nl>
    : F extends PrimArrayField<string, infer T, infer Nl>
      ? Nullify<readonly PrimValue<T>[], Nl>
      : F extends StructArrayField<string, infer S, infer Nl>
        ? Nullify<readonly StructInput<S>[], Nl>
        : F extends StructField<string, infer S, infer Nl>
          ? Nullify<StructInput<S>, Nl>
          : never;

/** A decoded message or struct: every field present (defaults fill versions that lack it). */
export type Struct<F extends Fields> = { [E in F[number] as E['name']]: FieldValue<E> };
/** Encoder input: every field optional; missing fields take their schema default. */
export type StructInput<F extends Fields> = { [E in F[number] as E['name']]?: FieldInput<E> };

// ---- schema authoring helpers ----

export interface FieldOptions {
  /** "nullableVersions". */
  nullable?: string;
  /** "tag"; requires `tagged`. */
  tag?: number;
  /** "taggedVersions". */
  tagged?: string;
  /** "default" as written in the schema ("-1", "0x7fffffff", "null", "true", ...). */
  default?: string;
}

type IsNullable<O> = O extends { nullable: string } ? true : false;

function common<N extends string, O extends FieldOptions>(name: N, versions: string, opts: O | undefined) {
  const tagged = opts?.tagged !== undefined ? parseVersions(opts.tagged) : noVersions;
  if ((opts?.tag === undefined) !== (opts?.tagged === undefined)) {
    throw new Error(`field ${name}: tag and tagged go together`);
  }
  return {
    name,
    versions: parseVersions(versions),
    nullableVersions: opts?.nullable !== undefined ? parseVersions(opts.nullable) : noVersions,
    nullable: (opts?.nullable !== undefined) as IsNullable<O>,
    tag: opts?.tag ?? -1,
    taggedVersions: tagged,
    defaultSpec: opts?.default,
  };
}

/** A primitive field: `{ "name": N, "type": T, "versions": versions, ...opts }`. */
export function f<const N extends string, const T extends PrimType, const O extends FieldOptions = Record<never, never>>(
  name: N,
  type: T,
  versions: string,
  opts?: O,
): PrimField<N, T, IsNullable<O>> {
  return { kind: 'prim', type, ...common(name, versions, opts) };
}

/** An array of primitives: `"type": "[]T"`. */
export function arr<const N extends string, const T extends PrimType, const O extends FieldOptions = Record<never, never>>(
  name: N,
  type: T,
  versions: string,
  opts?: O,
): PrimArrayField<N, T, IsNullable<O>> {
  return { kind: 'primArray', type, ...common(name, versions, opts) };
}

/** An array of structs: `"type": "[]SomeStruct", "fields": [...]`. */
export function list<const N extends string, const F extends Fields, const O extends FieldOptions = Record<never, never>>(
  name: N,
  versions: string,
  fields: F,
  opts?: O,
): StructArrayField<N, F, IsNullable<O>> {
  return { kind: 'structArray', fields, ...common(name, versions, opts) };
}

/** A single struct: `"type": "SomeStruct", "fields": [...]`. */
export function struct<const N extends string, const F extends Fields, const O extends FieldOptions = Record<never, never>>(
  name: N,
  versions: string,
  fields: F,
  opts?: O,
): StructField<N, F, IsNullable<O>> {
  return { kind: 'struct', fields, ...common(name, versions, opts) };
}

export interface MessageSchema<F extends Fields = Fields> {
  readonly name: string;
  readonly apiKey: number;
  readonly validVersions: VersionRange;
  readonly flexibleVersions: VersionRange;
  readonly fields: F;
}

export function message<const F extends Fields>(def: {
  name: string;
  apiKey: number;
  validVersions: string;
  flexibleVersions: string;
  fields: F;
}): MessageSchema<F> {
  return {
    name: def.name,
    apiKey: def.apiKey,
    validVersions: parseVersions(def.validVersions),
    flexibleVersions: parseVersions(def.flexibleVersions),
    fields: def.fields,
  };
}

export type MessageOf<S> = S extends MessageSchema<infer F> ? Struct<F> : never;
export type MessageInputOf<S> = S extends MessageSchema<infer F> ? StructInput<F> : never;

// ---- defaults ----

function primDefault(field: Field, type: PrimType): unknown {
  const spec = field.defaultSpec;
  if (spec === 'null') return null;
  switch (type) {
    case 'bool':
      return spec === 'true' || spec === true;
    case 'string':
      return spec === undefined ? '' : String(spec);
    case 'bytes':
      return emptyBuffer;
    case 'records':
      return null;
    case 'uuid':
      return zeroUuid;
    default:
      return spec === undefined ? 0 : Number(spec);
  }
}

/** The value a field takes when absent from a version (or not given to the encoder). */
export function fieldDefault(field: Field): unknown {
  switch (field.kind) {
    case 'prim':
      return primDefault(field, field.type);
    case 'primArray':
    case 'structArray':
      return field.defaultSpec === 'null' ? null : [];
    case 'struct':
      return field.defaultSpec === 'null' ? null : structDefault(field.fields);
  }
}

export function structDefault(fields: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const fl of fields) out[fl.name] = fieldDefault(fl);
  return out;
}

function isDefault(field: Field, value: unknown): boolean {
  const d = fieldDefault(field);
  if (value === d) return true;
  if (value === null || d === null) return false;
  switch (field.kind) {
    case 'prim':
      if (Buffer.isBuffer(value) && Buffer.isBuffer(d)) return value.equals(d);
      return false;
    case 'primArray':
    case 'structArray':
      return Array.isArray(value) && value.length === 0;
    case 'struct': {
      const v = value as Record<string, unknown>;
      for (const sub of field.fields) {
        const sv = v[sub.name];
        if (sv !== undefined && !isDefault(sub, sv)) return false;
      }
      return true;
    }
  }
}

// ---- decoding ----

function minPrimBytes(type: PrimType, flexible: boolean): number {
  switch (type) {
    case 'bool':
    case 'int8':
      return 1;
    case 'int16':
    case 'uint16':
      return 2;
    case 'int32':
    case 'uint32':
      return 4;
    case 'int64':
    case 'float64':
      return 8;
    case 'uuid':
      return 16;
    case 'string':
      return flexible ? 1 : 2;
    case 'bytes':
    case 'records':
      return flexible ? 1 : 4;
  }
}

const minStructBytesCache = new WeakMap<Fields, Map<number, number>>();

/** The fewest bytes one struct of these fields can take at this version (bounds array counts). */
function minStructBytes(fields: Fields, version: number, flexible: boolean): number {
  let perVersion = minStructBytesCache.get(fields);
  if (perVersion === undefined) {
    perVersion = new Map();
    minStructBytesCache.set(fields, perVersion);
  }
  const key = flexible ? version : -1 - version;
  const cached = perVersion.get(key);
  if (cached !== undefined) return cached;
  let n = flexible ? 1 : 0;
  for (const fl of fields) {
    if (!inRange(fl.versions, version)) continue;
    if (flexible && fl.tag >= 0 && inRange(fl.taggedVersions, version)) continue;
    if (fl.kind === 'prim') n += minPrimBytes(fl.type, flexible);
    else if (fl.kind === 'struct') n += minStructBytes(fl.fields, version, flexible);
    else n += flexible ? 1 : 4;
  }
  perVersion.set(key, n);
  return n;
}

function readPrim(r: Reader, type: PrimType, nullable: boolean, flexible: boolean): unknown {
  switch (type) {
    case 'bool':
      return r.bool();
    case 'int8':
      return r.int8();
    case 'int16':
      return r.int16();
    case 'uint16':
      return r.uint16();
    case 'int32':
      return r.int32();
    case 'uint32':
      return r.uint32();
    case 'int64':
      return r.int64AsNumber();
    case 'float64':
      return r.float64();
    case 'uuid':
      return r.uuid();
    case 'string':
      if (flexible) return nullable ? r.compactNullableString() : r.compactString();
      return nullable ? r.nullableString() : r.string();
    case 'bytes':
    case 'records':
      if (flexible) return nullable ? r.compactNullableBytes() : r.compactBytes();
      return nullable ? r.nullableBytes() : r.bytes();
  }
}

function readField(r: Reader, field: Field, version: number, flexible: boolean): unknown {
  const nullable = inRange(field.nullableVersions, version);
  switch (field.kind) {
    case 'prim':
      return readPrim(r, field.type, nullable, flexible);
    case 'primArray': {
      const min = minPrimBytes(field.type, flexible);
      const n = flexible ? r.compactArrayLength(min) : r.arrayLength(min);
      if (n < 0) {
        if (!nullable) r.fail(`null array in non-nullable field ${field.name}`);
        return nullable ? null : [];
      }
      const out = new Array<unknown>(n);
      for (let i = 0; i < n; i++) out[i] = readPrim(r, field.type, false, flexible);
      return out;
    }
    case 'structArray': {
      const min = minStructBytes(field.fields, version, flexible);
      const n = flexible ? r.compactArrayLength(min) : r.arrayLength(min);
      if (n < 0) {
        if (!nullable) r.fail(`null array in non-nullable field ${field.name}`);
        return nullable ? null : [];
      }
      const out = new Array<unknown>(n);
      for (let i = 0; i < n && r.error === null; i++) out[i] = readStruct(r, field.fields, version, flexible);
      if (r.error !== null) out.length = 0;
      return out;
    }
    case 'struct': {
      if (nullable) {
        // Nullable structs carry a presence byte (-1 null, 1 present).
        const present = r.int8();
        if (present < 0) return null;
      }
      return readStruct(r, field.fields, version, flexible);
    }
  }
}

/** Decodes one struct of `fields` at `version` from the reader. */
export function readStruct(r: Reader, fields: Fields, version: number, flexible: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let hasTagged = false;
  for (const fl of fields) {
    if (!inRange(fl.versions, version)) {
      out[fl.name] = fieldDefault(fl);
      continue;
    }
    if (flexible && fl.tag >= 0 && inRange(fl.taggedVersions, version)) {
      out[fl.name] = fieldDefault(fl);
      hasTagged = true;
      continue;
    }
    out[fl.name] = readField(r, fl, version, flexible);
  }
  if (flexible) {
    if (hasTagged) {
      r.taggedFields((tag, sub) => {
        for (const fl of fields) {
          if (fl.tag === tag && inRange(fl.versions, version) && inRange(fl.taggedVersions, version)) {
            out[fl.name] = readField(sub, fl, version, true);
            return;
          }
        }
      });
    } else {
      r.taggedFields();
    }
  }
  return out;
}

export type DecodeResult<T> = { ok: true; value: T; trailingBytes: number } | { ok: false; reason: string };

/**
 * Decodes a message body at `version`. Trailing bytes after the last field are reported, not
 * rejected (Kafka brokers ignore them too).
 */
export function decodeMessage<F extends Fields>(
  schema: MessageSchema<F>,
  version: number,
  buf: Buffer,
  offset = 0,
): DecodeResult<Struct<F>> {
  if (!inRange(schema.validVersions, version)) {
    return { ok: false, reason: `${schema.name} v${version} is not supported` };
  }
  const r = new Reader(buf, offset);
  const value = readStruct(r, schema.fields, version, inRange(schema.flexibleVersions, version));
  if (r.error !== null) return { ok: false, reason: `${schema.name} v${version}: ${r.error}` };
  return { ok: true, value: value as Struct<F>, trailingBytes: r.remaining };
}

// ---- encoding ----

function writePrim(w: Writer, type: PrimType, value: unknown, nullable: boolean, flexible: boolean, name: string): void {
  switch (type) {
    case 'bool':
      w.bool(value as boolean);
      return;
    case 'int8':
      w.int8(value as number);
      return;
    case 'int16':
      w.int16(value as number);
      return;
    case 'uint16':
      w.uint16(value as number);
      return;
    case 'int32':
      w.int32(value as number);
      return;
    case 'uint32':
      w.uint32(value as number);
      return;
    case 'int64':
      w.int64(value as number | bigint);
      return;
    case 'float64':
      w.float64(value as number);
      return;
    case 'uuid':
      w.uuid(value as Buffer);
      return;
    case 'string': {
      const s = value as string | null;
      if (s === null && !nullable) throw new Error(`null in non-nullable string field ${name}`);
      if (flexible) w.compactNullableString(s);
      else w.nullableString(s);
      return;
    }
    case 'records':
    case 'bytes': {
      if (Array.isArray(value)) {
        // Only records inputs are typed to allow a chunk list (FieldInput).
        w.bytesChunks(value as readonly (Buffer | FileSlice)[], flexible);
        return;
      }
      const b = value as Buffer | null;
      if (b === null && !nullable) throw new Error(`null in non-nullable bytes field ${name}`);
      if (flexible) w.compactNullableBytes(b);
      else w.nullableBytes(b);
      return;
    }
  }
}

function writeArrayLength(w: Writer, n: number, flexible: boolean): void {
  if (flexible) w.uvarint(n + 1);
  else w.int32(n);
}

function writeField(w: Writer, field: Field, value: unknown, version: number, flexible: boolean): void {
  const nullable = inRange(field.nullableVersions, version);
  switch (field.kind) {
    case 'prim':
      writePrim(w, field.type, value, nullable, flexible, field.name);
      return;
    case 'primArray':
    case 'structArray': {
      if (value === null) {
        if (!nullable) throw new Error(`null in non-nullable array field ${field.name} at v${version}`);
        if (flexible) w.uvarint(0);
        else w.int32(-1);
        return;
      }
      const items = value as readonly unknown[];
      writeArrayLength(w, items.length, flexible);
      if (field.kind === 'primArray') {
        for (const item of items) writePrim(w, field.type, item, false, flexible, field.name);
      } else {
        for (const item of items) writeStruct(w, field.fields, item as Record<string, unknown>, version, flexible);
      }
      return;
    }
    case 'struct': {
      if (nullable) {
        if (value === null) {
          w.int8(-1);
          return;
        }
        w.int8(1);
      } else if (value === null) {
        throw new Error(`null in non-nullable struct field ${field.name}`);
      }
      writeStruct(w, field.fields, value as Record<string, unknown>, version, flexible);
      return;
    }
  }
}

/** Encodes one struct of `fields` at `version`; missing values take their defaults. */
export function writeStruct(
  w: Writer,
  fields: Fields,
  value: Record<string, unknown> | undefined,
  version: number,
  flexible: boolean,
): void {
  let tagged: Array<{ tag: number; body: Writer }> | null = null;
  for (const fl of fields) {
    if (!inRange(fl.versions, version)) continue;
    const given = value?.[fl.name];
    const v = given === undefined ? fieldDefault(fl) : given;
    if (flexible && fl.tag >= 0 && inRange(fl.taggedVersions, version)) {
      if (isDefault(fl, v)) continue;
      const body = new Writer(256);
      writeField(body, fl, v, version, true);
      (tagged ??= []).push({ tag: fl.tag, body });
      continue;
    }
    writeField(w, fl, v, version, flexible);
  }
  if (flexible) {
    if (tagged === null) {
      w.uvarint(0);
    } else {
      tagged.sort((a, b) => a.tag - b.tag);
      w.uvarint(tagged.length);
      for (const t of tagged) {
        w.uvarint(t.tag);
        w.uvarint(t.body.length);
        w.append(t.body);
      }
    }
  }
}

/** Encodes a message body at `version` into `w`. Throws on a programmer error (bad version, null). */
export function encodeMessage<F extends Fields>(
  schema: MessageSchema<F>,
  version: number,
  value: StructInput<F>,
  w: Writer = new Writer(),
): Writer {
  if (!inRange(schema.validVersions, version)) throw new Error(`${schema.name} v${version} is not supported`);
  writeStruct(w, schema.fields, value as Record<string, unknown>, version, inRange(schema.flexibleVersions, version));
  return w;
}
