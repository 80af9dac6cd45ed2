import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog, defaultNamespaceName, nameProblem, type CatalogObserver, type Topic } from '../../src/core/catalog.js';
import { ManualClock } from '../../src/base/clock.js';
import { isQuartetError, type CoreErrorCode } from '../../src/base/errors.js';
import { SqliteMetadataStore } from '../../src/core/metadata-store.js';
import { memoryStore, tempDir } from './helpers.js';

function code(expected: CoreErrorCode) {
  return (err: unknown) => isQuartetError(err) && err.code === expected;
}

test("a new catalog has no namespaces; 'default' comes with its first topic, with the next id", async () => {
  const catalog = await Catalog.open(memoryStore(), new ManualClock());
  assert.deepEqual(catalog.listNamespaces(), []);
  // Before it exists, 'default' reads as empty and its topics as unknown topics.
  assert.deepEqual(catalog.listTopics(defaultNamespaceName), []);
  assert.equal(catalog.getTopic({ topic: 'orders' }), null);
  assert.throws(() => catalog.requireTopic({ topic: 'orders' }), code('unknown_topic'));
  assert.throws(() => catalog.requireTopic({ namespace: defaultNamespaceName, topic: 'orders' }), code('unknown_topic'));
  // The first namespace created gets id 0 (an Iggy client's first stream).
  assert.equal((await catalog.createNamespace('first')).id, 0);
  const orders = await catalog.createTopic(defaultNamespaceName, 'orders', { partitions: 1 });
  assert.deepEqual(catalog.listNamespaces().map((n) => [n.id, n.name]), [[0, 'first'], [1, defaultNamespaceName]]);
  assert.equal(orders.namespaceId, 1);
  assert.equal(catalog.requireTopic({ topic: 'orders' }).internalId, orders.internalId);
  // Only 'default' is made on demand.
  await assert.rejects(catalog.createTopic('other', 't', { partitions: 1 }), code('unknown_namespace'));
  // A failed topic creation in a missing 'default' leaves no namespace behind.
  const fresh = await Catalog.open(memoryStore(), new ManualClock());
  await assert.rejects(fresh.createTopic(defaultNamespaceName, 't', { partitions: -1 }), code('invalid_partitions'));
  assert.deepEqual(fresh.listNamespaces(), []);
});

test('catalog survives a reopen of a file-backed store', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock(1_000);
  let store = SqliteMetadataStore.openInDataDir(dir);
  let catalog = await Catalog.open(store, clock);
  const orders = await catalog.createTopic(defaultNamespaceName, 'orders', { partitions: 3, config: { 'retention.ms': '60000' } });
  const ns = await catalog.createNamespace('payments');
  clock.advance(5);
  const refunds = await catalog.createTopic('payments', 'refunds', { partitions: 1, id: 42 });
  await catalog.addPartitions(orders, 5);
  await catalog.updateTopicConfig({ topic: 'orders' }, { 'cleanup.policy': 'compact' });
  await catalog.renameNamespace('payments', 'billing');
  await store.close();

  store = SqliteMetadataStore.openInDataDir(dir);
  catalog = await Catalog.open(store, clock);
  assert.deepEqual(catalog.listNamespaces().map((n) => n.name), ['default', 'billing']);
  assert.equal(catalog.getNamespace(ns.id)?.name, 'billing');
  const o = catalog.requireTopic({ topic: 'orders' });
  assert.equal(o.internalId, orders.internalId);
  assert.ok(o.uuid.equals(orders.uuid));
  assert.equal(o.uuid.length, 16);
  assert.equal(o.partitions, 5);
  assert.deepEqual(o.config, { 'retention.ms': 60000, 'cleanup.policy': 'compact' });
  assert.equal(o.createdAt, 1_000);
  const r = catalog.requireTopic({ namespace: ns.id, topic: 42 });
  assert.equal(r.name, 'refunds');
  assert.equal(r.namespace, 'billing');
  assert.equal(r.internalId, refunds.internalId);
  assert.equal(r.createdAt, 1_005);
  // Ids keep counting after a reopen: internal ids are never reused.
  const next = await catalog.createTopic(defaultNamespaceName, 'later', { partitions: 1 });
  assert.ok(next.internalId > refunds.internalId);
  await store.close();
});

