// NEGOTIATE (docs/protocols/cursus-wire-v2.md §4), the payloads of the two negotiation frames:
//
//   request:  minimum_version u16 | maximum_version u16 | compression_count u16 (1..16)
//             | compression id u8 × count (in order of preference, no id twice)
//   response: version u16 (= 2) | compression u8
//
// The broker picks the first requested id it supports (unknown ids 4-255 are skipped).

import { Compression, isCompression } from './compression.js';
import type { Decoded } from './frame.js';
import { wireVersion } from './frame.js';

export const negotiationCompressionsMax = 16;

export interface NegotiationRequest {
  minimumVersion: number;
  maximumVersion: number;
  /** Compression ids in order of preference (any u8; unknown ones are skipped by the broker). */
  compressions: number[];
}

export interface NegotiationResponse {
  version: number;
  compression: Compression;
}

export function encodeNegotiationRequest(r: NegotiationRequest): Buffer {
  const b = Buffer.allocUnsafe(6 + r.compressions.length);
  b.writeUInt16BE(r.minimumVersion, 0);
  b.writeUInt16BE(r.maximumVersion, 2);
  b.writeUInt16BE(r.compressions.length, 4);
  r.compressions.forEach((id, i) => (b[6 + i] = id));
  return b;
}

export function decodeNegotiationRequest(p: Buffer): Decoded<NegotiationRequest> {
  if (p.length < 6) return { ok: false, reason: `negotiation request of ${p.length} bytes (at least 6)` };
  const minimumVersion = p.readUInt16BE(0);
  const maximumVersion = p.readUInt16BE(2);
  const count = p.readUInt16BE(4);
  if (minimumVersion > maximumVersion) return { ok: false, reason: `minimum version ${minimumVersion} above maximum ${maximumVersion}` };
  if (count === 0 || count > negotiationCompressionsMax) return { ok: false, reason: `compression count ${count} (1..${negotiationCompressionsMax})` };
  if (p.length !== 6 + count) return { ok: false, reason: `negotiation request of ${p.length} bytes for ${count} compression ids` };
  const compressions = [...p.subarray(6)];
  if (new Set(compressions).size !== count) return { ok: false, reason: 'a compression id is requested twice' };
  return { ok: true, value: { minimumVersion, maximumVersion, compressions } };
}

export function encodeNegotiationResponse(r: NegotiationResponse): Buffer {
  const b = Buffer.allocUnsafe(3);
  b.writeUInt16BE(r.version, 0);
  b[2] = r.compression;
  return b;
}

export function decodeNegotiationResponse(p: Buffer): Decoded<NegotiationResponse> {
  if (p.length !== 3) return { ok: false, reason: `negotiation response of ${p.length} bytes (want 3)` };
  const version = p.readUInt16BE(0);
  const compression = p[2]!;
  if (version !== wireVersion) return { ok: false, reason: `negotiated version ${version} (want ${wireVersion})` };
  if (!isCompression(compression)) return { ok: false, reason: `negotiated unknown compression ${compression}` };
  return { ok: true, value: { version, compression } };
}

/** What the broker answers a well-formed request with: the choice, or the error code and fields. */
export type NegotiationOutcome =
  | { ok: true; value: NegotiationResponse }
  | { ok: false; code: 'UNSUPPORTED_PROTOCOL_VERSION' | 'unsupported_compression'; fields: Array<[string, string]> };

/** The broker's choice for a request, given the compressions it supports (default: all four). */
export function negotiate(r: NegotiationRequest, supported: readonly Compression[] = [0, 1, 2, 3]): NegotiationOutcome {
  if (wireVersion < r.minimumVersion || wireVersion > r.maximumVersion) {
    return {
      ok: false,
      code: 'UNSUPPORTED_PROTOCOL_VERSION',
      fields: [
        ['requested_min', String(r.minimumVersion)],
        ['requested_max', String(r.maximumVersion)],
        ['min', String(wireVersion)],
        ['max', String(wireVersion)],
      ],
    };
  }
  const chosen = r.compressions.find((id) => isCompression(id) && supported.includes(id));
  if (chosen === undefined) return { ok: false, code: 'unsupported_compression', fields: [['requested', r.compressions.join(',')]] };
  return { ok: true, value: { version: wireVersion, compression: chosen as Compression } };
}
