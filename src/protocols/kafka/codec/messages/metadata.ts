// Metadata (key 3). Transcribed from apache/kafka MetadataRequest.json / MetadataResponse.json
// (flexible 9+) and franz-go generate/definitions/03_metadata (v10 topic ids, v11 removal of the
// cluster authorized operations, v12 nullable topic name in the response).
//
// MetadataRequest => Topics(nullable v1+)[TopicId(v10+) Name(nullable v10+)]
//   AllowAutoTopicCreation(v4+) IncludeClusterAuthorizedOperations(v8-10)
//   IncludeTopicAuthorizedOperations(v8+)
//   (v0: an empty Topics array means all topics; v1+: null means all topics)
// MetadataResponse => ThrottleTimeMs(v3+) Brokers[NodeId Host Port Rack(v1+)] ClusterId(v2+)
//   ControllerId(v1+) Topics[ErrorCode Name(nullable v12+) TopicId(v10+) IsInternal(v1+)
//   Partitions[ErrorCode PartitionIndex LeaderId LeaderEpoch(v7+) ReplicaNodes IsrNodes
//   OfflineReplicas(v5+)] TopicAuthorizedOperations(v8+)] ClusterAuthorizedOperations(v8-10)
import { ApiKey } from '../api-keys.js';
import { arr, f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const metadataRequest = message({
  name: 'MetadataRequest',
  apiKey: ApiKey.Metadata,
  validVersions: '0-12',
  flexibleVersions: '9+',
  fields: [
    list('topics', '0+', [f('topicId', 'uuid', '10+'), f('name', 'string', '0+', { nullable: '10+' })], {
      nullable: '1+',
    }),
    f('allowAutoTopicCreation', 'bool', '4+', { default: 'true' }),
    f('includeClusterAuthorizedOperations', 'bool', '8-10'),
    f('includeTopicAuthorizedOperations', 'bool', '8+'),
  ],
});

export const metadataResponse = message({
  name: 'MetadataResponse',
  apiKey: ApiKey.Metadata,
  validVersions: '0-12',
  flexibleVersions: '9+',
  fields: [
    f('throttleTimeMs', 'int32', '3+'),
    list('brokers', '0+', [
      f('nodeId', 'int32', '0+'),
      f('host', 'string', '0+'),
      f('port', 'int32', '0+'),
      f('rack', 'string', '1+', { nullable: '1+', default: 'null' }),
    ]),
    f('clusterId', 'string', '2+', { nullable: '2+', default: 'null' }),
    f('controllerId', 'int32', '1+', { default: '-1' }),
    list('topics', '0+', [
      f('errorCode', 'int16', '0+'),
      f('name', 'string', '0+', { nullable: '12+' }),
      f('topicId', 'uuid', '10+'),
      f('isInternal', 'bool', '1+', { default: 'false' }),
      list('partitions', '0+', [
        f('errorCode', 'int16', '0+'),
        f('partitionIndex', 'int32', '0+'),
        f('leaderId', 'int32', '0+'),
        f('leaderEpoch', 'int32', '7+', { default: '-1' }),
        arr('replicaNodes', 'int32', '0+'),
        arr('isrNodes', 'int32', '0+'),
        arr('offlineReplicas', 'int32', '5+'),
      ]),
      f('topicAuthorizedOperations', 'int32', '8+', { default: '-2147483648' }),
    ]),
    f('clusterAuthorizedOperations', 'int32', '8-10', { default: '-2147483648' }),
  ],
});

export type MetadataRequest = MessageOf<typeof metadataRequest>;
export type MetadataRequestInput = MessageInputOf<typeof metadataRequest>;
export type MetadataResponse = MessageOf<typeof metadataResponse>;
export type MetadataResponseInput = MessageInputOf<typeof metadataResponse>;
