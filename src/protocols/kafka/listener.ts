// The Kafka listener: a TCP listener (src/server/tcp-listener.ts) whose connections are
// KafkaConnections sharing one KafkaBrokerFrontend. The frontend starts (cluster id, stored
// groups) before the socket binds, learns the bound address for Metadata's advertised host, and
// closes (group coordinator, fetch waiters) after the connections have drained.

import type { ListenAddress, ListenerContext, ListenerFactory, ProtocolListener } from '../../server/listeners.js';
import { tcpProtocolListener } from '../../server/tcp-listener.js';
import { KafkaConnection } from './connection.js';
import { KafkaBrokerFrontend } from './frontend.js';
import type { KafkaSettings } from './handlers/types.js';

/** Kafka settings from the server configuration (the optional `kafka` section, defaults otherwise). */
export function kafkaSettingsFrom(context: ListenerContext): Partial<KafkaSettings> {
  // config.kafka holds the validated settings (src/server/config.ts); fields it does not know
  // (e.g. SASL ones set by embedding code) pass through to the front-end as well.
  const fromConfig = (context.config.kafka ?? {}) as Partial<KafkaSettings>;
  return { defaultPartitions: context.config.defaultPartitions, ...fromConfig };
}

export const kafkaListenerFactory: ListenerFactory = (context) => {
  const frontend = new KafkaBrokerFrontend({
    broker: context.broker,
    logger: context.logger,
    settings: kafkaSettingsFrom(context),
    advertisedAddr: context.settings.advertisedAddr,
  });
  const tcp = tcpProtocolListener(() => (socket, conn) => new KafkaConnection(frontend, socket, conn), { readInto: true })(context);
  const listener: ProtocolListener = {
    name: tcp.name,
    async start(): Promise<ListenAddress> {
      await frontend.start();
      const address = await tcp.start();
      frontend.setBoundAddress(address);
      const advertised = frontend.advertised();
      context.logger.info('Kafka advertised address', { host: advertised.host, port: advertised.port, clusterId: frontend.clusterId });
      return address;
    },
    async stop(drainTimeoutMs: number): Promise<void> {
      await tcp.stop(drainTimeoutMs);
      await frontend.close().catch((error: unknown) => context.logger.error('closing the Kafka frontend failed', { error }));
    },
  };
  return Object.assign(listener, { frontend });
};
