// AlterConfigs (key 33), the legacy whole-set replacement. Transcribed from apache/kafka
// AlterConfigsRequest.json / AlterConfigsResponse.json (v1 = v0; flexible 2+). The resource and
// result shape is IncrementalAlterConfigs' too (config-resources.ts).
//
// AlterConfigsRequest => Resources[ResourceType ResourceName Configs[Name Value(nullable)]]
//   ValidateOnly
// AlterConfigsResponse => ThrottleTimeMs Responses[ErrorCode ErrorMessage(nullable) ResourceType
//   ResourceName]
import { ApiKey } from '../api-keys.js';
import { f, type MessageInputOf, type MessageOf } from '../schema.js';
import { configResourcesRequest, configResourcesResponse } from './config-resources.js';

const head = { apiKey: ApiKey.AlterConfigs, validVersions: '0-2', flexibleVersions: '2+' };

export const alterConfigsRequest = configResourcesRequest({ name: 'AlterConfigsRequest', ...head }, [
  f('name', 'string', '0+'),
  f('value', 'string', '0+', { nullable: '0+' }),
]);

export const alterConfigsResponse = configResourcesResponse({ name: 'AlterConfigsResponse', ...head });

export type AlterConfigsRequest = MessageOf<typeof alterConfigsRequest>;
export type AlterConfigsRequestInput = MessageInputOf<typeof alterConfigsRequest>;
export type AlterConfigsResponse = MessageOf<typeof alterConfigsResponse>;
export type AlterConfigsResponseInput = MessageInputOf<typeof alterConfigsResponse>;
