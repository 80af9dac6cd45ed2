import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { findCoordinatorHandler } from '../../../../src/protocols/kafka/handlers/find-coordinator.js';
import { groupsHarness } from './groups-harness.js';

describe('FindCoordinator handler', () => {
  it('v0 names this node as the coordinator of any group', async (t) => {
    const h = await groupsHarness(t);
    const res = await h.call(findCoordinatorHandler, 0, { key: 'my-group' });
    assert.deepEqual([res.errorCode, res.nodeId, res.host, res.port], [0, 1, '127.0.0.1', 19092]);
    const v1 = await h.call(findCoordinatorHandler, 1, { key: 'my-group', keyType: 0 });
    assert.deepEqual(v1, { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: 1, host: '127.0.0.1', port: 19092, coordinators: [] });
  });

  it('v1-3 answer key type 1 (transactional id) with this node as well', async (t) => {
    const h = await groupsHarness(t);
    for (const version of [1, 2, 3]) {
      const res = await h.call(findCoordinatorHandler, version, { key: 'txn-1', keyType: 1 });
      assert.equal(res.errorCode, ErrorCode.NONE);
      assert.equal(res.nodeId, 1);
      assert.equal(res.port, 19092);
    }
  });

  it('an unknown key type is INVALID_REQUEST with no node (v3)', async (t) => {
    const h = await groupsHarness(t);
    const res = await h.call(findCoordinatorHandler, 3, { key: 'g', keyType: 2 });
    assert.equal(res.errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal(res.nodeId, -1);
    assert.equal(res.host, '');
    assert.equal(res.port, -1);
    assert.equal(typeof res.errorMessage, 'string');
  });

  it('v4 answers every batched key, in order', async (t) => {
    const h = await groupsHarness(t);
    const res = await h.call(findCoordinatorHandler, 4, { keyType: 0, coordinatorKeys: ['a', 'b', 'c'] });
    assert.deepEqual(
      res.coordinators.map((c) => [c.key, c.nodeId, c.host, c.port, c.errorCode]),
      [
        ['a', 1, '127.0.0.1', 19092, 0],
        ['b', 1, '127.0.0.1', 19092, 0],
        ['c', 1, '127.0.0.1', 19092, 0],
      ],
    );
    const txn = await h.call(findCoordinatorHandler, 4, { keyType: 1, coordinatorKeys: ['t1'] });
    assert.equal(txn.coordinators[0]!.errorCode, ErrorCode.NONE);
  });

  it('v4 with an unknown key type answers INVALID_REQUEST for every key', async (t) => {
    const h = await groupsHarness(t);
    const res = await h.call(findCoordinatorHandler, 4, { keyType: 9, coordinatorKeys: ['a', 'b'] });
    assert.deepEqual(res.coordinators.map((c) => [c.key, c.errorCode, c.nodeId]), [
      ['a', ErrorCode.INVALID_REQUEST, -1],
      ['b', ErrorCode.INVALID_REQUEST, -1],
    ]);
  });

  it('the error response carries the code per key (v4) or at the top (v2)', async (t) => {
    const h = await groupsHarness(t);
    const context = { frontend: h.frontend, session: h.session, header: { apiKey: 10, apiVersion: 4, correlationId: 1, clientId: null, headerVersion: 2 as const }, version: 4 };
    const v4 = findCoordinatorHandler.errorResponse!({ key: '', keyType: 0, coordinatorKeys: ['x'] }, ErrorCode.COORDINATOR_NOT_AVAILABLE, context);
    assert.deepEqual(v4.coordinators?.map((c) => [c.key, c.errorCode]), [['x', ErrorCode.COORDINATOR_NOT_AVAILABLE]]);
    const v2 = findCoordinatorHandler.errorResponse!({ key: 'x', keyType: 0, coordinatorKeys: [] }, ErrorCode.COORDINATOR_NOT_AVAILABLE, { ...context, version: 2 });
    assert.equal(v2.errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  });
});
