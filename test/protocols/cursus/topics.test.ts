// Topic management and cluster commands over the wire: CREATE as a presence-aware patch with
// revisions, immutables and the core config it maps to, ALTER_TOPIC_CONFIG, DELETE (if_exists,
// guards), TRUNCATE (expected_revision, lifecycle epoch, records gone), LIST, DESCRIBE, METADATA,
// FIND_COORDINATOR, LIST_CLUSTER, CLUSTER_STATUS, ELECT_LEADER, HELP; definitions surviving a
// broker restart; topics made by another protocol.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { encodeNeutralBatch } from '../../../src/log/index.js';
import { startCursus, type CursusHarness } from './harness.js';
import { assertError, jsonOf, okFields, type CursusWireClient } from './wire-client.js';

async function ok(c: CursusWireClient, command: string, fields: Record<string, string> = {}): Promise<Map<string, string>> {
  return okFields((await c.request(command, fields))[0]!);
}

async function appendRecords(h: CursusHarness, topic: string, partition: number, values: string[]): Promise<void> {
  await h.broker.append({ topic }, partition, encodeNeutralBatch(values.map((v) => ({ value: Buffer.from(v) })), { timestamp: 1000 }));
}

describe('CREATE', () => {
  it('makes a topic from the defaults and answers every field in the spec order', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    const [reply] = await c.request('CREATE', { topic: 'orders' });
    const fields = okFields(reply!);
    assert.deepEqual([...fields.keys()], [
      'topic', 'partitions', 'cleanup_policy', 'partitioner', 'auth_policy', 'read_acl', 'write_acl', 'retention_hours', 'retention_bytes',
      'revision', 'replication_factor', 'idempotent', 'event_sourcing', 'lifecycle_epoch', 'min_in_sync_replicas', 'effective_min_in_sync_replicas',
    ]);
    assert.deepEqual(Object.fromEntries(fields), {
      topic: 'orders', partitions: '1', cleanup_policy: 'delete', partitioner: 'hash_key', auth_policy: 'open', read_acl: '', write_acl: '',
      retention_hours: '0', retention_bytes: '0', revision: '1', replication_factor: '1', idempotent: 'false', event_sourcing: 'false',
      lifecycle_epoch: '0', min_in_sync_replicas: 'default', effective_min_in_sync_replicas: '1',
    });
    const core = h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' });
    assert.equal(core?.partitions, 1, 'a core topic of namespace default');
  });

  it('maps partitions, cleanup policy and retention onto the core topic', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    const fields = await ok(c, 'CREATE', { topic: 'events', partitions: '4', cleanup_policy: 'compact, delete', retention_hours: '48', retention_bytes: '1048576', partitioner: 'round_robin', idempotent: 'true' });
    assert.equal(fields.get('cleanup_policy'), 'delete,compact');
    const core = h.broker.catalog.getTopic({ namespace: 'default', topic: 'events' })!;
    assert.equal(core.partitions, 4);
    assert.equal(core.config['cleanup.policy'], 'compact,delete');
    assert.equal(core.config['retention.ms'], 48 * 3_600_000);
    assert.equal(core.config['retention.bytes'], 1_048_576);
    assert.equal(fields.get('partitioner'), 'round_robin');
    assert.equal(fields.get('idempotent'), 'true');
  });

  it('patches an existing topic: omitted fields stay, explicit values apply, the revision grows once per effective change', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'orders', partitions: '2', read_acl: 'alice,bob', auth_policy: 'acl', retention_hours: '5' });
    const noop = await ok(c, 'CREATE', { topic: 'orders' });
    assert.equal(noop.get('revision'), '1', 'a bare restatement changes nothing');
    const restated = await ok(c, 'CREATE', { topic: 'orders', partitions: '2', auth_policy: 'acl', idempotent: 'false' });
    assert.equal(restated.get('revision'), '1', 'restating current values is a no-op');
    const grown = await ok(c, 'CREATE', { topic: 'orders', partitions: '5' });
    assert.equal(grown.get('revision'), '2');
    assert.equal(grown.get('partitions'), '5');
    assert.equal(grown.get('read_acl'), 'alice,bob', 'omitted: kept');
    assert.equal(grown.get('retention_hours'), '5');
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' })?.partitions, 5);
    const cleared = await ok(c, 'CREATE', { topic: 'orders', read_acl: '', retention_hours: '0' });
    assert.equal(cleared.get('revision'), '3', 'two changes in one request: one revision');
    assert.equal(cleared.get('read_acl'), '');
    assert.equal(cleared.get('retention_hours'), '0');
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' })?.config['retention.ms'], undefined, 'back to the broker default');
  });

  it('refuses fewer partitions and a change of an immutable field, leaving the topic as it was', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'orders', partitions: '3', idempotent: 'true', replication_factor: '1' });
    assertError(await c.request('CREATE', { topic: 'orders', partitions: '2' }), 'invalid_partitions', { topic: 'orders', current: '3', requested: '2' });
    for (const [key, value] of [['idempotent', 'false'], ['event_sourcing', 'true'], ['replication_factor', '3'], ['aggregate_replay', 'true']]) {
      const error = assertError(await c.request('CREATE', { topic: 'orders', [key!]: value! }), 'invalid_topic_policy', { topic: 'orders', field: key! });
      assert.equal(error.class, 'validation');
    }
    const after = await ok(c, 'METADATA', { topic: 'orders' });
    assert.equal(after.get('revision'), '1');
    assert.equal(after.get('partitions'), '3');
  });

  it('refuses names outside the portable set and values that do not parse', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    for (const name of ['with space', 'a/b', '.', '..', 'x'.repeat(250), 'tab\t']) assertError(await c.request('CREATE', { topic: name }), 'invalid_topic_name', { topic: name });
    await ok(c, 'CREATE', { topic: 'ok.name_with-all=chars' });
    for (const [key, value] of [
      ['partitions', 'three'],
      ['partitions', '0'],
      ['idempotent', 'yes'],
      ['cleanup_policy', 'forever'],
      ['partitioner', 'random'],
      ['auth_policy', 'closed'],
      ['retention_hours', '-1'],
      ['min_in_sync_replicas', 'none'],
    ]) {
      assertError(await c.request('CREATE', { topic: 'values', [key!]: value! }), `invalid_${key}`, { command: 'CREATE' });
    }
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 'values' }), null, 'nothing was created');
  });

  it('refuses the policy combinations the spec rules out', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    assertError(await c.request('CREATE', { topic: 'es', event_sourcing: 'true', cleanup_policy: 'compact' }), 'invalid_topic_policy');
    assertError(await c.request('CREATE', { topic: 'replay', aggregate_replay: 'true', event_sourcing: 'true' }), 'invalid_topic_policy');
    assertError(await c.request('CREATE', { topic: 'isr', replication_factor: '2', min_in_sync_replicas: '3' }), 'invalid_min_in_sync_replicas', { requested: '3', replication_factor: '2' });
    const es = await ok(c, 'CREATE', { topic: 'es', event_sourcing: 'true' });
    assert.equal(es.get('event_sourcing'), 'true');
    assertError(await c.request('CREATE', { topic: 'es', cleanup_policy: 'compact' }), 'invalid_topic_policy');
    const replay = await ok(c, 'CREATE', { topic: 'replay', aggregate_replay: 'true', event_sourcing: 'true', idempotent: 'true', partitions: '2' });
    assert.equal(replay.get('partitions'), '2');
    assertError(await c.request('CREATE', { topic: 'replay', partitions: '3' }), 'invalid_topic_policy');
  });
});

