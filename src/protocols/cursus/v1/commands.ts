// The Cursus v1 text commands: the names the transport recognises, how a line is matched to a
// command, and how its arguments are read (real Cursus pkg/protocol/commands.go IsTextCommand,
// pkg/controller/handler.go commandEntry/parseKeyValueArgs, command_input.go).
//
//   line    = name [ whitespace args ]
//   args    = *( token whitespace ) [ "message=" rest ]
//   token   = key "=" value        (split at the first "="; a token without "=" is ignored)
//
// - There is no quoting or escaping: if "message=" occurs anywhere in the arguments, everything
//   after it, trimmed of whitespace, is the message (spaces and "=" included) and only the text
//   before it is split into tokens. Whitespace is Go's (Unicode White_Space).
// - A key given twice keeps its last value. Keys are case-sensitive (producerId, seqNum,
//   wait_ms ...); command names are not.
// - Dispatch is first match over an ordered list: `exact` entries compare with the whole trimmed
//   line (case-insensitively), the others match an upper-cased prefix that ends with a space.

import { fields, trimSpace, upperAscii } from './go-text.js';

/** The names protocol.IsTextCommand recognises (45). EXIT is not one of them. */
export const v1TextCommands: ReadonlySet<string> = new Set([
  'AUTH',
  'CREATE',
  'DELETE',
  'LIST',
  'LIST_CLUSTER',
  'CLUSTER_STATUS',
  'ELECT_LEADER',
  'PUBLISH',
  'CONSUME',
  'STREAM',
  'HELP',
  'HEARTBEAT',
  'JOIN_GROUP',
  'LEAVE_GROUP',
  'COMMIT_OFFSET',
  'BATCH_COMMIT',
  'REGISTER_GROUP',
  'GROUP_STATUS',
  'FETCH_OFFSET',
  'LIST_GROUPS',
  'LIST_OFFSETS',
  'SYNC_GROUP',
  'DESCRIBE',
  'INIT_PRODUCER_ID',
  'BEGIN_TXN',
  'TXN_PUBLISH',
  'SEND_OFFSETS_TO_TXN',
  'END_TXN',
  'TXN_STATUS',
  'APPEND_STREAM',
  'READ_STREAM',
  'SAVE_SNAPSHOT',
  'READ_SNAPSHOT',
  'STREAM_VERSION',
  'REPLICATE_MESSAGE',
  'REPLICATE_SNAPSHOT',
  'LIST_SNAPSHOTS',
  'FETCH_SNAPSHOT',
  'CATCHUP_SNAPSHOTS',
  'FIND_COORDINATOR',
  'RAFT_APPLY',
  'METADATA',
  'INTERNAL_BATCH',
  'PROTOCOL_INFO',
  'NEGOTIATE',
]);

/** len("SEND_OFFSETS_TO_TXN"), the longest name: IsTextCommand looks no further for the separator. */
const textCommandLengthMax = 19;

function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isLineSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

/**
 * IsTextCommand: after leading " \t\r\n", the first byte is an ASCII letter and the first token
 * (ended by " \t\r\n" within 20 bytes), upper-cased, is one of the 45 names. It tells a raw command
 * from the legacy envelope, whose first two bytes are a topic length.
 */
export function isTextCommand(b: Buffer): boolean {
  let start = 0;
  while (start < b.length && isLineSpace(b[start]!)) start++;
  if (start === b.length || !isAsciiLetter(b[start]!)) return false;
  const searchEnd = Math.min(b.length, start + textCommandLengthMax + 1);
  let end = -1;
  for (let i = start; i < searchEnd; i++) {
    if (isLineSpace(b[i]!)) {
      end = i;
      break;
    }
  }
  if (end < 0) {
    if (b.length - start > textCommandLengthMax) return false;
    end = b.length;
  }
  return v1TextCommands.has(upperAscii(b.subarray(start, end)));
}

/** One dispatch entry: the command it runs and how a line matches it. */
export interface V1Entry {
  readonly name: string;
  /** Compared with the whole line (case-insensitively) instead of as a `NAME ` prefix. */
  readonly exact: boolean;
  /** Broker-to-broker: refused on the client listener with internal_command_unauthorized. */
  readonly internal?: boolean;
}

const prefix = (name: string, internal = false): V1Entry => ({ name, exact: false, ...(internal ? { internal } : {}) });
const exact = (name: string): V1Entry => ({ name, exact: true });

