// The table of server settings (src/server/config.ts loads them): each row's config-file key,
// command-line flag, environment variable, kind (how a raw value becomes typed), default and
// meaning. docs/configuration.md documents every row, and test/server/config.test.ts checks it.

import { isAbsolute, resolve as resolvePath } from 'node:path';
import { maintenanceIntervalMsDefault } from '../core/broker.js';
import { workerSettingsDefault } from '../core/offload.js';
import { availableParallelism } from 'node:os';
import { defaultAuthThrottleSettings } from '../core/auth-throttle.js';
import { memoryBudgetBytesDefault } from '../core/memory-budget.js';
import { requestBytesMaxDefault } from '../base/request-bytes.js';
import { scrubBytesPerSecDefault } from '../core/scrubber.js';
import { isLogLevel, type LogFormat, type LogLevel } from '../base/logger.js';
import { builtinTopicDefaults, segmentBytesMax, segmentBytesMin, topicConfigSpecs, type TopicConfigKey } from '../core/topic-config.js';
import { protocolNames, type ListenAddress, type ListenerName, type ProtocolName } from './listeners.js';
import { defaultAuthTimeoutMs, defaultConnectionsPerPeerMax, defaultHandshakeTimeoutMs, defaultIdleTimeoutsMs, defaultUnauthenticatedConnectionsMax } from '../protocols/transport.js';
import type { HostPort, ProtocolListenerConfig, KafkaFrontendConfig, IggyFrontendConfig, CursusFrontendConfig, FelixFrontendConfig, QuartetConfig } from './config.js';

// ---------------------------------------------------------------------------------------------
// Kinds: how a raw value (a JSON value from the file, a string from env or flags) becomes typed.

interface ParseContext {
  /** Relative paths resolve against this directory (the config file's, or the working dir). */
  baseDir: string;
}

interface Kind<T> {
  /** Shown in docs and error messages. */
  readonly describe: string;
  readonly boolean?: boolean;
  /** Returns the value, or a string saying why the raw value is not acceptable. */
  parse(raw: unknown, ctx: ParseContext): { value: T } | { problem: string };
}

const stringKind: Kind<string> = {
  describe: 'string',
  parse: (raw) => (typeof raw === 'string' && raw.length > 0 ? { value: raw } : { problem: 'expected a non-empty string' }),
};

const pathKind: Kind<string> = {
  describe: 'path',
  parse: (raw, ctx) =>
    typeof raw === 'string' && raw.length > 0
      ? { value: isAbsolute(raw) ? raw : resolvePath(ctx.baseDir, raw) }
      : { problem: 'expected a non-empty path' },
};

function optional<T>(kind: Kind<T>): Kind<T | null> {
  return {
    describe: `${kind.describe} (empty for none)`,
    parse: (raw, ctx) => (raw === '' || raw === null ? { value: null } : kind.parse(raw, ctx)),
  };
}

const boolKind: Kind<boolean> = {
  describe: 'true|false',
  boolean: true,
  parse: (raw) => {
    if (typeof raw === 'boolean') return { value: raw };
    if (typeof raw === 'string') {
      const v = raw.toLowerCase();
      if (v === 'true' || v === '1' || v === 'yes' || v === 'on') return { value: true };
      if (v === 'false' || v === '0' || v === 'no' || v === 'off') return { value: false };
    }
    return { problem: 'expected true or false' };
  },
};

function intKind(min: number, max: number): Kind<number> {
  return {
    describe: `integer ${min}..${max}`,
    parse: (raw) => {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
      if (!Number.isSafeInteger(n)) return { problem: 'expected an integer' };
      if (n < min || n > max) return { problem: `must be between ${min} and ${max}` };
      return { value: n };
    },
  };
}

