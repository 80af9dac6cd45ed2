// Capability negotiation (docs/protocols/felix-wire-v1.md §6): frame flags and feature bits are
// exchanged on every stream's auth. `client_flags` absent: the broker answers `ok` and assumes
// ORIGINAL_V1_FLAGS; present: it answers `auth_ok` with its own flags and features. Features are
// a separate number space: a feature says a request exists and never appears on a frame.

import { knownFlags, originalV1Flags } from './frame.js';
import type { Auth, AuthOk, MessageType, Ok } from './messages.js';

/** Feature bits of the v0.5.0 wire (notes §5). */
export const Feature = {
  topology: 0x0001,
  redirect: 0x0002,
  cacheDelete: 0x0004,
  consumerGroup: 0x0008,
  groupDeadLetters: 0x0010,
  streamShards: 0x0020,
  cacheWatch: 0x0040,
  cacheWatchRetained: 0x0080,
  counters: 0x0100,
  idempotentProducer: 0x0200,
} as const;

export const knownFeatures = 0x03ff;

/**
 * What one Quartet node answers when every handler is in place: everything but TOPOLOGY and
 * REDIRECT, which describe a cluster. A listener advertises only the features it serves.
 */
export const singleNodeFeatures = knownFeatures & ~(Feature.topology | Feature.redirect);

/** The flags Quartet understands and advertises: every bit of the v0.5.0 wire. */
export const serverFlags = knownFlags;

/** What a stream learned of its peer at auth. */
export interface PeerCapabilities {
  /** Frame flags the peer can read (ORIGINAL_V1_FLAGS when it offered none). */
  flags: number;
  /** Features the peer implements (0 when it offered none). */
  features: number;
}

/** The reply to an auth that succeeded, and what the peer can read from now on. */
export function authReply(auth: Auth, server: { flags: number; features: number }): { reply: Ok | AuthOk; peer: PeerCapabilities } {
  const peer = { flags: auth.clientFlags ?? originalV1Flags, features: auth.clientFeatures ?? 0 };
  if (auth.clientFlags === undefined) return { reply: { type: 'ok' }, peer };
  return { reply: { type: 'auth_ok', serverFlags: server.flags, serverFeatures: server.features }, peer };
}

/** What a client learns from the broker's answer to its auth. */
export function brokerCapabilities(reply: Ok | AuthOk): PeerCapabilities {
  return reply.type === 'ok' ? { flags: originalV1Flags, features: 0 } : { flags: reply.serverFlags, features: reply.serverFeatures ?? 0 };
}

/** The feature a broker must have advertised before a client sends a request of this type. */
export const requestFeature: Partial<Record<MessageType, number>> = {
  topology: Feature.topology,
  stream_shards: Feature.streamShards,
  cache_delete: Feature.cacheDelete,
  cache_watch: Feature.cacheWatch,
  counter_add: Feature.counters,
  counter_get: Feature.counters,
  group_poll: Feature.consumerGroup,
  group_ack: Feature.consumerGroup,
  group_nack: Feature.consumerGroup,
  group_dead_letters: Feature.groupDeadLetters,
  group_discard: Feature.groupDeadLetters,
  group_redrive: Feature.groupDeadLetters,
  producer_init: Feature.idempotentProducer,
  publish_idempotent: Feature.idempotentProducer,
};

/** Message types only a client sends. */
export const clientMessageTypes: ReadonlySet<MessageType> = new Set<MessageType>([
  'auth',
  'topology',
  'stream_shards',
  'publish',
  'publish_batch',
  'producer_init',
  'publish_idempotent',
  'subscribe',
  'cache_put',
  'cache_get',
  'cache_delete',
  'cache_watch',
  'counter_add',
  'counter_get',
  'group_poll',
  'group_ack',
  'group_nack',
  'group_dead_letters',
  'group_discard',
  'group_redrive',
]);
