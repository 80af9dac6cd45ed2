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

interface ApiRange {
  apiKey: number;
  minVersion: number;
  maxVersion: number;
}

/** The frontend's registry (frontend.ts builds it from handlers/index.ts); the codec's table for a bare frontend. */
function registryOf(frontend: KafkaFrontend): ApiRange[] {
  const own = (frontend as { handlers?: ReadonlyMap<number, ApiRange> }).handlers;
  return own ? [...own.values()] : supportedApis.map((a) => ({ apiKey: a.key, minVersion: a.minVersion, maxVersion: a.maxVersion }));
}

/** Each frontend's ApiKeys list, made once: the registry does not change once the frontend is built. */
const apiKeysByFrontend = new WeakMap<KafkaFrontend, readonly ApiRange[]>();

function apiKeysOf(frontend: KafkaFrontend): readonly ApiRange[] {
  let apiKeys = apiKeysByFrontend.get(frontend);
  if (apiKeys === undefined) {
    apiKeys = Object.freeze(registryOf(frontend).sort((a, b) => a.apiKey - b.apiKey).map((h) => Object.freeze({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion })));
    apiKeysByFrontend.set(frontend, apiKeys);
  }
  return apiKeys;
}

export const apiVersionsHandler = defineHandler({
  apiKey: ApiKey.ApiVersions,
  minVersion: 0,
  maxVersion: 3,
  preAuth: true,
  handle(_request, context) {
    return { errorCode: ErrorCode.NONE, apiKeys: apiKeysOf(context.frontend), throttleTimeMs: 0 };
  },
});
