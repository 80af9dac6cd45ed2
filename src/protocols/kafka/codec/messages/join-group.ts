// JoinGroup (key 11). Transcribed from apache/kafka JoinGroupRequest.json /
// JoinGroupResponse.json (flexible 6+); franz-go generate/definitions/11_join_group.
//
// JoinGroupRequest => GroupId SessionTimeoutMs RebalanceTimeoutMs(v1+) MemberId
//   GroupInstanceId(v5+) ProtocolType Protocols[Name Metadata] Reason(v8+)
// JoinGroupResponse => ThrottleTimeMs(v2+) ErrorCode GenerationId ProtocolType(v7+)
//   ProtocolName(nullable v7+) Leader SkipAssignment(v9+) MemberId
//   Members[MemberId GroupInstanceId(v5+) Metadata]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const joinGroupRequest = message({
  name: 'JoinGroupRequest',
  apiKey: ApiKey.JoinGroup,
  validVersions: '0-7',
  flexibleVersions: '6+',
  fields: [
    f('groupId', 'string', '0+'),
    f('sessionTimeoutMs', 'int32', '0+'),
    f('rebalanceTimeoutMs', 'int32', '1+', { default: '-1' }),
    f('memberId', 'string', '0+'),
    f('groupInstanceId', 'string', '5+', { nullable: '5+', default: 'null' }),
    f('protocolType', 'string', '0+'),
    list('protocols', '0+', [f('name', 'string', '0+'), f('metadata', 'bytes', '0+')]),
    f('reason', 'string', '8+', { nullable: '8+', default: 'null' }),
  ],
});

export const joinGroupResponse = message({
  name: 'JoinGroupResponse',
  apiKey: ApiKey.JoinGroup,
  validVersions: '0-7',
  flexibleVersions: '6+',
  fields: [
    f('throttleTimeMs', 'int32', '2+'),
    f('errorCode', 'int16', '0+'),
    f('generationId', 'int32', '0+', { default: '-1' }),
    f('protocolType', 'string', '7+', { nullable: '7+', default: 'null' }),
    f('protocolName', 'string', '0+', { nullable: '7+' }),
    f('leader', 'string', '0+'),
    f('skipAssignment', 'bool', '9+', { default: 'false' }),
    f('memberId', 'string', '0+'),
    list('members', '0+', [
      f('memberId', 'string', '0+'),
      f('groupInstanceId', 'string', '5+', { nullable: '5+', default: 'null' }),
      f('metadata', 'bytes', '0+'),
    ]),
  ],
});

export type JoinGroupRequest = MessageOf<typeof joinGroupRequest>;
export type JoinGroupRequestInput = MessageInputOf<typeof joinGroupRequest>;
export type JoinGroupResponse = MessageOf<typeof joinGroupResponse>;
export type JoinGroupResponseInput = MessageInputOf<typeof joinGroupResponse>;
