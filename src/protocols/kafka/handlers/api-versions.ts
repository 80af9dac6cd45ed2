// ApiVersions (key 18), v0-3. apache/kafka ApiVersionsRequest.json / ApiVersionsResponse.json.
//
// ApiVersionsResponse => ErrorCode ApiKeys[ApiKey MinVersion MaxVersion] ThrottleTimeMs(v1+)
//                        (+ tagged SupportedFeatures/FinalizedFeatures in v3, left empty)
//
// The ApiKeys list is exactly the handler registry (handlers/index.ts), so an API appears here as
// soon as its handler is registered, with the handler's own range. Every registered range starts
// at 0 (kafka-broker-notes.md §3.1: librdkafka < 2.11.1 needs exact versions inside the range).
// Answered before SASL authentication. The response header is always v0 (headers.ts), and a
// version above 3 gets the KIP-511 v0 answer from the connection, not this handler.

import { ApiKey, supportedApis } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { defineHandler, type KafkaFrontend } from './types.js';

/** The frontend's registry (frontend.ts builds it from handlers/index.ts); the codec's table for a bare frontend. */
function registryOf(frontend: KafkaFrontend): Array<{ apiKey: number; minVersion: number; maxVersion: number }> {
  const own = (frontend as { handlers?: ReadonlyMap<number, { apiKey: number; minVersion: number; maxVersion: number }> }).handlers;
  return own ? [...own.values()] : supportedApis.map((a) => ({ apiKey: a.key, minVersion: a.minVersion, maxVersion: a.maxVersion }));
}

export const apiVersionsHandler = defineHandler({
  apiKey: ApiKey.ApiVersions,
  minVersion: 0,
  maxVersion: 3,
  preAuth: true,
  handle(_request, context) {
    const apiKeys = registryOf(context.frontend)
      .sort((a, b) => a.apiKey - b.apiKey)
      .map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion }));
    return { errorCode: ErrorCode.NONE, apiKeys, throttleTimeMs: 0 };
  },
});
