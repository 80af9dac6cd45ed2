// DescribeAcls (29), CreateAcls (30) and DeleteAcls (31), v0-3 each (v1 adds the resource pattern
// type, KIP-290, default LITERAL 3; flexible 2+). Transcribed from apache/kafka
// {Describe,Create,Delete}Acls{Request,Response}.json.
//
// DescribeAclsRequest => ResourceTypeFilter ResourceNameFilter(nullable) PatternTypeFilter(v1+)
//   PrincipalFilter(nullable) HostFilter(nullable) Operation PermissionType
// DescribeAclsResponse => ThrottleTimeMs ErrorCode ErrorMessage(nullable)
//   Resources[ResourceType ResourceName PatternType(v1+) Acls[Principal Host Operation PermissionType]]
// CreateAclsRequest => Creations[ResourceType ResourceName ResourcePatternType(v1+) Principal Host
//   Operation PermissionType]
// CreateAclsResponse => ThrottleTimeMs Results[ErrorCode ErrorMessage(nullable)]
// DeleteAclsRequest => Filters[<the DescribeAcls filter fields>]
// DeleteAclsResponse => ThrottleTimeMs FilterResults[ErrorCode ErrorMessage(nullable)
//   MatchingAcls[ErrorCode ErrorMessage(nullable) ResourceType ResourceName PatternType(v1+)
//   Principal Host Operation PermissionType]]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

const filterFields = [
  f('resourceTypeFilter', 'int8', '0+'),
  f('resourceNameFilter', 'string', '0+', { nullable: '0+' }),
  f('patternTypeFilter', 'int8', '1+', { default: '3' }),
  f('principalFilter', 'string', '0+', { nullable: '0+' }),
  f('hostFilter', 'string', '0+', { nullable: '0+' }),
  f('operation', 'int8', '0+'),
  f('permissionType', 'int8', '0+'),
] as const;

export const describeAclsRequest = message({
  name: 'DescribeAclsRequest',
  apiKey: ApiKey.DescribeAcls,
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: filterFields,
});

export const describeAclsResponse = message({
  name: 'DescribeAclsResponse',
  apiKey: ApiKey.DescribeAcls,
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('errorMessage', 'string', '0+', { nullable: '0+' }),
    list('resources', '0+', [
      f('resourceType', 'int8', '0+'),
      f('resourceName', 'string', '0+'),
      f('patternType', 'int8', '1+', { default: '3' }),
      list('acls', '0+', [
        f('principal', 'string', '0+'),
        f('host', 'string', '0+'),
        f('operation', 'int8', '0+'),
        f('permissionType', 'int8', '0+'),
      ]),
    ]),
  ],
});

export const createAclsRequest = message({
  name: 'CreateAclsRequest',
  apiKey: ApiKey.CreateAcls,
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    list('creations', '0+', [
      f('resourceType', 'int8', '0+'),
      f('resourceName', 'string', '0+'),
      f('resourcePatternType', 'int8', '1+', { default: '3' }),
      f('principal', 'string', '0+'),
      f('host', 'string', '0+'),
      f('operation', 'int8', '0+'),
      f('permissionType', 'int8', '0+'),
    ]),
  ],
});

export const createAclsResponse = message({
  name: 'CreateAclsResponse',
  apiKey: ApiKey.CreateAcls,
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('results', '0+', [
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '0+', { nullable: '0+' }),
    ]),
  ],
});

export const deleteAclsRequest = message({
  name: 'DeleteAclsRequest',
  apiKey: ApiKey.DeleteAcls,
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [list('filters', '0+', filterFields)],
});

export const deleteAclsResponse = message({
  name: 'DeleteAclsResponse',
  apiKey: ApiKey.DeleteAcls,
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('filterResults', '0+', [
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '0+', { nullable: '0+' }),
      list('matchingAcls', '0+', [
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '0+', { nullable: '0+' }),
        f('resourceType', 'int8', '0+'),
        f('resourceName', 'string', '0+'),
        f('patternType', 'int8', '1+', { default: '3' }),
        f('principal', 'string', '0+'),
        f('host', 'string', '0+'),
        f('operation', 'int8', '0+'),
        f('permissionType', 'int8', '0+'),
      ]),
    ]),
  ],
});

export type DescribeAclsRequest = MessageOf<typeof describeAclsRequest>;
export type DescribeAclsResponseInput = MessageInputOf<typeof describeAclsResponse>;
export type CreateAclsRequest = MessageOf<typeof createAclsRequest>;
export type CreateAclsResponseInput = MessageInputOf<typeof createAclsResponse>;
export type DeleteAclsRequest = MessageOf<typeof deleteAclsRequest>;
export type DeleteAclsResponseInput = MessageInputOf<typeof deleteAclsResponse>;
