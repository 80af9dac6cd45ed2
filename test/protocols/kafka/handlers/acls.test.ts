// DescribeAcls, CreateAcls and DeleteAcls over Quartet users' grants: a created binding is a
// grant the access checks then honour, and a deleted one takes it away.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mayServer, mayTopic } from '../../../../src/core/access.js';
import { AclOperation as Op, PatternType, PermissionType, ResourceType, type AclFilter } from '../../../../src/protocols/kafka/acls.js';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { createAclsHandler } from '../../../../src/protocols/kafka/handlers/create-acls.js';
import { deleteAclsHandler } from '../../../../src/protocols/kafka/handlers/delete-acls.js';
import { describeAclsHandler } from '../../../../src/protocols/kafka/handlers/describe-acls.js';
import { adminHarness, type AdminHarness } from './admin-harness.js';
import { sessionWith } from './admin-users.js';

const ALLOW = PermissionType.ALLOW;
const LIT = PatternType.LITERAL;
const topicAcl = (name: string, operation: number, principal = 'User:alice', patternType: number = LIT) => ({ resourceType: ResourceType.TOPIC, resourceName: name, resourcePatternType: patternType, principal, host: '*', operation, permissionType: ALLOW });
const anyFilter: AclFilter = { resourceTypeFilter: ResourceType.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: PermissionType.ANY };

function alice(h: AdminHarness) {
  return h.broker.users.get('alice')!;
}

async function described(h: AdminHarness, filter: Partial<typeof anyFilter> = {}, version = 3): Promise<string[]> {
  const res = await h.call(describeAclsHandler, version, { ...anyFilter, ...filter });
  assert.equal(res.errorCode, 0, res.errorMessage ?? '');
  return res.resources.flatMap((r) => r.acls.map((a) => `${r.resourceType}:${r.patternType}:${r.resourceName} ${a.principal} ${a.operation}`)).sort();
}