describe('ALTER_TOPIC_CONFIG', () => {
  it('replaces only the min_in_sync_replicas override; default restores the fallback', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'orders', replication_factor: '3', retention_hours: '2' });
    const set = await ok(c, 'ALTER_TOPIC_CONFIG', { topic: 'orders', min_in_sync_replicas: '2' });
    assert.deepEqual(Object.fromEntries(set), { topic: 'orders', min_in_sync_replicas: '2', effective_min_in_sync_replicas: '2', revision: '2' });
    const same = await ok(c, 'ALTER_TOPIC_CONFIG', { topic: 'orders', min_in_sync_replicas: '2' });
    assert.equal(same.get('revision'), '2');
    const reset = await ok(c, 'ALTER_TOPIC_CONFIG', { topic: 'orders', min_in_sync_replicas: 'default' });
    assert.deepEqual(Object.fromEntries(reset), { topic: 'orders', min_in_sync_replicas: 'default', effective_min_in_sync_replicas: '1', revision: '3' });
    assert.equal((await ok(c, 'METADATA', { topic: 'orders' })).get('retention_hours'), '2', 'nothing else changed');
    assertError(await c.request('ALTER_TOPIC_CONFIG', { topic: 'orders', min_in_sync_replicas: '4' }), 'invalid_min_in_sync_replicas');
    assertError(await c.request('ALTER_TOPIC_CONFIG', { topic: 'missing', min_in_sync_replicas: '1' }), 'topic_not_found', { topic: 'missing' });
    assertError(await c.request('ALTER_TOPIC_CONFIG', { topic: 'orders' }), 'missing_min_in_sync_replicas', { command: 'ALTER_TOPIC_CONFIG' });
  });
});

