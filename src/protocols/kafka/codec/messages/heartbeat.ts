// Heartbeat (key 12). Transcribed from apache/kafka HeartbeatRequest.json /
// HeartbeatResponse.json (flexible 4+); franz-go generate/definitions/12_heartbeat.
//
// HeartbeatRequest => GroupId GenerationId MemberId GroupInstanceId(v3+)
// HeartbeatResponse => ThrottleTimeMs(v1+) ErrorCode
import { ApiKey } from '../api-keys.js';
import { f, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const heartbeatRequest = message({
  name: 'HeartbeatRequest',
  apiKey: ApiKey.Heartbeat,
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    f('groupId', 'string', '0+'),
    f('generationId', 'int32', '0+'),
    f('memberId', 'string', '0+'),
    f('groupInstanceId', 'string', '3+', { nullable: '3+', default: 'null' }),
  ],
});

export const heartbeatResponse = message({
  name: 'HeartbeatResponse',
  apiKey: ApiKey.Heartbeat,
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [f('throttleTimeMs', 'int32', '1+'), f('errorCode', 'int16', '0+')],
});

export type HeartbeatRequest = MessageOf<typeof heartbeatRequest>;
export type HeartbeatRequestInput = MessageInputOf<typeof heartbeatRequest>;
export type HeartbeatResponse = MessageOf<typeof heartbeatResponse>;
export type HeartbeatResponseInput = MessageInputOf<typeof heartbeatResponse>;