describe('ACLs over Quartet grants', () => {
  it('creates topic, stream, global and cluster bindings as grants the checks honour, and describes them back', async (t) => {
    const h = await adminHarness(t, { topics: { orders: 1 }, users: { alice: 'alice-pw' } });
    await h.broker.createNamespace('shop');
    const shop = await h.broker.createTopic('shop', 'events', { partitions: 1 });
    const res = await h.call(createAclsHandler, 1, {
      creations: [
        topicAcl('orders', Op.READ),
        topicAcl('orders', Op.DESCRIBE),
        topicAcl('shop.', Op.WRITE, 'User:alice', PatternType.PREFIXED),
        topicAcl('*', Op.DESCRIBE_CONFIGS),
        { resourceType: ResourceType.CLUSTER, resourceName: 'kafka-cluster', resourcePatternType: LIT, principal: 'User:alice', host: '*', operation: Op.DESCRIBE, permissionType: ALLOW },
        { resourceType: ResourceType.GROUP, resourceName: 'g', resourcePatternType: LIT, principal: 'User:alice', host: '*', operation: Op.READ, permissionType: ALLOW },
      ],
    });
    assert.deepEqual(res.results.map((r) => r.errorCode), [0, 0, 0, 0, 0, 0]);
    const orders = h.broker.catalog.getTopic({ topic: 'orders' })!;
    assert.equal(mayTopic(alice(h), orders.namespaceId, orders.id, 'poll'), true);
    assert.equal(mayTopic(alice(h), orders.namespaceId, orders.id, 'send'), false);
    assert.equal(mayTopic(alice(h), shop.namespaceId, shop.id, 'send'), true);
    assert.equal(mayServer(alice(h), 'readServers'), true);
    assert.equal(mayServer(alice(h), 'manageServers'), false);
    assert.deepEqual(await described(h), [
      `${ResourceType.TOPIC}:${LIT}:* User:alice ${Op.DESCRIBE_CONFIGS}`,
      `${ResourceType.TOPIC}:${LIT}:orders User:alice ${Op.READ}`,
      `${ResourceType.TOPIC}:${PatternType.PREFIXED}:shop. User:alice ${Op.WRITE}`,
      `${ResourceType.CLUSTER}:${LIT}:kafka-cluster User:alice ${Op.DESCRIBE}`,
    ].sort());
    assert.deepEqual(await described(h, { resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: 'orders', patternTypeFilter: PatternType.MATCH }), [
      `${ResourceType.TOPIC}:${LIT}:* User:alice ${Op.DESCRIBE_CONFIGS}`,
      `${ResourceType.TOPIC}:${LIT}:orders User:alice ${Op.READ}`,
    ]);
    assert.deepEqual(await described(h, { resourceTypeFilter: ResourceType.TOPIC }, 0), [
      `${ResourceType.TOPIC}:${LIT}:* User:alice ${Op.DESCRIBE_CONFIGS}`,
      `${ResourceType.TOPIC}:${LIT}:orders User:alice ${Op.READ}`,
    ], 'v0 filters on LITERAL patterns');
  });

  it('refuses what Quartet cannot express, each with INVALID_REQUEST and the reason', async (t) => {
    const h = await adminHarness(t, { topics: { orders: 1 }, users: { alice: 'alice-pw' } });
    const res = await h.call(createAclsHandler, 3, {
      creations: [
        { ...topicAcl('orders', Op.READ), permissionType: PermissionType.DENY },
        { ...topicAcl('orders', Op.READ), host: '10.0.0.1' },
        topicAcl('ord', Op.READ, 'User:alice', PatternType.PREFIXED),
        topicAcl('nope', Op.READ),
        topicAcl('orders', Op.READ, 'User:ghost'),
        topicAcl('orders', Op.READ, 'Group:x'),
        topicAcl('orders', Op.CREATE),
        topicAcl('orders', Op.DESCRIBE),
      ],
    });
    assert.deepEqual(res.results.map((r) => r.errorCode), Array(8).fill(ErrorCode.INVALID_REQUEST));
    assert.match(res.results[0]!.errorMessage!, /DENY/);
    assert.match(res.results[7]!.errorMessage!, /DESCRIBE/);
    assert.deepEqual(await described(h), []);
  });

  it('deletes the matching bindings and the grants behind them', async (t) => {
    const h = await adminHarness(t, { topics: { orders: 1, refunds: 1 }, users: { alice: 'alice-pw', bob: 'bob-pw' } });
    await h.call(createAclsHandler, 2, { creations: [topicAcl('orders', Op.READ), topicAcl('orders', Op.WRITE), topicAcl('refunds', Op.READ), topicAcl('orders', Op.READ, 'User:bob')] });
    const res = await h.call(deleteAclsHandler, 2, { filters: [{ ...anyFilter, resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: 'orders', patternTypeFilter: LIT, principalFilter: 'User:alice' }, { ...anyFilter, operation: 0 }] });
    assert.deepEqual(res.filterResults[0]!.matchingAcls.map((m) => [m.resourceName, m.operation, m.errorCode]).sort(), [['orders', Op.READ, 0], ['orders', Op.WRITE, 0]]);
    assert.equal(res.filterResults[1]!.errorCode, ErrorCode.INVALID_REQUEST);
    const orders = h.broker.catalog.getTopic({ topic: 'orders' })!;
    assert.equal(mayTopic(alice(h), orders.namespaceId, orders.id, 'poll'), false);
    assert.deepEqual(await described(h), [`${ResourceType.TOPIC}:${LIT}:orders User:bob ${Op.READ}`, `${ResourceType.TOPIC}:${LIT}:refunds User:alice ${Op.READ}`]);
  });

  it('needs read_users to describe and manage_users to change; grants only rights the granter holds', async (t) => {
    const h = await adminHarness(t, { topics: { orders: 1 }, users: { alice: 'alice-pw' } });
    const plain = await sessionWith(h, 'plain', ['read_topics']);
    assert.equal((await h.call(describeAclsHandler, 3, anyFilter, plain)).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    assert.equal((await h.call(createAclsHandler, 3, { creations: [topicAcl('orders', Op.READ)] }, plain)).results[0]!.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    assert.equal((await h.call(deleteAclsHandler, 3, { filters: [anyFilter] }, plain)).filterResults[0]!.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const userAdmin = await sessionWith(h, 'useradmin', ['read_users', 'manage_users', 'poll_messages']);
    const res = await h.call(createAclsHandler, 3, { creations: [topicAcl('orders', Op.READ)] }, userAdmin);
    assert.equal(res.results[0]!.errorCode, 0);
    const more = await h.call(createAclsHandler, 3, { creations: [topicAcl('orders', Op.ALL)] }, userAdmin);
    assert.equal(more.results[0]!.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });
});
