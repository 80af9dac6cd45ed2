// The Cursus front-end shared by every connection of a listener: the services handlers use
// (handler.ts CursusServices), built once from the broker, and the dispatch table, merged from the
// handler tables of each area (handlers/<area>.ts). Dispatch checks, in order: a handler for the
// command (unknown_command), the permissions (access.ts authorizeCommand), the required CRQ2
// fields of the command's spec (codec/commands.ts: `missing_<key> command=<COMMAND>`), the topic's
// auth_policy for handlers that declare a topicPolicy, then runs the handler. A table naming a
// command twice, or one the codec does not know, is a programmer error caught at construction.

import { RequestByteBudget } from '../../base/request-bytes.js';
import { systemClock, type Clock } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';
import type { Broker } from '../../core/broker.js';
import type { ListenAddress } from '../transport.js';
import type { Scheduler } from '../../core/scheduler.js';
import { CursusAccess, authorizeCommand, authorizeTopic } from './access.js';
import { CommandId, commandSpec } from './codec/commands.js';
import type { FrameBudget } from './codec/framer.js';
import { CursusFailure, type CursusCommandHandler, type CursusContext, type CursusReply, type CursusRequest, type CursusServices } from './handler.js';
import { CursusDataPath, type CursusDataSettings } from './data-path.js';
import { CursusEventStore } from './event-store.js';
import { CursusGroups } from './groups.js';
import { authHandlers } from './handlers/auth.js';
import { clusterHandlers } from './handlers/cluster.js';
import { dataHandlers } from './handlers/data.js';
import { eventHandlers } from './handlers/events.js';
import { groupHandlers } from './handlers/groups.js';
import { topicHandlers } from './handlers/topics.js';
import { transactionHandlers } from './handlers/transactions.js';
import { CursusNode } from './node.js';
import { CursusTopics } from './topics.js';
import { CursusTransactions } from './transactions.js';

export interface CursusSettings {
  /** Protected commands need an authenticated principal and its permissions (access.ts). */
  requireAuth: boolean;
  /** Requests one connection may have read and not yet answered; beyond it reading pauses. */
  inFlightRequestsMax: number;
  /** A group member without a heartbeat for this long is removed and its group rebalances. */
  sessionTimeoutMs: number;
  /** Also serve Cursus v1 connections, told apart by their first bytes (cursus-port.ts). */
  v1Compat: boolean;
  /**
   * Bytes of large request frames (64 KiB and up) the listener's connections may hold at once,
   * being assembled or waiting to be handled; a frame beyond it, or beyond what is left of the
   * broker's request bytes (broker.requestBytes, shared with Kafka and Iggy), is skipped and
   * answered `request_bytes_exhausted` (codec/framer.ts).
   */
  requestBytesMax: number;
}

/** Four frames of the largest size (64 MiB each). */
export const requestBytesMaxDefault = 256 * 1024 * 1024;

export const cursusSettingsDefault: Readonly<CursusSettings> = Object.freeze({ requireAuth: false, inFlightRequestsMax: 64, sessionTimeoutMs: 30_000, v1Compat: false, requestBytesMax: requestBytesMaxDefault });

/** Every area's handlers; an area adds its table here (one line). */
export const builtinHandlerTables: ReadonlyArray<readonly CursusCommandHandler[]> = [
  topicHandlers,
  clusterHandlers,
  authHandlers,
  dataHandlers,
  groupHandlers,
  transactionHandlers,
  eventHandlers,
];

/** One dispatch table by command ID from handler tables. */
export function buildDispatchTable(tables: ReadonlyArray<readonly CursusCommandHandler[]>): ReadonlyMap<number, CursusCommandHandler> {
  const byId = new Map<number, CursusCommandHandler>();
  for (const handler of tables.flat()) {
    const id = CommandId[handler.command];
    if (id === undefined) throw new Error(`Cursus handler for unknown command ${handler.command}`);
    if (byId.has(id)) throw new Error(`two Cursus handlers for ${handler.command}`);
    if (commandSpec(id)?.internal === true) throw new Error(`${handler.command} is broker-internal: no client handler`);
    byId.set(id, handler);
  }
  return byId;
}

/**
 * The services every handler has, built from the broker: what the frontend starts with (an area
 * adds its own service here), and what a handler test builds its context from.
 */
export function createCursusServices(options: CursusServicesOptions): CursusServices {
  const { broker, logger } = options;
  const clock = options.clock ?? systemClock;
  const timers = options.scheduler !== undefined ? { scheduler: options.scheduler } : {};
  const topics = new CursusTopics({ broker });
  const topicView = (name: string) => topics.view(name);
  const groups = new CursusGroups({ broker, logger, clock, ...timers, topicView, ...(options.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: options.sessionTimeoutMs } : {}) });
  topics.registerDeleteGuard((topic) => (groups.hasActiveMembers(topic.name) ? `a consumer group of ${topic.name} has active members` : null));
  topics.registerDeleteGuard((topic) => {
    for (let p = 0; p < topic.partitions; p++) {
      if (broker.transactions.openTransactions({ topic: topic.name }, p).length > 0) return `an open transaction writes to ${topic.name}`;
    }
    return null;
  });
  const data = new CursusDataPath({
    broker,
    logger,
    clock,
    ...timers,
    topicView,
    authorize: authorizeTopic,
    committedOffset: (group, topic, partition) => groups.committedOffset(group, topic, partition),
    settings: { ...options.data, minInSyncReplicas: topics.minInSyncReplicasFallback },
  });
  const transactions = new CursusTransactions({
    broker,
    logger,
    clock,
    topicView,
    validateOwnership: (group, member, generation, topic, partitions) => {
      groups.validateOwnership(group, member, generation, topic, partitions);
      return null;
    },
  });
  const events = new CursusEventStore({ broker, logger, clock, topicView });
  return {
    broker,
    logger,
    clock,
    topics,
    access: new CursusAccess({ broker, requireAuth: options.requireAuth ?? false }),
    node: new CursusNode(broker.replication.nodeId, options.advertisedAddr ?? null),
    groups,
    data,
    transactions,
    events,
  };
}

