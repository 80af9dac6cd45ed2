// The selectors of Cursus groups and their expansion into one flat list of topic-partitions
// (src/protocols/cursus/groups-selector.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Topic } from '../../../src/core/catalog.js';
import { expand, globMatches, groupTopicPartitionsMax, keyOf, parseStoredSelector, sameExpansion, selects, selectorText, storedExpansion } from '../../../src/protocols/cursus/groups-selector.js';

function topic(name: string, partitions: number, internalId: number, namespace = 'default'): Topic {
  return { internalId, namespaceId: 0, namespace, id: internalId, name, uuid: Buffer.alloc(16, 1), partitions, config: {}, createdAt: 0 };
}

describe('Cursus group selectors', () => {
  it('matches globs as Cursus v1 does: * any run, ? one character, the rest literally', () => {
    assert.equal(globMatches('orders-*', 'orders-eu'), true);
    assert.equal(globMatches('orders-*', 'orders-'), true);
    assert.equal(globMatches('orders-*', 'order-eu'), false);
    assert.equal(globMatches('o?ders', 'orders'), true);
    assert.equal(globMatches('o?ders', 'oders'), false);
    assert.equal(globMatches('*.log', 'a.b.log'), true);
    assert.equal(globMatches('*.log', 'a.b.logx'), false);
    assert.equal(globMatches('a*b*c', 'axxbyyc'), true);
    assert.equal(globMatches('a*b*c', 'axxbyy'), false);
    assert.equal(globMatches('exact', 'exact'), true);
    assert.equal(globMatches('exact', 'exactly'), false);
    assert.equal(globMatches('.+', 'aa'), false, 'regex characters are literal');
    assert.equal(globMatches('*', ''), true);
    // No exponential backtracking on a hostile pattern.
    assert.equal(globMatches('*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(249)), false);
  });

  it('expands a selector into topic-partitions ordered by topic name, then partition', () => {
    const topics = [topic('b', 2, 7), topic('a', 1, 9), topic('c', 3, 4)];
    const e = expand({ kind: 'topics', topics: ['c', 'a'] }, topics);
    assert.deepEqual(e.flat.map((tp) => `${tp.topic.name}:${tp.partition}`), ['a:0', 'c:0', 'c:1', 'c:2']);
    assert.equal(e.indexOf.get(keyOf(4, 1)), 2);
    assert.deepEqual(storedExpansion(e), [{ topic: 'a', partitions: 1 }, { topic: 'c', partitions: 3 }]);
    assert.deepEqual(expand({ kind: 'pattern', pattern: '?' }, topics).topics.map((t) => t.name), ['a', 'b', 'c']);
    assert.deepEqual(expand({ kind: 'topic', topic: 'b' }, topics).flat.length, 2);
    assert.equal(sameExpansion(e, expand({ kind: 'topics', topics: ['a', 'c'] }, topics)), true);
    assert.equal(sameExpansion(e, expand({ kind: 'topics', topics: ['a', 'c'] }, [topic('a', 1, 9), topic('c', 4, 4)])), false, 'a partition more');
    assert.equal(sameExpansion(e, expand({ kind: 'topics', topics: ['a', 'c'] }, [topic('a', 1, 10), topic('c', 3, 4)])), false, 'a recreated');
  });

  it('keeps at most groupTopicPartitionsMax topic-partitions: whole topics, by name, up to the first that does not fit', () => {
    const e = expand({ kind: 'pattern', pattern: '*' }, [topic('a', groupTopicPartitionsMax - 1, 1), topic('b', 2, 2), topic('c', 1, 3)]);
    assert.deepEqual(e.topics.map((t) => t.name), ['a'], 'b does not fit whole, and what follows it is left out too');
    assert.equal(e.flat.length, groupTopicPartitionsMax - 1);
  });

  it('knows which topic names a selector takes, and reads back what it stored', () => {
    assert.equal(selects({ kind: 'topic', topic: 'a' }, 'a'), true);
    assert.equal(selects({ kind: 'topics', topics: ['a', 'b'] }, 'b'), true);
    assert.equal(selects({ kind: 'topics', topics: ['a', 'b'] }, 'c'), false);
    assert.equal(selects({ kind: 'pattern', pattern: 'x-*' }, 'x-1'), true);
    assert.equal(selectorText({ kind: 'topics', topics: ['a', 'b'] }), 'a,b');
    for (const s of [{ kind: 'topic', topic: 't' }, { kind: 'topics', topics: ['a', 'b'] }, { kind: 'pattern', pattern: '*' }] as const) {
      assert.deepEqual(parseStoredSelector(JSON.parse(JSON.stringify(s))), s);
    }
    for (const bad of [null, 3, { kind: 'topic' }, { kind: 'topics', topics: [] }, { kind: 'topics', topics: [1] }, { kind: 'pattern', pattern: '' }, { kind: 'regex', pattern: 'x' }]) {
      assert.equal(parseStoredSelector(bad), null, JSON.stringify(bad));
    }
  });
});
