// Aggregate replay proofs (src/protocols/cursus/event-store-proofs.ts) at the handler level: the
// exact retry of an event accepted without a second append, the proof of sequences 1..last and
// each failure code with its diagnostic proof, and the range read of raw event envelopes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { fnv1a64Mod } from '../../../src/protocols/cursus/routing.js';
import { openFixture, type Fixture } from './txn-event-fixtures.js';

async function replayTopic(f: Fixture, name: string, partitions = 2): Promise<void> {
  await f.broker.createTopic('default', name, { partitions });
  f.flags.set(name, { eventSourcing: true, aggregateReplay: true, idempotent: true });
}

function event(topic: string, match: string, version: number, eventId: string | null, message = `move ${version}`): Record<string, string> {
  return { topic, key: match, version: String(version), message, producerId: 'game-1', seqNum: String(version), ...(eventId === null ? {} : { event_id: eventId }) };
}

test('an exact retry of an event is accepted without appending; a different one under the same version conflicts', async (t) => {
  const f = await openFixture(t);
  await replayTopic(f, 'matches');
  const first = await f.ok('APPEND_STREAM', event('matches', 'm-1', 1, 'ev-1'));
  const partition = Number(first.get('partition'));
  assert.deepEqual([...(await f.ok('APPEND_STREAM', event('matches', 'm-1', 1, 'ev-1')))], [...first], 'same key, version, event id and payload');
  assert.equal((await f.fails('APPEND_STREAM', event('matches', 'm-1', 1, 'ev-1', 'other payload'))).code, 'version_conflict');
  assert.equal((await f.fails('APPEND_STREAM', event('matches', 'm-1', 1, 'ev-other'))).code, 'version_conflict');
  assert.equal((await f.fails('APPEND_STREAM', event('matches', 'm-1', 2, null))).code, 'missing_event_id', 'replay topics need event ids');
  assert.equal(f.broker.partition({ topic: 'matches' }, partition).stats().nextOffset, 1);
});

test('AGGREGATE_REPLAY_PROOF proves sequences 1..last with their bounds, ids and the committed HWM', async (t) => {
  const f = await openFixture(t);
  await replayTopic(f, 'arena');
  for (let v = 1; v <= 3; v++) await f.ok('APPEND_STREAM', event('arena', 'match-7', v, `id-${v}`));
  await f.ok('APPEND_STREAM', event('arena', 'match-8', 1, 'other'));
  const partition = fnv1a64Mod(Buffer.from('match-7'), 2);
  const hwm = f.broker.partition({ topic: 'arena' }, partition).stats().highWatermark;
  const ok = await f.ok('AGGREGATE_REPLAY_PROOF', { topic: 'arena', match_id: 'match-7', expected_last_sequence: '3' });
  const proof = JSON.parse(ok.get('proof')!) as Record<string, unknown>;
  assert.deepEqual(proof, {
    topic: 'arena',
    match_id: 'match-7',
    partition,
    first_sequence: 1,
    last_sequence: 3,
    event_count: 3,
    first_offset: proof.first_offset,
    last_offset: proof.last_offset,
    first_event_id: 'id-1',
    last_event_id: 'id-3',
    log_start_offset: 0,
    proof_hwm: hwm,
  });
  assert.ok((proof.last_offset as number) > (proof.first_offset as number));
  assert.equal(JSON.parse((await f.ok('AGGREGATE_REPLAY_PROOF', { topic: 'arena', match_id: 'match-7', partition: String(partition) })).get('proof')!).last_sequence, 3);
  assert.equal((await f.fails('AGGREGATE_REPLAY_PROOF', { topic: 'arena', match_id: 'match-7', partition: String(1 - partition) })).code, 'invalid_partition');

  const gap = await f.fails('AGGREGATE_REPLAY_PROOF', { topic: 'arena', match_id: 'match-7', expected_last_sequence: '5' });
  assert.equal(gap.code, 'aggregate_proof_sequence_gap');
  assert.deepEqual([JSON.parse(gap.fields.get('proof')!).last_sequence, JSON.parse(gap.fields.get('proof')!).reason], [3, 'the last sequence is 3, expected 5']);
  const none = await f.fails('AGGREGATE_REPLAY_PROOF', { topic: 'arena', match_id: 'never-played' });
  assert.deepEqual([none.code, JSON.parse(none.fields.get('proof')!).event_count], ['aggregate_proof_proof_unavailable', 0]);
});

