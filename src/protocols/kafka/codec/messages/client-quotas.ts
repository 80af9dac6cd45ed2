// DescribeClientQuotas (48) and AlterClientQuotas (49), v0-1 each (flexible 1+; KIP-546).
// Transcribed from apache/kafka {Describe,Alter}ClientQuotas{Request,Response}.json.
//
// DescribeClientQuotasRequest => Components[EntityType MatchType(int8) Match(nullable)] Strict
// DescribeClientQuotasResponse => ThrottleTimeMs ErrorCode ErrorMessage(nullable)
//   Entries(nullable)[Entity[EntityType EntityName(nullable)] Values[Key Value(float64)]]
// AlterClientQuotasRequest => Entries[Entity[EntityType EntityName(nullable)]
//   Ops[Key Value(float64) Remove]] ValidateOnly
// AlterClientQuotasResponse => ThrottleTimeMs Entries[ErrorCode ErrorMessage(nullable)
//   Entity[EntityType EntityName(nullable)]]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

const entityFields = [f('entityType', 'string', '0+'), f('entityName', 'string', '0+', { nullable: '0+' })] as const;

export const describeClientQuotasRequest = message({
  name: 'DescribeClientQuotasRequest',
  apiKey: ApiKey.DescribeClientQuotas,
  validVersions: '0-1',
  flexibleVersions: '1+',
  fields: [
    list('components', '0+', [
      f('entityType', 'string', '0+'),
      f('matchType', 'int8', '0+'),
      f('match', 'string', '0+', { nullable: '0+' }),
    ]),
    f('strict', 'bool', '0+'),
  ],
});

export const describeClientQuotasResponse = message({
  name: 'DescribeClientQuotasResponse',
  apiKey: ApiKey.DescribeClientQuotas,
  validVersions: '0-1',
  flexibleVersions: '1+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('errorMessage', 'string', '0+', { nullable: '0+' }),
    list('entries', '0+', [
      list('entity', '0+', entityFields),
      list('values', '0+', [f('key', 'string', '0+'), f('value', 'float64', '0+')]),
    ], { nullable: '0+' }),
  ],
});

export const alterClientQuotasRequest = message({
  name: 'AlterClientQuotasRequest',
  apiKey: ApiKey.AlterClientQuotas,
  validVersions: '0-1',
  flexibleVersions: '1+',
  fields: [
    list('entries', '0+', [
      list('entity', '0+', entityFields),
      list('ops', '0+', [f('key', 'string', '0+'), f('value', 'float64', '0+'), f('remove', 'bool', '0+')]),
    ]),
    f('validateOnly', 'bool', '0+'),
  ],
});

export const alterClientQuotasResponse = message({
  name: 'AlterClientQuotasResponse',
  apiKey: ApiKey.AlterClientQuotas,
  validVersions: '0-1',
  flexibleVersions: '1+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('entries', '0+', [
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '0+', { nullable: '0+' }),
      list('entity', '0+', entityFields),
    ]),
  ],
});

export type DescribeClientQuotasRequest = MessageOf<typeof describeClientQuotasRequest>;
export type DescribeClientQuotasResponseInput = MessageInputOf<typeof describeClientQuotasResponse>;
export type AlterClientQuotasRequest = MessageOf<typeof alterClientQuotasRequest>;
export type AlterClientQuotasResponseInput = MessageInputOf<typeof alterClientQuotasResponse>;
