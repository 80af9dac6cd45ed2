// Server configuration: the types, and loading one table of settings (./settings.ts: each with
// its config-file key, command-line flag, environment variable, kind, default and meaning).
// Values come from, lowest to highest precedence: the built-in defaults, a JSON config file
// (--config FILE or QUARTET_CONFIG), the QUARTET_* environment variables, the command-line flags.
// Every value is validated; all problems are reported together in one ConfigError (the CLI exits
// with code 2). docs/configuration.md documents every row of the table, and
// test/server/config.test.ts checks that it does.

import { readFileSync } from 'node:fs';
import { resolve as resolvePath, dirname } from 'node:path';
import { workerSettingsDefault, type WorkerSettings } from '../core/offload.js';
import { type LogFormat, type LogLevel } from '../base/logger.js';
import { applySecureProfile } from './exposure.js';
import { type TopicConfig } from '../core/topic-config.js';
import { availableListeners, protocolNames, type ListenAddress, type ListenerName, type ProtocolName } from './listeners.js';
import { defaultAuthTimeoutMs, defaultConnectionsPerPeerMax, defaultHandshakeTimeoutMs, defaultUnauthenticatedConnectionsMax } from '../protocols/transport.js';

/** A config file larger than this is refused before parsing. */
export const CONFIG_FILE_BYTES_MAX = 1024 * 1024;

export interface HostPort {
  host: string;
  port: number;
}

export interface ProtocolListenerConfig {
  enabled: boolean;
  addr: HostPort;
  /** See ListenerSettings.maxConnections. */
  maxConnections: number;
  /** PEM certificate and key; TLS is on when both are set. */
  tlsCertFile: string | null;
  tlsKeyFile: string | null;
  /** The address given to clients (Kafka metadata); null derives it from the bound address. */
  advertisedAddr: HostPort | null;
  /** A TLS handshake not done within this is dropped. */
  handshakeTimeoutMs: number;
  /** A connection not authenticated within this is closed; 0 never. */
  authTimeoutMs: number;
  /** See ListenerSettings.idleTimeoutMs. */
  idleTimeoutMs: number;
  /** See ListenerSettings.unauthenticatedConnectionsMax. */
  unauthenticatedConnectionsMax: number;
  /** See ListenerSettings.connectionsPerPeerMax. */
  connectionsPerPeerMax: number;
}

export interface HttpListenerConfig {
  enabled: boolean;
  addr: HostPort;
}

/** Kafka front-end settings (src/protocols/kafka/frontend.ts KafkaSettings; docs/kafka.md). */
export interface KafkaFrontendConfig {
  autoCreateTopics: boolean;
  saslRequired: boolean;
  requestBytesMax: number;
  inFlightRequestsMax: number;
  fetchWaitMsMax: number;
}

/** Iggy front-end limits (src/protocols/iggy/frontend.ts IggySettings; docs/iggy.md). */
export interface IggyFrontendConfig {
  frameBytesMax: number;
  inFlightRequestsMax: number;
  heartbeatIntervalMs: number;
  pollBytesMax: number;
  pollMessagesMax: number;
}

/** Cursus front-end settings (src/protocols/cursus/frontend.ts CursusSettings; docs/cursus.md). */
export interface CursusFrontendConfig {
  requireAuth: boolean;
  /** Also accept Cursus v1 connections on the Cursus port (docs/protocols/cursus-v1.md). */
  v1Compat: boolean;
  requestBytesMax: number;
}

/** Felix front-end settings (src/protocols/felix/settings.ts FelixSettings; docs/felix.md). */
export interface FelixFrontendConfig {
  requireAuth: boolean;
  frameBytesMax: number;
  subscriptionsPerConnectionMax: number;
}

/** Broker-wide topic config defaults, only the keys the operator set (core topic-config keys). */
export type TopicDefaults = TopicConfig;

