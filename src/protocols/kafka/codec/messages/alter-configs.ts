// AlterConfigs (key 33), the legacy whole-set replacement. Transcribed from apache/kafka
// AlterConfigsRequest.json / AlterConfigsResponse.json (v1 = v0; flexible 2+).
//
// AlterConfigsRequest => Resources[ResourceType ResourceName Configs[Name Value(nullable)]]
//   ValidateOnly
// AlterConfigsResponse => ThrottleTimeMs Responses[ErrorCode ErrorMessage(nullable) ResourceType
//   ResourceName]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const alterConfigsRequest = message({
  name: 'AlterConfigsRequest',
  apiKey: ApiKey.AlterConfigs,
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    list('resources', '0+', [
      f('resourceType', 'int8', '0+'),
      f('resourceName', 'string', '0+'),
      list('configs', '0+', [
        f('name', 'string', '0+'),
        f('value', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
    f('validateOnly', 'bool', '0+'),
  ],
});

export const alterConfigsResponse = message({
  name: 'AlterConfigsResponse',
  apiKey: ApiKey.AlterConfigs,
  validVersions: '0-2',
  flexibleVersions: '2+',
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

export type AlterConfigsRequest = MessageOf<typeof alterConfigsRequest>;
export type AlterConfigsRequestInput = MessageInputOf<typeof alterConfigsRequest>;
export type AlterConfigsResponse = MessageOf<typeof alterConfigsResponse>;
export type AlterConfigsResponseInput = MessageInputOf<typeof alterConfigsResponse>;
