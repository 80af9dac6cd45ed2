// The broker process: lock, HTTP, broker recovery, protocol listeners, readiness, shutdown.
//
// Start-up order:  data-directory lock -> HTTP (/live answers 200, /ready 503) -> Broker.open
// (metadata and log recovery) -> the broker watchers (a front-end's shared state kept right whether
// or not its listener opens) -> every enabled listener that this build has -> root created (or
// given the configured credentials) and a generated password printed once on stdout -> ready
// (/ready 200). A start that fails (a port in use) creates no root and prints no password.
// Stop (stop(), SIGTERM or SIGINT): /ready 503 -> listeners stop accepting and drain their
// in-flight requests (drainTimeoutMs) -> Broker.close (flush) -> HTTP closes -> lock released.
// With signal handling on, a stop that exceeds shutdownTimeoutMs is logged and the process exits
// with code 1; a second signal exits at once.

import { Broker, type BrokerOptions } from '../core/broker.js';
import type { Logger } from '../base/logger.js';
import { LogTail, createLogger, defaultLogFormat } from '../base/logger.js';
import { openListenerWarning, unauthenticatedListeners } from './exposure.js';
import { registerProcessMetrics } from './process-metrics.js';
import { MetricsRegistry } from '../core/metrics.js';
import { nativeStatus } from '../base/native.js';
import { formatHostPort, redactedConfig, type QuartetConfig } from './config.js';
import { HttpEndpoint, type Readiness } from './http.js';
import { AdminApi } from './admin/api.js';
import { adminRoutes } from './admin/routes.js';
import { ConsoleAssets } from './console.js';
import { builtinBrokerWatchers, builtinFormats, builtinListenerFactories, builtinTransactionOptions, protocolNames, type ListenAddress, type ListenerRegistry, type ProtocolListener, type ProtocolName } from './listeners.js';
import { acquireDataDirLock, type DataDirLock } from './lock.js';
import { quartetVersion } from '../base/version.js';

export interface StartServerOptions {
  logger?: Logger;
  /** Install SIGTERM/SIGINT handlers (default true). Tests turn it off and call stop(). */
  handleSignals?: boolean;
  /** Where the one-time root password line goes (default: process.stdout). Never the logger. */
  stdout?: (text: string) => void;
  /** The protocol front-ends (default: the built-in registry). */
  listenerFactories?: ListenerRegistry;
  /** How the broker is opened (default: Broker.open). Tests pass a fake. */
  openBroker?: (options: BrokerOptions) => Promise<Broker>;
  /** Run on the opened broker before the listeners start (default: the built-in ones). */
  brokerWatchers?: ReadonlyArray<(broker: Broker) => Promise<void>>;
  /** Called when a signalled stop overruns shutdownTimeoutMs (default: process.exit). */
  exit?: (code: number) => void;
}

export interface QuartetServer {
  /** Resolves when recovery finished and every listener is up; rejects if start-up failed. */
  readonly ready: Promise<void>;
  /** Resolves with the process exit code once the server has stopped (0 clean, 1 otherwise). */
  readonly stopped: Promise<number>;
  readonly metrics: MetricsRegistry;
  readiness(): Readiness;
  httpAddress(): ListenAddress | null;
  /** Bound addresses of the protocol listeners that are up. */
  listenerAddresses(): ReadonlyMap<ProtocolName, ListenAddress>;
  /** The broker, once open. */
  broker(): Broker | null;
  /** Stops gracefully; idempotent. Resolves with the exit code. */
  stop(reason?: string): Promise<number>;
}

export function rootPasswordLine(username: string, password: string): string {
  return `quartet: generated root password for user '${username}': ${password} (shown once; set QUARTET_ROOT_PASSWORD to choose it)\n`;
}

/** Takes the lock and starts HTTP before resolving; the rest of start-up continues behind `ready`. */
export async function startServer(config: QuartetConfig, options: StartServerOptions = {}): Promise<QuartetServer> {
  const server = new Server(config, options);
  await server.begin();
  return server;
}

class Server implements QuartetServer {
  readonly metrics = new MetricsRegistry();
  readonly ready: Promise<void>;
  readonly stopped: Promise<number>;
  private readonly logger: Logger;
  private state: Readiness = 'starting';
  private lock: DataDirLock | null = null;
  private http: HttpEndpoint | null = null;
  private openedBroker: Broker | null = null;
  private readonly listeners = new Map<ProtocolName, { listener: ProtocolListener; address: ListenAddress }>();
  private readonly startedAtMs = performance.now();
  private resolveReady!: () => void;
  private rejectReady!: (err: Error) => void;
  private resolveStopped!: (code: number) => void;
  private booting: Promise<void> = Promise.resolve();
  private stopping: Promise<number> | null = null;
  private removeSignalHandlers: () => void = () => {};
  private readonly stopProcessMetrics: () => void;

