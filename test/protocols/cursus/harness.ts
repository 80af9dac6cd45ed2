// Shared fixtures for the Cursus listener tests: a broker on a temp data dir, a CursusFrontend on
// a real TcpListener bound to 127.0.0.1:0, and wire clients (wire-client.ts). Other areas' wire
// tests pass their handler tables through `handlers`. Every wait has a deadline; nothing sleeps.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker, type BrokerOptions } from '../../../src/core/broker.js';
import { silentLogger, type Logger } from '../../../src/base/logger.js';
import { MetricsRegistry } from '../../../src/core/metrics.js';
import { cursusConnectionFactory } from '../../../src/protocols/cursus/cursus-port.js';
import { CursusFrontend, builtinHandlerTables, type CursusSettings } from '../../../src/protocols/cursus/frontend.js';
import type { CursusCommandHandler } from '../../../src/protocols/cursus/handler.js';
import { cursusSocketOptions } from '../../../src/protocols/cursus/listener.js';
import { TcpListener } from '../../../src/protocols/tcp-listener.js';
import { builtinFormats, builtinTransactionOptions } from '../../../src/server/listeners.js';
import { CursusWireClient } from './wire-client.js';

export const testScryptCost = { N: 1024, r: 8, p: 1 };
export const rootName = 'root';
export const rootPassword = 'secret-root';

type After = { after(fn: () => Promise<void> | void): void };

export interface CursusHarness {
  dataDir: string;
  broker: Broker;
  frontend: CursusFrontend;
  listener: TcpListener;
  port: number;
  /** A connected, negotiated client (compression none unless given). */
  client(compressions?: number[]): Promise<CursusWireClient>;
  /** A connected client that has sent nothing. */
  raw(): Promise<CursusWireClient>;
  stop(): Promise<void>;
}

export interface CursusHarnessOptions {
  dataDir?: string;
  keepDataDir?: boolean;
  settings?: Partial<CursusSettings>;
  /** Handler tables added to the built-in ones, replacing those for the same commands. */
  handlers?: ReadonlyArray<readonly CursusCommandHandler[]>;
  broker?: Partial<BrokerOptions>;
  authTimeoutMs?: number;
  idleTimeoutMs?: number;
  tls?: { certFile: string; keyFile: string };
  logger?: Logger;
}

/** The built-in handler tables with a test's own handlers in place of the built-in ones for the same commands. */
function withTestHandlers(tables: ReadonlyArray<readonly CursusCommandHandler[]>): Array<readonly CursusCommandHandler[]> {
  const replaced = new Set(tables.flat().map((h) => h.command));
  return [...builtinHandlerTables.map((table) => table.filter((h) => !replaced.has(h.command))), ...tables];
}

export async function startCursus(t: After, options: CursusHarnessOptions = {}): Promise<CursusHarness> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'quartet-cursus-'));
  const broker = await Broker.open({
    formats: builtinFormats(),
    transactions: builtinTransactionOptions(),
    dataDir,
    maintenanceIntervalMs: 0,
    scryptCost: testScryptCost,
    rootUser: { username: rootName, password: rootPassword },
    ...options.broker,
  });
  const frontend = new CursusFrontend({
    broker,
    logger: options.logger ?? silentLogger,
    ...(options.settings ? { settings: options.settings } : {}),
    handlers: withTestHandlers(options.handlers ?? []),
  });
  await frontend.start();
  const listener = new TcpListener({
    name: 'cursus',
    addr: { host: '127.0.0.1', port: 0 },
    maxConnections: 100,
    logger: silentLogger,
    metrics: new MetricsRegistry(),
    connectionFactory: cursusConnectionFactory(frontend),
    ...cursusSocketOptions,
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.authTimeoutMs !== undefined ? { authTimeoutMs: options.authTimeoutMs } : {}),
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
  });
  const { port } = await listener.start();
  frontend.setBoundAddress({ host: '127.0.0.1', port });
  const clients: CursusWireClient[] = [];
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const c of clients) c.destroy();
    await listener.stop(1_000);
    frontend.close();
    await broker.close();
    if (options.keepDataDir !== true && options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  };
  t.after(stop);
  const raw = async (): Promise<CursusWireClient> => {
    const c = await CursusWireClient.connect(port);
    clients.push(c);
    return c;
  };
  return {
    dataDir,
    broker,
    frontend,
    listener,
    port,
    raw,
    async client(compressions = [0]) {
      const c = await raw();
      await c.negotiate(compressions);
      return c;
    },
    stop,
  };
}
