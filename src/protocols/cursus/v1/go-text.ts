// The Go text behaviours Cursus v1 puts on the wire, reproduced byte for byte: its broker is Go, so
// command lines are split with strings.Fields / TrimSpace (Unicode White_Space), integers are read
// with strconv.Atoi, booleans with strconv.ParseBool, values are quoted with `%q` (strconv.Quote)
// and JSON is written by encoding/json (which escapes <, >, & and U+2028/2029). Everything here
// works on bytes, as Go strings do: a message that is not valid UTF-8 keeps its bytes.

/** Byte length of the Go whitespace rune (unicode.IsSpace) starting at `i`, or 0. */
export function spaceAt(b: Buffer, i: number): number {
  const c = b[i]!;
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return 1;
  if (c < 0xc2) return 0;
  const c1 = b[i + 1];
  if (c === 0xc2) return c1 === 0x85 || c1 === 0xa0 ? 2 : 0;
  const c2 = b[i + 2];
  if (c === 0xe1) return c1 === 0x9a && c2 === 0x80 ? 3 : 0; // U+1680
  if (c === 0xe3) return c1 === 0x80 && c2 === 0x80 ? 3 : 0; // U+3000
  if (c !== 0xe2 || c2 === undefined) return 0;
  if (c1 === 0x80) return c2 <= 0x8a && c2 >= 0x80 ? 3 : c2 === 0xa8 || c2 === 0xa9 || c2 === 0xaf ? 3 : 0; // U+2000-200A, 2028, 2029, 202F
  return c1 === 0x81 && c2 === 0x9f ? 3 : 0; // U+205F
}

/** Byte length of the Go whitespace rune ending at `end` (exclusive), or 0. */
function spaceBefore(b: Buffer, end: number): number {
  if (end >= 1 && spaceAt(b, end - 1) === 1) return 1;
  if (end >= 2 && spaceAt(b, end - 2) === 2) return 2;
  if (end >= 3 && spaceAt(b, end - 3) === 3) return 3;
  return 0;
}

/** strings.TrimSpace: a view without leading and trailing Unicode whitespace. */
export function trimSpace(b: Buffer): Buffer {
  let start = 0;
  for (let n = 0; start < b.length && (n = spaceAt(b, start)) > 0; ) start += n;
  let end = b.length;
  for (let n = 0; end > start && (n = spaceBefore(b, end)) > 0; ) end -= n;
  return b.subarray(start, end);
}

/** strings.Trim with a cutset of single bytes (ASCII), as a view. */
export function trimBytes(b: Buffer, cutset: string): Buffer {
  let start = 0;
  let end = b.length;
  while (start < end && cutset.includes(String.fromCharCode(b[start]!))) start++;
  while (end > start && cutset.includes(String.fromCharCode(b[end - 1]!))) end--;
  return b.subarray(start, end);
}

/** strings.Fields: the runs of non-whitespace bytes, as views. */
export function fields(b: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = -1;
  for (let i = 0; i < b.length; ) {
    const n = spaceAt(b, i);
    if (n > 0) {
      if (start >= 0) out.push(b.subarray(start, i));
      start = -1;
      i += n;
    } else {
      if (start < 0) start = i;
      i++;
    }
  }
  if (start >= 0) out.push(b.subarray(start));
  return out;
}

/** ASCII upper case of the first `n` bytes (the command names are ASCII). */
export function upperAscii(b: Buffer, n = b.length): string {
  return b.toString('latin1', 0, Math.min(n, b.length)).replace(/[a-z]+/g, (s) => s.toUpperCase());
}

const int64Max = 2n ** 63n - 1n;

/** strconv.Atoi on a 64-bit platform: the value, or null when Go rejects the text. */
export function atoi(s: string): bigint | null {
  if (!/^[+-]?[0-9]+$/.test(s)) return null;
  const v = BigInt(s);
  return v > int64Max || v < -int64Max - 1n ? null : v;
}

/** strconv.ParseBool: the value, or null when Go rejects the text. */
export function parseBool(s: string): boolean | null {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return null;
}

