// One entry point from a whole frame to its typed content (docs/protocols/felix-wire-v1.md §3):
// the flags pick the layout (frameShape), the layout's decoder reads the payload. A failure says
// whether the flags were refused (the broker answers "unsupported frame flags" and the stream
// goes on) or the payload was malformed (what follows depends on the layout: docs §7).

import { frameShape, type Decoded } from './frame.js';
import { decodeEventBatch, type BinaryEventBatch } from './event-batch.js';
import { decodeMessage, type FelixMessage } from './messages.js';
import { decodePublishAck, type PublishAck } from './publish-ack.js';
import { decodePublishBatch, type BinaryPublishBatch } from './publish-batch.js';

export type FelixFrame =
  | { kind: 'message'; message: FelixMessage }
  | { kind: 'publish_batch'; batch: BinaryPublishBatch }
  | { kind: 'event_batch'; batch: BinaryEventBatch }
  | { kind: 'publish_ack'; ack: PublishAck };

export type FrameDecoded = { ok: true; value: FelixFrame } | { ok: false; reason: string; flagsRefused: boolean };

function payloadFailure(r: { reason: string }): FrameDecoded {
  return { ok: false, reason: r.reason, flagsRefused: false };
}

function wrap<T>(r: Decoded<T>, make: (v: T) => FelixFrame): FrameDecoded {
  return r.ok ? { ok: true, value: make(r.value) } : payloadFailure(r);
}

/** Decodes a frame's payload by its flags. Never throws. */
export function decodeFrame(flags: number, payload: Buffer): FrameDecoded {
  const shape = frameShape(flags);
  if (!shape.ok) return { ok: false, reason: shape.reason, flagsRefused: true };
  const s = shape.value;
  switch (s.kind) {
    case 'json':
      return wrap(decodeMessage(payload), (message) => ({ kind: 'message', message }));
    case 'publish_batch':
      return wrap(decodePublishBatch(payload, s), (batch) => ({ kind: 'publish_batch', batch }));
    case 'event_batch':
      return wrap(decodeEventBatch(payload, s), (batch) => ({ kind: 'event_batch', batch }));
    case 'publish_ack':
      return wrap(decodePublishAck(payload, s), (ack) => ({ kind: 'publish_ack', ack }));
  }
}
