// Helpers of the Felix vector tests: reading hex files, running a whole frame through the framer
// and decodeFrame, encoding a decoded frame back, and comparing a decoded message with the JSON
// text it came from (parsed by JSON.parse, independently of the codec's own parser).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  EventBatchFrames,
  FelixFramer,
  decodeFrame,
  encodeMessageFrame,
  encodePublishAck,
  encodePublishBatchFrame,
  payloadBytesMaxDefault,
  publishPayloads,
  recordPayloads,
  type FelixFrame,
  type FelixMessage,
  type FrameDecoded,
} from '../../../../src/protocols/felix/codec/index.js';

export function readHex(file: string): Buffer {
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

/** Where a frame stops: the header (framer), the flags, the payload, or nowhere. */
export type Outcome = { stage: 'header'; reason: string } | { stage: 'flags' | 'payload'; reason: string } | { stage: 'ok'; flags: number; payload: Buffer; frame: FelixFrame };

/** One whole frame through the framer (limit: `payloadBytesMax`) and decodeFrame. */
export function runFrame(bytes: Buffer, payloadBytesMax = payloadBytesMaxDefault): Outcome {
  const results = new FelixFramer({ payloadBytesMax }).push(bytes);
  if (results.length === 0) return { stage: 'header', reason: 'incomplete frame' };
  assert.equal(results.length, 1, 'one frame');
  const r = results[0]!;
  if (!r.ok) return { stage: 'header', reason: r.reason };
  const d: FrameDecoded = decodeFrame(r.frame.header.flags, r.frame.payload);
  if (!d.ok) return { stage: d.flagsRefused ? 'flags' : 'payload', reason: d.reason };
  return { stage: 'ok', flags: r.frame.header.flags, payload: r.frame.payload, frame: d.value };
}

/** Encodes a decoded frame again, the way a sender would. */
export function reencode(frame: FelixFrame): Buffer {
  switch (frame.kind) {
    case 'message':
      return encodeMessageFrame(frame.message);
    case 'publish_batch':
      return encodePublishBatchFrame({ ...frame.batch, payloads: publishPayloads(frame.batch) });
    case 'publish_ack':
      return encodePublishAck(frame.ack);
    case 'event_batch': {
      const b = frame.batch;
      const frames = new EventBatchFrames({ payloads: recordPayloads(b.records) }, b.baseOffset ?? 0n);
      const chunks = b.subscriptionId === null ? frames.shared(b.baseOffset !== null) : frames.perSubscriber(b.subscriptionId, b.baseOffset !== null);
      return Buffer.concat(chunks);
    }
  }
}

/** Decodes and re-encodes a frame; asserts byte equality and returns what it decoded to. */
export function roundTrip(bytes: Buffer): FelixFrame {
  const o = runFrame(bytes);
  assert.equal(o.stage, 'ok', o.stage === 'ok' ? '' : o.reason);
  if (o.stage !== 'ok') throw new Error('unreachable');
  assert.equal(reencode(o.frame).toString('hex'), bytes.toString('hex'), 're-encoded bytes');
  return o.frame;
}

function camel(k: string): string {
  return k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** Asserts that a decoded value matches a JSON.parse value (bytes as base64, 64-bit as numbers). */
export function assertMatchesJson(actual: unknown, expected: unknown, where: string): void {
  if (Buffer.isBuffer(actual)) return assert.equal(actual.toString('base64'), expected, where);
  if (typeof actual === 'bigint') return assert.equal(Number(actual), expected, where);
  if (Array.isArray(actual)) {
    assert.ok(Array.isArray(expected), `${where}: an array`);
    assert.equal(actual.length, expected.length, `${where}: length`);
    actual.forEach((a, i) => assertMatchesJson(a, (expected as unknown[])[i], `${where}[${i}]`));
    return;
  }
  if (actual !== null && typeof actual === 'object') {
    const a = actual as Record<string, unknown>;
    // A tagged value of ours ({kind, ...}) is serde's externally tagged enum on the wire.
    if (typeof a.kind === 'string') {
      if (typeof expected === 'string') return assert.deepEqual(a, { kind: expected }, where);
      const [tag, body] = Object.entries(expected as Record<string, unknown>)[0]!;
      assert.equal(a.kind, tag, `${where}: variant`);
      const { kind: _kind, ...rest } = a;
      return assertMatchesJson(rest, body, `${where}.${tag}`);
    }
    assertFieldsMatch(a, expected as Record<string, unknown>, where);
    return;
  }
  assert.equal(actual, expected, where);
}

function assertFieldsMatch(a: Record<string, unknown>, expected: Record<string, unknown>, where: string): void {
  for (const [k, v] of Object.entries(expected)) assertMatchesJson(k === 'type' ? a.type : a[camel(k)], v, `${where}.${k}`);
  // Nothing set that the JSON did not carry, except a default left off the wire (retained: false).
  const wireKeys = new Set(Object.keys(expected).map(camel));
  for (const [k, v] of Object.entries(a)) if (v !== undefined && !wireKeys.has(k)) assert.equal(v, false, `${where}: ${k} is not in the JSON`);
}

/** Asserts a decoded message carries exactly what its JSON text says. */
export function assertMessageMatches(message: FelixMessage, jsonText: string): void {
  assertMatchesJson(message, JSON.parse(jsonText), message.type);
}