test('names, ids and counts are validated', async () => {
  const catalog = await Catalog.open(memoryStore(), new ManualClock());
  await catalog.createNamespace(defaultNamespaceName);
  await assert.rejects(catalog.createNamespace(''), code('invalid_name'));
  await assert.rejects(catalog.createNamespace('x'.repeat(256)), code('invalid_name'));
  await assert.rejects(catalog.createNamespace('a\nb'), code('invalid_name'));
  await assert.rejects(catalog.createNamespace(' padded'), code('invalid_name'));
  await assert.rejects(catalog.createNamespace('default'), code('namespace_exists'));
  await assert.rejects(catalog.createNamespace('other', { id: 0 }), code('namespace_exists'));
  await assert.rejects(catalog.createTopic('nope', 't', { partitions: 1 }), code('unknown_namespace'));
  await assert.rejects(catalog.createTopic('default', 't', { partitions: -1 }), code('invalid_partitions'));
  await assert.rejects(catalog.createTopic('default', 't', { partitions: 1, config: { 'flush.ms': 0 } }), code('invalid_config'));
  const t1 = await catalog.createTopic('default', 't', { partitions: 1 });
  await assert.rejects(catalog.createTopic('default', 't', { partitions: 1 }), code('topic_exists'));
  await assert.rejects(catalog.createTopic('default', 'u', { partitions: 1, id: t1.id }), code('topic_exists'));
  await assert.rejects(catalog.addPartitions(t1, 1), code('invalid_partitions'));
  assert.throws(() => catalog.requireTopic({ topic: 'missing' }), code('unknown_topic'));
  assert.throws(() => catalog.requireTopic({ namespace: 'missing', topic: 'x' }), code('unknown_namespace'));
  assert.equal(nameProblem('orders.v1-β'), null);
});

test('ids: auto-allocated from 0, skipping explicit ones; unique per namespace', async () => {
  const catalog = await Catalog.open(memoryStore(), new ManualClock());
  const a = await catalog.createNamespace('a', { id: 1 });
  const z = await catalog.createNamespace('z');
  const b = await catalog.createNamespace('b');
  assert.equal(a.id, 1);
  assert.equal(z.id, 0);
  assert.equal(b.id, 2);
  const t0 = await catalog.createTopic('a', 'x', { partitions: 1 });
  const t1 = await catalog.createTopic('b', 'x', { partitions: 1 });
  assert.equal(t0.id, 0);
  assert.equal(t1.id, 0);
  assert.notEqual(t0.internalId, t1.internalId);
  assert.ok(!t0.uuid.equals(t1.uuid));
  assert.equal(catalog.topicByUuid(t1.uuid)?.internalId, t1.internalId);
});

test('ids freed by a deletion are handed out again, lowest first (internal ids never are), across a reopen too', async (t) => {
  const dir = tempDir(t);
  let store = SqliteMetadataStore.openInDataDir(dir);
  let catalog = await Catalog.open(store, new ManualClock());
  const [a, b, c] = [await catalog.createNamespace('a'), await catalog.createNamespace('b'), await catalog.createNamespace('c')];
  assert.deepEqual([a.id, b.id, c.id], [0, 1, 2]);
  const t0 = await catalog.createTopic('a', 't0', { partitions: 1 });
  const t1 = await catalog.createTopic('a', 't1', { partitions: 1 });
  await catalog.deleteTopic(t0);
  const again = await catalog.createTopic('a', 'again', { partitions: 1 });
  assert.equal(again.id, 0, 'the freed topic id');
  assert.ok(again.internalId > t1.internalId, 'a new internal id (and so a new directory)');
  assert.equal((await catalog.createTopic('a', 'next', { partitions: 1 })).id, 2);
  await catalog.deleteNamespace('b');
  await catalog.deleteNamespace('a');
  assert.equal((await catalog.createNamespace('first')).id, 0, 'the lowest freed id first');
  assert.equal((await catalog.createNamespace('second')).id, 1);
  assert.equal((await catalog.createNamespace('third')).id, 3);
  // A namespace made again under a freed id starts its topic ids at 0.
  assert.equal((await catalog.createTopic('first', 'x', { partitions: 1 })).id, 0);
  await catalog.deleteNamespace('second');
  await store.close();
  store = SqliteMetadataStore.openInDataDir(dir);
  catalog = await Catalog.open(store, new ManualClock());
  assert.equal((await catalog.createNamespace('after-reopen')).id, 1, 'a gap left before the restart is found');
  await store.close();
});

test('concurrent creations of one name: exactly one wins', async () => {
  const catalog = await Catalog.open(memoryStore(), new ManualClock());
  const results = await Promise.allSettled([1, 2, 3].map(() => catalog.createTopic('default', 'race', { partitions: 1 })));
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  assert.equal(catalog.listTopics('default').length, 1);
});

