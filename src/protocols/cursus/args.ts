// Reading a request's CRQ2 fields with the errors Cursus gives for them: a missing required field
// is `missing_<key> command=<COMMAND>`, a value that does not parse is `invalid_<key>
// command=<COMMAND>` (spec: "ERROR: missing_topic command=LIST_OFFSETS", "ERROR:
// invalid_partition command=LIST_OFFSETS"). Text values are UTF-8; integers are decimal.

import { CursusFailure, type CursusRequest } from './handler.js';

const decimal = /^-?(0|[1-9][0-9]*)$/;

function raw(req: CursusRequest, key: string): Buffer | undefined {
  return req.payload?.fields.get(key);
}

function invalid(req: CursusRequest, key: string, reason: string): CursusFailure {
  return CursusFailure.of(`invalid_${key}`, [['command', req.command]], reason);
}

/** The field's bytes as they are (message, key, metadata), or undefined. */
export function optionalBytes(req: CursusRequest, key: string): Buffer | undefined {
  return raw(req, key);
}

export function requiredBytes(req: CursusRequest, key: string): Buffer {
  const v = raw(req, key);
  if (v === undefined) throw CursusFailure.of(`missing_${key}`, [['command', req.command]]);
  return v;
}

export function optionalText(req: CursusRequest, key: string): string | undefined {
  return raw(req, key)?.toString('utf8');
}

/** A required text field; an empty value counts as missing. */
export function requiredText(req: CursusRequest, key: string): string {
  const v = optionalText(req, key);
  if (v === undefined || v === '') throw CursusFailure.of(`missing_${key}`, [['command', req.command]]);
  return v;
}

/** A decimal integer in [min, max] (safe-integer range by default), or undefined when absent. */
export function optionalInt(req: CursusRequest, key: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = optionalText(req, key);
  if (v === undefined) return undefined;
  if (!decimal.test(v)) throw invalid(req, key, `${key} must be a decimal integer`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw invalid(req, key, `${key} must be between ${min} and ${max}`);
  return n;
}

export function requiredInt(req: CursusRequest, key: string, min?: number, max?: number): number {
  if (raw(req, key) === undefined) throw CursusFailure.of(`missing_${key}`, [['command', req.command]]);
  return optionalInt(req, key, min, max)!;
}

/** `true` or `false`, or undefined when absent. */
export function optionalBool(req: CursusRequest, key: string): boolean | undefined {
  const v = optionalText(req, key);
  if (v === undefined) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw invalid(req, key, `${key} must be true or false`);
}

/** A comma-separated list; empty items are dropped, so `` is the empty list. */
export function optionalList(req: CursusRequest, key: string): string[] | undefined {
  const v = optionalText(req, key);
  return v === undefined ? undefined : v.split(',').filter((s) => s !== '');
}
