// LeaveGroup (key 13). Transcribed from apache/kafka LeaveGroupRequest.json /
// LeaveGroupResponse.json (flexible 4+); franz-go generate/definitions/13_leave_group.
//
// LeaveGroupRequest => GroupId MemberId(v0-2) Members(v3+)[MemberId GroupInstanceId Reason(v5+)]
// LeaveGroupResponse => ThrottleTimeMs(v1+) ErrorCode Members(v3+)[MemberId GroupInstanceId ErrorCode]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const leaveGroupRequest = message({
  name: 'LeaveGroupRequest',
  apiKey: ApiKey.LeaveGroup,
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    f('groupId', 'string', '0+'),
    f('memberId', 'string', '0-2'),
    list('members', '3+', [
      f('memberId', 'string', '3+'),
      f('groupInstanceId', 'string', '3+', { nullable: '3+', default: 'null' }),
      f('reason', 'string', '5+', { nullable: '5+', default: 'null' }),
    ]),
  ],
});

export const leaveGroupResponse = message({
  name: 'LeaveGroupResponse',
  apiKey: ApiKey.LeaveGroup,
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '0+'),
    list('members', '3+', [
      f('memberId', 'string', '3+'),
      f('groupInstanceId', 'string', '3+', { nullable: '3+' }),
      f('errorCode', 'int16', '3+'),
    ]),
  ],
});

export type LeaveGroupRequest = MessageOf<typeof leaveGroupRequest>;
export type LeaveGroupRequestInput = MessageInputOf<typeof leaveGroupRequest>;
export type LeaveGroupResponse = MessageOf<typeof leaveGroupResponse>;
export type LeaveGroupResponseInput = MessageInputOf<typeof leaveGroupResponse>;
