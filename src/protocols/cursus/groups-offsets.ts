// The `offsets` field of BATCH_COMMIT (and SEND_OFFSETS_TO_TXN): `P<partition>:<nextOffset>`
// entries, comma-separated, at most 1,024 distinct partitions (spec, "BATCH_COMMIT": "offsets is
// one required Wire v2 field containing at most 1,024 unique partition pairs"; "The P prefix
// before partition numbers is required"). A list is taken whole or refused whole, before any
// offset changes: no entries (`no_valid_offsets`), a malformed or oversized list
// (`invalid_batch_commit_entry reason=`), a partition twice (`duplicate_partition partition=
// group= topic=`).

import { partitionsPerTopicMax } from '../../core/catalog.js';
import { CursusFailure } from './handler.js';

// Named limits.
export const batchCommitEntriesMax = 1024;
/** Characters of the `offsets` value: room for the entries, checked before splitting it. */
export const batchCommitOffsetsCharsMax = batchCommitEntriesMax * 64;

const entryPattern = /^P(0|[1-9][0-9]{0,8}):(0|[1-9][0-9]{0,15})$/;

function invalidEntry(reason: string): CursusFailure {
  return CursusFailure.of('invalid_batch_commit_entry', [['reason', reason]], reason);
}

/**
 * partition → next offset, in the order given. `group` and `topic` name the request in a
 * duplicate_partition error. Entries may have spaces around them; empty ones are skipped.
 */
export function parseOffsetList(text: string | undefined, group: string, topic: string): Map<number, number> {
  if (text === undefined) throw invalidEntry('offsets is missing');
  if (text.length > batchCommitOffsetsCharsMax) throw invalidEntry(`offsets is longer than ${batchCommitOffsetsCharsMax} characters`);
  const offsets = new Map<number, number>();
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = entryPattern.exec(entry);
    if (m === null) throw invalidEntry(`entry ${JSON.stringify(entry)} is not P<partition>:<offset>`);
    const partition = Number(m[1]);
    const offset = Number(m[2]);
    if (partition >= partitionsPerTopicMax) throw invalidEntry(`partition ${partition} is out of range`);
    if (!Number.isSafeInteger(offset)) throw invalidEntry(`offset ${m[2]} is out of range`);
    if (offsets.has(partition)) throw CursusFailure.of('duplicate_partition', [['partition', String(partition)], ['group', group], ['topic', topic]]);
    if (offsets.size === batchCommitEntriesMax) throw invalidEntry(`more than ${batchCommitEntriesMax} offsets`);
    offsets.set(partition, offset);
  }
  if (offsets.size === 0) throw CursusFailure.of('no_valid_offsets', [], 'offsets holds no P<partition>:<offset> entry');
  return offsets;
}
