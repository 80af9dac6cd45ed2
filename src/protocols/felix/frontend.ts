// The Felix front-end shared by every connection of a listener: the services handlers use
// (handler.ts FelixServices), built once from the broker, and the dispatch table, merged from the
// handler tables of each area (handlers/<area>.ts). The features advertised in auth_ok are those
// of the handlers in place (docs/protocols/felix-wire-v1.md §6: never more than is served).
//
// Adding an area is one handler file exporting its table and one line
// in builtinHandlerTables; a table naming a type twice, or a type only a broker sends, is a
// programmer error caught at construction.

import { systemClock, type Clock } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';
import { AppendWaiters } from '../../core/append-waiters.js';
import { QueueGroups } from '../../core/groups/queue.js';
import { systemScheduler, type Scheduler } from '../../core/scheduler.js';
import type { Broker } from '../../core/broker.js';
import { FelixAccess } from './access.js';
import { clientMessageTypes, serverFlags, type MessageType } from './codec/index.js';
import { FelixEventStreams } from './event-streams.js';
import type { FelixHandler, FelixServices } from './handler.js';
import { cacheHandlers } from './handlers/caches.js';
import { groupHandlers } from './handlers/groups.js';
import { idempotentHandlers } from './handlers/idempotent.js';
import { publishHandlers } from './handlers/publish.js';
import { shardHandlers } from './handlers/shards.js';
import { subscribeHandlers } from './handlers/subscribe.js';
import { felixSettingsDefault, type FelixSettings } from './settings.js';
import { FelixStreams } from './streams.js';

/** Every area's handlers; an area adds its table here (one line). */
export const builtinHandlerTables: ReadonlyArray<readonly FelixHandler[]> = [publishHandlers, idempotentHandlers, subscribeHandlers, shardHandlers, groupHandlers, cacheHandlers];

/** One dispatch table by message type from handler tables. */
export function buildDispatchTable(tables: ReadonlyArray<readonly FelixHandler[]>): ReadonlyMap<MessageType, FelixHandler> {
  const byType = new Map<MessageType, FelixHandler>();
  for (const handler of tables.flat()) {
    for (const type of handler.types) {
      if (type === 'auth' || !clientMessageTypes.has(type)) throw new Error(`a Felix handler for ${type}, which no client request is`);
      if (byType.has(type)) throw new Error(`two Felix handlers for ${type}`);
      byType.set(type, handler);
    }
  }
  return byType;
}

export interface FelixFrontendOptions {
  broker: Broker;
  logger: Logger;
  settings?: Partial<FelixSettings>;
  /** The handler tables (default: builtinHandlerTables). */
  handlers?: ReadonlyArray<readonly FelixHandler[]>;
  clock?: Clock;
  /** Group visibility timers (tests pass a ManualScheduler); default: real timers. */
  scheduler?: Scheduler;
}

/** The offset store scope of Felix queue groups (core/groups/queue.ts). */
export const felixGroupScope = 'felix';

export class FelixFrontend {
  readonly settings: FelixSettings;
  readonly services: FelixServices;
  readonly handlers: ReadonlyMap<MessageType, FelixHandler>;
  /** What auth_ok advertises. */
  readonly server: { flags: number; features: number };
  /** The group polls waiting for appends. */
  private readonly groupWaiters = new AppendWaiters();

  constructor(options: FelixFrontendOptions) {
    this.settings = { ...felixSettingsDefault, ...options.settings };
    const access = new FelixAccess(options.broker, this.settings.requireAuth);
    this.services = {
      broker: options.broker,
      logger: options.logger,
      settings: this.settings,
      access,
      streams: new FelixStreams(options.broker, access),
      events: new FelixEventStreams(options.broker, this.settings, options.logger),
      queues: new QueueGroups({
        broker: options.broker,
        scope: felixGroupScope,
        clock: options.clock ?? systemClock,
        scheduler: options.scheduler ?? systemScheduler,
        waiters: this.groupWaiters,
        logger: options.logger,
        config: { visibilityTimeoutMs: this.settings.groupVisibilityTimeoutMs, deliveryAttemptsMax: this.settings.groupDeliveryAttemptsMax },
      }),
    };
    this.handlers = buildDispatchTable(options.handlers ?? builtinHandlerTables);
    let features = 0;
    for (const h of this.handlers.values()) features |= h.feature ?? 0;
    this.server = { flags: serverFlags, features };
  }

  /** After the connections are gone: the subscriptions' loops and the group polls end. */
  async close(): Promise<void> {
    await this.services.events.close();
    this.services.queues.close();
    this.groupWaiters.close();
  }
}
