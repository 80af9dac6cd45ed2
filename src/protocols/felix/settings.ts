// The Felix front-end's settings (docs/configuration.md `felix.*`, `listeners.felix.*`) and their
// defaults: the reference broker's where it has one (notes §11), the other listeners' otherwise.

import { payloadBytesMaxDefault } from './codec/index.js';

export interface FelixSettings {
  /**
   * Tokens are checked (a personal access token, or `user:password`) and requests authorized by
   * the user's grants; off (the default, as the other listeners), any token is accepted and every
   * stream may do everything.
   */
  requireAuth: boolean;
  /** Largest frame payload after a stream authenticated, bytes (64 KiB before). */
  frameBytesMax: number;
  /** Subscriptions one connection may hold (the reference's max_subscriptions_per_conn). */
  subscriptionsPerConnectionMax: number;
  /**
   * Streams a client may have open at once on one connection, each direction (QUIC's
   * initial_max_streams; the reference's max_streams): the transport refuses one more.
   */
  streamsPerConnectionMax: number;
  /** Frames one stream may have read and not yet handled; beyond them reading pauses. */
  streamFramesAheadMax: number;
  /** An event batch carries at most this many records (event_batch_max_events) … */
  eventBatchRecordsMax: number;
  /** … and this many payload bytes, unless one record is larger (event_batch_max_bytes). */
  eventBatchBytesMax: number;
  /**
   * Bytes an event stream may have written and its subscriber not yet taken; past them the
   * subscription reads nothing more until the subscriber catches up.
   */
  subscriberBufferedBytesMax: number;
  /** How long a polled group record stays claimed without an ack before it is delivered again. */
  groupVisibilityTimeoutMs: number;
  /** Deliveries of one group record before it goes to the dead letters. */
  groupDeliveryAttemptsMax: number;
}

export const felixSettingsDefault: Readonly<FelixSettings> = Object.freeze({
  requireAuth: false,
  frameBytesMax: payloadBytesMaxDefault,
  subscriptionsPerConnectionMax: 4096,
  streamsPerConnectionMax: 1024,
  streamFramesAheadMax: 64,
  eventBatchRecordsMax: 64,
  eventBatchBytesMax: 65_536,
  subscriberBufferedBytesMax: 4 << 20,
  groupVisibilityTimeoutMs: 30_000,
  groupDeliveryAttemptsMax: 5,
});
