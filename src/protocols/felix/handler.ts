// The contract between a Felix stream (stream.ts: one client-opened QUIC stream, authenticated)
// and the request handlers: what a handler is given (the decoded message and the stream's
// context) and how it answers (ctx.send, on the same stream; nothing on a publish-only stream).
// A handler fails by throwing a FelixFailure with the reference's error text (codec/errors.ts),
// answered as {"type":"error","message":…}; the stream goes on unless the failure says `close`.
// Handlers live in handlers/<area>.ts, each exporting a table of FelixHandler entries that the
// frontend merges into one dispatch table; a handler's `feature` is advertised in auth_ok.

import type { Writable } from 'node:stream';
import type { Broker } from '../../core/broker.js';
import type { Logger } from '../../base/logger.js';
import type { QueueGroups } from '../../core/groups/queue.js';
import type { FelixMessage, MessageOf, MessageType, PeerCapabilities } from './codec/index.js';
import type { FelixAccess, FelixPrincipal } from './access.js';
import type { FelixSettings } from './settings.js';
import type { FelixStreams } from './streams.js';
import type { FelixEventStreams } from './event-streams.js';

/** A request refused with one of the reference's error texts. */
export class FelixFailure extends Error {
  constructor(
    message: string,
    /** The stream is closed after the error (the reference's stream-fatal cases). */
    readonly close = false,
  ) {
    super(message);
  }
}

/** What every handler may use, built once per listener (frontend.ts). */
export interface FelixServices {
  readonly broker: Broker;
  readonly logger: Logger;
  readonly settings: FelixSettings;
  readonly access: FelixAccess;
  readonly streams: FelixStreams;
  readonly events: FelixEventStreams;
  /** The queue groups of group_poll and the dead letters (scope `felix`). */
  readonly queues: QueueGroups;
}

/** The connection a stream belongs to: its broker-opened event streams and subscriptions. */
export interface FelixConnectionScope {
  /** "ip:port" of the peer. */
  readonly remote: string;
  /** Opens a broker-to-client unidirectional stream. */
  openUni(): Writable;
  /** Counts a subscription against the connection's limit; false when it is full. */
  addSubscription(): boolean;
  removeSubscription(): void;
  /** Aborted when the connection goes. */
  readonly closed: AbortSignal;
}

/** One authenticated stream, as a handler sees it. */
export interface FelixStreamContext {
  readonly services: FelixServices;
  /** The tenant the stream authenticated for: every request must name it. */
  readonly tenantId: string;
  readonly principal: FelixPrincipal;
  /** What the peer can read (flags) and implements (features). */
  readonly peer: PeerCapabilities;
  /** 'uni': a publish-only stream, never answered. */
  readonly kind: 'bidi' | 'uni';
  readonly connection: FelixConnectionScope;
  /** Sends a JSON message on this stream (dropped on a publish-only stream). */
  send(message: FelixMessage): void;
  /** Sends whole frames (binary acks) on this stream (dropped on a publish-only stream). */
  sendFrames(chunks: readonly Buffer[]): void;
  /** The stream's read loop ends after this request (a subscribe stream is one-shot: notes §6). */
  finish(): void;
}

export interface FelixHandler<T extends MessageType = MessageType> {
  readonly types: readonly T[];
  /** The feature bit this handler serves (advertised in auth_ok once it is in place), if any. */
  readonly feature?: number;
  handle(ctx: FelixStreamContext, message: MessageOf<T>): Promise<void> | void;
}

/** A handler table entry for any of `types` (the message type narrows inside `handle`). */
export function felixHandler<T extends MessageType>(types: readonly T[], handle: (ctx: FelixStreamContext, message: MessageOf<T>) => Promise<void> | void, feature?: number): FelixHandler {
  return { types, handle: handle as FelixHandler['handle'], ...(feature !== undefined ? { feature } : {}) };
}