export interface QuartetConfig {
  dataDir: string;
  logLevel: LogLevel;
  /** auto: text when stderr is a terminal, json otherwise (base/logger.ts defaultLogFormat). */
  logFormat: LogFormat | 'auto';
  /** The secure profile (server/exposure.ts applySecureProfile), applied by loadConfig. */
  secure: boolean;
  listeners: Record<ProtocolName, ProtocolListenerConfig> & { http: HttpListenerConfig };
  root: { username: string; password: string | null };
  /** Failed-login throttling (core/auth-throttle.ts). */
  auth: { delayAfterFailures: number; lockoutAfterFailures: number; lockoutMs: number };
  topicDefaults: TopicDefaults;
  defaultPartitions: number;
  /** Kafka front-end settings; absent means the front-end's defaults. */
  kafka?: KafkaFrontendConfig;
  /** Iggy front-end limits; absent means the front-end's defaults. */
  iggy?: IggyFrontendConfig;
  /** Cursus front-end settings; absent means the front-end's defaults. */
  cursus?: CursusFrontendConfig;
  /** Felix front-end settings; absent means the front-end's defaults. */
  felix?: FelixFrontendConfig;
  maintenanceIntervalMs: number;
  /** Bytes replies of reads may hold in memory at once, broker-wide (core/memory-budget.ts). */
  memoryBudgetBytes: number;
  /** Bytes large Kafka and Iggy request frames may hold in memory at once, broker-wide (base/request-bytes.ts). */
  requestBytesMax: number;
  /** The partition logs' background checks (core/scrubber.ts). */
  log: { scrubBytesPerSec: number };
  /** Worker threads for work too long for the event loop (core/offload.ts). */
  workers: WorkerSettings;
  /** Hard limit on a graceful stop; past it the process exits with code 1. */
  shutdownTimeoutMs: number;
  /** How long listeners wait for in-flight requests before destroying connections. */
  drainTimeoutMs: number;
  /** Where the configuration file came from, if any. */
  configFile: string | null;
}