/** One UTF-8 rune at `i` as Go's utf8.DecodeRune reads it: its code point and width, -1 when invalid. */
function decodeRune(b: Buffer, i: number): { rune: number; width: number } {
  const c = b[i]!;
  if (c < 0x80) return { rune: c, width: 1 };
  const cont = (k: number, lo = 0x80, hi = 0xbf): number => {
    const x = b[i + k];
    return x !== undefined && x >= lo && x <= hi ? x & 0x3f : -1;
  };
  if (c >= 0xc2 && c <= 0xdf) {
    const a = cont(1);
    return a < 0 ? { rune: -1, width: 1 } : { rune: ((c & 0x1f) << 6) | a, width: 2 };
  }
  if (c >= 0xe0 && c <= 0xef) {
    const a = cont(1, c === 0xe0 ? 0xa0 : 0x80, c === 0xed ? 0x9f : 0xbf);
    const d = a < 0 ? -1 : cont(2);
    return d < 0 ? { rune: -1, width: 1 } : { rune: ((c & 0x0f) << 12) | (a << 6) | d, width: 3 };
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const a = cont(1, c === 0xf0 ? 0x90 : 0x80, c === 0xf4 ? 0x8f : 0xbf);
    const d = a < 0 ? -1 : cont(2);
    const e = d < 0 ? -1 : cont(3);
    return e < 0 ? { rune: -1, width: 1 } : { rune: ((c & 0x07) << 18) | (a << 12) | (d << 6) | e, width: 4 };
  }
  return { rune: -1, width: 1 };
}

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
function isPrint(r: number): boolean {
  if (r < 0x80) return r >= 0x20 && r < 0x7f;
  return printable.test(String.fromCodePoint(r));
}

const shortEscapes: Record<number, string> = { 0x07: '\\a', 0x08: '\\b', 0x0c: '\\f', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x0b: '\\v' };

/** Go's `%q` of a string (strconv.Quote): printable runes as they are, the rest escaped. */
export function quote(value: string | Buffer): string {
  const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  let out = '"';
  for (let i = 0; i < b.length; ) {
    const { rune, width } = decodeRune(b, i);
    if (rune < 0) out += `\\x${b[i]!.toString(16).padStart(2, '0')}`;
    else if (rune === 0x22) out += '\\"';
    else if (rune === 0x5c) out += '\\\\';
    else if (isPrint(rune)) out += b.toString('utf8', i, i + width);
    else if (shortEscapes[rune] !== undefined) out += shortEscapes[rune];
    else if (rune < 0x80) out += `\\x${rune.toString(16).padStart(2, '0')}`;
    else if (rune < 0x10000) out += `\\u${rune.toString(16).padStart(4, '0')}`;
    else out += `\\U${rune.toString(16).padStart(8, '0')}`;
    i += width;
  }
  return `${out}"`;
}

/** strconv.Unquote of a double-quoted Go string literal, or null when it is not one. */
export function unquote(s: string): string | null {
  if (s.length < 2 || s[0] !== '"' || s[s.length - 1] !== '"') return null;
  const body = s.slice(1, -1);
  const bytes: number[] = [];
  const pushText = (t: string): void => {
    for (const x of Buffer.from(t, 'utf8')) bytes.push(x);
  };
  for (let i = 0; i < body.length; ) {
    const ch = body[i]!;
    if (ch === '"' || ch === '\n') return null;
    if (ch !== '\\') {
      const cp = body.codePointAt(i)!;
      pushText(String.fromCodePoint(cp));
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    const e = body[i + 1];
    const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 0x5c, '"': 0x22 };
    if (e !== undefined && simple[e] !== undefined) {
      bytes.push(simple[e]!);
      i += 2;
    } else if (e === 'x' && /^[0-9a-fA-F]{2}$/.test(body.slice(i + 2, i + 4))) {
      bytes.push(parseInt(body.slice(i + 2, i + 4), 16));
      i += 4;
    } else if ((e === 'u' || e === 'U') && /^[0-9a-fA-F]+$/.test(body.slice(i + 2, i + (e === 'u' ? 6 : 10))) && body.length >= i + (e === 'u' ? 6 : 10)) {
      const cp = parseInt(body.slice(i + 2, i + (e === 'u' ? 6 : 10)), 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return null;
      pushText(String.fromCodePoint(cp));
      i += e === 'u' ? 6 : 10;
    } else if (e !== undefined && /^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      const v = parseInt(body.slice(i + 1, i + 4), 8);
      if (v > 255) return null;
      bytes.push(v);
      i += 4;
    } else {
      return null;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

const goJsonEscapes: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/**
 * JSON as encoding/json writes it: json.Marshal (compact) or json.MarshalIndent(v, "", "  ")
 * with `indent`. Keys keep the object's own order; the characters Go escapes for HTML safety can
 * only occur inside strings, so escaping them in the whole text is exact.
 */
export function goJson(value: unknown, indent = false): string {
  const text = indent ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  return text.replace(/[<>&\u2028\u2029]/g, (c) => goJsonEscapes[c]!);
}