  constructor(
    private readonly config: QuartetConfig,
    private readonly options: StartServerOptions,
  ) {
    const format = config.logFormat === 'auto' ? defaultLogFormat(process.stderr.isTTY) : config.logFormat;
    this.logger = options.logger ?? createLogger(config.logLevel, undefined, {}, new LogTail(), { format });
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // reported through the log and `stopped`; callers may still await it
    this.stopped = new Promise((resolve) => (this.resolveStopped = resolve));
    this.metrics.gauge('process_start_time_seconds', 'Start time of the process since the epoch, in seconds').set({}, Math.floor(Date.now() / 1000));
    this.metrics.gauge('quartet_build_info', 'Always 1; the labels say which build runs').set({ version: quartetVersion }, 1);
    this.setReadiness('starting');
    this.stopProcessMetrics = registerProcessMetrics(this.metrics);
  }

  /**
   * The start-up state; once ready, 'storage_full' while appends fail for lack of disk space, and
   * 'storage_corrupt' while the logs hold batches found corrupt on disk.
   */
  readiness(): Readiness {
    const storage = this.openedBroker?.storage;
    if (this.state !== 'ready' || storage === undefined) return this.state;
    if (storage.full) return 'storage_full';
    return storage.corruptBatches() > 0 ? 'storage_corrupt' : 'ready';
  }
  httpAddress(): ListenAddress | null {
    return this.http?.address() ?? null;
  }
  listenerAddresses(): ReadonlyMap<ProtocolName, ListenAddress> {
    return new Map([...this.listeners].map(([name, l]) => [name, l.address]));
  }
  broker(): Broker | null {
    return this.openedBroker;
  }

  async begin(): Promise<void> {
    const { config } = this;
    this.logger.info('starting', { version: quartetVersion, pid: process.pid, node: process.version, dataDir: config.dataDir });
    this.logger.debug('configuration', { config: redactedConfig(config) });
    if (nativeStatus.loaded) this.logger.info('native checksums', { loaded: true, sse42: nativeStatus.sse42, avx2: nativeStatus.avx2, vpclmul: nativeStatus.vpclmul });
    else this.logger.warn('native checksums', { loaded: false, reason: nativeStatus.reason, fallback: '@node-rs/crc32 and @node-rs/xxhash (same values, slower)' });
    this.lock = acquireDataDirLock(config.dataDir, { purpose: 'serve' });
    if (this.lock.tookOverStale) this.logger.warn('took over a stale lock', { lockFile: this.lock.path, previousPid: this.lock.tookOverStale.pid });
    try {
      await this.startHttp();
    } catch (err) {
      this.lock.release();
      throw err;
    }
    if (this.options.handleSignals !== false) this.installSignalHandlers();
    this.booting = this.boot();
  }

  stop(reason = 'requested'): Promise<number> {
    this.stopping ??= this.shutdown(reason);
    return this.stopping;
  }

  private setReadiness(state: Readiness): void {
    this.state = state;
    this.metrics.gauge('quartet_ready', '1 when the broker accepts clients (GET /ready is 200)').set({}, state === 'ready' ? 1 : 0);
  }

  private async startHttp(): Promise<void> {
    const settings = this.config.listeners.http;
    if (!settings.enabled) return;
    const logger = this.logger.child({ listener: 'http' });
    const admin = new AdminApi({
      // Served once the broker is open and until it stops (503 not_ready before, shutting_down after).
      broker: () => (this.state === 'ready' ? this.openedBroker : null),
      routes: adminRoutes,
      info: { version: quartetVersion, startedAtMs: Date.now(), listeners: () => this.listenerList() },
      logger,
    });
    this.http = new HttpEndpoint({ addr: settings.addr, metrics: this.metrics, readiness: () => this.readiness(), logger, admin, console: new ConsoleAssets() });
    const address = await this.http.start();
    this.logger.info('listening', { listener: 'http', address: formatHostPort(address) });
  }

  private listenerList(): Array<{ name: string; address: string }> {
    const http = this.http?.address();
    return [...this.listeners].map(([name, l]) => ({ name: name as string, address: formatHostPort(l.address) })).concat(http ? [{ name: 'http', address: formatHostPort(http) }] : []);
  }

  private async boot(): Promise<void> {
    try {
      const recoveryStartMs = performance.now();
      this.openedBroker = await this.openBroker();
      const recoveryMs = Math.round(performance.now() - recoveryStartMs);
      for (const watch of this.options.brokerWatchers ?? builtinBrokerWatchers) await watch(this.openedBroker);
      if (this.stopping) throw new Error('stopped during start-up');
      await this.startListeners(this.openedBroker);
      if (this.stopping) throw new Error('stopped during start-up');
      await this.openedBroker.ensureRootUser(this.rootUser());
      this.announceRootPassword(this.openedBroker);
      for (const open of unauthenticatedListeners(this.config)) {
        const bound = open.listener === 'http' ? this.http?.address() : this.listeners.get(open.listener)?.address;
        this.logger.warn(openListenerWarning({ ...open, port: bound?.port ?? open.port }), { listener: open.listener, security: 'unauthenticated' });
      }
      this.setReadiness('ready');
      this.logger.info('ready', { recoveryMs, startupMs: Math.round(performance.now() - this.startedAtMs), listeners: [...this.listeners.keys()] });
      this.resolveReady();
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      if (!this.stopping) this.logger.error('start-up failed', { error });
      this.rejectReady(error);
      void this.stop('start-up failed');
    }
  }

