// IncrementalAlterConfigs (key 44). Transcribed from apache/kafka
// IncrementalAlterConfigsRequest.json / IncrementalAlterConfigsResponse.json (flexible 1+);
// franz-go 44_incremental_alter_configs.
//
// IncrementalAlterConfigsRequest => Resources[ResourceType ResourceName
//   Configs[Name ConfigOperation Value(nullable)]] ValidateOnly
// IncrementalAlterConfigsResponse => ThrottleTimeMs Responses[ErrorCode ErrorMessage ResourceType
//   ResourceName]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const incrementalAlterConfigsRequest = message({
  name: 'IncrementalAlterConfigsRequest',
  apiKey: ApiKey.IncrementalAlterConfigs,
  validVersions: '0-1',
  flexibleVersions: '1+',
  fields: [
    list('resources', '0+', [
      f('resourceType', 'int8', '0+'),
      f('resourceName', 'string', '0+'),
      list('configs', '0+', [
        f('name', 'string', '0+'),
        f('configOperation', 'int8', '0+'),
        f('value', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
    f('validateOnly', 'bool', '0+'),
  ],
});

export const incrementalAlterConfigsResponse = message({
  name: 'IncrementalAlterConfigsResponse',
  apiKey: ApiKey.IncrementalAlterConfigs,
  validVersions: '0-1',
  flexibleVersions: '1+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('responses', '0+', [
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '0+', { nullable: '0+' }),
      f('resourceType', 'int8', '0+'),
      f('resourceName', 'string', '0+'),
    ]),
  ],
});

export type IncrementalAlterConfigsRequest = MessageOf<typeof incrementalAlterConfigsRequest>;
export type IncrementalAlterConfigsRequestInput = MessageInputOf<typeof incrementalAlterConfigsRequest>;
export type IncrementalAlterConfigsResponse = MessageOf<typeof incrementalAlterConfigsResponse>;
export type IncrementalAlterConfigsResponseInput = MessageInputOf<typeof incrementalAlterConfigsResponse>;