describe('DELETE', () => {
  it('deletes, answers a missing topic by if_exists, and a topic made again starts at revision 1', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'orders', partitions: '2' });
    await ok(c, 'CREATE', { topic: 'orders', partitions: '3' });
    assert.deepEqual(Object.fromEntries(await ok(c, 'DELETE', { topic: 'orders' })), { topic: 'orders', deleted: 'true' });
    assert.equal(h.broker.catalog.getTopic({ namespace: 'default', topic: 'orders' }), null);
    assertError(await c.request('DELETE', { topic: 'orders' }), 'topic_not_found', { topic: 'orders' });
    assert.deepEqual(Object.fromEntries(await ok(c, 'DELETE', { topic: 'orders', if_exists: 'true' })), { topic: 'orders', deleted: 'false' });
    assertError(await c.request('DELETE', { topic: 'orders', if_exists: 'maybe' }), 'invalid_if_exists', { command: 'DELETE' });
    assertError(await c.request('DELETE', { topic: '__consumer_offsets', if_exists: 'true' }), 'internal_topic_delete_forbidden');
    const again = await ok(c, 'CREATE', { topic: 'orders' });
    assert.equal(again.get('revision'), '1');
    assert.equal(again.get('partitions'), '1');
  });

  it('is refused while a registered guard says so (active group members, open transactions)', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'orders' });
    const seen: string[] = [];
    const remove = h.frontend.services.topics.registerDeleteGuard((topic, operation) => {
      seen.push(`${operation}:${topic.name}`);
      return 'group g has active members';
    });
    assertError(await c.request('DELETE', { topic: 'orders' }), 'topic_delete_blocked', { topic: 'orders', reason: 'group g has active members' });
    assertError(await c.request('TRUNCATE', { topic: 'orders', expected_revision: '1' }), 'topic_delete_blocked');
    assert.deepEqual(seen, ['delete:orders', 'truncate:orders']);
    remove();
    await ok(c, 'DELETE', { topic: 'orders' });
  });
});

describe('TRUNCATE', () => {
  it('empties every partition at the expected revision and bumps revision and lifecycle epoch', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'orders', partitions: '2', auth_policy: 'deny_write' });
    await appendRecords(h, 'orders', 0, ['a', 'b', 'c']);
    await appendRecords(h, 'orders', 1, ['d']);
    const described = jsonOf((await c.request('DESCRIBE', { topic: 'orders' }))[0]!) as { partitions: Array<{ leo: number }> };
    assert.deepEqual(described.partitions.map((p) => p.leo), [3, 1]);
    const mismatch = assertError(await c.request('TRUNCATE', { topic: 'orders', expected_revision: '7' }), 'revision_mismatch', { topic: 'orders', current: '1', expected: '7' });
    assert.equal(mismatch.class, 'conflict');
    const done = await ok(c, 'TRUNCATE', { topic: 'orders', expected_revision: '1' });
    assert.deepEqual(Object.fromEntries(done), { topic: 'orders', truncated: 'true', revision: '2', lifecycle_epoch: '1', leo: '0', hwm: '0' });
    const after = jsonOf((await c.request('DESCRIBE', { topic: 'orders' }))[0]!) as { partitions: Array<{ leo: number; hwm: number }>; definition: { policy: { auth_policy: string } } };
    assert.deepEqual(after.partitions.map((p) => [p.leo, p.hwm]), [[0, 0], [0, 0]]);
    assert.equal(after.definition.policy.auth_policy, 'deny_write', 'the definition stays');
    assertError(await c.request('TRUNCATE', { topic: 'missing', expected_revision: '1' }), 'topic_not_found');
    assertError(await c.request('TRUNCATE', { topic: 'orders' }), 'missing_expected_revision', { command: 'TRUNCATE' });
  });
});

