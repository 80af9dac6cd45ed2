// Catalog ↔ Felix (docs/mapping.md): tenant and namespace onto one catalog namespace, both ways,
// one to one; names Felix cannot express have no mapping.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { catalogNamespaceForFelix, felixNamesForCatalogNamespace, kafkaTopicNameFor } from '../../../src/protocols/mapping.js';

test('the default tenant and namespace are the catalog namespace default: Felix stream orders is Kafka topic orders', () => {
  const ns = catalogNamespaceForFelix('default', 'default');
  assert.equal(ns, 'default');
  assert.equal(kafkaTopicNameFor(ns!, 'orders'), 'orders');
  assert.deepEqual(felixNamesForCatalogNamespace('default'), { tenantId: 'default', namespace: 'default' });
});

test('other pairs map to <tenant>.<namespace>, the default tenant to the namespace alone, and back', () => {
  const pairs: Array<[string, string, string]> = [
    ['default', 'payments', 'payments'],
    ['acme', 'default', 'acme.default'],
    ['acme', 'billing', 'acme.billing'],
    ['t1', 'x_y', 't1.x_y'],
  ];
  for (const [tenant, namespace, catalog] of pairs) {
    assert.equal(catalogNamespaceForFelix(tenant, namespace), catalog);
    assert.deepEqual(felixNamesForCatalogNamespace(catalog), { tenantId: tenant, namespace });
  }
});

test('names with a dot or an empty part, and catalog namespaces Felix cannot name, have no mapping', () => {
  for (const [t, n] of [['a.b', 'c'], ['a', 'b.c'], ['', 'x'], ['x', '']]) assert.equal(catalogNamespaceForFelix(t!, n!), null, `${t}/${n}`);
  for (const ns of ['default.x', 'a.b.c', '.a', 'a.', '']) assert.equal(felixNamesForCatalogNamespace(ns), null, ns);
});

test('the mapping is one to one over a sample of names', () => {
  const names = ['default', 'acme', 'a-b', 'x_y', 'Z9'];
  const seen = new Map<string, string>();
  for (const t of names) {
    for (const n of names) {
      const catalog = catalogNamespaceForFelix(t, n)!;
      const key = `${t}/${n}`;
      assert.ok(!seen.has(catalog), `${key} and ${seen.get(catalog)} collide on ${catalog}`);
      seen.set(catalog, key);
      assert.deepEqual(felixNamesForCatalogNamespace(catalog), { tenantId: t, namespace: n });
    }
  }
});
