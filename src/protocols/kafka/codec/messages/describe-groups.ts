// DescribeGroups (key 15). Transcribed from apache/kafka DescribeGroupsRequest.json /
// DescribeGroupsResponse.json (flexible 5+); franz-go generate/definitions/15_describe_groups.
//
// DescribeGroupsRequest => Groups[string] IncludeAuthorizedOperations(v3+)
// DescribeGroupsResponse => ThrottleTimeMs(v1+) Groups[ErrorCode ErrorMessage(v6+) GroupId
//   GroupState ProtocolType ProtocolData Members[MemberId GroupInstanceId(v4+) ClientId ClientHost
//   MemberMetadata MemberAssignment] AuthorizedOperations(v3+)]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const describeGroupsRequest = message({
  name: 'DescribeGroupsRequest',
  apiKey: ApiKey.DescribeGroups,
  validVersions: '0-5',
  flexibleVersions: '5+',
  fields: [arr('groups', 'string', '0+'), f('includeAuthorizedOperations', 'bool', '3+')],
});

export const describeGroupsResponse = message({
  name: 'DescribeGroupsResponse',
  apiKey: ApiKey.DescribeGroups,
  validVersions: '0-5',
  flexibleVersions: '5+',
  fields: [
    f('throttleTimeMs', 'int32', '1+'),
    list('groups', '0+', [
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '6+', { nullable: '6+', default: 'null' }),
      f('groupId', 'string', '0+'),
      f('groupState', 'string', '0+'),
      f('protocolType', 'string', '0+'),
      f('protocolData', 'string', '0+'),
      list('members', '0+', [
        f('memberId', 'string', '0+'),
        f('groupInstanceId', 'string', '4+', { nullable: '4+', default: 'null' }),
        f('clientId', 'string', '0+'),
        f('clientHost', 'string', '0+'),
        f('memberMetadata', 'bytes', '0+'),
        f('memberAssignment', 'bytes', '0+'),
      ]),
      f('authorizedOperations', 'int32', '3+', { default: '-2147483648' }),
    ]),
  ],
});

export type DescribeGroupsRequest = MessageOf<typeof describeGroupsRequest>;
export type DescribeGroupsRequestInput = MessageInputOf<typeof describeGroupsRequest>;
export type DescribeGroupsResponse = MessageOf<typeof describeGroupsResponse>;
export type DescribeGroupsResponseInput = MessageInputOf<typeof describeGroupsResponse>;
