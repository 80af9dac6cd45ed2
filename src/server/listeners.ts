// The listener registry: where each protocol front-end plugs into the server process.
//
// A front-end exports a function that builds its listener from the transport's ListenerContext
// (src/protocols/transport.ts) and its own settings; the registry below maps each protocol name to
// a ListenerFactory that calls it with the settings taken from this server's configuration (one
// import, one map entry): front-ends never read the server's configuration themselves. The
// server calls the factory once at start-up for each enabled protocol, then `start()` to bind and
// `stop(drainTimeoutMs)` at shutdown. TCP front-ends build their listener with
// `tcpProtocolListener()` (src/protocols/tcp-listener.ts) and only write the per-connection part;
// a front-end with another transport (Felix over QUIC) implements `ProtocolListener` itself.
//
// An enabled protocol without a factory here is reported as "not available yet" and skipped, and
// its `enabled` setting defaults to false (src/server/config.ts), so `quartet serve` works with
// whatever front-ends this build has.
import type { Broker, BrokerTransactionOptions } from '../core/broker.js';
import type { Logger } from '../base/logger.js';
import type { MetricsRegistry } from '../core/metrics.js';
import { createKafkaListener } from '../protocols/kafka/listener.js';
import type { KafkaSettings } from '../protocols/kafka/handlers/types.js';
import { watchIggyGrants } from '../protocols/iggy/grants.js';
import { watchIggyTopicOptions } from '../protocols/iggy/topic-options-table.js';
import { createIggyListener } from '../protocols/iggy/listener.js';
import { createCursusListener } from '../protocols/cursus/listener.js';
import { watchCursusTopics } from '../protocols/cursus/topic-table.js';
import { createFelixListener } from '../protocols/felix/listener.js';
import type { ListenerContext as TransportListenerContext, ProtocolListener } from '../protocols/transport.js';
import type { ProtocolListenerConfig, QuartetConfig } from './config.js';

import { createFormatRegistry, type FormatRegistry } from '../log/formats.js';
import { kafkaBatchFormatCodec } from '../protocols/kafka/codec/kafka-format.js';
import { iggyFormatCodec } from '../protocols/iggy/codec/iggy-format.js';
import { cursusBatchFormatCodec } from '../protocols/cursus/codec/cursus-format.js';
import { felixBatchFormatCodec } from '../protocols/felix/codec/felix-format.js';
import { kafkaBrokerTransactionOptions } from '../protocols/kafka/transactions.js';
import { cursusBrokerTransactionOptions } from '../protocols/cursus/transactions.js';

export type { ListenAddress, ProtocolListener } from '../protocols/transport.js';

/**
 * Every batch format this build can look inside: the neutral one and each built-in front-end's.
 * The server builds its broker with it, whichever listeners are enabled, so that compaction and
 * every protocol can read batches any protocol wrote.
 */
export function builtinFormats(): FormatRegistry {
  // With where a worker thread loads them from, so that transcoding can run off the main thread.
  return createFormatRegistry()
    .register(kafkaBatchFormatCodec, { moduleUrl: import.meta.resolve('../protocols/kafka/codec/kafka-format.js'), exportName: 'kafkaBatchFormatCodec' })
    .register(iggyFormatCodec, { moduleUrl: import.meta.resolve('../protocols/iggy/codec/iggy-format.js'), exportName: 'iggyFormatCodec' })
    .register(cursusBatchFormatCodec, { moduleUrl: import.meta.resolve('../protocols/cursus/codec/cursus-format.js'), exportName: 'cursusBatchFormatCodec' })
    .register(felixBatchFormatCodec, { moduleUrl: import.meta.resolve('../protocols/felix/codec/felix-format.js'), exportName: 'felixBatchFormatCodec' });
}

/**
 * What every front-end brings to the transaction coordinator, merged: each protocol's marker
 * encoder (by transaction scope), marker reader and marker form (by batch format), and where its
 * transactional offsets commit. The server builds its broker with it, whichever listeners are on.
 */