test('rename and delete; deleting a namespace deletes its topics; default is protected', async () => {
  const events: string[] = [];
  const observer: CatalogObserver = {
    topicCreated: async (t: Topic) => void events.push(`created ${t.name}`),
    topicDeleted: async (t: Topic) => void events.push(`deleted ${t.name}`),
    partitionsAdded: async (t: Topic, prev: number) => void events.push(`partitions ${t.name} ${prev}->${t.partitions}`),
    partitionsRemoved: async (t: Topic, prev: number) => void events.push(`removed ${t.name} ${prev}->${t.partitions}`),
    partitionsReset: async (t: Topic) => void events.push(`reset ${t.name}`),
    topicConfigChanged: async (t: Topic) => void events.push(`config ${t.name}`),
    topicRenamed: (t: Topic) => void events.push(`renamed ${t.namespace}/${t.name}`),
  };
  const catalog = await Catalog.open(memoryStore(), new ManualClock());
  catalog.setObserver(observer);
  await catalog.createNamespace('ns');
  const t = await catalog.createTopic('ns', 'a', { partitions: 1 });
  await catalog.renameTopic(t, 'b');
  assert.equal(catalog.getTopic({ namespace: 'ns', topic: 'a' }), null);
  assert.equal(catalog.getTopic(t)?.name, 'b');
  await catalog.addPartitions({ namespace: 'ns', topic: 'b' }, 3);
  await catalog.removePartitions({ namespace: 'ns', topic: 'b' }, 2);
  await catalog.updateTopicConfig({ namespace: 'ns', topic: 'b' }, { 'retention.ms': 1 });
  await catalog.renameNamespace('ns', 'ns2');
  await catalog.deleteNamespace('ns2');
  await catalog.createTopic(defaultNamespaceName, 'kept', { partitions: 1 });
  assert.deepEqual(events, ['created a', 'renamed ns/b', 'partitions b 1->3', 'removed b 3->2', 'config b', 'renamed ns2/b', 'deleted b', 'created kept']);
  assert.equal(catalog.getNamespace('ns2'), null);
  assert.deepEqual(catalog.listTopics().map((x) => x.name), ['kept']);
  await assert.rejects(catalog.deleteNamespace('default'), code('invalid_request'));
  await assert.rejects(catalog.renameNamespace('default', 'x'), code('invalid_request'));
  // Nor may another namespace become 'default' (it would take Kafka's topics), even while none exists.
  const fresh = await Catalog.open(memoryStore(), new ManualClock());
  await fresh.createNamespace('mine');
  await assert.rejects(fresh.renameNamespace('mine', 'default'), code('invalid_request'));
  assert.equal(fresh.getNamespace('default'), null);
  await assert.rejects(catalog.deleteTopic({ topic: 'b' }), code('unknown_topic'));
});

test('a namespace deletion is one commit: cut short while its first topic closes, a reopened catalog has none of it', async () => {
  const store = memoryStore();
  const catalog = await Catalog.open(store, new ManualClock());
  await catalog.createNamespace('shop');
  for (const name of ['a', 'b', 'c']) await catalog.createTopic('shop', name, { partitions: 1 });
  let closing!: () => void;
  const firstClosing = new Promise<void>((resolve) => (closing = resolve));
  catalog.setObserver({
    topicCreated: async () => undefined,
    // The process dies while the first topic's logs close: this never returns.
    topicDeleted: () => {
      closing();
      return new Promise<void>(() => undefined);
    },
    partitionsReset: async () => undefined,
    partitionsAdded: async () => undefined,
    partitionsRemoved: async () => undefined,
    topicConfigChanged: async () => undefined,
    topicRenamed: () => undefined,
  });
  void catalog.deleteNamespace('shop');
  await firstClosing;
  // Nothing of the namespace is found any more, in memory or in the store.
  assert.equal(catalog.getNamespace('shop'), null);
  assert.equal(catalog.getTopic({ namespace: 'shop', topic: 'b' }), null);
  const reopened = await Catalog.open(store, new ManualClock());
  assert.equal(reopened.getNamespace('shop'), null);
  assert.deepEqual(reopened.listTopics().map((t) => t.name), []);
});

test('a namespace deletion closes every topic even when one fails, and reports the failure', async () => {
  const catalog = await Catalog.open(memoryStore(), new ManualClock());
  await catalog.createNamespace('shop');
  for (const name of ['a', 'b', 'c']) await catalog.createTopic('shop', name, { partitions: 1 });
  const closed: string[] = [];
  catalog.setObserver({
    topicCreated: async () => undefined,
    topicDeleted: async (t) => {
      closed.push(t.name);
      if (t.name === 'a') throw new Error('disk on fire');
    },
    partitionsReset: async () => undefined,
    partitionsAdded: async () => undefined,
    partitionsRemoved: async () => undefined,
    topicConfigChanged: async () => undefined,
    topicRenamed: () => undefined,
  });
  await assert.rejects(catalog.deleteNamespace('shop'), /disk on fire/);
  assert.deepEqual(closed, ['a', 'b', 'c']);
  assert.equal(catalog.getNamespace('shop'), null);
  // Its id is free again.
  assert.equal((await catalog.createNamespace('next')).id, 0);
});

