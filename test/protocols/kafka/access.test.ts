// Kafka authorization over the core's grants (src/protocols/kafka/access.ts): every handler that
// checks a topic or the broker, for a SASL user whose grants allow one thing and not another,
// answers Kafka's authorization error there and changes nothing; no principal or root is not
// restricted; a user deleted, renamed or made inactive after it authenticated is judged by its id.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { globalGrants, type GlobalGrants, type Grants, type StreamGrants } from '../../../src/core/access.js';
import type { Broker } from '../../../src/core/broker.js';
import { authenticatedAs } from '../../../src/protocols/kafka/access.js';
import type { KafkaSession } from '../../../src/protocols/kafka/handlers/types.js';
import { ErrorCode } from '../../../src/protocols/kafka/codec/errors.js';
import { zeroUuid } from '../../../src/protocols/kafka/codec/reader.js';
import { addOffsetsToTxnHandler } from '../../../src/protocols/kafka/handlers/add-offsets-to-txn.js';
import { addPartitionsToTxnHandler } from '../../../src/protocols/kafka/handlers/add-partitions-to-txn.js';
import { createPartitionsHandler } from '../../../src/protocols/kafka/handlers/create-partitions.js';
import { createTopicsHandler } from '../../../src/protocols/kafka/handlers/create-topics.js';
import { describeGroupsHandler } from '../../../src/protocols/kafka/handlers/describe-groups.js';
import { joinGroupHandler } from '../../../src/protocols/kafka/handlers/join-group.js';
import { leaveGroupHandler } from '../../../src/protocols/kafka/handlers/leave-group.js';
import { listGroupsHandler } from '../../../src/protocols/kafka/handlers/list-groups.js';
import { syncGroupHandler } from '../../../src/protocols/kafka/handlers/sync-group.js';
import { groupsHarness, peek, rebalanceTimeoutMs, sessionTimeoutMs, settle } from './handlers/groups-harness.js';
import { deleteGroupsHandler } from '../../../src/protocols/kafka/handlers/delete-groups.js';
import { deleteRecordsHandler } from '../../../src/protocols/kafka/handlers/delete-records.js';
import { deleteTopicsHandler } from '../../../src/protocols/kafka/handlers/delete-topics.js';
import { clusterAuthorizedOperationsAll, describeClusterHandler } from '../../../src/protocols/kafka/handlers/describe-cluster.js';
import { describeConfigsHandler } from '../../../src/protocols/kafka/handlers/describe-configs.js';
import { fetchHandler } from '../../../src/protocols/kafka/handlers/fetch.js';
import { incrementalAlterConfigsHandler, OpType } from '../../../src/protocols/kafka/handlers/incremental-alter-configs.js';
import { listOffsetsHandler } from '../../../src/protocols/kafka/handlers/list-offsets.js';
import { metadataHandler } from '../../../src/protocols/kafka/handlers/metadata.js';
import { offsetCommitHandler } from '../../../src/protocols/kafka/handlers/offset-commit.js';
import { offsetFetchHandler } from '../../../src/protocols/kafka/handlers/offset-fetch.js';
import { offsetForLeaderEpochHandler } from '../../../src/protocols/kafka/handlers/offset-for-leader-epoch.js';
import { produceHandler } from '../../../src/protocols/kafka/handlers/produce.js';
import { saslAuthenticateHandler } from '../../../src/protocols/kafka/handlers/sasl-authenticate.js';
import { saslHandshakeHandler } from '../../../src/protocols/kafka/handlers/sasl-handshake.js';
import { ScramClient } from '../../../src/protocols/kafka/sasl/scram.js';
import { txnOffsetCommitHandler } from '../../../src/protocols/kafka/handlers/txn-offset-commit.js';
import { appendRequestFromBatch } from '../../../src/protocols/kafka/codec/kafka-format.js';
import { batchOf } from './handlers/data-harness.js';
import { txnHarness, type TxnHarness } from './handlers/transactions-harness.js';

const TOPIC = 2;
const BROKER = 4;
const DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED;

const noGlobal: GlobalGrants = globalGrants([]).global;

function streamGrants(streamId: number, extra: Partial<StreamGrants>): StreamGrants {
  return { streamId, manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false, topics: [], ...extra };
}

/** Grants on topics of the default stream, by topic name. */
function topicGrants(h: TxnHarness, grants: Record<string, { send?: boolean; poll?: boolean; read?: boolean; manage?: boolean }>, global: Partial<GlobalGrants> = {}): Grants {
  const ns = h.broker.catalog.getNamespace('default')!;
  const topics = Object.entries(grants).map(([name, g]) => ({
    topicId: h.broker.catalog.getTopic({ namespace: 'default', topic: name })!.id,
    manageTopic: g.manage ?? false,
    readTopic: g.read ?? false,
    pollMessages: g.poll ?? false,
    sendMessages: g.send ?? false,
  }));
  return { global: { ...noGlobal, ...global }, streams: [streamGrants(ns.id, { topics })] };
}

