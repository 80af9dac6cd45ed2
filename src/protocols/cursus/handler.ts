// The contract between the Cursus connection and the command handlers: what a handler is given
// (the decoded CRQ2 or CBV2 request and the connection's services) and what it returns (one of the
// reply shapes of docs/protocols/cursus-wire-v2.md §3). A handler fails by throwing a
// CursusFailure with a code of the error registry (§8.1); anything else it throws is answered as
// an internal error and logged. Handlers live in handlers/<area>.ts, each exporting a table of
// CursusCommandHandler entries that the frontend merges into one dispatch table.

import type { Broker } from '../../core/broker.js';
import type { Clock } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';
import { cursusError, renderError, type CursusError } from './codec/errors.js';
import type { CommandPayload } from './codec/crq2.js';
import type { PublishedBatch } from './published-batch.js';
import type { Fields } from './codec/lines.js';
import type { CursusGroups } from './groups.js';
import type { CursusAccess } from './access.js';
import type { CursusNode } from './node.js';
import type { CursusTopics } from './topics.js';
import type { CursusDataPath } from './data-path.js';
import type { CursusTransactions } from './transactions.js';
import type { CursusEventStore } from './event-store.js';

/** A request that fails with a registry code; the connection answers it with status ERROR. */
export class CursusFailure extends Error {
  constructor(readonly error: CursusError) {
    super(renderError(error));
  }

  static of(code: string, fields: Fields = [], message = ''): CursusFailure {
    return new CursusFailure(cursusError(code, fields, message));
  }
}

/** Coarse permissions of spec §8 (a configured user holds some of them, or `*`). */
export type CursusPermission = 'admin' | 'topic.read' | 'topic.write' | 'group' | 'transaction';

/** Who sent the request: a principal once AUTH (or inline auth) succeeded, else anonymous. */
export interface CursusPrincipal {
  readonly name: string | null;
  readonly permissions: ReadonlySet<CursusPermission | '*'>;
}

/** The Cursus view of one topic's definition (the topic table; defaults for a topic another protocol created). */
export interface CursusTopicView {
  readonly name: string;
  readonly partitions: number;
  readonly revision: number;
  readonly lifecycleEpoch: number;
  readonly idempotent: boolean;
  readonly eventSourcing: boolean;
  readonly aggregateReplay: boolean;
  readonly partitioner: 'hash_key' | 'round_robin';
  readonly authPolicy: 'open' | 'deny_write' | 'deny_read' | 'acl';
  readonly readAcl: readonly string[];
  readonly writeAcl: readonly string[];
  readonly cleanupPolicy: 'delete' | 'compact' | 'delete,compact';
  readonly retentionHours: number;
  readonly retentionBytes: number;
  /** null: the broker's default applies. */
  readonly minInSyncReplicas: number | null;
}

/**
 * The CBV2 batch of a PUBLISH: its bytes as appended, and what PUBLISH needs of its records
 * (published-batch.ts), not the records themselves (a large v1 batch is decoded on a worker).
 */
export interface CursusRequestBatch {
  readonly summary: PublishedBatch;
  readonly bytes: Buffer;
}

/** A decoded request: CRQ2 fields, or the CBV2 batch of a PUBLISH that carried one. */
export interface CursusRequest {
  readonly command: string;
  readonly requestId: bigint;
  readonly payload: CommandPayload | null;
  readonly batch: CursusRequestBatch | null;
  /** Set when the request came from a Cursus v1 connection, for the few rules v1 keeps differently. */
  readonly dialect?: 'v1';
}

/** Where a stream reply's frames go (kind 5). `closed` aborts when the connection goes away. */
export interface CursusStreamSink {
  /** Sends one stream frame of status OK; `end` marks the last. Resolves once the socket took it. */
  send(payload: readonly Buffer[], end?: boolean): Promise<void>;
  /** Ends the stream with an ERROR frame carrying `error` (END set). */
  fail(error: CursusError): Promise<void>;
  readonly closed: AbortSignal;
}

export type CursusReply =
  | { readonly kind: 'text'; readonly fields: Fields }
  | { readonly kind: 'json'; readonly value: object }
  | { readonly kind: 'batch'; readonly chunks: readonly Buffer[] }
  /** No frame at all (PUBLISH with acks=0). */
  | { readonly kind: 'none' }
  /** Frames of kind 5, written by `run` through the sink; the request's lifecycle ends when it resolves. */
  | { readonly kind: 'stream'; run(sink: CursusStreamSink): Promise<void> }
  /** `OK`, then the connection closes (EXIT). */
  | { readonly kind: 'close'; readonly fields: Fields };

/**
 * What a handler may use. The frontend builds one per listener; each area adds its service here
 * (topics, data path, groups, transactions, event store) so handlers never build their own.
 */
export interface CursusServices {
  readonly broker: Broker;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Consumer groups and their committed offsets (groups.ts). */
  readonly groups: CursusGroups;
  /** The topic table: definitions (view), CREATE/DELETE/TRUNCATE, delete guards. */
  readonly topics: CursusTopics;
  /** Authentication and the requireAuth switch (authorizeTopic reads it). */
  readonly access: CursusAccess;
  /** This broker's id and advertised address. */
  readonly node: CursusNode;
  /** PUBLISH, CONSUME, STREAM, LIST_OFFSETS (data-path.ts). */
  readonly data: CursusDataPath;
  readonly transactions: CursusTransactions;
  readonly events: CursusEventStore;
}

/** The per-request context: the services and the connection's authenticated principal. */
export interface CursusContext {
  readonly services: CursusServices;
  readonly principal: CursusPrincipal;
  /** The remote address, for logs. */
  readonly peer: string;
}

export interface CursusCommandHandler {
  readonly command: string;
  /** Every permission the command needs (spec §8: commands that cross boundaries need each). */
  readonly permissions: readonly CursusPermission[];
  /**
   * The dispatcher checks the request's `topic` against that topic's auth_policy and ACLs for this
   * operation before the handler runs (access.ts authorizeTopic). Handlers that find their topic
   * elsewhere (a CBV2 batch's header) check it themselves.
   */
  readonly topicPolicy?: 'read' | 'write';
  handle(ctx: CursusContext, request: CursusRequest): Promise<CursusReply> | CursusReply;
}
