// The core group engine: consumer-group membership for every protocol, with three assignment
// models over one set of parts (members, generations, session timeouts, fencing, rebalances):
//
//   client-side  client-side.ts: the members send their protocols and metadata, the engine
//                elects a leader, bumps the generation and hands the leader's assignment to
//                every member (Kafka's classic JoinGroup/SyncGroup/Heartbeat/LeaveGroup).
//   server-side  server-side.ts: the engine assigns a group's partitions to the members itself
//                (balanced, sticky, with a cooperative hand-off), a new generation per change:
//                one topic's partitions (Iggy consumer groups), or a flat list of several
//                topics' partitions kept by the adapter (Cursus groups).
//   queue        queue.ts: per-record claims with visibility timeouts, ack/nack/reject, a
//                delivery limit and dead letters, the position committed as an offset
//                (Felix queue groups; Kafka share groups, KIP-932, later).
//
// Shared: sessions.ts (a member's session deadline on an injected clock and scheduler), the
// neutral errors below, store.ts (durable group state). The engine knows no wire types: each
// protocol maps the errors onto its own codes (Kafka: coordinator/kafka-errors.ts) and its ids
// and reply shapes onto the engine's calls.

/**
 * Why the engine refused or failed a group operation. One name per distinct answer, so that a
 * protocol maps each onto exactly one code of its own.
 */
export type GroupError =
  | 'none'
  /** The engine cannot serve the group now (a Dead group, the group limit, a failed store write): retry. */
  | 'unavailable'
  /** The engine stopped (shutting down): ask again, possibly elsewhere. */
  | 'closed'
  /** The caller's generation is not the group's: it was fenced by a rebalance. */
  | 'stale_generation'
  /** The member's protocol type or protocols do not match the group's. */
  | 'inconsistent_protocol'
  | 'invalid_group_id'
  | 'unknown_member'
  | 'invalid_session_timeout'
  /** A rebalance is under way: rejoin. */
  | 'rebalance_in_progress'
  | 'group_not_empty'
  | 'group_not_found'
  /** A new member must come back with the id it was given (before it counts as a member). */
  | 'member_id_required'
  | 'group_full'
  /** A static instance id now belongs to another member id. */
  | 'fenced_instance';

export const allGroupErrors: readonly GroupError[] = [
  'none',
  'unavailable',
  'closed',
  'stale_generation',
  'inconsistent_protocol',
  'invalid_group_id',
  'unknown_member',
  'invalid_session_timeout',
  'rebalance_in_progress',
  'group_not_empty',
  'group_not_found',
  'member_id_required',
  'group_full',
  'fenced_instance',
];
