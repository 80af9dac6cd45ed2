import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  catalogCandidatesForKafkaName,
  escapeNamePart,
  isLegalKafkaTopicName,
  kafkaTopicNameFor,
  kafkaVisibleTopics,
  resolveKafkaTopicName,
  unescapeNamePart,
} from '../../../src/protocols/mapping.js';

describe('protocol name mapping', () => {
  it('maps the default stream to plain Kafka names and other streams to <stream>.<topic>', () => {
    assert.equal(kafkaTopicNameFor('default', 'orders'), 'orders');
    assert.equal(kafkaTopicNameFor('shop', 'orders'), 'shop.orders');
    assert.equal(kafkaTopicNameFor('my.shop', 'eu_orders'), 'my_2eshop.eu_5forders');
    assert.equal(kafkaTopicNameFor('café', 'x'), 'caf_c3_a9.x');
    assert.equal(kafkaTopicNameFor('default', 'has space'), null, 'not a legal Kafka name');
    assert.equal(kafkaTopicNameFor('s', 'x'.repeat(250)), null, 'too long for Kafka');
  });

  it('escapes reversibly (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }), (s) => {
        const e = escapeNamePart(s);
        assert.ok(!e.includes('.'));
        assert.equal(unescapeNamePart(e), s);
      }),
    );
    assert.equal(unescapeNamePart('a_zz'), null);
    assert.equal(unescapeNamePart('_61'), null, 'non-canonical: a plain character escaped');
  });

  it('resolves Kafka names: the default namespace first, then the split', () => {
    assert.deepEqual(catalogCandidatesForKafkaName('orders'), [{ namespace: 'default', topic: 'orders' }]);
    assert.deepEqual(catalogCandidatesForKafkaName('shop.orders'), [
      { namespace: 'default', topic: 'shop.orders' },
      { namespace: 'shop', topic: 'orders' },
    ]);
    assert.deepEqual(catalogCandidatesForKafkaName('a.b.c'), [{ namespace: 'default', topic: 'a.b.c' }]);
    assert.deepEqual(catalogCandidatesForKafkaName('default.x'), [{ namespace: 'default', topic: 'default.x' }]);
    const catalog = new Set(['shop/orders']);
    assert.deepEqual(resolveKafkaTopicName('shop.orders', (n) => (catalog.has(`${n.namespace}/${n.topic}`) ? n : null)), { namespace: 'shop', topic: 'orders' });
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ minLength: 1, maxLength: 20 }), (ns, topic) => {
        fc.pre(ns !== 'default');
        const name = kafkaTopicNameFor(ns, topic);
        fc.pre(name !== null);
        assert.ok(isLegalKafkaTopicName(name!));
        assert.deepEqual(catalogCandidatesForKafkaName(name!).at(-1), { namespace: ns, topic });
      }),
    );
  });

  it('lists visible topics, hiding unnameable and shadowed ones', () => {
    const topics = [
      { namespace: 'default', name: 'shop.orders' },
      { namespace: 'shop', name: 'orders' },
      { namespace: 'shop', name: 'eu' },
      { namespace: 'default', name: 'no way' },
    ];
    assert.deepEqual(kafkaVisibleTopics(topics).map((v) => v.kafkaName), ['shop.orders', 'shop.eu']);
    assert.equal(kafkaVisibleTopics(topics)[0]!.topic.namespace, 'default');
  });
});