export function builtinTransactionOptions(): BrokerTransactionOptions {
  const parts = [kafkaBrokerTransactionOptions, cursusBrokerTransactionOptions];
  const merged = <K extends 'markerEncoders' | 'markerKinds' | 'markerFormats' | 'offsetScopes'>(key: K): NonNullable<BrokerTransactionOptions[K]> =>
    Object.assign({}, ...parts.map((p) => p[key] ?? {})) as NonNullable<BrokerTransactionOptions[K]>;
  return { markerEncoders: merged('markerEncoders'), markerKinds: merged('markerKinds'), markerFormats: merged('markerFormats'), offsetScopes: merged('offsetScopes') };
}

export const protocolNames = ['kafka', 'iggy', 'cursus', 'felix'] as const;
export type ProtocolName = (typeof protocolNames)[number];

/** Every listener the process can open: the four protocols and the HTTP endpoint. */
export const listenerNames = [...protocolNames, 'http'] as const;
export type ListenerName = (typeof listenerNames)[number];

/** What a factory receives: the transport's context, with this server's listener settings and configuration. */
export interface ListenerContext extends TransportListenerContext {
  name: ProtocolName;
  broker: Broker;
  /** This listener's settings: address, TLS files, connection limit, advertised address. */
  settings: ProtocolListenerConfig;
  /** The whole configuration (read-only), from which the factory takes the front-end's settings. */
  config: QuartetConfig;
  /** A logger already tagged with `{ listener: name }`. */
  logger: Logger;
  metrics: MetricsRegistry;
}

export type ListenerFactory = (context: ListenerContext) => ProtocolListener;

export type ListenerRegistry = ReadonlyMap<ProtocolName, ListenerFactory>;

/** Kafka settings from the configuration: the validated `kafka` section over the broker's default partition count. */
export function kafkaSettingsFrom(config: QuartetConfig): Partial<KafkaSettings> {
  // config.kafka holds the validated settings (src/server/config.ts); fields it does not know
  // (e.g. SASL ones set by embedding code) pass through to the front-end as well.
  const fromConfig = (config.kafka ?? {}) as Partial<KafkaSettings>;
  return { defaultPartitions: config.defaultPartitions, ...fromConfig };
}

/** The front-ends built into this package, each given its settings from the configuration. */
export const builtinListenerFactories: ListenerRegistry = new Map<ProtocolName, ListenerFactory>([
  ['kafka', (context) => createKafkaListener(context, kafkaSettingsFrom(context.config))],
  // Validated limits from the configuration (src/server/config.ts `iggy` section), else defaults.
  ['iggy', (context) => createIggyListener(context, context.config.iggy)],
  // Validated settings from the configuration (src/server/config.ts `cursus` section), else defaults.
  ['cursus', (context) => createCursusListener(context, context.config.cursus)],
  // Validated settings from the configuration (src/server/config.ts `felix` section), else defaults.
  ['felix', (context) => createFelixListener(context, context.config.felix)],
]);

/**
 * What a front-end keeps in the broker's shared state and must look after whether or not its
 * listener is open: run on every broker the server opens, before any listener starts. Iggy grants
 * name streams and topics by ids that are handed out again, so they go with what they name, even
 * when a Kafka client deletes it while the Iggy listener is off; an Iggy max_topic_size is spread
 * again over a partition count a Kafka client changes then, and goes with its topic. A Cursus
 * topic definition goes with its topic too, so a topic made again starts at revision 1.
 */
export const builtinBrokerWatchers: ReadonlyArray<(broker: Broker) => Promise<void>> = [watchIggyTopicOptions, watchIggyGrants, watchCursusTopics];

/** The listeners this build can open: HTTP always, plus every registered protocol. */
export function availableListeners(registry: ListenerRegistry = builtinListenerFactories): ReadonlySet<ListenerName> {
  return new Set<ListenerName>(['http', ...registry.keys()]);
}
