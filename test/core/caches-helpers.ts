// Fixtures of the cache service tests: a broker on a temp directory with a manual clock and every
// built-in batch format (so a Kafka read of a cache topic works), and a cache service over it.

import { Broker, type BrokerOptions } from '../../src/core/broker.js';
import { ManualClock } from '../../src/base/clock.js';
import type { CacheService } from '../../src/core/caches/index.js';
import { builtinFormats } from '../../src/server/listeners.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testScryptCost } from './helpers.js';

export interface CacheFixture {
  broker: Broker;
  caches: CacheService;
  clock: ManualClock;
  dataDir: string;
  /** Runs `close` after the test, before the data directory goes (last deferred, first run). */
  defer(close: () => Promise<void> | void): void;
}

type TestContext = { after(fn: () => Promise<void> | void): void };

export type CacheSettings = NonNullable<BrokerOptions['caches']>;

/** A broker whose cache service (broker.caches) sweeps only when told. */
export async function openBroker(dataDir: string, clock: ManualClock, caches: CacheSettings = {}): Promise<Broker> {
  return Broker.open({ dataDir, clock, formats: builtinFormats(), rootUser: { username: 'root', password: 'pw' }, maintenanceIntervalMs: 0, scryptCost: testScryptCost, caches: { sweepIntervalMs: 0, ...caches } });
}

/** A broker and a cache service on a new data directory; closed after the test, then the directory removed. */
export async function openCaches(t: TestContext, options: CacheSettings = {}, clock = new ManualClock()): Promise<CacheFixture> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-caches-'));
  const closers: Array<() => Promise<void> | void> = [];
  t.after(async () => {
    for (const close of closers.reverse()) await close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const broker = await openBroker(dataDir, clock, options);
  closers.push(() => broker.close());
  return { broker, caches: broker.caches, clock, dataDir, defer: (close) => closers.push(close) };
}

/** Segments of 1 KiB, so that a few writes seal segments compaction can rewrite. */
export const smallSegments = { 'segment.bytes': 1024 } as const;

export const code = (expected: string) => (err: unknown) => (err as { code?: string }).code === expected;
