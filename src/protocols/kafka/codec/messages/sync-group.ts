// SyncGroup (key 14). Transcribed from apache/kafka SyncGroupRequest.json /
// SyncGroupResponse.json (flexible 4+); franz-go generate/definitions/14_sync_group.
//
// SyncGroupRequest => GroupId GenerationId MemberId GroupInstanceId(v3+) ProtocolType(v5+)
//   ProtocolName(v5+) Assignments[MemberId Assignment]
// SyncGroupResponse => ThrottleTimeMs(v1+) ErrorCode ProtocolType(v5+) ProtocolName(v5+) Assignment
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const syncGroupRequest = message({
  name: 'SyncGroupRequest',
  apiKey: ApiKey.SyncGroup,
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    f('groupId', 'string', '0+'),
    f('generationId', 'int32', '0+'),
    f('memberId', 'string', '0+'),
    f('groupInstanceId', 'string', '3+', { nullable: '3+', default: 'null' }),
    f('protocolType', 'string', '5+', { nullable: '5+', default: 'null' }),
    f('protocolName', 'string', '5+', { nullable: '5+', default: 'null' }),
    list('assignments', '0+', [f('memberId', 'string', '0+'), f('assignment', 'bytes', '0+')]),
  ],
});

export const syncGroupResponse = message({
  name: 'SyncGroupResponse',
  apiKey: ApiKey.SyncGroup,
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '0+'),
    f('protocolType', 'string', '5+', { nullable: '5+', default: 'null' }),
    f('protocolName', 'string', '5+', { nullable: '5+', default: 'null' }),
    f('assignment', 'bytes', '0+'),
  ],
});

export type SyncGroupRequest = MessageOf<typeof syncGroupRequest>;
export type SyncGroupRequestInput = MessageInputOf<typeof syncGroupRequest>;
export type SyncGroupResponse = MessageOf<typeof syncGroupResponse>;
export type SyncGroupResponseInput = MessageInputOf<typeof syncGroupResponse>;
