// Aggregate replay proofs (spec "Aggregate replay proof"): AGGREGATE_REPLAY_PROOF and
// AGGREGATE_EVENT_RANGE_READ over the event store. A proof says that the committed, retained log
// holds exactly the sequences (aggregate versions) 1..last of a match (aggregate key), each with
// its event id; the event ids and the SHA-256 of every payload are what the core's event index
// keeps (rebuilt from the stored records, which carry the event id and the payload itself).
//
// The proof JSON (docs/protocols/cursus-wire-v2.md §7.4): topic, match_id, partition,
// first_sequence, last_sequence, event_count, first_offset, last_offset, first_event_id,
// last_event_id, log_start_offset, proof_hwm. A failure carries the same object, with what could
// be established (null where nothing) and a `reason`, in its `proof` field:
//   aggregate_proof_proof_unavailable  no committed event of the match yet (retry later)
//   aggregate_proof_retention_gap      retention removed the first sequences
//   aggregate_proof_sequence_gap       the last sequence is not expected_last_sequence
//   aggregate_proof_identity_conflict  a retained event without an event id, or an id used twice

import type { StreamEvent } from '../../core/event-streams.js';
import { CursusFailure } from './handler.js';
import type { CursusRecord } from './codec/batch.js';
import { indexed, type CursusEventStore, type StreamPlace } from './event-store.js';

/** AGGREGATE_EVENT_RANGE_READ: max_records at most. */
export const rangeReadRecordsMax = 10_000;

export interface ReplayProof {
  topic: string;
  match_id: string;
  partition: number;
  first_sequence: number | null;
  last_sequence: number | null;
  event_count: number;
  first_offset: number | null;
  last_offset: number | null;
  first_event_id: string | null;
  last_event_id: string | null;
  log_start_offset: number;
  proof_hwm: number;
}

export interface ProofRequest {
  topic: string;
  matchId: string;
  partition: number | undefined;
  expectedLastSequence: number | undefined;
}

/** One event as AGGREGATE_EVENT_RANGE_READ returns it. */
export interface EventEnvelope {
  sequence: number;
  offset: number;
  event_id: string | null;
  event_type: string;
  schema_version: number;
  metadata: string;
  timestamp: number | null;
  payload_sha256: string;
  /** base64 of the payload bytes. */
  payload: string;
}

export class AggregateProofs {
  constructor(private readonly store: CursusEventStore) {}

  /** The proof, or a failure carrying the diagnostic proof. */
  async prove(req: ProofRequest): Promise<{ place: StreamPlace; proof: ReplayProof; events: StreamEvent[] }> {
    const key = Buffer.from(req.matchId, 'utf8');
    const place = this.store.place(req.topic, key);
    if (!place.view.aggregateReplay) throw CursusFailure.of('aggregate_replay_not_enabled', [['topic', req.topic]], 'the topic was not created with aggregate_replay=true');
    if (req.partition !== undefined && req.partition !== place.partition) {
      throw CursusFailure.of('invalid_partition', [['command', 'AGGREGATE_REPLAY_PROOF'], ['partition', String(req.partition)]], `match ${req.matchId} routes to partition ${place.partition}`);
    }
    const log = this.store.partitionLog(place);
    const { events } = await indexed(place, this.store.streams.events(place.topic, place.partition, key, 1));
    const stats = log.stats();
    const retained = events.filter((e) => e.offset >= stats.logStartOffset && e.offset < stats.highWatermark);
    const first = retained[0];
    const last = retained[retained.length - 1];
    const proof: ReplayProof = {
      topic: req.topic,
      match_id: req.matchId,
      partition: place.partition,
      first_sequence: first?.version ?? null,
      last_sequence: last?.version ?? null,
      event_count: retained.length,
      first_offset: first?.offset ?? null,
      last_offset: last?.offset ?? null,
      first_event_id: first?.eventId ?? null,
      last_event_id: last?.eventId ?? null,
      log_start_offset: stats.logStartOffset,
      proof_hwm: stats.highWatermark,
    };
    const fail = (code: string, reason: string): never => {
      throw CursusFailure.of(code, [['reason', reason], ['proof', JSON.stringify({ ...proof, reason })]]);
    };
    if (first === undefined || last === undefined) {
      if (events.length > 0 && events[0]!.offset < stats.logStartOffset) fail('aggregate_proof_retention_gap', 'retention removed every event of the match');
      fail('aggregate_proof_proof_unavailable', 'no committed event of the match');
    }
    if (first!.version !== 1) fail('aggregate_proof_retention_gap', `the first retained sequence is ${first!.version}`);
    // The index holds consecutive versions; check it anyway: a proof must not rest on an assumption.
    for (let i = 0; i < retained.length; i++) if (retained[i]!.version !== i + 1) fail('aggregate_proof_sequence_gap', `sequence ${i + 1} is missing`);
    const ids = new Set<string>();
    for (const e of retained) {
      if (e.eventId === null || e.eventId === '') fail('aggregate_proof_identity_conflict', `sequence ${e.version} has no event id`);
      if (ids.has(e.eventId!)) fail('aggregate_proof_identity_conflict', `event id ${e.eventId} is used twice`);
      ids.add(e.eventId!);
    }
    if (req.expectedLastSequence !== undefined && req.expectedLastSequence !== last!.version) {
      fail('aggregate_proof_sequence_gap', `the last sequence is ${last!.version}, expected ${req.expectedLastSequence}`);
    }
    return { place, proof, events: retained };
  }

  /** The proof and the events of sequences from..to (at most maxRecords of them). */
  async rangeRead(req: ProofRequest & { fromSequence: number; toSequence: number; maxRecords: number }): Promise<{ proof: ReplayProof; events: EventEnvelope[] }> {
    const { place, proof, events } = await this.prove(req);
    const to = Math.min(req.toSequence, proof.last_sequence ?? 0, req.fromSequence + req.maxRecords - 1);
    const wanted = events.filter((e) => e.version >= req.fromSequence && e.version <= to);
    const records = new Map((await this.store.recordsOf(place, wanted)).map((r) => [r.offset, r]));
    const out: EventEnvelope[] = [];
    for (const e of wanted) {
      const r = records.get(e.offset);
      // Retention moved the log start since the proof: the proof no longer holds.
      if (r === undefined) throw CursusFailure.of('aggregate_proof_retention_gap', [['reason', `sequence ${e.version} is no longer retained`], ['proof', JSON.stringify(proof)]]);
      out.push(envelope(r, e));
    }
    return { proof, events: out };
  }
}

function envelope(r: CursusRecord, e: StreamEvent): EventEnvelope {
  return {
    sequence: e.version,
    offset: e.offset,
    event_id: e.eventId,
    event_type: r.eventType ?? '',
    schema_version: r.schemaVersion ?? 1,
    metadata: r.metadata ?? '',
    timestamp: r.timestamp ?? null,
    payload_sha256: e.digest.toString('hex'),
    payload: r.payload.toString('base64'),
  };
}
