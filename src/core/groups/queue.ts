// The queue model of the group engine (model.ts), not implemented yet: Felix queue groups, and
// Kafka share groups (KIP-932) later. Unlike the client-side and server-side models, nobody owns a
// partition: every member of the group may receive any record, and the unit of work is one
// record (one offset of one partition), claimed by one member at a time.
//
// - A delivery claims records for a member until a visibility deadline (the group's visibility
//   timeout, or the one the member asks for); a claimed record goes to nobody else meanwhile.
// - ack settles a record for good. nack (or a deadline passed) releases it for redelivery,
//   possibly after a delay; each release counts one delivery attempt.
// - A record that reaches the group's delivery limit goes to the dead-letter destination (a topic)
//   instead of being delivered again, and counts as settled.
// - The group's position in a partition (its committed offset) is the lowest offset not yet
//   settled: records below it are all acked or dead-lettered. Claims above it are state of their
//   own (Kafka share groups' in-flight records), bounded by `claimsMax`.
// - Members come and go with session timeouts (sessions.ts); a member that goes releases its
//   claims at once, as a nack would.
//
// The types below fix the shape a front-end will call; the implementation will keep claims in
// memory, settled ranges in the offset store, and deadlines on the engine's scheduler.

import type { GroupError } from './model.js';

export interface QueueGroupConfig {
  /** How long a delivered record stays claimed without an ack. */
  visibilityTimeoutMs: number;
  /** Deliveries of one record before it is dead-lettered (Kafka share groups: group.share.delivery.count.limit). */
  deliveryAttemptsMax: number;
  /** Where records past the delivery limit go (a topic internal id); null drops them (settled, logged). */
  deadLetterTopicInternalId: number | null;
  /** Claims held at once by the group (in-flight records, all members). */
  claimsMax: number;
}

/** One record claimed by a member. */
export interface QueueClaim {
  topicInternalId: number;
  partition: number;
  offset: number;
  /** 1 for the first delivery. */
  deliveryAttempt: number;
  /** Clock ms after which the claim lapses and the record is delivered again. */
  visibleAtMs: number;
}

export type QueueSettlement =
  /** Processed: never delivered again. */
  | { kind: 'ack' }
  /** Not processed: delivered again after `delayMs` (0: at once), counting one more attempt. */
  | { kind: 'nack'; delayMs: number }
  /** Poison: straight to the dead-letter destination. */
  | { kind: 'reject' };

export interface QueueGroups {
  /** Adds the member (or refreshes its session); an error when the group is full. */
  join(groupId: string, memberId: string, sessionTimeoutMs: number): GroupError;
  leave(groupId: string, memberId: string): GroupError;
  /** Claims up to `recordsMax` deliverable records of the topic for the member. */
  claim(groupId: string, memberId: string, topicInternalId: number, recordsMax: number): Promise<QueueClaim[]>;
  /** Settles the member's claims; unknown_member when a claim is no longer the member's (it lapsed). */
  settle(groupId: string, memberId: string, claims: readonly Pick<QueueClaim, 'topicInternalId' | 'partition' | 'offset'>[], how: QueueSettlement): Promise<GroupError>;
  /** Pushes the claims' visibility deadlines (a member still working on them). */
  extend(groupId: string, memberId: string, claims: readonly Pick<QueueClaim, 'topicInternalId' | 'partition' | 'offset'>[], visibilityTimeoutMs: number): GroupError;
}