export interface CursusServicesOptions {
  broker: Broker;
  logger: Logger;
  clock?: Clock;
  /** Session, stream and long-poll timers (tests pass a ManualScheduler); default: real timers. */
  scheduler?: Scheduler;
  requireAuth?: boolean;
  sessionTimeoutMs?: number;
  data?: Partial<CursusDataSettings>;
  advertisedAddr?: ListenAddress | null;
}

export interface CursusFrontendOptions {
  broker: Broker;
  logger: Logger;
  clock?: Clock;
  scheduler?: Scheduler;
  /** Data path limits (CONSUME sizes and waits, STREAM timing). */
  data?: Partial<CursusDataSettings>;
  settings?: Partial<CursusSettings>;
  /** The address clients are given (METADATA, FIND_COORDINATOR); null: the bound one. */
  advertisedAddr?: ListenAddress | null;
  /** The handler tables (default: builtinHandlerTables); tests add their own. */
  handlers?: ReadonlyArray<readonly CursusCommandHandler[]>;
}

/**
 * The listener's request bytes within the broker's: a frame takes its bytes from both or from
 * neither. The broker's budget refuses while Kafka or Iggy frames wait for it, so those are not
 * overtaken. Frames of a connection whose peer has not authenticated (when authentication is
 * required) count in the listener's bytes only: such peers cannot take what authenticated peers'
 * frames on other listeners wait for.
 */
export class ListenerRequestBytes implements FrameBudget {
  constructor(
    private readonly listener: RequestByteBudget,
    private readonly broker: RequestByteBudget | undefined,
  ) {}

  /** Bytes the listener's frames hold. */
  get heldBytes(): number {
    return this.listener.heldBytes;
  }

  take(bytes: number, inBroker = true): boolean {
    if (!this.listener.take(bytes)) return false;
    if (!inBroker || this.broker === undefined || this.broker.take(bytes)) return true;
    this.listener.give(bytes);
    return false;
  }

  give(bytes: number, inBroker = true): void {
    this.listener.give(bytes);
    if (inBroker) this.broker?.give(bytes);
  }

  /** One connection's view: its frames count in the broker's bytes while `authenticated()`. */
  forConnection(authenticated: () => boolean): FrameBudget {
    // Frames of one cost are alike to the budgets: how many of each were counted in the broker.
    const inBroker = new Map<number, number>();
    return {
      take: (bytes) => {
        const counted = authenticated();
        if (!this.take(bytes, counted)) return false;
        if (counted) inBroker.set(bytes, (inBroker.get(bytes) ?? 0) + 1);
        return true;
      },
      give: (bytes) => {
        const counted = inBroker.get(bytes) ?? 0;
        if (counted > 1) inBroker.set(bytes, counted - 1);
        else inBroker.delete(bytes);
        this.give(bytes, counted > 0);
      },
    };
  }
}

export class CursusFrontend {
  readonly settings: CursusSettings;
  readonly services: CursusServices;
  readonly handlers: ReadonlyMap<number, CursusCommandHandler>;
  readonly logger: Logger;
  /** Shared by the connections' framers: the large request frames they hold (requestBytesMax). */
  readonly requestBytes: ListenerRequestBytes;

  constructor(options: CursusFrontendOptions) {
    this.settings = { ...cursusSettingsDefault, ...options.settings };
    this.logger = options.logger;
    this.requestBytes = new ListenerRequestBytes(new RequestByteBudget(this.settings.requestBytesMax), options.broker.requestBytes);
    this.services = createCursusServices({ ...options, requireAuth: this.settings.requireAuth, sessionTimeoutMs: this.settings.sessionTimeoutMs });
    this.handlers = buildDispatchTable(options.handlers ?? builtinHandlerTables);
  }

  /** Loads what the services keep (topic table, group registrations, event indexes); before the listener binds. */
  async start(): Promise<void> {
    const s = this.services;
    await s.topics.start();
    await s.groups.start();
    await s.data.start();
    await s.events.start();
  }

  /** After the connections drained. */
  async close(): Promise<void> {
    const s = this.services;
    s.events.close();
    await s.data.close();
    await s.groups.close();
    s.topics.close();
  }

  setBoundAddress(address: ListenAddress): void {
    this.services.node.setBoundAddress(address);
  }

  /** Runs a decoded request: handler, permissions, required fields, handler (module comment). */
  dispatch(ctx: CursusContext, commandId: number, request: CursusRequest): Promise<CursusReply> | CursusReply {
    const handler = this.handlers.get(commandId);
    if (handler === undefined) throw CursusFailure.of('unknown_command', [['command', String(commandId)]], `${request.command} is not served by this broker`);
    authorizeCommand(ctx, this.services.access, request.command, handler.permissions);
    const payload = request.payload;
    if (payload !== null) {
      for (const key of commandSpec(commandId)?.required ?? []) {
        if (!payload.fields.has(key)) throw CursusFailure.of(`missing_${key}`, [['command', request.command]]);
      }
      const topic = handler.topicPolicy === undefined ? undefined : payload.fields.get('topic')?.toString('utf8');
      const view = topic === undefined ? undefined : this.services.topics.view(topic);
      if (view !== undefined) authorizeTopic(ctx, view, handler.topicPolicy!);
    }
    return handler.handle(ctx, request);
  }
}