/** The dispatch list in v1's order (first match wins). */
export const v1Entries: readonly V1Entry[] = [
  prefix('AUTH'),
  exact('HELP'),
  exact('PROTOCOL_INFO'),
  exact('NEGOTIATE'),
  prefix('NEGOTIATE'),
  exact('LIST_CLUSTER'),
  exact('CLUSTER_STATUS'),
  prefix('ELECT_LEADER'),
  exact('LIST'),
  exact('LIST_GROUPS'),
  prefix('CREATE'),
  prefix('DELETE'),
  prefix('PUBLISH'),
  prefix('CONSUME'),
  prefix('STREAM'),
  prefix('REGISTER_GROUP'),
  prefix('JOIN_GROUP'),
  prefix('SYNC_GROUP'),
  prefix('LEAVE_GROUP'),
  prefix('FETCH_OFFSET'),
  exact('LIST_OFFSETS'),
  prefix('LIST_OFFSETS'),
  prefix('GROUP_STATUS'),
  prefix('DESCRIBE'),
  prefix('HEARTBEAT'),
  prefix('COMMIT_OFFSET'),
  prefix('BATCH_COMMIT'),
  prefix('INIT_PRODUCER_ID'),
  prefix('BEGIN_TXN'),
  prefix('TXN_PUBLISH'),
  prefix('SEND_OFFSETS_TO_TXN'),
  prefix('END_TXN'),
  prefix('TXN_STATUS'),
  prefix('APPEND_STREAM'),
  prefix('STREAM_VERSION'),
  prefix('SAVE_SNAPSHOT'),
  prefix('READ_SNAPSHOT'),
  prefix('READ_STREAM'),
  prefix('METADATA'),
  prefix('FIND_COORDINATOR'),
  prefix('REPLICATE_MESSAGE', true),
  prefix('REPLICATE_SNAPSHOT', true),
  prefix('LIST_SNAPSHOTS', true),
  prefix('FETCH_SNAPSHOT', true),
  prefix('CATCHUP_SNAPSHOTS', true),
  prefix('RAFT_APPLY', true),
];

/** A line matched to its entry, with the argument text after the name. */
export interface V1Command {
  readonly entry: V1Entry;
  /** The whole trimmed line (unknown_command echoes it). */
  readonly line: Buffer;
  /** The text after `NAME ` (empty for exact entries). */
  readonly argText: Buffer;
}

/**
 * Matches a command line (HandleCommand: TrimSpace, then the entries in order). Null: no entry
 * matches (`unknown_command command=<line>`), or the line is empty.
 */
export function matchCommand(raw: Buffer): V1Command | null {
  const line = trimSpace(raw);
  if (line.length === 0) return null;
  const upper = upperAscii(line, textCommandLengthMax + 2);
  for (const entry of v1Entries) {
    if (entry.exact) {
      if (line.length === entry.name.length && upper === entry.name) return { entry, line, argText: line.subarray(line.length) };
    } else if (upper.startsWith(`${entry.name} `)) {
      return { entry, line, argText: line.subarray(entry.name.length + 1) };
    }
  }
  return null;
}

const messageKey = Buffer.from('message=', 'latin1');

/** Splits `k=v` tokens at the first "=" into `out` (a later key replaces an earlier one). */
function addTokens(out: Map<string, Buffer>, text: Buffer): void {
  for (const token of fields(text)) {
    const eq = token.indexOf(0x3d);
    if (eq >= 0) out.set(token.toString('latin1', 0, eq), token.subarray(eq + 1));
  }
}

/**
 * parseKeyValueArgs: the arguments of a command line as key → value bytes (views of the line).
 * Keys are read byte for byte (latin1), so a non-ASCII key never matches a known one.
 */
export function parseArgs(argText: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const at = argText.indexOf(messageKey);
  if (at < 0) {
    addTokens(out, argText);
    return out;
  }
  addTokens(out, argText.subarray(0, at));
  out.set('message', trimSpace(argText.subarray(at + messageKey.length)));
  return out;
}

/** What follows the line's last space (BATCH_COMMIT's `P0:10,P1:20`: v1 reads the list there, whatever it is). */
export function lastToken(line: Buffer): Buffer {
  return line.subarray(line.lastIndexOf(0x20) + 1);
}
