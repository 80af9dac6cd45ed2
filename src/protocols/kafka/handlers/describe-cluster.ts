// DescribeCluster (key 60), v0-1. Grammar: codec/messages/describe-cluster.ts.
//
// One broker, which is also the controller. As AuthHelper.computeDescribeClusterResponse: v1's
// endpoint_type must be BROKER (1); CONTROLLER (2) → MISMATCHED_ENDPOINT_TYPE (114), any other →
// UNSUPPORTED_ENDPOINT_TYPE (115); v0 cannot ask for anything else. When cluster authorized
// operations are asked for, they are what the connection's user may do (../access.ts): every
// cluster operation without SASL or for root; for another user DESCRIBE and IDEMPOTENT_WRITE
// (open to all), CREATE with the right to create topics, DESCRIBE_CONFIGS with read_servers, ALTER,
// ALTER_CONFIGS and CLUSTER_ACTION with manage_servers. Otherwise the schema default (Int32 min)
// says "not requested".

import { kafkaAccessOf, type KafkaAccess } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { defineHandler } from './types.js';

const EndpointType = { BROKER: 1, CONTROLLER: 2 } as const;

/** AclOperation codes that apply to the CLUSTER resource (AclOperation.java). */
const clusterOperations = {
  CREATE: 5,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
} as const;

/** The bit field Kafka sends: bit N set = operation N allowed. */
export const clusterAuthorizedOperationsAll = Object.values(clusterOperations).reduce((bits, op) => bits | (1 << op), 0);

function clusterOperationsOf(access: KafkaAccess): number {
  if (!access.restricted) return clusterAuthorizedOperationsAll;
  const allowed: number[] = [clusterOperations.DESCRIBE, clusterOperations.IDEMPOTENT_WRITE];
  if (access.topicNamed('', 'create')) allowed.push(clusterOperations.CREATE);
  if (access.cluster('describeConfigs')) allowed.push(clusterOperations.DESCRIBE_CONFIGS);
  if (access.cluster('alterConfigs')) allowed.push(clusterOperations.ALTER, clusterOperations.ALTER_CONFIGS, clusterOperations.CLUSTER_ACTION);
  return allowed.reduce((bits, op) => bits | (1 << op), 0);
}

export const describeClusterHandler = defineHandler({
  apiKey: ApiKey.DescribeCluster,
  minVersion: 0,
  maxVersion: 1,
  handle(request, { frontend, session }) {
    const type = request.endpointType;
    if (type !== EndpointType.BROKER) {
      const mismatch = type === EndpointType.CONTROLLER;
      return {
        throttleTimeMs: 0,
        errorCode: mismatch ? ErrorCode.MISMATCHED_ENDPOINT_TYPE : ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
        errorMessage: mismatch ? 'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER' : `Unsupported endpoint type ${type}`,
        clusterId: '',
        brokers: [],
      };
    }
    const { host, port } = frontend.advertised();
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      endpointType: EndpointType.BROKER,
      clusterId: frontend.clusterId ?? '',
      controllerId: frontend.nodeId,
      brokers: [{ brokerId: frontend.nodeId, host, port, rack: null }],
      clusterAuthorizedOperations: request.includeClusterAuthorizedOperations ? clusterOperationsOf(kafkaAccessOf(frontend, session)) : -2147483648,
    };
  },
});
