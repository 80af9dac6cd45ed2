// The listener registry: where each protocol front-end plugs into the server process.
//
// A front-end exports one `ListenerFactory` and adds it to `builtinListenerFactories` below (one
// import, one map entry). The server calls the factory once at start-up for each enabled protocol,
// then `start()` to bind and `stop(drainTimeoutMs)` at shutdown. TCP front-ends build their
// listener with `tcpProtocolListener()` from ./tcp-listener.ts and only write the per-connection
// part; a front-end with another transport (Felix over QUIC) implements `ProtocolListener` itself.
//
// An enabled protocol without a factory here is reported as "not available yet" and skipped, and
// its `enabled` setting defaults to false (src/server/config.ts), so `quartet serve` works with
// whatever front-ends this build has.

import type { Broker } from '../core/broker.js';
import { kafkaListenerFactory } from '../protocols/kafka/listener.js';
import { watchIggyGrants } from '../protocols/iggy/grants.js';
import { watchIggyTopicOptions } from '../protocols/iggy/topic-options-table.js';
import { iggyListenerFactory } from '../protocols/iggy/listener.js';
import type { Logger } from '../base/logger.js';
import type { MetricsRegistry } from '../core/metrics.js';
import type { ProtocolListenerConfig, QuartetConfig } from './config.js';

export const protocolNames = ['kafka', 'iggy', 'cursus', 'felix'] as const;
export type ProtocolName = (typeof protocolNames)[number];

/** Every listener the process can open: the four protocols and the HTTP endpoint. */
export const listenerNames = [...protocolNames, 'http'] as const;
export type ListenerName = (typeof listenerNames)[number];

export interface ListenAddress {
  host: string;
  port: number;
}

/** What a factory receives: the broker, its own listener settings and process-wide services. */
export interface ListenerContext {
  name: ProtocolName;
  broker: Broker;
  /** This listener's settings: address, TLS files, connection limit, advertised address. */
  settings: ProtocolListenerConfig;
  /** The whole configuration (read-only), for the rare setting a front-end needs besides its own. */
  config: QuartetConfig;
  /** A logger already tagged with `{ listener: name }`. */
  logger: Logger;
  metrics: MetricsRegistry;
}

export interface ProtocolListener {
  readonly name: string;
  /** Binds and starts accepting; resolves with the bound address (the real port when 0 was asked). */
  start(): Promise<ListenAddress>;
  /**
   * Stops accepting, lets open connections finish their in-flight requests for at most
   * `drainTimeoutMs`, then destroys what is left. Never rejects.
   */
  stop(drainTimeoutMs: number): Promise<void>;
}

export type ListenerFactory = (context: ListenerContext) => ProtocolListener;

export type ListenerRegistry = ReadonlyMap<ProtocolName, ListenerFactory>;

/**
 * The front-ends built into this package. To add one:
 *   import { kafkaListenerFactory } from '../protocols/kafka/listener.js';
 *   ...
 *   ['kafka', kafkaListenerFactory],
 */
export const builtinListenerFactories: ListenerRegistry = new Map<ProtocolName, ListenerFactory>([['kafka', kafkaListenerFactory], ['iggy', iggyListenerFactory]]);

/**
 * What a front-end keeps in the broker's shared state and must look after whether or not its
 * listener is open: run on every broker the server opens, before any listener starts. Iggy grants
 * name streams and topics by ids that are handed out again, so they go with what they name, even
 * when a Kafka client deletes it while the Iggy listener is off; an Iggy max_topic_size is spread
 * again over a partition count a Kafka client changes then, and goes with its topic.
 */
export const builtinBrokerWatchers: ReadonlyArray<(broker: Broker) => Promise<void>> = [watchIggyTopicOptions, watchIggyGrants];

/** The listeners this build can open: HTTP always, plus every registered protocol. */
export function availableListeners(registry: ListenerRegistry = builtinListenerFactories): ReadonlySet<ListenerName> {
  return new Set<ListenerName>(['http', ...registry.keys()]);
}
