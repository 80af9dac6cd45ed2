// DescribeCluster (key 60). Transcribed from apache/kafka DescribeClusterRequest.json /
// DescribeClusterResponse.json (flexible 0+); franz-go 60_describe_cluster.
//
// DescribeClusterRequest => IncludeClusterAuthorizedOperations EndpointType(v1+)
//   IncludeFencedBrokers(v2+)
// DescribeClusterResponse => ThrottleTimeMs ErrorCode ErrorMessage EndpointType(v1+) ClusterId
//   ControllerId Brokers[BrokerId Host Port Rack IsFenced(v2+)] ClusterAuthorizedOperations
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const describeClusterRequest = message({
  name: 'DescribeClusterRequest',
  apiKey: ApiKey.DescribeCluster,
  validVersions: '0-1',
  flexibleVersions: '0+',
  fields: [
    f('includeClusterAuthorizedOperations', 'bool', '0+'),
    f('endpointType', 'int8', '1+', { default: '1' }),
    f('includeFencedBrokers', 'bool', '2+', { default: 'false' }),
  ],
});

export const describeClusterResponse = message({
  name: 'DescribeClusterResponse',
  apiKey: ApiKey.DescribeCluster,
  validVersions: '0-1',
  flexibleVersions: '0+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('errorMessage', 'string', '0+', { nullable: '0+', default: 'null' }),
    f('endpointType', 'int8', '1+', { default: '1' }),
    f('clusterId', 'string', '0+'),
    f('controllerId', 'int32', '0+', { default: '-1' }),
    list('brokers', '0+', [
      f('brokerId', 'int32', '0+'),
      f('host', 'string', '0+'),
      f('port', 'int32', '0+'),
      f('rack', 'string', '0+', { nullable: '0+', default: 'null' }),
      f('isFenced', 'bool', '2+', { default: 'false' }),
    ]),
    f('clusterAuthorizedOperations', 'int32', '0+', { default: '-2147483648' }),
  ],
});

export type DescribeClusterRequest = MessageOf<typeof describeClusterRequest>;
export type DescribeClusterRequestInput = MessageInputOf<typeof describeClusterRequest>;
export type DescribeClusterResponse = MessageOf<typeof describeClusterResponse>;
export type DescribeClusterResponseInput = MessageInputOf<typeof describeClusterResponse>;
