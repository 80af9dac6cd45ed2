// What a v1 frame body is (real Cursus processMessage, pkg/server/main.go), in v1's order:
//
//   1. binary batch: 0xBA 0x7C, body >= 6 bytes, a topic length u16 that is not 0 and fits
//   2. raw text command: the body trimmed of " \t\n\r" passes IsTextCommand
//      (INTERNAL_BATCH is refused here, before anything else looks at it)
//   3. legacy envelope: u16 topic length | topic | payload (the Go SDK wraps every command in
//      one with an empty topic); the topic is ignored, the payload trimmed of "\x00 \t\n\r":
//      - JOIN_GROUP / SYNC_GROUP / LEAVE_GROUP (prefix, no space needed) go to the dispatcher,
//      - a payload that passes IsTextCommand is a command,
//      - anything else: `ERROR: malformed_input reason=missing_topic_or_payload`, then the
//        broker closes the connection.
//      An envelope that does not decode: `ERROR: decode_failed reason="data too short"` (under
//      2 bytes) or `reason="invalid topic length"`; the connection stays open.
//
// So `LIST` raw is `00 00 00 04 4C 49 53 54` and Go-SDK style `00 00 00 06 00 00 4C 49 53 54`;
// `EXIT` (in HELP, not a text command) raw is decoded as an envelope and fails with decode_failed.

import { isV1Batch } from './batch.js';
import { isTextCommand } from './commands.js';
import { trimBytes, upperAscii } from './go-text.js';

export type V1Body =
  /** A 0xBA7C batch (the whole body). */
  | { kind: 'batch' }
  /** A command line for the dispatcher (not yet trimmed or matched). */
  | { kind: 'command'; line: Buffer }
  /** INTERNAL_BATCH from a client: `ERROR: internal_command_unauthorized command=INTERNAL_BATCH`, undecorated. */
  | { kind: 'internal_batch' }
  /** An envelope that does not decode: `ERROR: decode_failed reason=<quoted>`. */
  | { kind: 'decode_failed'; reason: string }
  /** Neither a batch nor a command: `ERROR: malformed_input reason=missing_topic_or_payload`, then close. */
  | { kind: 'malformed' };

const groupCommands = ['JOIN_GROUP', 'SYNC_GROUP', 'LEAVE_GROUP'];

export function classifyBody(body: Buffer): V1Body {
  if (isV1Batch(body)) return { kind: 'batch' };
  const raw = trimBytes(body, ' \t\n\r');
  if (upperAscii(raw, 15).startsWith('INTERNAL_BATCH ')) return { kind: 'internal_batch' };
  if (isTextCommand(raw)) return { kind: 'command', line: raw };
  if (body.length < 2) return { kind: 'decode_failed', reason: 'data too short' };
  const topicLength = body.readUInt16BE(0);
  if (topicLength + 2 > body.length) return { kind: 'decode_failed', reason: 'invalid topic length' };
  const payload = trimBytes(body.subarray(2 + topicLength), '\x00 \t\n\r');
  const upper = upperAscii(payload, 15);
  if (groupCommands.some((c) => upper.startsWith(c))) return { kind: 'command', line: payload };
  if (upper.startsWith('INTERNAL_BATCH ')) return { kind: 'internal_batch' };
  if (isTextCommand(payload)) return { kind: 'command', line: payload };
  return { kind: 'malformed' };
}