describe('LIST, DESCRIBE, METADATA', () => {
  it('lists topic names sorted, and nothing on an empty broker', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    assert.deepEqual(Object.fromEntries(await ok(c, 'LIST')), { count: '0', topics: '' });
    for (const name of ['zeta', 'alpha', 'mid']) await ok(c, 'CREATE', { topic: name });
    assert.deepEqual(Object.fromEntries(await ok(c, 'LIST')), { count: '3', topics: 'alpha,mid,zeta' });
  });

  it('describes a topic as the spec envelope, with the partitions as the log has them', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'orders', partitions: '2', replication_factor: '3' });
    await appendRecords(h, 'orders', 1, ['x', 'y']);
    const [reply] = await c.request('DESCRIBE', { topic: 'orders' });
    const address = `127.0.0.1:${h.port}`;
    const me = h.frontend.services.node.id;
    assert.equal(me, `broker-${h.broker.replication.nodeId}`);
    assert.equal(reply!.payload.toString(), JSON.stringify({
      status: 'OK',
      topic: 'orders',
      definition: { name: 'orders', revision: 1, partitions: 2, replication_factor: 3, idempotent: false, event_sourcing: false, policy: { cleanup_policy: 'delete', partitioner: 'hash_key', auth_policy: 'open' } },
      partitions: [
        { id: 0, leader: address, replicas: [me], isr: [me], leo: 0, hwm: 0 },
        { id: 1, leader: address, replicas: [me], isr: [me], leo: 2, hwm: 2 },
      ],
    }));
    assertError(await c.request('DESCRIBE', { topic: 'nope' }), 'topic_not_found', { topic: 'nope' });
  });

  it('answers METADATA with leaders, epochs and the whole definition', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    await ok(c, 'CREATE', { topic: 'orders', partitions: '3', write_acl: 'w1,w2', auth_policy: 'acl', retention_bytes: '4096' });
    const fields = await ok(c, 'METADATA', { topic: 'orders' });
    const address = `127.0.0.1:${h.port}`;
    assert.deepEqual(Object.fromEntries(fields), {
      topic: 'orders', partitions: '3', leaders: [address, address, address].join(','), epochs: '0,0,0', revision: '1', replication_factor: '1',
      idempotent: 'false', event_sourcing: 'false', cleanup_policy: 'delete', partitioner: 'hash_key', auth_policy: 'acl', read_acl: '', write_acl: 'w1,w2',
      retention_hours: '0', retention_bytes: '4096', lifecycle_epoch: '0',
    });
  });

  it('shows a topic another protocol made (namespace default) with the defaults at revision 1', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    await h.broker.createTopic('default', 'from-kafka', { partitions: 6, config: { 'retention.ms': 90 * 60_000, 'cleanup.policy': 'compact' } });
    await h.broker.createNamespace('other');
    await h.broker.createTopic('other', 'hidden', { partitions: 1 });
    const fields = await ok(c, 'METADATA', { topic: 'from-kafka' });
    assert.equal(fields.get('partitions'), '6');
    assert.equal(fields.get('revision'), '1');
    assert.equal(fields.get('retention_hours'), '2', '90 minutes round up to 2 hours');
    assert.equal(fields.get('cleanup_policy'), 'compact');
    assert.deepEqual(Object.fromEntries(await ok(c, 'LIST')), { count: '1', topics: 'from-kafka' }, 'only stream default holds Cursus topics');
  });
});

