// IncrementalAlterConfigs (key 44). Transcribed from apache/kafka
// IncrementalAlterConfigsRequest.json / IncrementalAlterConfigsResponse.json (flexible 1+);
// franz-go 44_incremental_alter_configs. The resource and result shape is AlterConfigs' too
// (config-resources.ts); only the config entry differs.
//
// IncrementalAlterConfigsRequest => Resources[ResourceType ResourceName
//   Configs[Name ConfigOperation Value(nullable)]] ValidateOnly
// IncrementalAlterConfigsResponse => ThrottleTimeMs Responses[ErrorCode ErrorMessage ResourceType
//   ResourceName]
import { ApiKey } from '../api-keys.js';
import { f, type MessageInputOf, type MessageOf } from '../schema.js';
import { configResourcesRequest, configResourcesResponse } from './config-resources.js';

const head = { apiKey: ApiKey.IncrementalAlterConfigs, validVersions: '0-1', flexibleVersions: '1+' };

export const incrementalAlterConfigsRequest = configResourcesRequest({ name: 'IncrementalAlterConfigsRequest', ...head }, [
  f('name', 'string', '0+'),
  f('configOperation', 'int8', '0+'),
  f('value', 'string', '0+', { nullable: '0+' }),
]);

export const incrementalAlterConfigsResponse = configResourcesResponse({ name: 'IncrementalAlterConfigsResponse', ...head });

export type IncrementalAlterConfigsRequest = MessageOf<typeof incrementalAlterConfigsRequest>;
export type IncrementalAlterConfigsRequestInput = MessageInputOf<typeof incrementalAlterConfigsRequest>;
export type IncrementalAlterConfigsResponse = MessageOf<typeof incrementalAlterConfigsResponse>;
export type IncrementalAlterConfigsResponseInput = MessageInputOf<typeof incrementalAlterConfigsResponse>;
