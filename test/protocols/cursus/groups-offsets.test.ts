// The `offsets` list of BATCH_COMMIT (src/protocols/cursus/groups-offsets.ts): taken whole or
// refused whole, with the spec's codes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batchCommitEntriesMax, batchCommitOffsetsCharsMax, parseOffsetList } from '../../../src/protocols/cursus/groups-offsets.js';
import { CursusFailure } from '../../../src/protocols/cursus/handler.js';

function refusal(text: string | undefined): string {
  try {
    parseOffsetList(text, 'g', 't');
  } catch (err) {
    assert.ok(err instanceof CursusFailure);
    return [err.error.code, ...err.error.fields.map(([k, v]) => `${k}=${v}`)].join(' ');
  }
  return 'accepted';
}

describe('BATCH_COMMIT offsets', () => {
  it('reads P<partition>:<offset> entries in order, spaces and empty entries aside', () => {
    assert.deepEqual([...parseOffsetList('P0:100,P1:200,P2:150', 'g', 't')], [[0, 100], [1, 200], [2, 150]]);
    assert.deepEqual([...parseOffsetList(' P3:0 , ,P1:9007199254740991,', 'g', 't')], [[3, 0], [1, Number.MAX_SAFE_INTEGER]]);
  });

  it('refuses the whole list for a missing, empty, malformed, repeated or oversized one', () => {
    assert.equal(refusal(undefined), 'invalid_batch_commit_entry reason=offsets is missing');
    assert.equal(refusal(''), 'no_valid_offsets');
    assert.equal(refusal(', ,'), 'no_valid_offsets');
    assert.match(refusal('P0:1,0:2'), /^invalid_batch_commit_entry reason=entry "0:2" is not P<partition>:<offset>$/, 'the P prefix is required');
    assert.match(refusal('P0:-1'), /^invalid_batch_commit_entry /);
    assert.match(refusal('P0:01'), /^invalid_batch_commit_entry /);
    assert.match(refusal('P0:1:2'), /^invalid_batch_commit_entry /);
    assert.match(refusal('P0:9007199254740992'), /^invalid_batch_commit_entry reason=offset 9007199254740992 is out of range$/);
    assert.equal(refusal('P0:1,P1:2,P0:3'), 'duplicate_partition partition=0 group=g topic=t');
    const full = Array.from({ length: batchCommitEntriesMax }, (_, p) => `P${p}:1`);
    assert.equal(parseOffsetList(full.join(','), 'g', 't').size, batchCommitEntriesMax, '1,024 unique pairs are allowed');
    assert.equal(refusal([...full, `P${batchCommitEntriesMax}:1`].join(',')), `invalid_batch_commit_entry reason=more than ${batchCommitEntriesMax} offsets`);
    assert.equal(refusal(','.repeat(batchCommitOffsetsCharsMax + 1)), `invalid_batch_commit_entry reason=offsets is longer than ${batchCommitOffsetsCharsMax} characters`);
  });
});