test('removes partitions: the last ones go, down to zero; the count persists', async () => {
  const store = memoryStore();
  const catalog = await Catalog.open(store, new ManualClock());
  const t = await catalog.createTopic('default', 'shrink', { partitions: 4 });
  await assert.rejects(catalog.removePartitions(t, 4), code('invalid_partitions'));
  await assert.rejects(catalog.removePartitions(t, 5), code('invalid_partitions'));
  await assert.rejects(catalog.removePartitions(t, -1), code('invalid_partitions'));
  assert.equal((await catalog.removePartitions(t, 1)).partitions, 1);
  assert.equal((await catalog.removePartitions({ topic: 'shrink' }, 0)).partitions, 0);
  const reopened = await Catalog.open(store, new ManualClock());
  assert.equal(reopened.requireTopic({ topic: 'shrink' }).partitions, 0);
  assert.equal((await reopened.addPartitions({ topic: 'shrink' }, 2)).partitions, 2);
});

test('a topic whose logs cannot be opened is rolled back', async () => {
  const catalog = await Catalog.open(memoryStore(), new ManualClock());
  catalog.setObserver({
    topicCreated: async () => {
      throw new Error('disk on fire');
    },
    topicDeleted: async () => undefined,
    partitionsReset: async () => undefined,
    partitionsAdded: async () => undefined,
    partitionsRemoved: async () => undefined,
    topicConfigChanged: async () => undefined,
    topicRenamed: () => undefined,
  });
  await assert.rejects(catalog.createTopic('default', 'doomed', { partitions: 1 }), /disk on fire/);
  assert.equal(catalog.getTopic({ topic: 'doomed' }), null);
  // 'default', made for that topic, went with it, and its id is free again.
  assert.deepEqual(catalog.listNamespaces(), []);
  assert.equal((await catalog.createNamespace('next')).id, 0);
});

test('a new topic, and new partitions, become visible only once the observer has opened their logs', async () => {
  const catalog = await Catalog.open(memoryStore(), new ManualClock());
  const seen: string[] = [];
  catalog.setObserver({
    topicCreated: async (t: Topic) => {
      await Promise.resolve();
      seen.push(`created: visible ${catalog.getTopic({ topic: t.name }) !== null}`);
    },
    topicDeleted: async () => undefined,
    partitionsReset: async () => undefined,
    partitionsAdded: async (t: Topic, prev: number) => {
      await Promise.resolve();
      seen.push(`added ${prev}->${t.partitions}: catalog says ${catalog.requireTopic({ topic: t.name }).partitions}`);
    },
    partitionsRemoved: async () => undefined,
    topicConfigChanged: async () => undefined,
    topicRenamed: () => undefined,
  });
  await catalog.createTopic('default', 'fresh', { partitions: 1 });
  assert.equal(catalog.requireTopic({ topic: 'fresh' }).partitions, 1);
  await catalog.addPartitions({ topic: 'fresh' }, 3);
  assert.equal(catalog.requireTopic({ topic: 'fresh' }).partitions, 3);
  assert.deepEqual(seen, ['created: visible false', 'added 1->3: catalog says 1']);
});

test('partitions whose logs cannot be opened are not added: the store keeps the old count', async () => {
  const store = memoryStore();
  const catalog = await Catalog.open(store, new ManualClock());
  catalog.setObserver({
    topicCreated: async () => undefined,
    topicDeleted: async () => undefined,
    partitionsReset: async () => undefined,
    partitionsAdded: async () => {
      throw new Error('disk on fire');
    },
    partitionsRemoved: async () => undefined,
    topicConfigChanged: async () => undefined,
    topicRenamed: () => undefined,
  });
  await catalog.createTopic('default', 'stuck', { partitions: 1 });
  await assert.rejects(catalog.addPartitions({ topic: 'stuck' }, 4), /disk on fire/);
  assert.equal(catalog.requireTopic({ topic: 'stuck' }).partitions, 1);
  const reopened = await Catalog.open(store, new ManualClock());
  assert.equal(reopened.requireTopic({ topic: 'stuck' }).partitions, 1);
});

test('a purge (resetPartitions) is refused when no observer holds the logs (the broker is stopping)', async () => {
  const catalog = await Catalog.open(memoryStore(), new ManualClock());
  await catalog.createTopic('default', 'kept', { partitions: 1 });
  await assert.rejects(catalog.resetPartitions({ topic: 'kept' }), (err: unknown) => isQuartetError(err) && err.code === 'shutting_down');
});

test('an id whose record could not be stored is not skipped afterwards', async () => {
  const store = memoryStore();
  const catalog = await Catalog.open(store, new ManualClock());
  const putNamespace = store.putNamespace.bind(store);
  let failures = 1;
  store.putNamespace = async (record) => {
    if (failures-- > 0) throw new Error('disk full');
    return putNamespace(record);
  };
  await assert.rejects(catalog.createNamespace('a'), /disk full/);
  assert.equal((await catalog.createNamespace('b')).id, 0);
});
