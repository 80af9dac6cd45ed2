import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QueuePartition } from '../../../src/core/groups/queue-partition.js';

describe('QueuePartition', () => {
  it('moves the position to the lowest unsettled offset, forgetting the acks below it', () => {
    const p = new QueuePartition(7, 0, 10, 10);
    const [a, b, c] = [10, 12, 13].map((offset) => p.claimNew(offset, null, 100));
    p.fetchedUpTo(15); // 11 and 14 hold no record the group sees
    p.ack(b!);
    assert.equal(p.advancePosition(), false, 'offset 10 is still claimed');
    p.ack(a!);
    assert.equal(p.advancePosition(), true);
    assert.deepEqual([p.position, p.tracked], [13, 1], 'the acks below 13 are forgotten');
    p.ack(c!);
    p.advancePosition();
    assert.deepEqual([p.position, p.tracked], [15, 0]);
  });

  it('dead-letters at the delivery limit, forgets the oldest past deadLettersMax, and redrives below the position', () => {
    const p = new QueuePartition(7, 0, 0, 0);
    const records = [0, 1, 2].map((offset) => p.claimNew(offset, 'm', 100));
    assert.equal(p.release(records[0]!, 50, 0, 2, 2), 'released');
    p.claim(records[0]!, 'm', 200);
    assert.equal(records[0]!.attempts, 2);
    assert.equal(p.release(records[0]!, 60, 0, 2, 2), 'dead_lettered');
    assert.equal(p.deadLetter(records[1]!, 2), null);
    assert.equal(p.deadLetter(records[2]!, 2), 0, 'the oldest of three goes past deadLettersMax 2');
    p.advancePosition();
    assert.deepEqual([p.position, p.sortedDeadLetters()], [3, [1, 2]]);
    assert.equal(p.redrive(2), true);
    assert.equal(p.redrive(2), false);
    assert.deepEqual(p.redeliverable(0, 10).map((r) => [r.offset, r.attempts]), [[2, 0]]);
    assert.equal(p.position, 3, 'a redrive leaves the position where it is');
  });

  it('restores with claims released, delivery counts kept, and the later of two positions', () => {
    const p = new QueuePartition(7, 0, 0, 0);
    const [a, b] = [0, 1].map((offset) => p.claimNew(offset, 'm', 100));
    p.claimNew(2, 'm', 100);
    p.ack(b!);
    p.deadLetter(a!, 10);
    p.advancePosition();
    const stored = JSON.parse(JSON.stringify(p.snapshot())) as ReturnType<QueuePartition['snapshot']>;
    const back = QueuePartition.restore(stored, 0);
    assert.deepEqual([back.position, back.fetchedTo, back.sortedDeadLetters()], [2, 3, [0]]);
    assert.deepEqual(back.redeliverable(0, 10).map((r) => [r.offset, r.attempts, r.state]), [[2, 1, 'available']]);
    assert.equal(back.claimOf(2, undefined), undefined, 'no claim survives');
    assert.equal(QueuePartition.restore(stored, 3).position, 3, 'a committed offset past the saved window wins');
  });
});
