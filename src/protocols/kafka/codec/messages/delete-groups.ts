// DeleteGroups (key 42). Transcribed from apache/kafka DeleteGroupsRequest.json /
// DeleteGroupsResponse.json (flexible 2+); franz-go 42_delete_groups.
//
// DeleteGroupsRequest => GroupsNames[string]
// DeleteGroupsResponse => ThrottleTimeMs Results[GroupId ErrorCode]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const deleteGroupsRequest = message({
  name: 'DeleteGroupsRequest',
  apiKey: ApiKey.DeleteGroups,
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [arr('groupsNames', 'string', '0+')],
});

export const deleteGroupsResponse = message({
  name: 'DeleteGroupsResponse',
  apiKey: ApiKey.DeleteGroups,
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('results', '0+', [f('groupId', 'string', '0+'), f('errorCode', 'int16', '0+')]),
  ],
});

export type DeleteGroupsRequest = MessageOf<typeof deleteGroupsRequest>;
export type DeleteGroupsRequestInput = MessageInputOf<typeof deleteGroupsRequest>;
export type DeleteGroupsResponse = MessageOf<typeof deleteGroupsResponse>;
export type DeleteGroupsResponseInput = MessageInputOf<typeof deleteGroupsResponse>;
