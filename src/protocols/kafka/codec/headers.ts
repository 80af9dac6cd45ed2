// Request and response headers (apache/kafka RequestHeader.json, ResponseHeader.json).
//
// RequestHeader v1 => RequestApiKey(int16) RequestApiVersion(int16) CorrelationId(int32)
//                     ClientId(NULLABLE_STRING)
// RequestHeader v2 => v1 + TAGGED_FIELDS
//   ClientId keeps the int16-length NULLABLE_STRING encoding in v2 ("flexibleVersions": "none" on
//   the field) so that any broker can read the header of any ApiVersions request.
// ResponseHeader v0 => CorrelationId(int32)
// ResponseHeader v1 => CorrelationId(int32) TAGGED_FIELDS
//
// The header version follows the body: a flexible (KIP-482) API version uses request header v2
// and response header v1, others v1 / v0. Exception: the ApiVersions response always uses
// response header v0 (the client must parse it before it knows the broker's versions).
// Request header v0 (no ClientId) is only used by ControlledShutdown v0, which clients never send.

import { ApiKey, isFlexible } from './api-keys.js';
import { Reader } from './reader.js';
import type { Writer } from './writer.js';

export function requestHeaderVersion(apiKey: number, apiVersion: number): 1 | 2 {
  return isFlexible(apiKey, apiVersion) ? 2 : 1;
}

export function responseHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 {
  if (apiKey === ApiKey.ApiVersions) return 0;
  return isFlexible(apiKey, apiVersion) ? 1 : 0;
}

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  headerVersion: 1 | 2;
}

export type RequestHeaderResult =
  | { ok: true; header: RequestHeader; bodyOffset: number }
  /** `correlationId` is set when it could be read, so an error response can still be addressed. */
  | { ok: false; reason: string; correlationId: number | null };

/**
 * Decodes the request header at the start of `frame` (the bytes after the 4-byte size). The
 * header version is chosen from (apiKey, apiVersion): for a version this broker does not know,
 * flexibility is inferred from the API's first flexible version (so an ApiVersions v4 header is
 * read as v2, as KIP-511 requires); unknown API keys are read as v1.
 */
export function decodeRequestHeader(frame: Buffer): RequestHeaderResult {
  const r = new Reader(frame);
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  if (r.error !== null) return { ok: false, reason: `request header: ${r.error}`, correlationId: null };
  const clientId = r.nullableString();
  const headerVersion = requestHeaderVersion(apiKey, apiVersion);
  if (headerVersion === 2) r.taggedFields();
  if (r.error !== null) return { ok: false, reason: `request header: ${r.error}`, correlationId };
  return { ok: true, header: { apiKey, apiVersion, correlationId, clientId, headerVersion }, bodyOffset: r.offset };
}

export function writeRequestHeader(
  w: Writer,
  apiKey: number,
  apiVersion: number,
  correlationId: number,
  clientId: string | null,
): void {
  w.int16(apiKey).int16(apiVersion).int32(correlationId).nullableString(clientId);
  if (requestHeaderVersion(apiKey, apiVersion) === 2) w.uvarint(0);
}

export function writeResponseHeader(w: Writer, correlationId: number, headerVersion: 0 | 1): void {
  w.int32(correlationId);
  if (headerVersion === 1) w.uvarint(0);
}

export type ResponseHeaderResult =
  | { ok: true; correlationId: number; bodyOffset: number }
  | { ok: false; reason: string };

/** Decodes a response header (client side); `frame` excludes the 4-byte size. */
export function decodeResponseHeader(frame: Buffer, headerVersion: 0 | 1): ResponseHeaderResult {
  const r = new Reader(frame);
  const correlationId = r.int32();
  if (headerVersion === 1) r.taggedFields();
  if (r.error !== null) return { ok: false, reason: `response header: ${r.error}` };
  return { ok: true, correlationId, bodyOffset: r.offset };
}
