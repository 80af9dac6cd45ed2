// The JSON of Felix control messages (docs/protocols/felix-wire-v1.md §4), parsed the way the
// reference decoder (serde_json) accepts it: one UTF-8 object, RFC 8259 syntax, no byte-order
// mark, whitespace around it allowed and nothing else after it, lone surrogates and raw control
// characters in strings refused. Two departures from JSON.parse are the point of this file:
// numbers keep their text, so a u64 outside 2^53 reads exactly (as a bigint) and a float is not
// mistaken for an integer; and a duplicate key is refused, as serde refuses a duplicate field.
//
// The parser keeps a sticky error like the binary readers: every step returns undefined once it
// failed and the first reason is reported; nothing throws. Nesting is bounded (jsonDepthMax).

import type { Decoded } from './frame.js';

/** A JSON number as written: its text, and whether it is an integer (no fraction, no exponent). */
export class JsonNumber {
  constructor(
    readonly text: string,
    readonly integer: boolean,
  ) {}
}

export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | JsonObject;
export type JsonObject = Map<string, JsonValue>;

/** Deepest nesting accepted; Felix messages nest four levels at most. */
export const jsonDepthMax = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parses a payload that must hold one JSON value. */
export function parseJsonPayload(payload: Buffer): Decoded<JsonValue> {
  let text: string;
  try {
    text = utf8.decode(payload);
  } catch {
    return { ok: false, reason: 'payload is not valid UTF-8' };
  }
  return parseJson(text);
}

export function parseJson(text: string): Decoded<JsonValue> {
  const p = new Parser(text);
  p.ws();
  const v = p.value(0);
  p.ws();
  if (p.error === null && p.pos !== text.length) p.fail('trailing characters');
  return p.error === null && v !== undefined ? { ok: true, value: v } : { ok: false, reason: p.error ?? 'invalid JSON' };
}

const numberPattern = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

class Parser {
  pos = 0;
  error: string | null = null;

  constructor(private readonly s: string) {}

  fail(reason: string): undefined {
    if (this.error === null) this.error = `${reason} at character ${this.pos}`;
    return undefined;
  }

  ws(): void {
    const s = this.s;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      this.pos++;
    }
  }

  value(depth: number): JsonValue | undefined {
    if (this.error !== null) return undefined;
    const c = this.s[this.pos];
    switch (c) {
      case '{':
        return this.object(depth + 1);
      case '[':
        return this.array(depth + 1);
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        return this.fail(c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`);
    }
  }

  private literal<T extends JsonValue>(word: string, v: T): T | undefined {
    if (!this.s.startsWith(word, this.pos)) return this.fail('invalid literal');
    this.pos += word.length;
    return v;
  }

  private number(): JsonNumber | undefined {
    numberPattern.lastIndex = this.pos;
    const m = numberPattern.exec(this.s);
    if (m === null) return this.fail('invalid number');
    this.pos += m[0].length;
    return new JsonNumber(m[0], m[1] === undefined && m[2] === undefined);
  }

  string(): string | undefined {
    const s = this.s;
    this.pos++; // the opening quote
    const start = this.pos;
    // Fast path: no escapes.
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === 0x22) {
        const v = s.slice(start, this.pos);
        this.pos++;
        return v;
      }
      if (c === 0x5c || c < 0x20) break;
      this.pos++;
    }
    let out = s.slice(start, this.pos);
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === 0x22) {
        this.pos++;
        return out;
      }
      if (c < 0x20) return this.fail('control character in a string');
      if (c !== 0x5c) {
        out += s[this.pos++];
        continue;
      }
      const e = s[this.pos + 1];
      this.pos += 2;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const unit = this.hex4();
          if (unit === undefined) return undefined;
          if (unit >= 0xdc00 && unit <= 0xdfff) return this.fail('lone trailing surrogate');
          if (unit >= 0xd800 && unit <= 0xdbff) {
            if (s[this.pos] !== '\\' || s[this.pos + 1] !== 'u') return this.fail('lone leading surrogate');
            this.pos += 2;
            const low = this.hex4();
            if (low === undefined) return undefined;
            if (low < 0xdc00 || low > 0xdfff) return this.fail('lone leading surrogate');
            out += String.fromCharCode(unit, low);
          } else out += String.fromCharCode(unit);
          break;
        }
        default:
          return this.fail('invalid escape');
      }
    }
    return this.fail('unterminated string');
  }

  private hex4(): number | undefined {
    const h = this.s.slice(this.pos, this.pos + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) return this.fail('invalid \\u escape');
    this.pos += 4;
    return parseInt(h, 16);
  }

  private array(depth: number): JsonValue[] | undefined {
    if (depth > jsonDepthMax) return this.fail(`nesting deeper than ${jsonDepthMax}`);
    this.pos++;
    const out: JsonValue[] = [];
    this.ws();
    if (this.s[this.pos] === ']') {
      this.pos++;
      return out;
    }
    while (this.error === null) {
      this.ws();
      const v = this.value(depth);
      if (v === undefined) return undefined;
      out.push(v);
      this.ws();
      const c = this.s[this.pos++];
      if (c === ']') return out;
      if (c !== ',') return this.fail("expected ',' or ']'");
    }
    return undefined;
  }

  private object(depth: number): JsonObject | undefined {
    if (depth > jsonDepthMax) return this.fail(`nesting deeper than ${jsonDepthMax}`);
    this.pos++;
    const out: JsonObject = new Map();
    this.ws();
    if (this.s[this.pos] === '}') {
      this.pos++;
      return out;
    }
    while (this.error === null) {
      this.ws();
      if (this.s[this.pos] !== '"') return this.fail('expected a key');
      const key = this.string();
      if (key === undefined) return undefined;
      if (out.has(key)) return this.fail(`duplicate field ${JSON.stringify(key)}`);
      this.ws();
      if (this.s[this.pos++] !== ':') return this.fail("expected ':'");
      this.ws();
      const v = this.value(depth);
      if (v === undefined) return undefined;
      out.set(key, v);
      this.ws();
      const c = this.s[this.pos++];
      if (c === '}') return out;
      if (c !== ',') return this.fail("expected ',' or '}'");
    }
    return undefined;
  }
}

/** What a JSON value is, for error messages. */
export function jsonKind(v: JsonValue): string {
  if (v === null) return 'null';
  if (v instanceof JsonNumber) return v.integer ? 'integer' : 'floating point number';
  if (Array.isArray(v)) return 'array';
  if (v instanceof Map) return 'object';
  return typeof v;
}

/** A string as JSON: the escapes serde_json writes (`"`, `\`, control characters) and no others. */
export function jsonString(s: string): string {
  return JSON.stringify(s);
}