export class ConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(readonly problems: readonly string[]) {
    super(problems.length === 1 ? `invalid configuration: ${problems[0]}` : `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

import { settings, type Setting, DEFAULT_LISTEN_HOST, DEFAULT_MAX_CONNECTIONS, defaultPorts, IGGY_FRAME_BYTES_MAX_DEFAULT, KAFKA_REQUEST_BYTES_MAX_DEFAULT } from './settings.js';

export { DEFAULT_LISTEN_HOST, DEFAULT_MAX_CONNECTIONS, formatHostPort, parseHostPort, settings, type Setting } from './settings.js';

/** The flag that names the config file, and its environment variable (not settings themselves). */
export const CONFIG_FLAG = 'config';
export const CONFIG_ENV = 'QUARTET_CONFIG';

// ---------------------------------------------------------------------------------------------
// Loading.

export interface ConfigSources {
  /** Parsed command-line flags, keyed by flag name without dashes. */
  flags?: Readonly<Record<string, string | boolean>>;
  env?: Readonly<Record<string, string | undefined>>;
  /** Relative paths from flags and env resolve here; defaults to process.cwd(). */
  cwd?: string;
  /** Listeners this build has; decides the `enabled` defaults. */
  available?: ReadonlySet<ListenerName>;
}

export interface LoadedConfig {
  config: QuartetConfig;
  /** Not fatal, worth a log line (unknown QUARTET_* variables). */
  warnings: string[];
}

function emptyListener(): ProtocolListenerConfig {
  return {
    enabled: false,
    addr: { host: DEFAULT_LISTEN_HOST, port: 0 },
    maxConnections: DEFAULT_MAX_CONNECTIONS,
    tlsCertFile: null,
    tlsKeyFile: null,
    advertisedAddr: null,
    handshakeTimeoutMs: defaultHandshakeTimeoutMs,
    authTimeoutMs: defaultAuthTimeoutMs,
    unauthenticatedConnectionsMax: defaultUnauthenticatedConnectionsMax,
    connectionsPerPeerMax: defaultConnectionsPerPeerMax,
    idleTimeoutMs: 0,
  };
}

function skeleton(): QuartetConfig {
  return {
    dataDir: '',
    logLevel: 'info',
    logFormat: 'auto',
    secure: false,
    listeners: {
      kafka: emptyListener(),
      iggy: emptyListener(),
      cursus: emptyListener(),
      felix: emptyListener(),
      http: { enabled: true, addr: { host: DEFAULT_LISTEN_HOST, port: defaultPorts.http } },
    },
    root: { username: 'root', password: null },
    auth: { delayAfterFailures: 0, lockoutAfterFailures: 0, lockoutMs: 0 },
    topicDefaults: {},
    defaultPartitions: 1,
    maintenanceIntervalMs: 0,
    memoryBudgetBytes: 0,
    requestBytesMax: 0,
    log: { scrubBytesPerSec: 0 },
    workers: { ...workerSettingsDefault },
    shutdownTimeoutMs: 0,
    drainTimeoutMs: 0,
    configFile: null,
  };
}

/** Flattens a parsed config file into dotted keys; reports values that are neither objects nor leaves. */
function flattenFile(value: unknown, prefix: string, out: Map<string, unknown>, problems: string[], file: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`config file ${file}: ${prefix || 'top level'} must be an object`);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) flattenFile(v, key, out, problems, file);
    else out.set(key, v);
  }
}

function readConfigFile(path: string, problems: string[]): Map<string, unknown> {
  const values = new Map<string, unknown>();
  let text: string;
  try {
    const bytes = readFileSync(path);
    if (bytes.length > CONFIG_FILE_BYTES_MAX) {
      problems.push(`config file ${path} is larger than ${CONFIG_FILE_BYTES_MAX} bytes`);
      return values;
    }
    text = bytes.toString('utf8');
  } catch (err) {
    problems.push(`cannot read config file ${path}: ${(err as Error).message}`);
    return values;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    problems.push(`config file ${path} is not valid JSON: ${(err as Error).message}`);
    return values;
  }
  flattenFile(parsed, '', values, problems, path);
  const known = new Set(settings.map((s) => s.key));
  for (const key of values.keys()) {
    if (!known.has(key)) problems.push(`config file ${path}: unknown key "${key}"${suggest(key, known)}`);
  }
  return values;
}

function suggest(key: string, known: ReadonlySet<string>): string {
  const leaf = key.split('.').pop()!.toLowerCase();
  const match = [...known].find((k) => k.toLowerCase().endsWith(leaf));
  return match ? ` (did you mean "${match}"?)` : '';
}

function describeValue(setting: Setting, raw: unknown): string {
  return setting.secret ? '(hidden)' : JSON.stringify(raw);
}

/** Resolves the configuration from defaults, file, environment and flags. Throws ConfigError. */
export function loadConfig(sources: ConfigSources = {}): LoadedConfig {
  const env = sources.env ?? process.env;
  const flags = sources.flags ?? {};
  const cwd = sources.cwd ?? process.cwd();
  const available = sources.available ?? availableListeners();
  const problems: string[] = [];
  const warnings: string[] = [];

  const knownFlags = new Set([CONFIG_FLAG, ...settings.flatMap((s) => (s.flag ? [s.flag] : []))]);
  for (const flag of Object.keys(flags)) if (!knownFlags.has(flag)) problems.push(`unknown flag --${flag}`);
  // QUARTET_NATIVE and QUARTET_SENDFILE are read where they act (src/base/native.ts, file-replies.ts), not settings.
  const knownEnv = new Set([CONFIG_ENV, 'QUARTET_NATIVE', 'QUARTET_SENDFILE', ...settings.map((s) => s.env)]);
  for (const name of Object.keys(env)) {
    if (name.startsWith('QUARTET_') && !knownEnv.has(name) && env[name] !== undefined) warnings.push(`unknown environment variable ${name} ignored`);
  }

  const configFlag = flags[CONFIG_FLAG];
  const configPathRaw = typeof configFlag === 'string' ? configFlag : env[CONFIG_ENV];
  if (configFlag === true) problems.push('--config needs a file path');
  const configFile = configPathRaw ? resolvePath(cwd, configPathRaw) : null;
  const fileValues = configFile ? readConfigFile(configFile, problems) : new Map<string, unknown>();

  const config = skeleton();
  config.configFile = configFile;
  const cwdCtx = { baseDir: cwd };
  const fileCtx = { baseDir: configFile ? dirname(configFile) : cwd };
  /** Where each setting that was given came from (a flag, a variable, the file), for the cross-checks. */
  const origins = new Map<string, string>();
  for (const setting of settings) {
    const flagValue = setting.flag ? flags[setting.flag] : undefined;
    const envValue = env[setting.env];
    let problem: string | null;
    let origin: string;
    let raw: unknown;
    if (flagValue !== undefined) {
      [raw, origin] = [flagValue, `--${setting.flag}`];
      problem = setting.apply(config, raw, cwdCtx);
    } else if (envValue !== undefined) {
      [raw, origin] = [envValue, setting.env];
      problem = setting.apply(config, raw, cwdCtx);
    } else if (fileValues.has(setting.key)) {
      [raw, origin] = [fileValues.get(setting.key), `config file ${configFile}: ${setting.key}`];
      problem = setting.apply(config, raw, fileCtx);
    } else {
      setting.applyDefault(config, available, cwdCtx);
      continue;
    }
    origins.set(setting.key, origin);
    if (problem) problems.push(`${origin}: ${describeValue(setting, raw)} is not valid: ${problem}`);
  }
  if (config.secure) problems.push(...applySecureProfile(config, (key) => origins.get(key) ?? null));
  problems.push(...crossCheck(config, (key) => origins.get(key) ?? 'the default'));
  if (problems.length > 0) throw new ConfigError(problems);
  return { config, warnings };
}

/** Problems between settings, each naming where the values came from (`originOf` a setting's key). */
function crossCheck(config: QuartetConfig, originOf: (key: string) => string): string[] {
  const problems: string[] = [];
  for (const name of protocolNames) {
    const l = config.listeners[name];
    if ((l.tlsCertFile === null) !== (l.tlsKeyFile === null)) {
      const [given, missing] = l.tlsCertFile !== null ? ['certificate', 'key'] : ['key', 'certificate'];
      const key = `listeners.${name}.${given === 'certificate' ? 'tlsCertFile' : 'tlsKeyFile'}`;
      problems.push(`${originOf(key)}: TLS needs both a certificate (--${name}-tls-cert) and a key (--${name}-tls-key); only the ${given} is given, not the ${missing}`);
    }
  }
  if (config.drainTimeoutMs >= config.shutdownTimeoutMs) {
    problems.push(
      `drain timeout (${config.drainTimeoutMs} ms, from ${originOf('drainTimeoutMs')}) must be below the shutdown timeout (${config.shutdownTimeoutMs} ms, from ${originOf('shutdownTimeoutMs')})`,
    );
  }
  problems.push(...frameCapsWithinRequestBytes(config, originOf));
  const bound = new Map<string, ListenerName>();
  for (const name of [...protocolNames, 'http'] as const) {
    const l = config.listeners[name];
    if (!l.enabled || l.addr.port === 0) continue;
    // Felix listens on UDP, the others on TCP: only same-transport listeners can collide.
    const key = `${name === 'felix' ? 'udp' : 'tcp'}:${l.addr.port}`;
    const other = bound.get(key);
    if (other) problems.push(`listeners ${other} (from ${originOf(`listeners.${other}.addr`)}) and ${name} (from ${originOf(`listeners.${name}.addr`)}) both use port ${l.addr.port}`);
    else bound.set(key, name);
  }
  return problems;
}

/**
 * A frame larger than the broker's request bytes would wait for them forever: each enabled
 * listener's frame cap must fit in requestBytesMax.
 */
function frameCapsWithinRequestBytes(config: QuartetConfig, originOf: (key: string) => string): string[] {
  const caps = [
    { listener: 'kafka', key: 'kafka.requestBytesMax', bytes: config.kafka?.requestBytesMax ?? KAFKA_REQUEST_BYTES_MAX_DEFAULT },
    { listener: 'iggy', key: 'iggy.frameBytesMax', bytes: config.iggy?.frameBytesMax ?? IGGY_FRAME_BYTES_MAX_DEFAULT },
  ] as const;
  return caps
    .filter((cap) => config.listeners[cap.listener].enabled && cap.bytes > config.requestBytesMax)
    .map(
      (cap) =>
        `${cap.key} (${cap.bytes} bytes, from ${originOf(cap.key)}) must not exceed requestBytesMax (${config.requestBytesMax} bytes, from ${originOf('requestBytesMax')}): a frame that large could never be read`,
    );
}

/** The configuration as safe to log: secrets replaced. */
export function redactedConfig(config: QuartetConfig): QuartetConfig {
  return { ...config, root: { ...config.root, password: config.root.password === null ? null : '(set)' } };
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/** The address to give clients: the configured one, or the bound one with loopback for a wildcard host. */
export function resolveAdvertisedAddress(configured: HostPort | null, bound: ListenAddress): HostPort {
  if (configured) return configured;
  return { host: WILDCARD_HOSTS.has(bound.host) ? '127.0.0.1' : bound.host, port: bound.port };
}

/** Flags that take no value (for the argument parser): the boolean settings. */
export function configFlagSpecs(): Array<{ flag: string; boolean: boolean }> {
  return [{ flag: CONFIG_FLAG, boolean: false }, ...settings.flatMap((s) => (s.flag ? [{ flag: s.flag, boolean: s.boolean }] : []))];
}