test('a proof fails with a retention gap once retention removed the first sequences', async (t) => {
  const f = await openFixture(t);
  await replayTopic(f, 'old', 1);
  for (let v = 1; v <= 4; v++) await f.ok('APPEND_STREAM', event('old', 'm', v, `id-${v}`));
  await f.broker.partition({ topic: 'old' }, 0).deleteRecordsBefore(2);
  const gap = await f.fails('AGGREGATE_REPLAY_PROOF', { topic: 'old', match_id: 'm' });
  assert.equal(gap.code, 'aggregate_proof_retention_gap');
  const proof = JSON.parse(gap.fields.get('proof')!) as Record<string, unknown>;
  assert.deepEqual([proof.first_sequence, proof.last_sequence, proof.event_count, proof.log_start_offset], [3, 4, 2, 2]);
});

test('a proof fails with an identity conflict when an event of the match has no event id', async (t) => {
  const f = await openFixture(t);
  // An event-sourcing topic whose events were written without ids, then opted into replay.
  await f.broker.createTopic('default', 'legacy', { partitions: 1 });
  f.flags.set('legacy', { eventSourcing: true });
  await f.ok('APPEND_STREAM', event('legacy', 'm', 1, 'id-1'));
  await f.ok('APPEND_STREAM', event('legacy', 'm', 2, null));
  f.flags.set('legacy', { eventSourcing: true, aggregateReplay: true });
  const conflict = await f.fails('AGGREGATE_REPLAY_PROOF', { topic: 'legacy', match_id: 'm' });
  assert.deepEqual([conflict.code, conflict.fields.get('reason')], ['aggregate_proof_identity_conflict', 'sequence 2 has no event id']);
  f.flags.set('plain-es', { eventSourcing: true });
  await f.broker.createTopic('default', 'plain-es', { partitions: 1 });
  assert.equal((await f.fails('AGGREGATE_REPLAY_PROOF', { topic: 'plain-es', match_id: 'm' })).code, 'aggregate_replay_not_enabled');
});

test('AGGREGATE_EVENT_RANGE_READ returns the proof and the raw events of the range, never a group offset', async (t) => {
  const f = await openFixture(t);
  await replayTopic(f, 'replay');
  for (let v = 1; v <= 5; v++) await f.ok('APPEND_STREAM', { ...event('replay', 'g-1', v, `e${v}`), event_type: 'Move', metadata: '{"turn":1}' });
  const reply = await f.run('AGGREGATE_EVENT_RANGE_READ', { topic: 'replay', match_id: 'g-1', from_sequence: '2', to_sequence: '9', max_records: '3' });
  assert.equal(reply.kind, 'json');
  if (reply.kind !== 'json') return;
  const value = reply.value as { status: string; proof: { last_sequence: number }; events: Array<Record<string, unknown>> };
  assert.equal(value.status, 'OK');
  assert.equal(value.proof.last_sequence, 5);
  assert.deepEqual(value.events.map((e) => e.sequence), [2, 3, 4], 'from 2, at most 3');
  const e2 = value.events[0]!;
  assert.deepEqual([e2.event_id, e2.event_type, e2.schema_version, e2.metadata, Buffer.from(e2.payload as string, 'base64').toString()], ['e2', 'Move', 1, '{"turn":1}', 'move 2']);
  assert.equal(e2.payload_sha256, createHash('sha256').update('move 2').digest('hex'));
  assert.equal((await f.fails('AGGREGATE_EVENT_RANGE_READ', { topic: 'replay', match_id: 'g-1', from_sequence: '3', to_sequence: '2', max_records: '3' })).code, 'invalid_to_sequence');
  assert.equal((await f.fails('AGGREGATE_EVENT_RANGE_READ', { topic: 'replay', match_id: 'g-1', from_sequence: '1', to_sequence: '2', max_records: '0' })).code, 'invalid_max_records');
  assert.deepEqual(await f.broker.offsets.listGroups('cursus'), [], 'no consumer-group offset was written');
});
