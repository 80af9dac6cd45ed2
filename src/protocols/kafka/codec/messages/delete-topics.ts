// DeleteTopics (key 20). Transcribed from apache/kafka DeleteTopicsRequest.json /
// DeleteTopicsResponse.json (flexible 4+); franz-go generate/definitions/20_delete_topics.
//
// DeleteTopicsRequest => Topics(v6+)[Name(nullable) TopicId] TopicNames(v0-5)[string] TimeoutMs
// DeleteTopicsResponse => ThrottleTimeMs(v1+) Responses[Name(nullable v6+) TopicId(v6+) ErrorCode
//   ErrorMessage(v5+)]
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const deleteTopicsRequest = message({
  name: 'DeleteTopicsRequest',
  apiKey: ApiKey.DeleteTopics,
  validVersions: '0-6',
  flexibleVersions: '4+',
  fields: [
    list('topics', '6+', [f('name', 'string', '6+', { nullable: '6+', default: 'null' }), f('topicId', 'uuid', '6+')]),
    arr('topicNames', 'string', '0-5'),
    f('timeoutMs', 'int32', '0+'),
  ],
});

export const deleteTopicsResponse = message({
  name: 'DeleteTopicsResponse',
  apiKey: ApiKey.DeleteTopics,
  validVersions: '0-6',
  flexibleVersions: '4+',
  fields: [
    f('throttleTimeMs', 'int32', '1+'),
    list('responses', '0+', [
      f('name', 'string', '0+', { nullable: '6+' }),
      f('topicId', 'uuid', '6+'),
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '5+', { nullable: '5+', default: 'null' }),
    ]),
  ],
});

export type DeleteTopicsRequest = MessageOf<typeof deleteTopicsRequest>;
export type DeleteTopicsRequestInput = MessageInputOf<typeof deleteTopicsRequest>;
export type DeleteTopicsResponse = MessageOf<typeof deleteTopicsResponse>;
export type DeleteTopicsResponseInput = MessageInputOf<typeof deleteTopicsResponse>;
