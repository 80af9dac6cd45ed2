// Who can reach the broker without credentials: the listeners that accept clients without
// authentication on an address beyond loopback (warned about loudly at start-up), and the
// --secure profile that closes them (SASL required on Kafka, authentication required on Cursus
// and Felix, HTTP on loopback). Iggy always authenticates. docs/security.md explains both.

import type { QuartetConfig } from './config.js';
import type { ListenerName } from './listeners.js';

const LOOPBACK_NAMES = new Set(['localhost', '::1', '0:0:0:0:0:0:0:1']);

/** Whether `host` is only reachable from this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return LOOPBACK_NAMES.has(bare.toLowerCase()) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || /^::ffff:127\./i.test(bare);
}

export interface OpenListener {
  listener: ListenerName;
  host: string;
  port: number;
  /** What anyone who reaches it may do. */
  exposes: string;
  /** How to close it. */
  fix: string;
}

/** Enabled listeners that serve clients without authentication on an address beyond loopback. */
export function unauthenticatedListeners(config: QuartetConfig): OpenListener[] {
  const out: OpenListener[] = [];
  const add = (listener: ListenerName, exposes: string, fix: string): void => {
    const l = config.listeners[listener];
    if (l.enabled && !isLoopbackHost(l.addr.host)) out.push({ listener, host: l.addr.host, port: l.addr.port, exposes, fix });
  };
  if (config.kafka?.saslRequired !== true) add('kafka', 'read, write, create and delete every topic and group', '--kafka-sasl-required');
  if (config.cursus?.requireAuth !== true) add('cursus', 'read, write, create and delete every topic and group', '--cursus-require-auth');
  if (config.felix?.requireAuth !== true) add('felix', 'read, write, create and delete every stream, cache and group', '--felix-require-auth');
  add('http', 'read /metrics (topic and group names, sizes, lag)', '--http-addr 127.0.0.1:PORT');
  return out;
}

/** The start-up warning for one open listener. */
export function openListenerWarning(open: OpenListener): string {
  return (
    `SECURITY: the ${open.listener} listener on ${open.host}:${open.port} accepts clients without authentication: ` +
    `anyone who can reach it can ${open.exposes}. Use ${open.fix}, bind it to 127.0.0.1, or run with --secure (docs/security.md)`
  );
}

/**
 * Applies the secure profile: SASL required on Kafka, authentication required on Cursus and Felix, HTTP
 * bound to 127.0.0.1 (same port). A setting given explicitly against it is a problem, not
 * silently overridden. `originOf` says where a setting came from, or null for its default.
 */
export function applySecureProfile(config: QuartetConfig, originOf: (key: string) => string | null): string[] {
  const problems: string[] = [];
  const refuse = (key: string, what: string): void => void problems.push(`${originOf(key)}: --secure requires ${what}`);
  if (config.kafka) {
    if (!config.kafka.saslRequired && originOf('kafka.saslRequired') !== null) refuse('kafka.saslRequired', 'SASL on Kafka (kafka.saslRequired true)');
    config.kafka.saslRequired = true;
  }
  if (config.cursus) {
    if (!config.cursus.requireAuth && originOf('cursus.requireAuth') !== null) refuse('cursus.requireAuth', 'authentication on Cursus (cursus.requireAuth true)');
    config.cursus.requireAuth = true;
  }
  if (config.felix) {
    if (!config.felix.requireAuth && originOf('felix.requireAuth') !== null) refuse('felix.requireAuth', 'authentication on Felix (felix.requireAuth true)');
    config.felix.requireAuth = true;
  }
  const http = config.listeners.http;
  if (http.enabled && !isLoopbackHost(http.addr.host)) {
    if (originOf('listeners.http.addr') !== null) refuse('listeners.http.addr', 'HTTP on a loopback address (127.0.0.1)');
    http.addr = { ...http.addr, host: '127.0.0.1' };
  }
  return problems;
}
