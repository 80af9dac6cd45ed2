// DescribeCluster (key 60), v0-1. Grammar: codec/messages/describe-cluster.ts.
//
// One broker, which is also the controller. As AuthHelper.computeDescribeClusterResponse: v1's
// endpoint_type must be BROKER (1); CONTROLLER (2) → MISMATCHED_ENDPOINT_TYPE (114), any other →
// UNSUPPORTED_ENDPOINT_TYPE (115); v0 cannot ask for anything else. Quartet has no ACLs, so when
// cluster authorized operations are asked for, every cluster operation is allowed; otherwise the
// schema default (Int32 min) says "not requested".

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

export const describeClusterHandler = defineHandler({
  apiKey: ApiKey.DescribeCluster,
  minVersion: 0,
  maxVersion: 1,
  handle(request, { frontend }) {
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
      clusterAuthorizedOperations: request.includeClusterAuthorizedOperations ? clusterAuthorizedOperationsAll : -2147483648,
    };
  },
});