/** host:port, with IPv6 hosts in brackets ([::1]:9092). Port 0 asks the OS for a free port. */
export function parseHostPort(text: string): HostPort | string {
  const m = /^(?:\[([0-9a-fA-F:.%\w]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(text);
  if (!m) return 'expected host:port (IPv6 as [addr]:port)';
  const port = Number(m[3]);
  if (port > 65535) return 'port must be between 0 and 65535';
  return { host: (m[1] ?? m[2])!, port };
}

export function formatHostPort(addr: HostPort | ListenAddress): string {
  return addr.host.includes(':') ? `[${addr.host}]:${addr.port}` : `${addr.host}:${addr.port}`;
}

const addrKind: Kind<HostPort> = {
  describe: 'host:port',
  parse: (raw) => {
    if (typeof raw !== 'string') return { problem: 'expected a "host:port" string' };
    const parsed = parseHostPort(raw);
    return typeof parsed === 'string' ? { problem: parsed } : { value: parsed };
  },
};

const logFormatKind: Kind<LogFormat | 'auto'> = {
  describe: 'auto|text|json',
  parse: (raw) => (raw === 'auto' || raw === 'text' || raw === 'json' ? { value: raw } : { problem: 'expected one of auto, text, json' }),
};

const logLevelKind: Kind<LogLevel> = {
  describe: 'debug|info|warn|error|silent',
  parse: (raw) => (typeof raw === 'string' && isLogLevel(raw) ? { value: raw } : { problem: 'expected one of debug, info, warn, error, silent' }),
};

// ---------------------------------------------------------------------------------------------
// The settings table.

/** A setting with its type erased, so the table can hold them all. */
export interface Setting {
  /** Dotted key in the JSON config file (nested objects): listeners.kafka.addr. */
  readonly key: string;
  /** Command-line flag without the dashes, or null when there is none (secrets). */
  readonly flag: string | null;
  readonly env: string;
  readonly kind: string;
  readonly boolean: boolean;
  /** The default as shown in docs. */
  readonly defaultText: string;
  readonly doc: string;
  readonly secret: boolean;
  /** Parses `raw` and stores it; returns a problem string when the value is not acceptable. */
  apply(config: QuartetConfig, raw: unknown, ctx: ParseContext): string | null;
  applyDefault(config: QuartetConfig, available: ReadonlySet<ListenerName>, ctx: ParseContext): void;
}

interface SettingSpec<T> {
  key: string;
  flag: string | null;
  env: string;
  kind: Kind<T>;
  /** A value, or a function of the listeners this build has (for `enabled` defaults). */
  default: T | ((available: ReadonlySet<ListenerName>, ctx: ParseContext) => T);
  defaultText?: string;
  doc: string;
  secret?: boolean;
  set(config: QuartetConfig, value: T): void;
}

function define<T>(spec: SettingSpec<T>): Setting {
  const defaultOf = (available: ReadonlySet<ListenerName>, ctx: ParseContext): T =>
    typeof spec.default === 'function' ? (spec.default as (a: ReadonlySet<ListenerName>, c: ParseContext) => T)(available, ctx) : spec.default;
  return {
    key: spec.key,
    flag: spec.flag,
    env: spec.env,
    kind: spec.kind.describe,
    boolean: spec.kind.boolean === true,
    defaultText: spec.defaultText ?? String(spec.default),
    doc: spec.doc,
    secret: spec.secret === true,
    apply(config, raw, ctx) {
      const result = spec.kind.parse(raw, ctx);
      if ('problem' in result) return result.problem;
      spec.set(config, result.value);
      return null;
    },
    applyDefault(config, available, ctx) {
      spec.set(config, defaultOf(available, ctx));
    },
  };
}

const DAY_MS = 24 * 3600 * 1000;
const CONNECTIONS_MAX = 1_000_000;
const PARTITIONS_MAX = 100_000;

/** Protocol listeners bind every interface by default: clients authenticate, and a broker is for remote clients. */
/** Two worker threads, leaving a core to the event loop: none on a one-core machine. */
function workerThreadsDefault(): number {
  return Math.max(0, Math.min(2, availableParallelism() - 1));
}

export const defaultPorts: Record<ListenerName, number> = { kafka: 9092, iggy: 8090, cursus: 9000, felix: 5000, http: 9080 };
export const DEFAULT_LISTEN_HOST = '0.0.0.0';
export const DEFAULT_MAX_CONNECTIONS = 4096;
/** Cursus's own server admits 1,000 clients (cursus-wire-v2.md, "Max concurrent connections"). */
const CURSUS_MAX_CONNECTIONS = 1000;

/** A protocol listener's default connection limit. */
export function defaultMaxConnections(name: ProtocolName): number {
  return name === 'cursus' ? CURSUS_MAX_CONNECTIONS : DEFAULT_MAX_CONNECTIONS;
}

export const KAFKA_REQUEST_BYTES_MAX_DEFAULT = 100 * 1024 * 1024;

function kafkaSection(c: QuartetConfig): KafkaFrontendConfig {
  c.kafka ??= { autoCreateTopics: true, saslRequired: false, requestBytesMax: KAFKA_REQUEST_BYTES_MAX_DEFAULT, inFlightRequestsMax: 64, fetchWaitMsMax: 30_000 };
  return c.kafka;
}

export const IGGY_FRAME_BYTES_MAX_DEFAULT = 64 * 1024 * 1024;
/** As src/protocols/cursus/frontend.ts requestBytesMaxDefault: four 64 MiB frames. */
const CURSUS_REQUEST_BYTES_MAX_DEFAULT = 256 * 1024 * 1024;
/** The reference server caps a poll by its count only: 5,000 messages of 20 kB come back whole (its offset scenario). */
const IGGY_POLL_BYTES_MAX_DEFAULT = 128 * 1024 * 1024;

function iggySection(c: QuartetConfig): IggyFrontendConfig {
  c.iggy ??= { frameBytesMax: IGGY_FRAME_BYTES_MAX_DEFAULT, inFlightRequestsMax: 64, heartbeatIntervalMs: 30_000, pollBytesMax: IGGY_POLL_BYTES_MAX_DEFAULT, pollMessagesMax: 100_000 };
  return c.iggy;
}

function cursusSection(c: QuartetConfig): CursusFrontendConfig {
  c.cursus ??= { requireAuth: false, v1Compat: false, requestBytesMax: CURSUS_REQUEST_BYTES_MAX_DEFAULT };
  return c.cursus;
}

/** As src/protocols/felix/settings.ts felixSettingsDefault. */
const FELIX_FRAME_BYTES_MAX_DEFAULT = 16 * 1024 * 1024;
const FELIX_SUBSCRIPTIONS_PER_CONNECTION_MAX_DEFAULT = 4096;

function felixSection(c: QuartetConfig): FelixFrontendConfig {
  c.felix ??= { requireAuth: false, frameBytesMax: FELIX_FRAME_BYTES_MAX_DEFAULT, subscriptionsPerConnectionMax: FELIX_SUBSCRIPTIONS_PER_CONNECTION_MAX_DEFAULT };
  return c.felix;
}

function protocolSettings(name: ProtocolName): Setting[] {
  const upper = name.toUpperCase();
  const label = name === 'felix' ? 'Felix (QUIC, UDP)' : name[0]!.toUpperCase() + name.slice(1);
  const get = (c: QuartetConfig): ProtocolListenerConfig => c.listeners[name];
  const rows: Setting[] = [
    define({
      key: `listeners.${name}.enabled`,
      flag: `${name}-enabled`,
      env: `QUARTET_${upper}_ENABLED`,
      kind: boolKind,
      default: (available) => available.has(name),
      defaultText: 'true when this build has the front-end',
      doc: `Open the ${label} listener. An enabled listener whose front-end is not built in is skipped with a warning.`,
      set: (c, v) => void (get(c).enabled = v),
    }),
    define({
      key: `listeners.${name}.addr`,
      flag: `${name}-addr`,
      env: `QUARTET_${upper}_ADDR`,
      kind: addrKind,
      default: { host: DEFAULT_LISTEN_HOST, port: defaultPorts[name] },
      defaultText: `${DEFAULT_LISTEN_HOST}:${defaultPorts[name]}`,
      doc: `Address the ${label} listener binds.`,
      set: (c, v) => void (get(c).addr = v),
    }),
    define({
      key: `listeners.${name}.maxConnections`,
      flag: `${name}-max-connections`,
      env: `QUARTET_${upper}_MAX_CONNECTIONS`,
      kind: intKind(1, CONNECTIONS_MAX),
      default: defaultMaxConnections(name),
      doc: `Open ${label} connections allowed at once; a new one beyond them closes the oldest connection not yet authenticated, or, when every one is, is itself closed at once and logged.`,
      set: (c, v) => void (get(c).maxConnections = v),
    }),
    define({
      key: `listeners.${name}.unauthenticatedConnectionsMax`,
      flag: `${name}-unauthenticated-connections-max`,
      env: `QUARTET_${upper}_UNAUTHENTICATED_CONNECTIONS_MAX`,
      kind: intKind(1, CONNECTIONS_MAX),
      default: defaultUnauthenticatedConnectionsMax,
      doc: `${label} connections that have not authenticated yet (TLS handshakes included) allowed at once; a new one beyond them closes the oldest of them, so that peers that never authenticate cannot lock out a client that does.`,
      set: (c, v) => void (get(c).unauthenticatedConnectionsMax = v),
    }),
    define({
      key: `listeners.${name}.connectionsPerPeerMax`,
      flag: `${name}-connections-per-peer-max`,
      env: `QUARTET_${upper}_CONNECTIONS_PER_PEER_MAX`,
      kind: intKind(0, CONNECTIONS_MAX),
      default: defaultConnectionsPerPeerMax,
      doc: `${label} connections allowed at once from one peer IP address; more from it are closed at once (0: no limit).`,
      set: (c, v) => void (get(c).connectionsPerPeerMax = v),
    }),
    define({
      key: `listeners.${name}.authTimeoutMs`,
      flag: `${name}-auth-timeout-ms`,
      env: `QUARTET_${upper}_AUTH_TIMEOUT_MS`,
      kind: intKind(0, 3_600_000),
      default: defaultAuthTimeoutMs,
      doc: `A ${label} connection that has not authenticated within this many milliseconds of opening is closed (0: never).`,
      set: (c, v) => void (get(c).authTimeoutMs = v),
    }),
    define({
      key: `listeners.${name}.idleTimeoutMs`,
      flag: `${name}-idle-timeout-ms`,
      env: `QUARTET_${upper}_IDLE_TIMEOUT_MS`,
      kind: intKind(0, 86_400_000),
      default: defaultIdleTimeoutsMs[name] ?? 0,
      doc: `A ${label} connection with no request in flight, and none begun or answered for this many milliseconds, is closed (0: never).`,
      set: (c, v) => void (get(c).idleTimeoutMs = v),
    }),
    define({
      key: `listeners.${name}.handshakeTimeoutMs`,
      flag: `${name}-handshake-timeout-ms`,
      env: `QUARTET_${upper}_HANDSHAKE_TIMEOUT_MS`,
      kind: intKind(100, 600_000),
      default: defaultHandshakeTimeoutMs,
      doc: `A TLS handshake on the ${label} listener not finished within this many milliseconds is dropped.`,
      set: (c, v) => void (get(c).handshakeTimeoutMs = v),
    }),
    define({
      key: `listeners.${name}.tlsCertFile`,
      flag: `${name}-tls-cert`,
      env: `QUARTET_${upper}_TLS_CERT`,
      kind: optional(pathKind),
      default: null,
      defaultText: 'none',
      doc: `PEM certificate (chain) for TLS on the ${label} listener; needs the key too.`,
      set: (c, v) => void (get(c).tlsCertFile = v),
    }),
    define({
      key: `listeners.${name}.tlsKeyFile`,
      flag: `${name}-tls-key`,
      env: `QUARTET_${upper}_TLS_KEY`,
      kind: optional(pathKind),
      default: null,
      defaultText: 'none',
      doc: `PEM private key for TLS on the ${label} listener; needs the certificate too.`,
      set: (c, v) => void (get(c).tlsKeyFile = v),
    }),
  ];
  if (name === 'iggy') {
    rows.push(
      define({
        key: 'listeners.iggy.advertisedAddr',
        flag: 'iggy-advertised-addr',
        env: 'QUARTET_IGGY_ADVERTISED_ADDR',
        kind: optional(addrKind),
        default: null,
        defaultText: 'derived',
        doc: 'host:port of this node in the Iggy cluster metadata (GetClusterMetadata), which Iggy SDKs keep as the address to reconnect to. By default the bound host and port; with a wildcard host, the address each client connected to (else 127.0.0.1). Set it when clients reach the broker through an address it does not see (NAT, a proxy, a DNS name).',
        set: (c, v) => void (c.listeners.iggy.advertisedAddr = v),
      }),
    );
  }
  if (name === 'cursus') {
    rows.push(
      define({
        key: 'listeners.cursus.advertisedAddr',
        flag: 'cursus-advertised-addr',
        env: 'QUARTET_CURSUS_ADVERTISED_ADDR',
        kind: optional(addrKind),
        default: null,
        defaultText: 'derived',
        doc: 'host:port that Cursus clients are given as the leader and coordinator address (METADATA, DESCRIBE, FIND_COORDINATOR, LIST_CLUSTER). By default the bound host and port, with 127.0.0.1 in place of a wildcard host; set it whenever clients connect from other machines.',
        set: (c, v) => void (c.listeners.cursus.advertisedAddr = v),
      }),
      define({
        key: 'cursus.requireAuth',
        flag: 'cursus-require-auth',
        env: 'QUARTET_CURSUS_REQUIRE_AUTH',
        kind: boolKind,
        default: false,
        doc: 'Require authentication (AUTH, or inline principal/auth_token: a user name and its password or personal access token) for every Cursus command that needs a permission, and check the permissions and topic policies; off, every request may do everything (as Cursus with enable_sasl=false).',
        set: (c, v) => void (cursusSection(c).requireAuth = v),
      }),
      define({
        key: 'cursus.v1Compat',
        flag: 'cursus-v1-compat',
        env: 'QUARTET_CURSUS_V1_COMPAT',
        kind: boolKind,
        default: false,
        doc: 'Also accept Cursus v1 connections (the protocol of the Go, Java and Python Cursus SDKs) on the Cursus port, told apart from Wire v2 by their first bytes; off, a v1 connection is closed as any connection that does not open with a Wire v2 negotiation.',
        set: (c, v) => void (cursusSection(c).v1Compat = v),
      }),
      define({
        key: 'cursus.requestBytesMax',
        flag: 'cursus-request-bytes-max',
        env: 'QUARTET_CURSUS_REQUEST_BYTES_MAX',
        kind: intKind(64 * 1024 * 1024, 64 * 1024 * 1024 * 1024),
        default: CURSUS_REQUEST_BYTES_MAX_DEFAULT,
        doc: 'Bytes of large Cursus request frames (64 KiB and up, a compressed frame counting its decoded length too) all connections may hold at once, being received, inflated or handled; a frame beyond it, or beyond what is left of the broker\'s requestBytesMax, is read and dropped and answered request_bytes_exhausted (retryable).',
        set: (c, v) => void (cursusSection(c).requestBytesMax = v),
      }),
    );
  }
  if (name === 'felix') {
    rows.push(
      define({
        key: 'felix.requireAuth',
        flag: 'felix-require-auth',
        env: 'QUARTET_FELIX_REQUIRE_AUTH',
        kind: boolKind,
        default: false,
        doc: 'Check the token of every Felix auth (a personal access token, or user:password) and hold each stream to its user\'s grants; off, any token is accepted and every stream may do everything (as the other listeners without authentication).',
        set: (c, v) => void (felixSection(c).requireAuth = v),
      }),
      define({
        key: 'felix.frameBytesMax',
        flag: 'felix-frame-bytes-max',
        env: 'QUARTET_FELIX_FRAME_BYTES_MAX',
        kind: intKind(65_536, 1024 * 1024 * 1024),
        default: FELIX_FRAME_BYTES_MAX_DEFAULT,
        doc: 'Largest Felix frame payload after a stream authenticated (64 KiB before); a larger declared length ends that stream.',
        set: (c, v) => void (felixSection(c).frameBytesMax = v),
      }),
      define({
        key: 'felix.subscriptionsPerConnectionMax',
        flag: 'felix-subscriptions-per-connection-max',
        env: 'QUARTET_FELIX_SUBSCRIPTIONS_PER_CONNECTION_MAX',
        kind: intKind(1, 1_000_000),
        default: FELIX_SUBSCRIPTIONS_PER_CONNECTION_MAX_DEFAULT,
        doc: 'Subscriptions one Felix connection may hold at once; one more is answered "max subscriptions per connection exceeded".',
        set: (c, v) => void (felixSection(c).subscriptionsPerConnectionMax = v),
      }),
    );
  }
  if (name === 'kafka') {
    rows.push(
      define({
        key: 'listeners.kafka.advertisedAddr',
        flag: 'kafka-advertised-addr',
        env: 'QUARTET_KAFKA_ADVERTISED_ADDR',
        kind: optional(addrKind),
        default: null,
        defaultText: 'derived',
        doc: 'host:port that Kafka clients are told to connect to (Metadata, FindCoordinator). By default the bound host and port, with 127.0.0.1 in place of a wildcard host (0.0.0.0, ::); set it whenever clients connect from other machines.',
        set: (c, v) => void (c.listeners.kafka.advertisedAddr = v),
      }),
      define({
        key: 'kafka.autoCreateTopics',
        flag: 'kafka-auto-create-topics',
        env: 'QUARTET_KAFKA_AUTO_CREATE_TOPICS',
        kind: boolKind,
        default: true,
        doc: 'Create a topic named in a Kafka Metadata request when it does not exist (the request permitting), with the default partition count, as Kafka\'s auto.create.topics.enable does.',
        set: (c, v) => void (kafkaSection(c).autoCreateTopics = v),
      }),
      define({
        key: 'kafka.saslRequired',
        flag: 'kafka-sasl-required',
        env: 'QUARTET_KAFKA_SASL_REQUIRED',
        kind: boolKind,
        default: false,
        doc: 'Require SASL authentication (PLAIN, SCRAM-SHA-256/512, the core\'s users) before any Kafka request but ApiVersions and the SASL exchange; an unauthenticated request closes the connection.',
        set: (c, v) => void (kafkaSection(c).saslRequired = v),
      }),
      define({
        key: 'kafka.requestBytesMax',
        flag: 'kafka-request-bytes-max',
        env: 'QUARTET_KAFKA_REQUEST_BYTES_MAX',
        kind: intKind(1024, 1024 * 1024 * 1024),
        default: KAFKA_REQUEST_BYTES_MAX_DEFAULT,
        doc: 'Largest Kafka request frame accepted (bytes; Kafka\'s socket.request.max.bytes); a larger one closes that connection.',
        set: (c, v) => void (kafkaSection(c).requestBytesMax = v),
      }),
      define({
        key: 'kafka.inFlightRequestsMax',
        flag: 'kafka-in-flight-requests-max',
        env: 'QUARTET_KAFKA_IN_FLIGHT_REQUESTS_MAX',
        kind: intKind(1, 10_000),
        default: 64,
        doc: 'Requests one Kafka connection may have between read and answered; beyond it the connection stops reading until responses drain.',
        set: (c, v) => void (kafkaSection(c).inFlightRequestsMax = v),
      }),
      define({
        key: 'kafka.fetchWaitMsMax',
        flag: 'kafka-fetch-wait-ms-max',
        env: 'QUARTET_KAFKA_FETCH_WAIT_MS_MAX',
        kind: intKind(0, 10 * 60_000),
        default: 30_000,
        doc: 'Upper bound (ms) on the max_wait_ms a Kafka Fetch may long-poll for.',
        set: (c, v) => void (kafkaSection(c).fetchWaitMsMax = v),
      }),
    );
  }
  if (name === 'iggy') {
    rows.push(
      define({
        key: 'iggy.frameBytesMax',
        flag: 'iggy-frame-bytes-max',
        env: 'QUARTET_IGGY_FRAME_BYTES_MAX',
        kind: intKind(64 * 1024, 1024 * 1024 * 1024),
        default: IGGY_FRAME_BYTES_MAX_DEFAULT,
        doc: 'Largest Iggy frame accepted (bytes, the 256-byte header included); a larger declared size evicts that connection (InvalidRequestBodySize).',
        set: (c, v) => void (iggySection(c).frameBytesMax = v),
      }),
      define({
        key: 'iggy.inFlightRequestsMax',
        flag: 'iggy-in-flight-requests-max',
        env: 'QUARTET_IGGY_IN_FLIGHT_REQUESTS_MAX',
        kind: intKind(1, 10_000),
        default: 64,
        doc: 'Requests one Iggy connection may have between read and answered; beyond it the connection stops reading until replies drain.',
        set: (c, v) => void (iggySection(c).inFlightRequestsMax = v),
      }),
      define({
        key: 'iggy.heartbeatIntervalMs',
        flag: 'iggy-heartbeat-interval-ms',
        env: 'QUARTET_IGGY_HEARTBEAT_INTERVAL_MS',
        kind: intKind(1_000, 3_600_000),
        default: 30_000,
        doc: 'Iggy [heartbeat] interval (ms): a consumer-group member silent for 1.2 × this is evicted with StaleClient.',
        set: (c, v) => void (iggySection(c).heartbeatIntervalMs = v),
      }),
      define({
        key: 'iggy.pollBytesMax',
        flag: 'iggy-poll-bytes-max',
        env: 'QUARTET_IGGY_POLL_BYTES_MAX',
        kind: intKind(64 * 1024, 1024 * 1024 * 1024),
        default: IGGY_POLL_BYTES_MAX_DEFAULT,
        doc: 'Largest PollMessages reply payload (bytes); at least one stored batch is always returned.',
        set: (c, v) => void (iggySection(c).pollBytesMax = v),
      }),
      define({
        key: 'iggy.pollMessagesMax',
        flag: 'iggy-poll-messages-max',
        env: 'QUARTET_IGGY_POLL_MESSAGES_MAX',
        kind: intKind(1, 10_000_000),
        default: 100_000,
        doc: 'Most messages in one PollMessages reply (a larger count is capped).',
        set: (c, v) => void (iggySection(c).pollMessagesMax = v),
      }),
    );
  }
  return rows;
}

/**
 * A broker-wide default for a topic config key, validated by the core's own rules. Only values the
 * operator sets are passed to the broker, so Kafka DescribeConfigs can still tell them apart from
 * the built-in defaults.
 */
function topicDefault(fileKey: string, flag: string, env: string, topicKey: TopicConfigKey, describe: string, doc: string): Setting {
  const kind: Kind<number | string> = {
    describe,
    parse: (raw) => {
      const parsed = topicConfigSpecs[topicKey].parse(raw);
      return 'reason' in parsed ? { problem: parsed.reason } : parsed;
    },
  };
  return define<number | string | undefined>({
    key: `topicDefaults.${fileKey}`,
    flag,
    env,
    kind,
    default: undefined,
    defaultText: String(builtinTopicDefaults[topicKey]),
    doc: `${doc} Topic config \`${topicKey}\`; applies to topics that do not set it.`,
    set: (c, v) => {
      if (v !== undefined) (c.topicDefaults as Record<string, unknown>)[topicKey] = v;
    },
  });
}

export const settings: readonly Setting[] = [
  define({
    key: 'dataDir',
    flag: 'data-dir',
    env: 'QUARTET_DATA_DIR',
    kind: pathKind,
    default: (_a, ctx) => resolvePath(ctx.baseDir, 'data'),
    defaultText: './data',
    doc: 'Directory holding the partition logs (logs/<topic-id>/<partition>/), the metadata database and the lock file. Created if missing.',
    set: (c, v) => void (c.dataDir = v),
  }),
  define<LogLevel>({
    key: 'logLevel',
    flag: 'log-level',
    env: 'QUARTET_LOG_LEVEL',
    kind: logLevelKind,
    default: 'info',
    doc: 'Least severe level written to the log lines on stderr.',
    set: (c, v) => void (c.logLevel = v),
  }),
  define<boolean>({
    key: 'secure',
    flag: 'secure',
    env: 'QUARTET_SECURE',
    kind: boolKind,
    default: false,
    doc: 'The secure profile: SASL required on Kafka (kafka.saslRequired), authentication required on Cursus (cursus.requireAuth) and Felix (felix.requireAuth), HTTP bound to 127.0.0.1; Iggy always authenticates, and every listener with a certificate uses TLS. Setting one of those against it is a configuration error (docs/security.md).',
    set: (c, v) => void (c.secure = v),
  }),
  define<LogFormat | 'auto'>({
    key: 'logFormat',
    flag: 'log-format',
    env: 'QUARTET_LOG_FORMAT',
    kind: logFormatKind,
    default: 'auto',
    doc: 'How log lines are written on stderr: text (`time LEVEL message key=value ...`, for people), json (one JSON object per line, for collectors), or auto: text when stderr is a terminal, json otherwise.',
    set: (c, v) => void (c.logFormat = v),
  }),
  ...protocolNames.flatMap(protocolSettings),
  define({
    key: 'listeners.http.enabled',
    flag: 'http-enabled',
    env: 'QUARTET_HTTP_ENABLED',
    kind: boolKind,
    default: true,
    doc: 'Serve GET /live, /ready and /metrics over HTTP.',
    set: (c, v) => void (c.listeners.http.enabled = v),
  }),
  define({
    key: 'listeners.http.addr',
    flag: 'http-addr',
    env: 'QUARTET_HTTP_ADDR',
    kind: addrKind,
    default: { host: DEFAULT_LISTEN_HOST, port: defaultPorts.http },
    defaultText: `${DEFAULT_LISTEN_HOST}:${defaultPorts.http}`,
    doc: 'Address of the HTTP health and metrics endpoint (no data, no admin operations).',
    set: (c, v) => void (c.listeners.http.addr = v),
  }),
  define({
    key: 'root.username',
    flag: 'root-username',
    env: 'QUARTET_ROOT_USERNAME',
    kind: stringKind,
    default: 'root',
    doc: 'Name of the administrator user created when the metadata store is new; with root.password set, the existing administrator is renamed to it at start.',
    set: (c, v) => void (c.root.username = v),
  }),
  define({
    key: 'root.password',
    flag: null,
    env: 'QUARTET_ROOT_PASSWORD',
    kind: optional(stringKind),
    default: null,
    defaultText: 'generated',
    doc: 'Password of the root user. Unset: a random one is generated when the user is created and printed once on stdout. Set: given to the user when created, and to the existing user at every start (a different stored one is replaced, with a warning). No flag (command lines are visible to other users).',
    secret: true,
    set: (c, v) => void (c.root.password = v),
  }),
  define({
    key: 'auth.delayAfterFailures',
    flag: 'auth-delay-after-failures',
    env: 'QUARTET_AUTH_DELAY_AFTER_FAILURES',
    kind: intKind(0, 1_000_000),
    default: defaultAuthThrottleSettings.delayAfterFailures,
    doc: 'Failed logins of one user name, or from one peer address, after which each further attempt waits before it is checked (250 ms, doubling, at most 5 s); 0 never slows logins.',
    set: (c, v) => void (c.auth.delayAfterFailures = v),
  }),
  define({
    key: 'auth.lockoutAfterFailures',
    flag: 'auth-lockout-after-failures',
    env: 'QUARTET_AUTH_LOCKOUT_AFTER_FAILURES',
    kind: intKind(0, 1_000_000),
    default: defaultAuthThrottleSettings.lockoutAfterFailures,
    doc: 'Failed logins of one user name, or from one peer address, after which attempts are refused without a check (as a wrong password) until auth.lockoutMs has passed since the last failure; 0 never locks out.',
    set: (c, v) => void (c.auth.lockoutAfterFailures = v),
  }),
  define({
    key: 'auth.lockoutMs',
    flag: 'auth-lockout-ms',
    env: 'QUARTET_AUTH_LOCKOUT_MS',
    kind: intKind(1_000, DAY_MS),
    default: defaultAuthThrottleSettings.lockoutMs,
    doc: 'How long failed logins count, and how long a lockout lasts after the last failure.',
    set: (c, v) => void (c.auth.lockoutMs = v),
  }),
  define({
    key: 'topicDefaults.partitions',
    flag: 'default-partitions',
    env: 'QUARTET_DEFAULT_PARTITIONS',
    kind: intKind(1, PARTITIONS_MAX),
    default: 1,
    doc: 'Partitions of a topic created without a count (Kafka auto-creation, Cursus, Felix).',
    set: (c, v) => void (c.defaultPartitions = v),
  }),
  topicDefault('fsyncPolicy', 'fsync-policy', 'QUARTET_FSYNC_POLICY', 'quartet.fsync.policy', 'interval|always',
    '`interval`: writes reach the page cache at once and are fsynced every fsync interval. `always`: every append is fsynced before it is acknowledged (waiting appends share one fsync).'),
  topicDefault('fsyncIntervalMs', 'fsync-interval-ms', 'QUARTET_FSYNC_INTERVAL_MS', 'flush.ms', 'integer ms', 'Milliseconds between fsyncs under the `interval` policy.'),
  topicDefault('retentionMs', 'retention-ms', 'QUARTET_RETENTION_MS', 'retention.ms', 'integer ms', 'Sealed segments whose newest record is older than this are deleted; -1 keeps data forever.'),
  topicDefault('retentionBytes', 'retention-bytes', 'QUARTET_RETENTION_BYTES', 'retention.bytes', 'integer bytes', 'The oldest sealed segments are deleted while a partition is larger than this; -1 disables.'),
  topicDefault('segmentBytes', 'segment-bytes', 'QUARTET_SEGMENT_BYTES', 'segment.bytes', 'integer bytes', `The active segment rolls when it reaches this size (${segmentBytesMin}..${segmentBytesMax}).`),
  topicDefault('segmentMs', 'segment-ms', 'QUARTET_SEGMENT_MS', 'segment.ms', 'integer ms', 'The active segment rolls when its first batch is older than this.'),
  define({
    key: 'maintenanceIntervalMs',
    flag: 'maintenance-interval-ms',
    env: 'QUARTET_MAINTENANCE_INTERVAL_MS',
    kind: intKind(0, DAY_MS),
    default: maintenanceIntervalMsDefault,
    doc: 'Milliseconds between maintenance passes (retention, compaction, segment roll by age, producer-state snapshots); 0 disables them.',
    set: (c, v) => void (c.maintenanceIntervalMs = v),
  }),
  define({
    key: 'memoryBudgetBytes',
    flag: 'memory-budget-bytes',
    env: 'QUARTET_MEMORY_BUDGET_BYTES',
    kind: intKind(0, 1024 ** 4),
    default: memoryBudgetBytesDefault,
    doc: 'Bytes the replies of reads (Kafka Fetch, Iggy PollMessages) may hold in memory at once, across every connection, until each is written to its socket: a read is cut to what is left (at least one batch is still returned), so consumers that do not read their replies hold about this much together. File slices sent with sendfile do not count.',
    set: (c, v) => void (c.memoryBudgetBytes = v),
  }),
  define({
    key: 'requestBytesMax',
    flag: 'request-bytes-max',
    env: 'QUARTET_REQUEST_BYTES_MAX',
    kind: intKind(1024 * 1024, 1024 ** 4),
    default: requestBytesMaxDefault,
    doc: 'Bytes large Kafka and Iggy request frames (64 KiB and up, arriving over several reads) may hold in memory at once, across every connection, from the moment their size is read until the request has been handled (Kafka\'s queued.max.request.bytes). A frame that does not fit waits: its connection stops reading until earlier frames are handled, first come first served; smaller requests on other connections are unaffected. Must be at least `kafka.requestBytesMax` and `iggy.frameBytesMax`. Large Cursus frames count in it too, and are refused (request_bytes_exhausted) rather than wait.',
    set: (c, v) => void (c.requestBytesMax = v),
  }),
  define({
    key: 'log.scrubBytesPerSec',
    flag: 'log-scrub-bytes-per-sec',
    env: 'QUARTET_LOG_SCRUB_BYTES_PER_SEC',
    kind: intKind(0, 1024 ** 4),
    default: scrubBytesPerSecDefault,
    doc: 'Bytes of stored batches the background scrubber checks against their checksums per second, partition after partition, so that a batch that rotted on disk is found (and never served) even where only sendfile sends it; 0 turns the scrubber off. Reads check what they serve either way.',
    set: (c, v) => void (c.log.scrubBytesPerSec = v),
  }),
  define({
    key: 'workers.threads',
    flag: 'worker-threads',
    env: 'QUARTET_WORKER_THREADS',
    kind: intKind(0, 64),
    default: workerThreadsDefault(),
    defaultText: 'min(2, cores - 1)',
    doc: 'Worker threads that transcode large batches between protocols, decompress and check large produced Kafka batches and recompress them to a topic compression.type, off the event loop; 0 does everything on the main thread.',
    set: (c, v) => void (c.workers.threads = v),
  }),
  define({
    key: 'workers.offloadBytesMin',
    flag: 'worker-offload-bytes-min',
    env: 'QUARTET_WORKER_OFFLOAD_BYTES_MIN',
    kind: intKind(0, 1 << 30),
    default: workerSettingsDefault.offloadBytesMin,
    doc: 'Batches to transcode (or Kafka records to recompress) of at least this many bytes go to a worker thread, and produced compressed Kafka batches whose records may decode to 16 times as many; smaller ones are handled inline.',
    set: (c, v) => void (c.workers.offloadBytesMin = v),
  }),
  define({
    key: 'workers.queueMax',
    flag: 'worker-queue-max',
    env: 'QUARTET_WORKER_QUEUE_MAX',
    kind: intKind(0, 1_000_000),
    default: workerSettingsDefault.queueMax,
    doc: 'Tasks waiting for a worker thread at most; past that, the work runs inline.',
    set: (c, v) => void (c.workers.queueMax = v),
  }),
  define({
    key: 'drainTimeoutMs',
    flag: 'drain-timeout-ms',
    env: 'QUARTET_DRAIN_TIMEOUT_MS',
    kind: intKind(0, 10 * 60_000),
    default: 5_000,
    doc: 'On shutdown, how long open connections may take to finish their in-flight requests before they are closed. Must be below the shutdown timeout.',
    set: (c, v) => void (c.drainTimeoutMs = v),
  }),
  define({
    key: 'shutdownTimeoutMs',
    flag: 'shutdown-timeout-ms',
    env: 'QUARTET_SHUTDOWN_TIMEOUT_MS',
    kind: intKind(100, 10 * 60_000),
    default: 10_000,
    doc: 'Hard limit on a graceful stop (SIGTERM, SIGINT); past it the process logs and exits with code 1.',
    set: (c, v) => void (c.shutdownTimeoutMs = v),
  }),
];
