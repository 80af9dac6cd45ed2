// Whole Kafka frames: Size(int32) + header + body. The broker side decodes requests and encodes
// responses; the client side (used by tests and tools to talk to the broker) does the reverse.
//
//   Request  => Size RequestHeader(v1|v2) Body
//   Response => Size ResponseHeader(v0|v1) Body
//
// A handler typically does:
//
//   const h = decodeRequestHeader(frame);                 // frame from Framer.push, no size
//   if (!h.ok) -> close the connection
//   const req = decodeRequest(ApiKey.Metadata, h.header.apiVersion, frame, h.bodyOffset);
//   if (!req.ok) -> answer with an error (or close)
//   socket.writev(encodeResponse(ApiKey.Metadata, h.header.apiVersion, h.header.correlationId, {...}));

import { ApiKey, isFlexible, supportedApis, type SupportedApi } from './api-keys.js';
import { decodeResponseHeader, responseHeaderVersion, writeRequestHeader, writeResponseHeader } from './headers.js';
import {
  apiVersionsResponse,
  messageSchemas,
  unsupportedApiVersionsResponse,
  type RequestInputOf,
  type RequestOf,
  type ResponseInputOf,
  type ResponseOf,
  type SchemaApiKey,
} from './messages/index.js';
import { decodeMessage, encodeMessage, type DecodeResult, type Fields, type MessageSchema, type StructInput } from './schema.js';
import { Writer } from './writer.js';
import type { FileSlice } from '../../../base/batch.js';

/** Decodes a request body; `offset` is where the body starts in `frame` (after the header). */
export function decodeRequest<K extends SchemaApiKey>(
  apiKey: K,
  version: number,
  frame: Buffer,
  offset = 0,
): DecodeResult<RequestOf<K>> {
  const schema = messageSchemas[apiKey].request as MessageSchema;
  return decodeMessage(schema, version, frame, offset) as DecodeResult<RequestOf<K>>;
}

/** Encodes a response frame (size, header, body) as chunks for writev. */
export function encodeResponse<K extends SchemaApiKey>(
  apiKey: K,
  version: number,
  correlationId: number,
  body: ResponseInputOf<K>,
): Buffer[] {
  return responseWriter(apiKey, version, correlationId, body).sizePrefixed();
}

/** encodeResponse for the broker's socket: a Fetch response's batches may be file slices. */
export function encodeResponseChunks<K extends SchemaApiKey>(
  apiKey: K,
  version: number,
  correlationId: number,
  body: ResponseInputOf<K>,
): Array<Buffer | FileSlice> {
  return responseWriter(apiKey, version, correlationId, body).sizePrefixedChunks();
}

function responseWriter<K extends SchemaApiKey>(apiKey: K, version: number, correlationId: number, body: ResponseInputOf<K>): Writer {
  const w = new Writer();
  writeResponseHeader(w, correlationId, responseHeaderVersion(apiKey, version));
  const schema = messageSchemas[apiKey].response as MessageSchema;
  encodeMessage(schema, version, body as StructInput<Fields>, w);
  return w;
}

/**
 * KIP-511: the answer to an ApiVersions request at a version the broker does not support: a v0
 * body (header v0) with UNSUPPORTED_VERSION and the full ApiKeys list.
 */
export function encodeUnsupportedApiVersions(
  correlationId: number,
  apis: readonly SupportedApi[] = supportedApis,
): Buffer[] {
  const w = new Writer();
  writeResponseHeader(w, correlationId, 0);
  encodeMessage(apiVersionsResponse, 0, unsupportedApiVersionsResponse(apis), w);
  return w.sizePrefixed();
}

/** Client side: encodes a request frame (size, header, body). */
export function encodeRequest<K extends SchemaApiKey>(
  apiKey: K,
  version: number,
  correlationId: number,
  clientId: string | null,
  body: RequestInputOf<K>,
): Buffer[] {
  const w = new Writer();
  writeRequestHeader(w, apiKey, version, correlationId, clientId);
  const schema = messageSchemas[apiKey].request as MessageSchema;
  encodeMessage(schema, version, body as StructInput<Fields>, w);
  return w.sizePrefixed();
}

export type ResponseFrameResult<T> =
  | { ok: true; correlationId: number; body: T; trailingBytes: number }
  | { ok: false; reason: string };

/** Client side: decodes a response frame (without its size prefix). */
export function decodeResponse<K extends SchemaApiKey>(
  apiKey: K,
  version: number,
  frame: Buffer,
): ResponseFrameResult<ResponseOf<K>> {
  const h = decodeResponseHeader(frame, responseHeaderVersion(apiKey, version));
  if (!h.ok) return h;
  const schema = messageSchemas[apiKey].response as MessageSchema;
  const body = decodeMessage(schema, version, frame, h.bodyOffset);
  if (!body.ok) return body;
  return { ok: true, correlationId: h.correlationId, body: body.value as ResponseOf<K>, trailingBytes: body.trailingBytes };
}

export { ApiKey, isFlexible };
