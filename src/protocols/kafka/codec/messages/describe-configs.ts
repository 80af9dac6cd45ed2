// DescribeConfigs (key 32). Transcribed from apache/kafka DescribeConfigsRequest.json /
// DescribeConfigsResponse.json (flexible 4+); franz-go 32_describe_configs.
//
// DescribeConfigsRequest => Resources[ResourceType ResourceName ConfigurationKeys(nullable)]
//   IncludeSynonyms(v1+) IncludeDocumentation(v3+)
// DescribeConfigsResponse => ThrottleTimeMs Results[ErrorCode ErrorMessage ResourceType ResourceName
//   Configs[Name Value ReadOnly IsDefault(v0) ConfigSource(v1+) IsSensitive
//   Synonyms(v1+)[Name Value Source] ConfigType(v3+) Documentation(v3+)]]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const describeConfigsRequest = message({
  name: 'DescribeConfigsRequest',
  apiKey: ApiKey.DescribeConfigs,
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    list('resources', '0+', [
      f('resourceType', 'int8', '0+'),
      f('resourceName', 'string', '0+'),
      arr('configurationKeys', 'string', '0+', { nullable: '0+' }),
    ]),
    f('includeSynonyms', 'bool', '1+', { default: 'false' }),
    f('includeDocumentation', 'bool', '3+', { default: 'false' }),
  ],
});

export const describeConfigsResponse = message({
  name: 'DescribeConfigsResponse',
  apiKey: ApiKey.DescribeConfigs,
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('results', '0+', [
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '0+', { nullable: '0+' }),
      f('resourceType', 'int8', '0+'),
      f('resourceName', 'string', '0+'),
      list('configs', '0+', [
        f('name', 'string', '0+'),
        f('value', 'string', '0+', { nullable: '0+' }),
        f('readOnly', 'bool', '0+'),
        f('isDefault', 'bool', '0'),
        f('configSource', 'int8', '1+', { default: '-1' }),
        f('isSensitive', 'bool', '0+'),
        list('synonyms', '1+', [
          f('name', 'string', '1+'),
          f('value', 'string', '1+', { nullable: '0+' }),
          f('source', 'int8', '1+'),
        ]),
        f('configType', 'int8', '3+', { default: '0' }),
        f('documentation', 'string', '3+', { nullable: '0+' }),
      ]),
    ]),
  ],
});

export type DescribeConfigsRequest = MessageOf<typeof describeConfigsRequest>;
export type DescribeConfigsRequestInput = MessageInputOf<typeof describeConfigsRequest>;
export type DescribeConfigsResponse = MessageOf<typeof describeConfigsResponse>;
export type DescribeConfigsResponseInput = MessageInputOf<typeof describeConfigsResponse>;
