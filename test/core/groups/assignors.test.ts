import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { stickyBalancedAssignor } from '../../../src/core/groups/assignors.js';

describe('stickyBalancedAssignor', () => {
  it('gives every partition to exactly one member, each its fair share, whatever the starting point', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 64 }), fc.array(fc.integer({ min: -1, max: 11 }), { maxLength: 64 }), (memberCount, partitions, start) => {
        const members = Array.from({ length: memberCount }, (_, i) => `m${i}`);
        const current = Array.from({ length: partitions }, (_, p) => (start[p] !== undefined && start[p]! >= 0 ? members[start[p]! % memberCount] : undefined));
        const desired = stickyBalancedAssignor(members, current, partitions);
        assert.equal(desired.length, partitions);
        for (const m of desired) assert.ok(members.includes(m), `partition given to ${String(m)}`);
        const loads = members.map((m) => desired.filter((x) => x === m).length);
        assert.ok(Math.max(...loads) - Math.min(...loads) <= 1, `balanced: ${loads.join(',')}`);
      }),
    );
  });

  it('keeps partitions where they are as far as balance allows, the remainder to the earliest', () => {
    assert.deepEqual(stickyBalancedAssignor(['a', 'b'], ['a', 'a', 'a', 'a'], 4), ['a', 'a', 'b', 'b'], 'a gives up its highest');
    assert.deepEqual(stickyBalancedAssignor(['a', 'b', 'c'], ['b', 'a', 'b', 'a'], 4), ['b', 'a', 'c', 'a'], 'the remainder to the earliest of the most loaded; b gives up its highest');
    assert.deepEqual(stickyBalancedAssignor(['a', 'b'], [undefined, undefined, undefined], 3), ['a', 'b', 'a'], 'free partitions to the least loaded, ties to the earliest');
  });
});
