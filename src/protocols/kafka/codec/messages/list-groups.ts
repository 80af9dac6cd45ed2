// ListGroups (key 16). Transcribed from apache/kafka ListGroupsRequest.json /
// ListGroupsResponse.json (flexible 3+); franz-go generate/definitions/16_list_groups.
//
// ListGroupsRequest => StatesFilter(v4+)[string] TypesFilter(v5+)[string]
// ListGroupsResponse => ThrottleTimeMs(v1+) ErrorCode Groups[GroupId ProtocolType GroupState(v4+)
//   GroupType(v5+)]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const listGroupsRequest = message({
  name: 'ListGroupsRequest',
  apiKey: ApiKey.ListGroups,
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [arr('statesFilter', 'string', '4+'), arr('typesFilter', 'string', '5+')],
});

export const listGroupsResponse = message({
  name: 'ListGroupsResponse',
  apiKey: ApiKey.ListGroups,
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '0+'),
    list('groups', '0+', [
      f('groupId', 'string', '0+'),
      f('protocolType', 'string', '0+'),
      f('groupState', 'string', '4+'),
      f('groupType', 'string', '5+'),
    ]),
  ],
});

export type ListGroupsRequest = MessageOf<typeof listGroupsRequest>;
export type ListGroupsRequestInput = MessageInputOf<typeof listGroupsRequest>;
export type ListGroupsResponse = MessageOf<typeof listGroupsResponse>;
export type ListGroupsResponseInput = MessageInputOf<typeof listGroupsResponse>;