async function as(h: TxnHarness, username: string, permissions: Grants | null): Promise<void> {
  if (h.broker.users.get(username) === null) await h.broker.users.create({ username, password: `${username}-password`, permissions });
  else await h.broker.users.setPermissions(username, permissions);
  signIn(h, username);
}

/** What a completed SASL exchange leaves: the name, and the id of the user it checked. */
function signIn(h: { session: KafkaSession; broker: Broker }, username: string): void {
  h.session.sasl = { mechanism: 'PLAIN', rawTokens: false, userId: h.broker.users.get(username)!.id };
  authenticatedAs(h.session, username);
}

function produce(h: TxnHarness, topic: string, value: string, transactionalId: string | null = null) {
  return h.call(produceHandler, 9, { transactionalId, acks: 1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batchOf([{ key: null, value }]) }] }] });
}

async function produceCode(h: TxnHarness, topic: string, value: string): Promise<number> {
  return (await produce(h, topic, value)).responses[0]!.partitionResponses[0]!.errorCode;
}

async function fetchCode(h: TxnHarness, topic: string): Promise<{ errorCode: number; bytes: number }> {
  const r = await h.call(fetchHandler, 12, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [], rackId: '',
  });
  const p = r.responses[0]!.partitions[0]!;
  return { errorCode: p.errorCode, bytes: p.records?.length ?? 0 };
}

async function metadataOf(h: TxnHarness, names: string[] | null, allowAutoTopicCreation = false): Promise<Array<[string | null, number]>> {
  const r = await h.call(metadataHandler, 12, { topics: names === null ? null : names.map((name) => ({ name, topicId: zeroUuid })), allowAutoTopicCreation, includeTopicAuthorizedOperations: false });
  return r.topics.map((t) => [t.name, t.errorCode]);
}

