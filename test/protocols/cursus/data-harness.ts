// Fixtures for the data path's handler tests: a real Broker (in memory, or over a data directory
// for restarts) built with the server's batch formats, the CursusDataPath over it with a manual
// clock and scheduler, requests built as the connection decodes them, and a stream sink that
// records frames.
import { testServices } from './services.js';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/base/clock.js';
import { silentLogger } from '../../../src/base/logger.js';
import { Broker } from '../../../src/core/broker.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { decodeBatch, decodeCommandPayload, decodeErrorPayload, encodeBatch, encodeCommandPayload, type CursusBatch, type CursusError, type CursusRecord } from '../../../src/protocols/cursus/codec/index.js';
import { CursusDataPath, type CursusDataOptions } from '../../../src/protocols/cursus/data-path.js';
import { defaultTopicView } from '../../../src/protocols/cursus/routing.js';
import { publishedBatchOf } from '../../../src/protocols/cursus/published-batch.js';
import { dataHandlers } from '../../../src/protocols/cursus/handlers/data.js';
import { CursusFailure, type CursusContext, type CursusReply, type CursusRequest, type CursusStreamSink, type CursusTopicView } from '../../../src/protocols/cursus/handler.js';
import { builtinFormats } from '../../../src/server/listeners.js';
import { tempDir, testScryptCost } from '../../core/helpers.js';

type After = { after(fn: () => Promise<void> | void): void };

export interface DataFixture {
  broker: Broker;
  clock: ManualClock;
  /** Drives STREAM push rounds. */
  scheduler: ManualScheduler;
  data: CursusDataPath;
  ctx: CursusContext;
}

export interface FixtureOptions extends Partial<Omit<CursusDataOptions, 'broker' | 'logger' | 'clock'>> {
  /** A data directory (restart tests); default: an in-memory broker. */
  dataDir?: string;
  clock?: ManualClock;
  /** Cursus settings of some topics over Cursus's defaults (a stand-in for the topic table). */
  views?: Map<string, Partial<CursusTopicView>>;
}

export async function openBroker(clock: ManualClock, dataDir?: string, t?: After): Promise<Broker> {
  const dir = dataDir ?? (t !== undefined ? tempDir(t) : undefined);
  assert.ok(dir !== undefined);
  return Broker.open({
    dataDir: dir,
    memory: dataDir === undefined,
    clock,
    scheduler: new ManualScheduler(clock),
    formats: builtinFormats(),
    maintenanceIntervalMs: 0,
    scryptCost: testScryptCost,
    rootUser: { username: 'root', password: 'pw' },
  });
}

/** The data path over `broker`, closed after the test (before the broker). */
export function dataPathOver(t: After, broker: Broker, clock: ManualClock, options: FixtureOptions = {}): Omit<DataFixture, 'broker' | 'clock'> {
  const scheduler = new ManualScheduler(clock);
  const { dataDir: _dir, clock: _clock, views, ...rest } = options;
  const topicView = (name: string): CursusTopicView | undefined => {
    const topic = broker.catalog.getTopic({ topic: name });
    return topic === null ? undefined : { ...defaultTopicView(topic), ...views?.get(name) };
  };
  const data = new CursusDataPath({ broker, logger: silentLogger, clock, scheduler, topicView, ...rest });
  t.after(() => data.close());
  const ctx: CursusContext = { services: testServices({ broker, logger: silentLogger, clock, data }), principal: { name: null, permissions: new Set(['*']) }, peer: 'test' };
  return { scheduler, data, ctx };
}

export async function dataFixture(t: After, options: FixtureOptions = {}): Promise<DataFixture> {
  const clock = options.clock ?? new ManualClock();
  const broker = await openBroker(clock, options.dataDir, t);
  t.after(() => broker.close());
  return { broker, clock, ...dataPathOver(t, broker, clock, options) };
}

/** A CRQ2 request as the connection hands it to a handler. */
export function request(command: string, fields: Record<string, string | Buffer>): CursusRequest {
  const decoded = decodeCommandPayload(Buffer.concat(encodeCommandPayload(fields)));
  assert.ok(decoded.ok);
  return { command, requestId: 1n, payload: decoded.value, batch: null };
}

/** A PUBLISH carrying a CBV2 batch. */
export function batchRequest(batch: Omit<CursusBatch, 'recordCount'>): CursusRequest {
  const bytes = Buffer.concat(encodeBatch(batch));
  const decoded = decodeBatch(bytes);
  assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
  return { command: 'PUBLISH', requestId: 1n, payload: null, batch: { summary: publishedBatchOf(decoded.value), bytes } };
}

/** Records of a published CBV2 batch (partition -1: the broker chooses). */
export function records(topic: string, payloads: readonly string[], extra: (i: number) => Partial<CursusRecord> = () => ({})): CursusRecord[] {
  return payloads.map((p, i) => ({ topic, partition: -1, offset: 0, payload: Buffer.from(p), ...extra(i) }));
}

export function handle(fx: { ctx: CursusContext }, req: CursusRequest): Promise<CursusReply> {
  const handler = dataHandlers.find((h) => h.command === req.command);
  assert.ok(handler !== undefined, `no handler for ${req.command}`);
  return Promise.resolve(handler.handle(fx.ctx, req));
}

/** The CursusError a handler fails with; fails the test if it succeeds or throws anything else. */
export async function failure(fx: { ctx: CursusContext }, req: CursusRequest): Promise<CursusError> {
  try {
    await handle(fx, req);
  } catch (err) {
    if (err instanceof CursusFailure) return err.error;
    throw err;
  }
  assert.fail(`${req.command} succeeded`);
}

export function fieldsOf(e: CursusError): Record<string, string> {
  return Object.fromEntries(e.fields);
}

export function json(reply: CursusReply): Record<string, unknown> {
  assert.equal(reply.kind, 'json');
  return reply.kind === 'json' ? (reply.value as Record<string, unknown>) : {};
}

export function text(reply: CursusReply): Record<string, string> {
  assert.equal(reply.kind, 'text');
  return reply.kind === 'text' ? Object.fromEntries(reply.fields) : {};
}

/** A CONSUME reply decoded. */
export function consumed(reply: CursusReply): CursusBatch {
  assert.equal(reply.kind, 'batch');
  const b = decodeBatch(Buffer.concat(reply.kind === 'batch' ? reply.chunks : []));
  assert.ok(b.ok, b.ok ? '' : b.reason);
  return b.value;
}

export function payloads(b: CursusBatch): string[] {
  return b.records.map((r) => r.payload.toString());
}

/** Polls `pred` every few ms until it holds, or fails after the deadline. */
export async function eventually(pred: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export interface SentFrame {
  payload: Buffer;
  end: boolean;
}

/** A stream sink that records frames; `disconnect()` aborts `closed` as a lost connection does. */
export class RecordingSink implements CursusStreamSink {
  readonly frames: SentFrame[] = [];
  failedWith: CursusError | null = null;
  private readonly controller = new AbortController();

  get closed(): AbortSignal {
    return this.controller.signal;
  }

  send(payload: readonly Buffer[], end = false): Promise<void> {
    this.frames.push({ payload: Buffer.concat(payload), end });
    return Promise.resolve();
  }

  fail(error: CursusError): Promise<void> {
    this.failedWith = error;
    return Promise.resolve();
  }

  disconnect(): void {
    this.controller.abort();
  }

  /** Waits until `count` frames were sent. */
  frame(index: number): Promise<SentFrame> {
    return eventually(() => this.frames.length > index, `stream frame ${index}`).then(() => this.frames[index]!);
  }
}

export { decodeErrorPayload };
