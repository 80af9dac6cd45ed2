// Text payloads (docs/protocols/cursus-wire-v2.md §7): `OK` lines, the readable form of errors and
// STREAM_CONTROL lines share one field syntax:
//
//   line  = word *( " " key "=" value )
//   value = bare | quoted
//   bare  = empty, or bytes 0x21-0x7E not starting with '"'
//   quoted = a JSON string literal (RFC 8259)
//
// Encoders write a value bare whenever it may be; readers split on single spaces outside quotes.

import type { Decoded } from './frame.js';
import { checkKey } from './primitives.js';

export type Fields = Array<[string, string]>;

const bareValue = /^(?:[!#-~][!-~]*)?$/;

/** A value as written in a line: bare when it may be, else a JSON string literal. */
export function formatValue(v: string): string {
  return bareValue.test(v) ? v : JSON.stringify(v);
}

/** `word k=v k=v`; throws on a bad key (a programmer error). */
export function formatLine(word: string, fields: Fields): string {
  let s = word;
  for (const [k, v] of fields) {
    const bad = checkKey(k);
    if (bad !== null) throw new Error(bad);
    s += ` ${k}=${formatValue(v)}`;
  }
  return s;
}

/** The end of the JSON string literal starting at `i` (index after its closing quote), or -1. */
function quotedEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return -1;
}

/** Splits a line that starts with `word` into its fields (no key twice). */
export function parseLine(line: string, word: string): Decoded<Fields> {
  if (line !== word && !line.startsWith(`${word} `)) return { ok: false, reason: `line does not start with ${word}` };
  const fields: Fields = [];
  const seen = new Set<string>();
  let i = word.length;
  while (i < line.length) {
    if (line[i] !== ' ') return { ok: false, reason: `expected a space at ${i}` };
    i++;
    const eq = line.indexOf('=', i);
    if (eq < 0) return { ok: false, reason: `field without '=' at ${i}` };
    const key = line.slice(i, eq);
    const bad = checkKey(key);
    if (bad !== null) return { ok: false, reason: bad };
    if (seen.has(key)) return { ok: false, reason: `field ${key} given twice` };
    seen.add(key);
    i = eq + 1;
    let value: string;
    if (line[i] === '"') {
      const end = quotedEnd(line, i);
      if (end < 0) return { ok: false, reason: `unterminated quoted value of ${key}` };
      try {
        value = JSON.parse(line.slice(i, end)) as string;
      } catch {
        return { ok: false, reason: `bad quoted value of ${key}` };
      }
      i = end;
    } else {
      const sp = line.indexOf(' ', i);
      const end = sp < 0 ? line.length : sp;
      value = line.slice(i, end);
      i = end;
    }
    fields.push([key, value]);
  }
  return { ok: true, value: fields };
}

/** An `OK` success payload. */
export function encodeOkLine(fields: Fields = []): Buffer {
  return Buffer.from(formatLine('OK', fields), 'utf8');
}

export function decodeOkLine(p: Buffer): Decoded<Fields> {
  return parseLine(p.toString('utf8'), 'OK');
}

/** A compact JSON envelope payload (keys in the object's own order). */
export function encodeJsonEnvelope(value: object): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export function decodeJsonEnvelope(p: Buffer): Decoded<Record<string, unknown>> {
  try {
    const v: unknown = JSON.parse(p.toString('utf8'));
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false, reason: 'JSON envelope is not an object' };
    return { ok: true, value: v as Record<string, unknown> };
  } catch (e) {
    return { ok: false, reason: `bad JSON envelope: ${(e as Error).message}` };
  }
}

/** STREAM_CONTROL close reasons Quartet sends (docs §7.3). */
export const streamCloseReasons = ['stopped', 'removed', 'timeout', 'error', 'offset_out_of_range'] as const;
export type StreamCloseReason = (typeof streamCloseReasons)[number];

export interface StreamClose {
  reason: StreamCloseReason;
  /** The broker's next stream offset. */
  offset: number;
  /** With reason offset_out_of_range. */
  range?: { requested: number; earliest: number; latest: number };
}

export const streamControlWord = 'STREAM_CONTROL';

export function encodeStreamClose(c: StreamClose): Buffer {
  const fields: Fields = [
    ['type', 'CLOSE'],
    ['reason', c.reason],
    ['offset', String(c.offset)],
  ];
  if (c.range !== undefined) fields.push(['requested', String(c.range.requested)], ['earliest', String(c.range.earliest)], ['latest', String(c.range.latest)]);
  return Buffer.from(formatLine(streamControlWord, fields), 'utf8');
}

export function isStreamControl(p: Buffer): boolean {
  return p.length >= streamControlWord.length && p.toString('latin1', 0, streamControlWord.length) === streamControlWord;
}

function decimal(v: string | undefined): number | null {
  return v !== undefined && /^(0|[1-9][0-9]{0,15})$/.test(v) && Number(v) <= Number.MAX_SAFE_INTEGER ? Number(v) : null;
}

/** A STREAM_CONTROL line; a reason Quartet does not send reads as `error` (docs §7.3). */
export function decodeStreamControl(p: Buffer): Decoded<StreamClose> {
  const parsed = parseLine(p.toString('utf8'), streamControlWord);
  if (!parsed.ok) return parsed;
  const f = new Map(parsed.value);
  if (f.get('type') !== 'CLOSE') return { ok: false, reason: `stream control type ${f.get('type') ?? '(none)'}` };
  const offset = decimal(f.get('offset'));
  if (offset === null) return { ok: false, reason: 'stream control without a valid offset' };
  const given = f.get('reason') ?? 'error';
  const reason: StreamCloseReason = (streamCloseReasons as readonly string[]).includes(given) ? (given as StreamCloseReason) : 'error';
  const requested = decimal(f.get('requested'));
  const earliest = decimal(f.get('earliest'));
  const latest = decimal(f.get('latest'));
  return {
    ok: true,
    value: { reason, offset, ...(requested !== null && earliest !== null && latest !== null ? { range: { requested, earliest, latest } } : {}) },
  };
}