describe('Kafka authorization from the core grants', () => {
  it('a user that may send to one topic produces there only, and sees only that topic', async (t) => {
    const h = await txnHarness(t, { topics: { orders: 1, audit: 1 } });
    await as(h, 'writer', topicGrants(h, { orders: { send: true } }));
    assert.equal(await produceCode(h, 'orders', 'o1'), ErrorCode.NONE);
    assert.equal(await produceCode(h, 'audit', 'a1'), DENIED);
    assert.deepEqual(await h.values('audit', 0), [], 'nothing appended to the denied topic');
    assert.deepEqual(await h.values('orders', 0), ['o1']);
    assert.deepEqual(await fetchCode(h, 'orders'), { errorCode: DENIED, bytes: 0 }, 'send does not imply poll');
    assert.deepEqual(await metadataOf(h, null), [['orders', 0]], 'the list leaves out what it may not describe');
    assert.deepEqual(await metadataOf(h, ['orders', 'audit', 'nothing-yet'], true), [['orders', 0], ['audit', DENIED], ['nothing-yet', DENIED]]);
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 'nothing-yet' }), null, 'not auto-created');
    const listed = await h.call(listOffsetsHandler, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, timestamp: -1 }] }, { name: 'audit', partitions: [{ partitionIndex: 0, timestamp: -1 }] }] });
    assert.deepEqual(listed.topics.map((x) => [x.name, x.partitions[0]!.errorCode, x.partitions[0]!.offset]), [['orders', 0, 1], ['audit', DENIED, -1]]);
    const byId = await h.call(metadataHandler, 12, { topics: [{ name: null, topicId: h.broker.catalog.getTopic({ namespace: 'default', topic: 'audit' })!.uuid }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.deepEqual(byId.topics.map((x) => [x.name, x.errorCode]), [[null, DENIED]], 'by topic id too');
    const epochs = await h.call(offsetForLeaderEpochHandler, 4, { replicaId: -1, topics: [{ topic: 'audit', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] });
    assert.equal(epochs.topics[0]!.partitions[0]!.errorCode, DENIED);
  });

  it('a user that may poll a stream fetches and commits there, and may not write or administer', async (t) => {
    const h = await txnHarness(t, { topics: { orders: 2 } });
    await produce(h, 'orders', 'o1');
    const ns = h.broker.catalog.getNamespace('default')!;
    await as(h, 'reader', { global: noGlobal, streams: [streamGrants(ns.id, { pollMessages: true })] });
    assert.equal((await fetchCode(h, 'orders')).errorCode, ErrorCode.NONE);
    assert.ok((await fetchCode(h, 'orders')).bytes > 0, 'records come back');
    assert.equal(await produceCode(h, 'orders', 'o2'), DENIED);
    const committed = await h.call(offsetCommitHandler, 8, { groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }] });
    assert.equal(committed.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    const created = await h.call(createTopicsHandler, 7, { topics: [{ name: 'new', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
    assert.equal(created.topics[0]!.errorCode, DENIED);
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 'new' }), null);
    const grown = await h.call(createPartitionsHandler, 3, { topics: [{ name: 'orders', count: 4, assignments: null }], timeoutMs: 1000, validateOnly: false });
    assert.equal(grown.results[0]!.errorCode, DENIED);
    const trimmed = await h.call(deleteRecordsHandler, 2, { topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: -1 }] }], timeoutMs: 1000 });
    assert.equal(trimmed.topics[0]!.partitions[0]!.errorCode, DENIED);
    const altered = await h.call(incrementalAlterConfigsHandler, 1, {
      resources: [
        { resourceType: TOPIC, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: OpType.SET, value: '1000' }] },
        { resourceType: BROKER, resourceName: '', configs: [{ name: 'log.retention.ms', configOperation: OpType.SET, value: '1000' }] },
      ],
      validateOnly: false,
    });
    assert.deepEqual(altered.responses.map((r) => r.errorCode), [DENIED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);
    const configs = await h.call(describeConfigsHandler, 4, {
      resources: [{ resourceType: TOPIC, resourceName: 'orders', configurationKeys: null }, { resourceType: BROKER, resourceName: '', configurationKeys: null }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    // As in Kafka, where READ implies DESCRIBE but not DESCRIBE_CONFIGS: configs need read_topic.
    assert.deepEqual(configs.results.map((r) => r.errorCode), [DENIED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED], 'poll_messages is not read_topic; the broker needs read_servers');
    const deleted = await h.call(deleteTopicsHandler, 6, { topics: [{ name: 'orders', topicId: zeroUuid }], timeoutMs: 1000 });
    assert.equal(deleted.responses[0]!.errorCode, DENIED);
    const deletedById = await h.call(deleteTopicsHandler, 6, { topics: [{ name: null, topicId: h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' })!.uuid }], timeoutMs: 1000 });
    assert.equal(deletedById.responses[0]!.errorCode, DENIED);
    // It may describe any topic of the stream, made or not, but not create one.
    assert.deepEqual(await metadataOf(h, ['not-yet'], false), [['not-yet', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    assert.deepEqual(await metadataOf(h, ['not-yet'], true), [['not-yet', DENIED]]);
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 'not-yet' }), null);
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' })?.partitions, 2, 'the topic is as it was');
  });

  it('whether a topic of another stream exists is not revealed', async (t) => {
    const h = await txnHarness(t, { topics: { orders: 1 } });
    await h.broker.createNamespace('secret');
    await h.broker.createTopic('secret', 'data', { partitions: 1 });
    const ns = h.broker.catalog.getNamespace('default')!;
    await as(h, 'local', { global: noGlobal, streams: [streamGrants(ns.id, { readTopics: true })] });
    // `secret.data` is stream secret's topic; `secret.nothing` could be a default topic or stream secret's.
    assert.deepEqual(await metadataOf(h, ['secret.data', 'secret.nothing', 'orders', 'nothing']), [
      ['secret.data', DENIED],
      ['secret.nothing', DENIED],
      ['orders', ErrorCode.NONE],
      ['nothing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
  });

  it('a manager of topics creates, alters and deletes them', async (t) => {
    const h = await txnHarness(t, { topics: { orders: 1 } });
    await as(h, 'admin', { global: { ...noGlobal, manageTopics: true, readServers: true }, streams: [] });
    const created = await h.call(createTopicsHandler, 7, { topics: [{ name: 'new', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
    assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(await metadataOf(h, ['made-on-demand'], true), [['made-on-demand', ErrorCode.NONE]], 'auto-creation allowed');
    const grown = await h.call(createPartitionsHandler, 3, { topics: [{ name: 'orders', count: 3, assignments: null }], timeoutMs: 1000, validateOnly: false });
    assert.equal(grown.results[0]!.errorCode, ErrorCode.NONE);
    const configs = await h.call(describeConfigsHandler, 4, {
      resources: [{ resourceType: TOPIC, resourceName: 'orders', configurationKeys: null }, { resourceType: BROKER, resourceName: '', configurationKeys: null }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.deepEqual(configs.results.map((r) => r.errorCode), [ErrorCode.NONE, ErrorCode.NONE]);
    const deleted = await h.call(deleteTopicsHandler, 6, { topics: [{ name: 'new', topicId: zeroUuid }], timeoutMs: 1000 });
    assert.equal(deleted.responses[0]!.errorCode, ErrorCode.NONE);
  });

  it('offsets: a group of topics the user may read is its to use; a group that involves another topic is not', async (t) => {
    const h = await txnHarness(t, { topics: { orders: 1, audit: 1 } });
    const commit = (groupId: string, topic: string) =>
      h.call(offsetCommitHandler, 8, { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, committedMetadata: null }] }] });
    const code = async (groupId: string, topic: string) => (await commit(groupId, topic)).topics[0]!.partitions[0]!.errorCode;
    assert.equal(await code('mixed', 'orders'), ErrorCode.NONE, 'open listener');
    assert.equal(await code('mixed', 'audit'), ErrorCode.NONE);
    await as(h, 'reader', topicGrants(h, { orders: { poll: true } }));
    // Its own group: it commits and reads back orders, and may not commit audit there.
    assert.equal(await code('own', 'orders'), ErrorCode.NONE);
    assert.equal(await code('own', 'audit'), DENIED);
    const named = await h.call(offsetFetchHandler, 7, { groupId: 'own', topics: [{ name: 'orders', partitionIndexes: [0] }, { name: 'audit', partitionIndexes: [0] }], requireStable: false });
    assert.deepEqual([named.errorCode, named.topics.map((x) => [x.name, x.partitions[0]!.errorCode, x.partitions[0]!.committedOffset])], [0, [['orders', 0, 5], ['audit', DENIED, -1]]]);
    // The group that has offsets for audit too: not its to read, write or delete.
    assert.equal(await code('mixed', 'orders'), ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const fetched = await h.call(offsetFetchHandler, 7, { groupId: 'mixed', topics: null, requireStable: false });
    assert.deepEqual([fetched.errorCode, fetched.topics.length], [ErrorCode.GROUP_AUTHORIZATION_FAILED, 0]);
    const v8 = await h.call(offsetFetchHandler, 8, { groups: [{ groupId: 'mixed', topics: null }, { groupId: 'own', topics: null }], requireStable: false });
    assert.deepEqual(v8.groups.map((g) => [g.groupId, g.errorCode, g.topics.map((x) => x.name)]), [['mixed', ErrorCode.GROUP_AUTHORIZATION_FAILED, []], ['own', 0, ['orders']]]);
    const refused = await h.call(deleteGroupsHandler, 2, { groupsNames: ['mixed'] });
    assert.equal(refused.results[0]!.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.deepEqual((await h.broker.offsets.fetchGroup('kafka', 'mixed')).map((o) => o.offset), [5, 5], 'its offsets stay as they were');
    await as(h, 'reader', topicGrants(h, { orders: { poll: true }, audit: { read: true } }));
    const done = await h.call(deleteGroupsHandler, 2, { groupsNames: ['mixed'] });
    assert.equal(done.results[0]!.errorCode, ErrorCode.NONE);
    assert.equal((await h.broker.offsets.fetchGroup('kafka', 'mixed')).length, 0);
  });

  it('transactions: partitions and offsets of topics the user may not write or read are refused', async (t) => {
    const h = await txnHarness(t, { topics: { orders: 1, audit: 1 } });
    await as(h, 'txn', topicGrants(h, { orders: { send: true, poll: true } }));
    const id = await h.initTxn('tx');
    const added = await h.call(addPartitionsToTxnHandler, 3, { ...id, topics: [{ name: 'orders', partitions: [0] }, { name: 'audit', partitions: [0] }] });
    assert.deepEqual(added.results.map((x) => [x.name, x.results[0]!.partitionErrorCode]), [['orders', ErrorCode.OPERATION_NOT_ATTEMPTED], ['audit', DENIED]]);
    assert.equal((await h.call(addPartitionsToTxnHandler, 3, { ...id, topics: [{ name: 'orders', partitions: [0] }] })).results[0]!.results[0]!.partitionErrorCode, ErrorCode.NONE);
    assert.equal((await h.call(addOffsetsToTxnHandler, 3, { ...id, groupId: 'g' })).errorCode, ErrorCode.NONE, 'a group of no topic yet');
    const staged = await h.call(txnOffsetCommitHandler, 3, {
      ...id, groupId: 'g', generationId: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }, { name: 'audit', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    assert.deepEqual(staged.topics.map((x) => [x.name, x.partitions[0]!.errorCode]), [['orders', ErrorCode.NONE], ['audit', DENIED]]);
    // A group that has offsets for audit is not this user's to add to its transaction.
    const audit = h.broker.catalog.getTopic({ namespace: 'default', topic: 'audit' })!;
    await h.broker.offsets.commit('kafka', 'other', [{ topicInternalId: audit.internalId, partition: 0, offset: 1, leaderEpoch: -1, metadata: '' }]);
    assert.equal((await h.call(addOffsetsToTxnHandler, 3, { ...id, groupId: 'other' })).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const intoOther = await h.call(txnOffsetCommitHandler, 3, {
      ...id, groupId: 'other', generationId: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    assert.equal(intoOther.topics[0]!.partitions[0]!.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
  });

  it('a long-polling Fetch whose name comes to mean another topic (an Iggy purge, a shadowing topic) is checked again', async (t) => {
    const h = await txnHarness(t, {});
    await h.broker.createNamespace('s');
    await h.broker.createTopic('s', 't', { partitions: 1 });
    const s = h.broker.catalog.getNamespace('s')!;
    await as(h, 'reader', { global: noGlobal, streams: [streamGrants(s.id, { pollMessages: true })] });
    let settled = false;
    // The handler resolves `s.t` (stream s, topic t) before its first await, then waits for data.
    const fetching = h
      .call(fetchHandler, 12, {
        replicaId: -1, maxWaitMs: 2000, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: 's.t', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [], rackId: '',
      })
      .finally(() => (settled = true));
    // A default-stream topic named `s.t` takes the Kafka name over; then s/t is purged under the fetch.
    await h.broker.createTopic('default', 's.t', { partitions: 1 });
    const built = appendRequestFromBatch(batchOf([{ key: null, value: 'not yours' }]));
    if (!built.ok) throw new Error(built.reason);
    await h.broker.append({ namespace: 'default', topic: 's.t' }, 0, built.request);
    assert.equal(settled, false, 'the fetch was still waiting (else this test proves nothing)');
    await h.broker.purgeTopic({ namespace: 's', topic: 't' });
    const p = (await fetching).responses[0]!.partitions[0]!;
    assert.deepEqual([p.errorCode, p.records?.length ?? 0], [DENIED, 0], "the default topic's records are not returned");
  });

  it('the grants are looked up by user id on every request: changed, renamed, deactivated, deleted', async (t) => {
    const h = await txnHarness(t, { topics: { orders: 1 } });
    await as(h, 'alice', topicGrants(h, { orders: { send: true } }));
    assert.equal(await produceCode(h, 'orders', '1'), ErrorCode.NONE);
    await h.broker.users.setPermissions('alice', null);
    assert.equal(await produceCode(h, 'orders', '2'), DENIED, 'grants taken away');
    await h.broker.users.setPermissions('alice', topicGrants(h, { orders: { send: true } }));
    await h.broker.users.update('alice', { username: 'alice2' });
    await h.broker.users.create({ username: 'alice', password: 'other-password', permissions: null });
    assert.equal(await produceCode(h, 'orders', '3'), ErrorCode.NONE, 'a rename keeps the grants; the new alice lends none');
    await h.broker.users.update('alice2', { status: 'inactive' });
    assert.equal(await produceCode(h, 'orders', '4'), DENIED, 'inactive');
    await h.broker.users.update('alice2', { status: 'active' });
    await h.broker.users.delete('alice2');
    assert.equal(await produceCode(h, 'orders', '5'), DENIED, 'deleted');
    assert.deepEqual(await metadataOf(h, null), []);
    assert.deepEqual(await h.values('orders', 0), ['1', '3']);
  });

  it('DescribeCluster reports the cluster operations the user may do', async (t) => {
    const h = await txnHarness(t, { topics: { orders: 1 } });
    const operations = async () => (await h.call(describeClusterHandler, 1, { includeClusterAuthorizedOperations: true, endpointType: 1 })).clusterAuthorizedOperations;
    const bits = (...ops: number[]) => ops.reduce((b, op) => b | (1 << op), 0);
    assert.equal(await operations(), clusterAuthorizedOperationsAll, 'no SASL');
    await as(h, 'nobody', null);
    assert.equal(await operations(), bits(8, 12), 'DESCRIBE and IDEMPOTENT_WRITE only');
    await as(h, 'nobody', { global: { ...noGlobal, manageTopics: true, readServers: true }, streams: [] });
    assert.equal(await operations(), bits(5, 8, 10, 12), 'CREATE and DESCRIBE_CONFIGS too');
    await as(h, 'nobody', { global: { ...noGlobal, manageServers: true }, streams: [] });
    assert.equal(await operations(), bits(7, 8, 9, 10, 11, 12), 'everything but CREATE');
  });

  it('the user is the one whose credentials the exchange checked, whatever happens to its name meanwhile', async (t) => {
    const h = await txnHarness(t, { topics: { secret: 1 } });
    const writer = topicGrants(h, { secret: { send: true } });
    const scramUntilFinal = async (name: string) => {
      assert.equal((await h.call(saslHandshakeHandler, 1, { mechanism: 'SCRAM-SHA-256' })).errorCode, 0);
      const client = new ScramClient('SCRAM-SHA-256', name, `${name}-password`);
      const first = await h.call(saslAuthenticateHandler, 2, { authBytes: client.firstMessage() });
      assert.equal(first.errorCode, 0);
      return () => h.call(saslAuthenticateHandler, 2, { authBytes: client.finalMessage(first.authBytes) });
    };
    const restart = () => Object.assign(h.session, { principal: null, principalUserId: null, sasl: null });

    // Renamed between the SCRAM messages, and its old name given to a user with more rights.
    await h.broker.users.create({ username: 'alice', password: 'alice-password', permissions: null });
    let final = await scramUntilFinal('alice');
    await h.broker.users.update('alice', { username: 'alice-renamed' });
    await h.broker.users.create({ username: 'alice', password: 'other-password', permissions: writer });
    assert.equal((await final()).errorCode, ErrorCode.NONE, 'the exchange completes (the credentials were checked)');
    assert.equal(await produceCode(h, 'secret', 'x'), DENIED, "the renamed user's grants (none), not the new alice's");
    assert.deepEqual(await metadataOf(h, null), []);

    // Deleted between the SCRAM messages.
    restart();
    await h.broker.users.create({ username: 'bob', password: 'bob-password', permissions: writer });
    final = await scramUntilFinal('bob');
    await h.broker.users.delete('bob');
    assert.equal((await final()).errorCode, ErrorCode.NONE);
    assert.equal(await produceCode(h, 'secret', 'x'), DENIED, 'a deleted user may do nothing');

    // Deleted while PLAIN checks its password.
    restart();
    await h.broker.users.create({ username: 'carol', password: 'carol-password', permissions: null });
    assert.equal((await h.call(saslHandshakeHandler, 1, { mechanism: 'PLAIN' })).errorCode, 0);
    const plain = h.call(saslAuthenticateHandler, 2, { authBytes: Buffer.from('\0carol\0carol-password') });
    await h.broker.users.delete('carol');
    assert.equal((await plain).errorCode, ErrorCode.NONE);
    assert.equal(await produceCode(h, 'secret', 'x'), DENIED);
    assert.deepEqual(await h.values('secret', 0), []);
  });

  it('root and a connection without SASL are not restricted', async (t) => {
    const h = await txnHarness(t, { topics: { orders: 1 } });
    assert.equal(await produceCode(h, 'orders', 'open'), ErrorCode.NONE);
    const root = h.broker.users.list().find((u) => u.root);
    assert.notEqual(root, undefined, 'the broker made a root user');
    signIn(h, root!.username);
    assert.equal(await produceCode(h, 'orders', 'root'), ErrorCode.NONE);
    assert.deepEqual(await metadataOf(h, ['made-by-root'], true), [['made-by-root', ErrorCode.NONE]]);
  });
});

/** ConsumerProtocolSubscription v0 naming `topics` (user data null), as consumers send in JoinGroup. */
function subscriptionOf(...topics: string[]): Buffer {
  const names = topics.map((t) => Buffer.from(t));
  const b = Buffer.alloc(2 + 4 + names.reduce((n, x) => n + 2 + x.length, 0) + 4);
  let at = b.writeInt16BE(0, 0);
  at = b.writeInt32BE(names.length, at);
  for (const name of names) {
    at = b.writeInt16BE(name.length, at);
    at += name.copy(b, at);
  }
  b.writeInt32BE(-1, at);
  return b;
}

describe('Kafka consumer groups and the core grants', () => {
  it('a group is used only by users that may read every topic it involves', async (t) => {
    const h = await groupsHarness(t, { topics: { payroll: 1, orders: 1 } });
    // An open-listener consumer forms group "payroll" over the topic of that name; group "shop"
    // has only committed offsets for orders.
    const join = await settle(h, h.call(joinGroupHandler, 5, { groupId: 'payroll', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', groupInstanceId: 'payroll-1', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscriptionOf('payroll') }] }));
    assert.equal(join.errorCode, ErrorCode.NONE);
    assert.equal((await h.call(syncGroupHandler, 3, { groupId: 'payroll', generationId: join.generationId, memberId: join.memberId, assignments: [{ memberId: join.memberId, assignment: Buffer.alloc(0) }] })).errorCode, ErrorCode.NONE);
    const commit = await h.call(offsetCommitHandler, 8, { groupId: 'shop', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }] });
    assert.equal(commit.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);

    const ns = h.broker.catalog.getNamespace('default')!;
    const ordersId = h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' })!.id;
    await h.broker.users.create({ username: 'shopper', password: 'shopper-password', permissions: { global: noGlobal, streams: [streamGrants(ns.id, { topics: [{ topicId: ordersId, manageTopic: false, readTopic: false, pollMessages: true, sendMessages: false }] })] } });
    signIn(h, 'shopper');

    const listed = await h.call(listGroupsHandler, 4, { statesFilter: [] });
    assert.deepEqual(listed.groups.map((g) => g.groupId), ['shop'], 'payroll is not listed');
    const described = await h.call(describeGroupsHandler, 5, { groups: ['payroll', 'shop'], includeAuthorizedOperations: false });
    assert.deepEqual(described.groups.map((g) => [g.groupId, g.errorCode, g.members.length]), [['payroll', ErrorCode.GROUP_AUTHORIZATION_FAILED, 0], ['shop', ErrorCode.NONE, 0]]);
    // A static member named by its instance id alone (a guessable name) is not this user's to remove.
    const left = await h.call(leaveGroupHandler, 4, { groupId: 'payroll', members: [{ memberId: '', groupInstanceId: 'payroll-1', reason: null }] });
    assert.equal(left.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const intruder = await h.call(joinGroupHandler, 5, { groupId: 'payroll', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscriptionOf('orders') }] });
    assert.equal(intruder.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.equal((await h.call(deleteGroupsHandler, 2, { groupsNames: ['payroll'] })).results[0]!.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const stillThere = h.frontend.groups.describeGroup('payroll');
    assert.deepEqual([stillThere.groupState, stillThere.members.map((m) => m.memberId)], ['Stable', [join.memberId]], 'the member was neither removed nor made to rebalance');
    // Its own group works: a member of "shop" over orders.
    const own = await settle(h, h.call(joinGroupHandler, 3, { groupId: 'shop', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscriptionOf('orders') }] }));
    assert.equal(own.errorCode, ErrorCode.NONE);
    // A member may always leave, even a group that came to involve a topic its user may not read.
    Object.assign(h.session, { principal: null, principalUserId: null, sasl: null });
    const broader = h.call(joinGroupHandler, 3, { groupId: 'shop', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscriptionOf('orders', 'payroll') }] });
    signIn(h, 'shopper');
    for (let i = 0; i < 20 && h.frontend.groups.describeGroup('shop').members.length < 2; i++) await peek(broader);
    assert.equal(h.frontend.groups.describeGroup('shop').members.length, 2, 'the broader member joined');
    const leftOwn = await h.call(leaveGroupHandler, 4, { groupId: 'shop', members: [{ memberId: own.memberId, groupInstanceId: null, reason: null }] });
    assert.deepEqual([leftOwn.errorCode, leftOwn.members[0]?.errorCode], [ErrorCode.NONE, ErrorCode.NONE]);
    assert.equal((await settle(h, broader)).errorCode, ErrorCode.NONE);
    // It may not bring a topic it may not read into a group (which would lock out its members),
    // nor join or see groups of another kind (whose topics are not known).
    const bringing = await h.call(joinGroupHandler, 3, { groupId: 'fresh', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscriptionOf('orders', 'payroll') }] });
    assert.equal(bringing.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const other = await h.call(joinGroupHandler, 3, { groupId: 'fresh', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'connect', protocols: [{ name: 'default', metadata: Buffer.from('worker') }] });
    assert.equal(other.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.equal(h.frontend.groups.describeGroup('fresh').groupState, 'Dead', 'nobody joined');
  });

  it("a member id it learned is not enough to remove another user's member from a group it may no longer use", async (t) => {
    const h = await groupsHarness(t, { topics: { payroll: 1, orders: 1 } });
    const ns = h.broker.catalog.getNamespace('default')!;
    const ordersId = h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' })!.id;
    await h.broker.users.create({ username: 'shopper', password: 'shopper-password', permissions: { global: noGlobal, streams: [streamGrants(ns.id, { topics: [{ topicId: ordersId, manageTopic: false, readTopic: false, pollMessages: true, sendMessages: false }] })] } });
    const asShopper = () => signIn(h, 'shopper');
    const asOpen = () => Object.assign(h.session, { principal: null, principalUserId: null, sasl: null });
    const join = (memberId: string, metadata: Buffer) => h.call(joinGroupHandler, 3, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId, protocolType: 'consumer', protocols: [{ name: 'range', metadata }] });
    asShopper();
    const mine = join('', subscriptionOf('orders'));
    for (let i = 0; i < 20 && h.frontend.groups.describeGroup('g').members.length === 0; i++) await peek(mine);
    asOpen();
    const theirs = join('', subscriptionOf('orders'));
    const [u, v] = [await settle(h, mine), await settle(h, theirs)];
    assert.deepEqual([u.errorCode, v.errorCode, u.members.length], [ErrorCode.NONE, ErrorCode.NONE, 2], 'the restricted member leads and sees both ids');
    asShopper();
    const leftMine = await h.call(leaveGroupHandler, 4, { groupId: 'g', members: [{ memberId: u.memberId, groupInstanceId: null, reason: null }] });
    assert.equal(leftMine.members[0]?.errorCode, ErrorCode.NONE, 'its own member leaves');
    // It may use the group (orders only), but not as the other member.
    const rejoinAsThem = await h.call(joinGroupHandler, 3, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId: v.memberId, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscriptionOf('orders') }] });
    assert.equal(rejoinAsThem.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED, "another user's member id is not this connection's to join with");
    asOpen();
    assert.equal((await settle(h, join(v.memberId, subscriptionOf('orders', 'payroll')))).errorCode, ErrorCode.NONE, 'the other member now reads payroll too');
    asShopper();
    const removing = await h.call(leaveGroupHandler, 4, { groupId: 'g', members: [{ memberId: v.memberId, groupInstanceId: null, reason: null }] });
    assert.equal(removing.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.deepEqual(h.frontend.groups.describeGroup('g').members.map((m) => m.memberId), [v.memberId], 'the other member stays');
  });

  it('its own member, refused on a rejoin, leaves at once instead of holding the rebalance up', async (t) => {
    const h = await groupsHarness(t, { topics: { payroll: 1, orders: 1 } });
    await h.broker.users.create({ username: 'shopper', password: 'shopper-password', permissions: { global: noGlobal, streams: [streamGrants(h.broker.catalog.getNamespace('default')!.id, { topics: [{ topicId: h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' })!.id, manageTopic: false, readTopic: false, pollMessages: true, sendMessages: false }] })] } });
    const asShopper = () => signIn(h, 'shopper');
    const join = (memberId: string, metadata: Buffer) => h.call(joinGroupHandler, 3, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId, protocolType: 'consumer', protocols: [{ name: 'range', metadata }] });
    asShopper();
    const u = await settle(h, join('', subscriptionOf('orders')));
    assert.equal(u.errorCode, ErrorCode.NONE);
    // An open-listener consumer of payroll joins: a rebalance that waits for u to rejoin.
    Object.assign(h.session, { principal: null, principalUserId: null, sasl: null });
    const v = join('', subscriptionOf('payroll'));
    for (let i = 0; i < 20 && h.frontend.groups.describeGroup('g').members.length < 2; i++) await peek(v);
    asShopper();
    assert.equal((await join(u.memberId, subscriptionOf('orders'))).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.equal(h.frontend.groups.describeGroup('g').members.some((m) => m.memberId === u.memberId), false, 'it left');
    assert.equal((await settle(h, v)).errorCode, ErrorCode.NONE, 'the rebalance completes without it');
  });

  it('a group another member joined meanwhile with a topic the user may not read: the join is refused when it completes, and the user leaves', async (t) => {
    const h = await groupsHarness(t, { topics: { payroll: 1, orders: 1 } });
    const ns = h.broker.catalog.getNamespace('default')!;
    const ordersId = h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' })!.id;
    await h.broker.users.create({ username: 'shopper', password: 'shopper-password', permissions: { global: noGlobal, streams: [streamGrants(ns.id, { topics: [{ topicId: ordersId, manageTopic: false, readTopic: false, pollMessages: true, sendMessages: false }] })] } });
    signIn(h, 'shopper');
    const join = (metadata: Buffer) => h.call(joinGroupHandler, 3, { groupId: 'g', sessionTimeoutMs, rebalanceTimeoutMs, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata }] });
    const restricted = join(subscriptionOf('orders'));
    // Its checks pass (the group is empty) and it waits in the join phase; then an open-listener
    // consumer of payroll joins the same phase.
    for (let i = 0; i < 20 && h.frontend.groups.describeGroup('g').members.length === 0; i++) await peek(restricted);
    assert.equal(h.frontend.groups.describeGroup('g').members.length, 1, 'the restricted member is in the join phase');
    Object.assign(h.session, { principal: null, principalUserId: null, sasl: null });
    const open = join(subscriptionOf('payroll'));
    const answer = await settle(h, restricted);
    assert.deepEqual([answer.errorCode, answer.members.length], [ErrorCode.GROUP_AUTHORIZATION_FAILED, 0], "no member's subscription is shown to it");
    const openAnswer = await settle(h, open);
    assert.equal(openAnswer.errorCode, ErrorCode.NONE);
    const members = h.frontend.groups.describeGroup('g').members.map((m) => m.memberId);
    assert.equal(members.includes(openAnswer.memberId), true);
    assert.equal(members.length, 1, 'the restricted member left again');
  });
});
