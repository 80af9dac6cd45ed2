// The contract between the Kafka connection and the handlers: one file per API key in this
// folder, each exporting a `KafkaHandler` and listed in ./index.ts. A handler translates a decoded
// request into core calls and the result into a response body; it never touches sockets or files.

import type { Broker, TopicRef } from '../../../core/broker.js';
import type { Clock } from '../../../base/clock.js';
import type { Logger } from '../../../base/logger.js';
import type { PartitionReader } from '../../../core/reads.js';
import type { SchemaApiKey, RequestOf, ResponseInputOf } from '../codec/messages/index.js';
import type { RequestHeader } from '../codec/headers.js';
import type { GroupCoordinator } from '../coordinator/group-coordinator.js';
import type { SaslSession } from '../sasl/session.js';

/** What the whole Kafka listener shares: created once per listener (src/protocols/kafka/frontend.ts). */
export interface KafkaFrontend {
  readonly broker: Broker;
  readonly groups: GroupCoordinator;
  readonly logger: Logger;
  /** The listener's clock (admin answers that depend on time, quota windows). */
  readonly clock: Clock;
  /** This broker's node id in Metadata/FindCoordinator (a single node: always the same). */
  readonly nodeId: number;
  /** The host and port clients are told to connect to (an IPv4 literal by default). */
  advertised(): { host: string; port: number };
  readonly settings: KafkaSettings;
  /** Metadata's cluster_id: stable for the data directory. Absent in bare test frontends (null is sent). */
  readonly clusterId?: string;
  /** Fetch long-poll waiters (frontend.ts); without it Fetch answers at once. */
  readonly fetchWaiters?: FetchWaiterPool;
  /**
   * The read side of transactions: Fetch and ListOffsets ask lastStableOffset and
   * abortedTransactions for read_committed (the broker's coordinator; tests may stub it). Absent
   * (a bare test frontend), transactionHooksOf (transactions.ts) asks the coordinator.
   */
  transactions?: KafkaTransactionHooks | null;
}

/** What the read path needs from the transaction coordinator (see `KafkaFrontend.transactions`). */
export interface KafkaTransactionHooks {
  lastStableOffset(topic: TopicRef, partition: number): number;
  abortedTransactions(topic: TopicRef, partition: number, fromOffset: number, toOffset: number): Array<{ producerId: number; firstOffset: number }>;
}

/** Long-poll support for Fetch (implemented in src/core/append-waiters.ts). */
export interface FetchWaiterPool {
  /**
   * Resolves true when any of `readers` gets an append, false at the deadline, when the pool is
   * full (the caller answers at once), or when `signal` aborts.
   */
  waitForAppend(readers: readonly PartitionReader[], waitMs: number, signal?: AbortSignal): Promise<boolean>;
}

export interface KafkaSettings {
  /** Create topics named in Metadata requests (allow_auto_topic_creation permitting). */
  autoCreateTopics: boolean;
  /** Partition count of auto-created topics and of CreateTopics with num_partitions -1. */
  defaultPartitions: number;
  /** Largest request frame accepted (bytes); a larger one closes the connection. */
  requestBytesMax: number;
  /** Requests read ahead of their responses on one connection before reading pauses. */
  inFlightRequestsMax: number;
  /** When set, every API but ApiVersions and SaslHandshake requires SASL authentication first. */
  saslRequired: boolean;
  saslMechanisms: readonly string[];
  /** Upper bound on Fetch max_wait_ms honoured (ms). */
  fetchWaitMsMax: number;
  /** Fetch requests long-polling at once across the listener; further ones answer at once. */
  fetchWaitersMax?: number;
  /** Upper bound on the record bytes of one Fetch response (the request's max_bytes is capped to it). */
  fetchResponseBytesMax?: number;
  /**
   * How long a Fetch, ListOffsets or DeleteRecords waits for an Iggy purge of its topic to replace
   * the logs before that partition answers KAFKA_STORAGE_ERROR (retriable). Default 10 s.
   */
  purgeWaitMsMax: number;
}

