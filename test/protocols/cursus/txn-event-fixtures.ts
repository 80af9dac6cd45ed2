// Fixtures for the transaction and event-store handler tests: a real Broker (in memory or over a
// data directory) with the Kafka and Cursus batch formats and both protocols' transaction
// markers, the Cursus services built over it, and a request builder that goes through the CRQ2
// codec as the connection would.

import { testServices } from './services.js';
import { Broker } from '../../../src/core/broker.js';
import { ManualClock } from '../../../src/base/clock.js';
import { silentLogger } from '../../../src/base/logger.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { createFormatRegistry } from '../../../src/log/formats.js';
import { kafkaBatchFormatCodec } from '../../../src/protocols/kafka/codec/kafka-format.js';
import { builtinTransactionOptions } from '../../../src/server/listeners.js';
import { cursusBatchFormatCodec } from '../../../src/protocols/cursus/codec/cursus-format.js';
import { decodeCommandPayload, encodeCommandPayload } from '../../../src/protocols/cursus/codec/crq2.js';
import { decodeOkLine } from '../../../src/protocols/cursus/codec/lines.js';
import { CursusFailure, type CursusCommandHandler, type CursusContext, type CursusReply, type CursusRequest, type CursusServices, type CursusTopicView } from '../../../src/protocols/cursus/handler.js';
import { CursusTransactions, type OwnershipValidator } from '../../../src/protocols/cursus/transactions.js';
import { defaultTopicView } from '../../../src/protocols/cursus/routing.js';
import { CursusEventStore } from '../../../src/protocols/cursus/event-store.js';
import { transactionHandlers } from '../../../src/protocols/cursus/handlers/transactions.js';
import { eventHandlers } from '../../../src/protocols/cursus/handlers/events.js';
import { tempDir, testScryptCost } from '../../core/helpers.js';

export interface Fixture {
  broker: Broker;
  clock: ManualClock;
  scheduler: ManualScheduler;
  services: CursusServices;
  /** Topic flags by name (the topic table's part these commands read). */
  flags: Map<string, Partial<CursusTopicView>>;
  run(command: string, fields: Record<string, string | Buffer>): Promise<CursusReply>;
  /** The OK line's fields of a text reply, as a map. */
  ok(command: string, fields: Record<string, string | Buffer>): Promise<Map<string, string>>;
  /** The failure a command throws: its code and fields. */
  fails(command: string, fields: Record<string, string | Buffer>): Promise<{ code: string; fields: Map<string, string> }>;
  close(): Promise<void>;
}

const handlers = new Map<string, CursusCommandHandler>([...transactionHandlers, ...eventHandlers].map((h) => [h.command, h]));

export function request(command: string, fields: Record<string, string | Buffer>): CursusRequest {
  const decoded = decodeCommandPayload(Buffer.concat(encodeCommandPayload(fields)));
  if (!decoded.ok) throw new Error(decoded.reason);
  return { command, requestId: 1n, payload: decoded.value, batch: null };
}

export interface FixtureOptions {
  dataDir?: string;
  validateOwnership?: OwnershipValidator;
  clock?: ManualClock;
  flags?: Map<string, Partial<CursusTopicView>>;
  /** The event store's index bound (its default when absent). */
  eventIndexBytesMax?: number;
}

/** Opens a broker and the services; `t.after` closes them unless the test closes them itself. */
export async function openFixture(t: { after(fn: () => Promise<void> | void): void }, options: FixtureOptions = {}): Promise<Fixture> {
  const clock = options.clock ?? new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const memory = options.dataDir === undefined;
  const broker = await Broker.open({
    dataDir: options.dataDir ?? tempDir(t, 'quartet-cursus-'),
    memory,
    clock,
    scheduler,
    rootUser: { username: 'root', password: 'pw' },
    maintenanceIntervalMs: 0,
    scryptCost: testScryptCost,
    formats: createFormatRegistry().register(kafkaBatchFormatCodec).register(cursusBatchFormatCodec),
    transactions: builtinTransactionOptions(),
  });
  const flags = options.flags ?? new Map<string, Partial<CursusTopicView>>();
  const topicView = (name: string): CursusTopicView | undefined => {
    const topic = broker.catalog.getTopic({ topic: name });
    return topic === null ? undefined : { ...defaultTopicView(topic), ...flags.get(name) };
  };
  const base = { broker, logger: silentLogger, clock };
  const transactions = new CursusTransactions({ ...base, topicView, ...(options.validateOwnership ? { validateOwnership: options.validateOwnership } : {}) });
  const events = new CursusEventStore({ ...base, topicView, ...(options.eventIndexBytesMax !== undefined ? { indexBytesMax: options.eventIndexBytesMax } : {}) });
  await events.start();
  const services = testServices({ ...base, transactions, events });
  const ctx: CursusContext = { services, principal: { name: null, permissions: new Set(['*']) }, peer: 'test' };
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    events.close();
    await broker.close();
  };
  t.after(close);
  const run = async (command: string, fields: Record<string, string | Buffer>): Promise<CursusReply> => {
    const h = handlers.get(command);
    if (!h) throw new Error(`no handler for ${command}`);
    return h.handle(ctx, request(command, fields));
  };
  return {
    broker,
    clock,
    scheduler,
    services,
    flags,
    run,
    async ok(command, fields) {
      const reply = await run(command, fields);
      if (reply.kind !== 'text') throw new Error(`${command} answered ${reply.kind}`);
      return new Map(reply.fields);
    },
    async fails(command, fields) {
      try {
        await run(command, fields);
      } catch (err) {
        if (err instanceof CursusFailure) return { code: err.error.code, fields: new Map(err.error.fields) };
        throw err;
      }
      throw new Error(`${command} succeeded`);
    },
    close,
  };
}

/** An OK line's fields as a map (for replies sent as bytes). */
export function okFields(line: Buffer): Map<string, string> {
  const d = decodeOkLine(line);
  if (!d.ok) throw new Error(d.reason);
  return new Map(d.value);
}
