import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { clusterAuthorizedOperationsAll, describeClusterHandler } from '../../../../src/protocols/kafka/handlers/describe-cluster.js';
import { adminHarness } from './admin-harness.js';

describe('DescribeCluster', () => {
  it('describes the single broker as the controller', async (t) => {
    const h = await adminHarness(t);
    const res = await h.call(describeClusterHandler, 1, { includeClusterAuthorizedOperations: false, endpointType: 1 });
    assert.deepEqual(res, {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      endpointType: 1,
      clusterId: 'test-cluster-id',
      controllerId: 1,
      brokers: [{ brokerId: 1, host: '127.0.0.1', port: 19092, rack: null, isFenced: false }],
      clusterAuthorizedOperations: -2147483648,
    });
  });

  it('reports every cluster operation as allowed when asked (v0)', async (t) => {
    const h = await adminHarness(t);
    const res = await h.call(describeClusterHandler, 0, { includeClusterAuthorizedOperations: true });
    assert.equal(res.errorCode, 0);
    assert.equal(res.clusterAuthorizedOperations, clusterAuthorizedOperationsAll);
    // CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE.
    assert.equal(clusterAuthorizedOperationsAll, (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12));
  });

  it('refuses controller and unknown endpoint types', async (t) => {
    const h = await adminHarness(t);
    const controller = await h.call(describeClusterHandler, 1, { endpointType: 2 });
    assert.equal(controller.errorCode, ErrorCode.MISMATCHED_ENDPOINT_TYPE);
    assert.equal(controller.errorMessage, 'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER');
    assert.deepEqual(controller.brokers, []);
    const other = await h.call(describeClusterHandler, 1, { endpointType: 3 });
    assert.equal(other.errorCode, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE);
    assert.equal(other.errorMessage, 'Unsupported endpoint type 3');
  });
});