/** Per connection, mutable: who is on the other end. */
export interface KafkaSession {
  readonly remote: string;
  clientId: string | null;
  /** The authenticated user, or null before SASL (or when SASL is off). */
  principal: string | null;
  /** That user's id, the one whose credentials the exchange checked (../access.ts: its grants are checked by id). */
  principalUserId?: number | null;
  /**
   * Set by SaslHandshake: the mechanism chosen, whether the v0 raw-token path follows, and the
   * exchange in progress (handlers/sasl-handshake.ts creates it; SaslAuthenticate and sasl-raw.ts
   * feed it tokens until it sets `principal`).
   */
  sasl: { mechanism: string; rawTokens: boolean; exchange?: SaslSession; userId?: number | null; claimed?: string | null } | null;
  readonly logger: Logger;
  /** Aborted when the connection closes or drains: long waits (Fetch) should give up. */
  readonly signal?: AbortSignal;
}

export interface KafkaRequestContext {
  readonly frontend: KafkaFrontend;
  readonly session: KafkaSession;
  readonly header: RequestHeader;
  /** Equals header.apiVersion; repeated for brevity in handlers. */
  readonly version: number;
  /**
   * Runs `fn` once this request's response has been written to the socket (or there is no
   * response), when nothing references the response's buffers any more; also when the connection
   * closes before it is written. Absent where responses are not written by a connection (tests).
   */
  readonly afterResponseWritten?: (fn: () => void) => void;
  /**
   * Whether the response may reference stored batches as file slices, sent with sendfile
   * (src/protocols/file-replies.ts): a plain TCP connection with the native addon loaded.
   */
  readonly fileSlices?: boolean;
  /**
   * Keeps the request's bytes (which decoded fields such as Produce records are views of) alive
   * until `work` settles, even after the response is built: a handler that starts work on those
   * views which may outlive it (an append still queued in the log) holds the request with it.
   * Absent in tests that call handlers directly.
   */
  readonly holdRequestUntil?: (work: Promise<unknown>) => void;
  /** Closes the connection once this request's response is written (a failed SASL authentication). */
  readonly closeAfterResponse?: () => void;
  /**
   * Called while the handler starts (synchronously): the requests after this one start only once
   * its response is written, as if the connection were muted until then (Kafka's own behaviour).
   */
  readonly holdFollowingRequests?: () => void;
  /**
   * Mutes the connection for `ms` once this request's response is written: no further request is
   * read from it until then (Kafka's quota throttling, KIP-219). Absent in tests without a connection.
   */
  readonly throttleAfterResponse?: (ms: number) => void;
}

/**
 * A handler for one API key. `minVersion`..`maxVersion` is what ApiVersions advertises (see
 * shared/specs/kafka-broker-notes.md §2-3); versions outside it get UNSUPPORTED_VERSION before the
 * handler runs. Returning null sends no response (Produce with acks=0).
 */
export interface KafkaHandler<K extends SchemaApiKey = SchemaApiKey> {
  readonly apiKey: K;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** Answered before SASL authentication completes (ApiVersions, SaslHandshake, SaslAuthenticate). */
  readonly preAuth?: boolean;
  /**
   * The response to send when this request cannot be served as a whole (a QuartetError thrown by
   * handle(), or a version outside minVersion..maxVersion that the codec can still decode): the
   * error code on every topic/partition (or the top level), as Kafka's getErrorResponse does.
   * Without it the connection sends a response with defaults and the top-level error code, if the
   * schema has one.
   */
  errorResponse?(request: RequestOf<K>, errorCode: number, context: KafkaRequestContext): ResponseInputOf<K>;
  handle(request: RequestOf<K>, context: KafkaRequestContext): ResponseInputOf<K> | null | Promise<ResponseInputOf<K> | null>;
}

/** Keeps the API key's request/response types tied together at the definition site. */
export function defineHandler<K extends SchemaApiKey>(handler: KafkaHandler<K>): KafkaHandler<K> {
  return handler;
}
