// ApiVersions (key 18). Transcribed from apache/kafka ApiVersionsRequest.json /
// ApiVersionsResponse.json (flexible 3+).
//
// ApiVersionsRequest => ClientSoftwareName(v3+) ClientSoftwareVersion(v3+)
// ApiVersionsResponse => ErrorCode ApiKeys[ApiKey MinVersion MaxVersion] ThrottleTimeMs(v1+)
//   SupportedFeatures(tag 0)[Name MinVersion MaxVersion] FinalizedFeaturesEpoch(tag 1)
//   FinalizedFeatures(tag 2)[Name MaxVersionLevel MinVersionLevel] ZkMigrationReady(tag 3)
//
// Two rules from the broker side (kafka-broker-notes.md §4):
// - The ApiVersions response always uses response header v0, even at v3 (headers.ts).
// - KIP-511: a request at a version the broker does not support is answered with a v0 body:
//   ErrorCode 35 (UNSUPPORTED_VERSION) plus the full ApiKeys array, from which librdkafka picks
//   its retry version. `unsupportedApiVersionsResponse` builds that answer.
import { ApiKey, supportedApis, type SupportedApi } from '../api-keys.js';
import { ErrorCode } from '../errors.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const apiVersionsRequest = message({
  name: 'ApiVersionsRequest',
  apiKey: ApiKey.ApiVersions,
  validVersions: '0-3',
  flexibleVersions: '3+',
  fields: [f('clientSoftwareName', 'string', '3+'), f('clientSoftwareVersion', 'string', '3+')],
});

export const apiVersionsResponse = message({
  name: 'ApiVersionsResponse',
  apiKey: ApiKey.ApiVersions,
  validVersions: '0-3',
  flexibleVersions: '3+',
  fields: [
    f('errorCode', 'int16', '0+'),
    list('apiKeys', '0+', [f('apiKey', 'int16', '0+'), f('minVersion', 'int16', '0+'), f('maxVersion', 'int16', '0+')]),
    f('throttleTimeMs', 'int32', '1+'),
    list(
      'supportedFeatures',
      '3+',
      [f('name', 'string', '3+'), f('minVersion', 'int16', '3+'), f('maxVersion', 'int16', '3+')],
      { tag: 0, tagged: '3+' },
    ),
    f('finalizedFeaturesEpoch', 'int64', '3+', { tag: 1, tagged: '3+', default: '-1' }),
    list(
      'finalizedFeatures',
      '3+',
      [f('name', 'string', '3+'), f('maxVersionLevel', 'int16', '3+'), f('minVersionLevel', 'int16', '3+')],
      { tag: 2, tagged: '3+' },
    ),
    f('zkMigrationReady', 'bool', '3+', { tag: 3, tagged: '3+', default: 'false' }),
  ],
});

export type ApiVersionsRequest = MessageOf<typeof apiVersionsRequest>;
export type ApiVersionsRequestInput = MessageInputOf<typeof apiVersionsRequest>;
export type ApiVersionsResponse = MessageOf<typeof apiVersionsResponse>;
export type ApiVersionsResponseInput = MessageInputOf<typeof apiVersionsResponse>;

/** The ApiKeys array for a list of supported APIs. */
export function apiKeysList(apis: readonly SupportedApi[] = supportedApis): ApiVersionsResponse['apiKeys'] {
  return apis.map((a) => ({ apiKey: a.key, minVersion: a.minVersion, maxVersion: a.maxVersion }));
}

/**
 * KIP-511: the body (to be encoded at v0) that answers an ApiVersions request whose version is
 * not supported: UNSUPPORTED_VERSION plus every supported API, so the client can retry.
 */
export function unsupportedApiVersionsResponse(apis: readonly SupportedApi[] = supportedApis): ApiVersionsResponseInput {
  return { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: apiKeysList(apis) };
}
