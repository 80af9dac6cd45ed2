// v2 replies as the text a v1 broker writes (docs/protocols/cursus-v1.md "Replies"):
//
//   OK lines   `OK` + ` key=value` per field of v1's line (mapping.ts), values as Go's `%s`
//              prints them: as they are, lists of partitions as Go's `%v` (`[0 1 2]`)
//   errors     `ERROR: <code>` + ` key=value` per field (`%q` where v1 quotes); NOT_LEADER as
//              v1's positional `NOT_LEADER LEADER_IS <host:port>`; the human message is not sent
//   JSON       as encoding/json writes it: compact, or indented for DESCRIBE; AckResponse in v1's
//              key order (status, last_offset, producer_epoch, producer_id, seq_start, seq_end
//              [, leader][, error])

import type { CursusError } from '../codec/errors.js';
import type { Fields } from '../codec/lines.js';
import { v2EpochOf } from './epochs.js';
import { formatV1Error, type V1ErrorPart } from './errors.js';
import { goJson, quote } from './go-text.js';
import { v1ErrorCodes, type V1Mapping } from './mapping.js';

/** A comma-separated partition list in brackets (`[0,1,2]`, v2) as Go's `%v` of []int (`[0 1 2]`). */
export function goIntList(v: string): string {
  const m = /^\[(.*)\]$/.exec(v);
  return m === null ? v : `[${m[1]!.split(',').filter((s) => s !== '').join(' ')}]`;
}

const listKeys: ReadonlySet<string> = new Set(['assignments']);

function v1Value(key: string, value: string): string {
  return listKeys.has(key) ? goIntList(value) : value;
}

/** The v1 OK line of a v2 text reply: v1's fields in v1's order (or the reply's own when unmapped). */
export function renderOkLine(mapping: V1Mapping, reply: Fields, args: ReadonlyMap<string, Buffer>): string {
  const got = new Map(reply);
  const out: Array<[string, string]> = [];
  if (mapping.reply === undefined) {
    for (const [k, v] of reply) out.push([k, v1Value(k, v)]);
  } else {
    for (const f of mapping.reply) {
      if (typeof f === 'string') {
        const v = got.get(f);
        if (v !== undefined) out.push([f, v1Value(f, v)]);
      } else if ('reply' in f) {
        const v = got.get(f.reply);
        if (v !== undefined) out.push([f.key, v1Value(f.key, v)]);
      } else if ('request' in f) {
        const v = f.request(args);
        if (v !== undefined) out.push([f.key, v]);
      } else {
        out.push([f.key, f.value]);
      }
    }
  }
  let line = 'OK';
  for (const [k, v] of out) line += ` ${k}=${v}`;
  return line;
}

const ackKeys = ['status', 'last_offset', 'producer_epoch', 'producer_id', 'seq_start', 'seq_end'] as const;
const ackOptionalKeys = ['leader', 'error'] as const;

/**
 * A v2 JSON reply as v1 writes it. `producerEpoch`: the epoch the v1 producer sent, written in an
 * AckResponse in place of the Wire v2 epoch it ran as (epochs.ts), which the Go SDK checks.
 */
export function renderJson(mapping: V1Mapping, value: object, producerEpoch?: bigint): string {
  if (mapping.json === 'indent') return goJson(value, true);
  if (mapping.json !== 'ack') return goJson(value);
  const src = value as Record<string, unknown>;
  const ack: Record<string, unknown> = {};
  for (const k of ackKeys) ack[k] = src[k] ?? (k === 'status' || k === 'producer_id' ? '' : 0);
  for (const k of ackOptionalKeys) if (src[k] !== undefined && src[k] !== '') ack[k] = src[k];
  const text = goJson(ack);
  if (producerEpoch === undefined || ack.producer_epoch !== v2EpochOf(producerEpoch)) return text;
  // The key is written once, before any string that could hold its text (which would be escaped).
  return text.replace(`"producer_epoch":${String(ack.producer_epoch)},`, `"producer_epoch":${producerEpoch},`);
}

/** A v2 failure as v1's `ERROR:` line (undecorated; the session adds class= retryable= when negotiated). */
export function renderFailure(e: CursusError): string {
  const code = v1ErrorCodes[e.code] ?? e.code;
  const parts: V1ErrorPart[] = [];
  for (const [k, v] of e.fields) {
    if (code === 'NOT_LEADER' && k === 'leader') parts.unshift(`LEADER_IS ${v}`);
    else if (code === 'unknown_command' && k === 'command') parts.push(`command=${quote(v)}`);
    else parts.push([k, v]);
  }
  return formatV1Error(code, parts);
}