  private openBroker(): Promise<Broker> {
    const { config } = this;
    const open = this.options.openBroker ?? ((options: BrokerOptions) => Broker.open(options));
    return open({
      dataDir: config.dataDir,
      topicDefaults: config.topicDefaults,
      defaultPartitions: config.defaultPartitions,
      rootUser: null, // created once the listeners are bound (boot)
      logger: this.logger.child({ component: 'broker' }),
      metrics: this.metrics,
      maintenanceIntervalMs: config.maintenanceIntervalMs,
      memoryBudgetBytes: config.memoryBudgetBytes,
      requestBytesMax: config.requestBytesMax,
      scrubBytesPerSec: config.log.scrubBytesPerSec,
      authThrottle: config.auth,
      // Transaction markers in each protocol's logs are its own control records (encoder and reader by format).
      transactions: builtinTransactionOptions(),
      formats: builtinFormats(),
      workers: config.workers,
    });
  }

  private rootUser(): { username: string; password?: string } {
    const { username, password } = this.config.root;
    return password === null ? { username } : { username, password };
  }

  /** The generated root password goes to stdout exactly once, never to the log. */
  private announceRootPassword(broker: Broker): void {
    const password = broker.generatedRootPassword;
    if (password === null) return;
    const write = this.options.stdout ?? ((text: string) => void process.stdout.write(text));
    write(rootPasswordLine(this.config.root.username, password));
  }

  private async startListeners(broker: Broker): Promise<void> {
    const registry = this.options.listenerFactories ?? builtinListenerFactories;
    for (const name of protocolNames) {
      const settings = this.config.listeners[name];
      if (!settings.enabled) continue;
      const factory = registry.get(name);
      if (!factory) {
        this.logger.warn(`listener ${name} not available yet`, { listener: name });
        continue;
      }
      const logger = this.logger.child({ listener: name });
      const listener = factory({ name, broker, settings, config: this.config, logger, metrics: this.metrics });
      // Registered before start() so that a failed start is still stopped (it may have bound).
      this.listeners.set(name, { listener, address: { host: settings.addr.host, port: settings.addr.port } });
      const address = await listener.start();
      this.listeners.set(name, { listener, address });
      this.logger.info('listening', { listener: name, address: formatHostPort(address) });
    }
  }

  private async shutdown(reason: string): Promise<number> {
    const startMs = performance.now();
    const wasStarting = this.state === 'starting';
    this.setReadiness('stopping');
    this.logger.info('stopping', { reason });
    await this.booting; // never rejects; a stop during Broker.open waits for it
    let failures = wasStarting && reason === 'start-up failed' ? 1 : 0;
    const step = async (what: string, action: () => Promise<void> | void): Promise<void> => {
      try {
        await action();
      } catch (err) {
        failures++;
        this.logger.error(`shutdown: ${what} failed`, { error: err });
      }
    };
    await step('stopping listeners', () => this.stopListeners());
    if (this.openedBroker) await step('closing the broker', () => this.openedBroker!.close());
    if (this.http) await step('stopping http', () => this.http!.stop());
    await step('releasing the lock', () => this.lock?.release());
    this.removeSignalHandlers();
    this.stopProcessMetrics();
    const code = failures === 0 ? 0 : 1;
    this.logger.info('stopped', { durationMs: Math.round(performance.now() - startMs), exitCode: code });
    this.resolveStopped(code);
    return code;
  }

  private async stopListeners(): Promise<void> {
    const drainTimeoutMs = this.config.drainTimeoutMs;
    await Promise.all(
      [...this.listeners].map(async ([name, { listener }]) => {
        await listener.stop(drainTimeoutMs);
        this.logger.info('listener stopped', { listener: name });
      }),
    );
  }

  private installSignalHandlers(): void {
    const exit = this.options.exit ?? ((code: number) => process.exit(code));
    let hardTimer: NodeJS.Timeout | null = null;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (this.stopping) {
        this.logger.error('second signal during shutdown; exiting now', { signal });
        exit(1);
        return;
      }
      const timeoutMs = this.config.shutdownTimeoutMs;
      hardTimer = setTimeout(() => {
        this.logger.error('shutdown did not finish in time; exiting', { shutdownTimeoutMs: timeoutMs });
        exit(1);
      }, timeoutMs);
      void this.stop(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    this.removeSignalHandlers = () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      if (hardTimer) clearTimeout(hardTimer);
    };
  }
}
