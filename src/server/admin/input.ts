// Reading a JSON request body: each field checked for its type, with the field's name in the
// error (invalid_request, 400). Validators return the value or throw; nothing is coerced.

import { QuartetError } from '../../base/errors.js';

export type Body = Readonly<Record<string, unknown>>;

export function objectBody(body: unknown): Body {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new QuartetError('invalid_request', 'the body must be a JSON object');
  return body as Body;
}

function bad(field: string, what: string): QuartetError {
  return new QuartetError('invalid_request', `"${field}" must be ${what}`);
}

export function requiredString(body: Body, field: string): string {
  const v = body[field];
  if (typeof v !== 'string' || v === '') throw bad(field, 'a non-empty string');
  return v;
}

export function optionalString(body: Body, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw bad(field, 'a string');
  return v;
}

export function optionalInteger(body: Body, field: string, min = 0): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw bad(field, `an integer >= ${min}`);
  return v;
}

export function optionalBoolean(body: Body, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw bad(field, 'true or false');
  return v;
}

export function optionalObject(body: Body, field: string): Body | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(field, 'an object');
  return v as Body;
}

export function optionalIntegerList(body: Body, field: string): number[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0)) throw bad(field, 'a list of non-negative integers');
  return v as number[];
}

export function optionalStringList(body: Body, field: string): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw bad(field, 'a list of strings');
  return v as string[];
}