describe('cluster commands', () => {
  it('names this broker as coordinator, the only broker and every leader', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    const me = h.frontend.services.node.id;
    const port = String(h.port);
    assert.deepEqual(Object.fromEntries(await ok(c, 'FIND_COORDINATOR', { group: 'g' })), { coordinator_id: me, host: '127.0.0.1', port });
    assert.deepEqual(Object.fromEntries(await ok(c, 'FIND_COORDINATOR', { transactional_id: 'tx' })), { coordinator_id: me, host: '127.0.0.1', port });
    assertError(await c.request('FIND_COORDINATOR'), 'missing_group', { command: 'FIND_COORDINATOR' });
    assertError(await c.request('FIND_COORDINATOR', { group: 'g', transactional_id: 'tx' }), 'invalid_coordinator_key');
    assert.deepEqual(JSON.parse((await ok(c, 'LIST_CLUSTER')).get('brokers')!), [{ id: me, host: '127.0.0.1', port: h.port, active: true }]);
    await ok(c, 'CREATE', { topic: 'orders', partitions: '2' });
    const cluster = JSON.parse((await ok(c, 'CLUSTER_STATUS')).get('cluster')!) as { leader: string; active_brokers: number; partitions: Array<{ topic: string; partition: number; leader: string }> };
    assert.equal(cluster.leader, me);
    assert.equal(cluster.active_brokers, 1);
    assert.deepEqual(cluster.partitions.map((p) => `${p.topic}/${p.partition}@${p.leader}`), [`orders/0@${me}`, `orders/1@${me}`]);
  });

  it('ELECT_LEADER of this broker changes nothing; of another is rejected', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    const me = h.frontend.services.node.id;
    await ok(c, 'CREATE', { topic: 'orders', partitions: '2' });
    assert.deepEqual(Object.fromEntries(await ok(c, 'ELECT_LEADER', { topic: 'orders', partition: '1', broker: me })), {
      topic: 'orders', partition: '1', previous_leader: me, leader: me, leader_epoch: '0', changed: 'false',
    });
    assertError(await c.request('ELECT_LEADER', { topic: 'orders', partition: '1', broker: 'broker-7' }), 'leader_election_rejected', { broker: 'broker-7' });
    assertError(await c.request('ELECT_LEADER', { topic: 'orders', partition: '2', broker: me }), 'partition_not_found', { partition: '2' });
    assertError(await c.request('ELECT_LEADER', { topic: 'none', partition: '0', broker: me }), 'topic_not_found');
  });

  it('HELP lists the client commands in ID order', async (t) => {
    const h = await startCursus(t);
    const c = await h.client();
    const commands = (await ok(c, 'HELP')).get('commands')!.split(',');
    assert.equal(commands[0], 'CREATE');
    assert.ok(commands.includes('AUTH') && commands.includes('TRUNCATE') && commands.includes('EXIT'));
    assert.ok(!commands.includes('NEGOTIATE') && !commands.includes('REPLICATE_MESSAGE'));
  });
});

describe('restart', () => {
  it('keeps revisions, lifecycle epochs and policies across a broker restart', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quartet-cursus-restart-'));
    const first = await startCursus(t, { dataDir });
    const c1 = await first.client();
    await ok(c1, 'CREATE', { topic: 'orders', partitions: '2', idempotent: 'true', auth_policy: 'acl', read_acl: 'alice', replication_factor: '3', min_in_sync_replicas: '2', retention_hours: '12' });
    await ok(c1, 'CREATE', { topic: 'orders', partitions: '4' });
    await ok(c1, 'TRUNCATE', { topic: 'orders', expected_revision: '2' });
    await ok(c1, 'CREATE', { topic: 'gone' });
    await ok(c1, 'CREATE', { topic: 'gone', partitions: '2' });
    await ok(c1, 'DELETE', { topic: 'gone' });
    const before = Object.fromEntries(await ok(c1, 'METADATA', { topic: 'orders' }));
    await first.stop();

    const second = await startCursus(t, { dataDir });
    // After the harness's own stop (hooks run in the order they were added).
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const c2 = await second.client();
    const after = Object.fromEntries(await ok(c2, 'METADATA', { topic: 'orders' }));
    delete before.leaders;
    delete after.leaders;
    assert.deepEqual(after, before);
    assert.equal(after.revision, '3');
    assert.equal(after.lifecycle_epoch, '1');
    assert.equal(after.read_acl, 'alice');
    const created = await ok(c2, 'CREATE', { topic: 'orders' });
    assert.equal(created.get('min_in_sync_replicas'), '2');
    assert.equal((await ok(c2, 'CREATE', { topic: 'gone' })).get('revision'), '1', 'a deleted topic left nothing behind');
  });
});
