// FindCoordinator (key 10). Transcribed from apache/kafka FindCoordinatorRequest.json /
// FindCoordinatorResponse.json (flexible 3+); franz-go generate/definitions/10_find_coordinator.
//
// FindCoordinatorRequest => Key(v0-3) KeyType(v1+) CoordinatorKeys(v4+)[string]
// FindCoordinatorResponse => ThrottleTimeMs(v1+) ErrorCode(v0-3) ErrorMessage(v1-3) NodeId(v0-3)
//   Host(v0-3) Port(v0-3) Coordinators(v4+)[Key NodeId Host Port ErrorCode ErrorMessage]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const findCoordinatorRequest = message({
  name: 'FindCoordinatorRequest',
  apiKey: ApiKey.FindCoordinator,
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [
    f('key', 'string', '0-3'),
    f('keyType', 'int8', '1+', { default: '0' }),
    arr('coordinatorKeys', 'string', '4+'),
  ],
});

export const findCoordinatorResponse = message({
  name: 'FindCoordinatorResponse',
  apiKey: ApiKey.FindCoordinator,
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '0-3'),
    f('errorMessage', 'string', '1-3', { nullable: '1-3' }),
    f('nodeId', 'int32', '0-3'),
    f('host', 'string', '0-3'),
    f('port', 'int32', '0-3'),
    list('coordinators', '4+', [
      f('key', 'string', '4+'),
      f('nodeId', 'int32', '4+'),
      f('host', 'string', '4+'),
      f('port', 'int32', '4+'),
      f('errorCode', 'int16', '4+'),
      f('errorMessage', 'string', '4+', { nullable: '4+' }),
    ]),
  ],
});

export type FindCoordinatorRequest = MessageOf<typeof findCoordinatorRequest>;
export type FindCoordinatorRequestInput = MessageInputOf<typeof findCoordinatorRequest>;
export type FindCoordinatorResponse = MessageOf<typeof findCoordinatorResponse>;
export type FindCoordinatorResponseInput = MessageInputOf<typeof findCoordinatorResponse>;
