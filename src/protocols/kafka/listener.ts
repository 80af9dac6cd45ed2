// The Kafka listener: a TCP listener (../tcp-listener.ts) whose connections are
// KafkaConnections sharing one KafkaBrokerFrontend. The frontend starts (cluster id, stored
// groups) before the socket binds, learns the bound address for Metadata's advertised host, and
// closes (group coordinator, fetch waiters) after the connections have drained.

import { tcpProtocolListener } from '../tcp-listener.js';
import type { ListenAddress, ListenerContext, ProtocolListener } from '../transport.js';
import { KafkaConnection } from './connection.js';
import { KafkaBrokerFrontend } from './frontend.js';
import type { KafkaSettings } from './handlers/types.js';

/** The Kafka listener; `settings`: over the defaults (the server passes its `kafka` section). */
export function createKafkaListener(context: ListenerContext, settings: Partial<KafkaSettings> = {}): ProtocolListener & { frontend: KafkaBrokerFrontend } {
  const frontend = new KafkaBrokerFrontend({
    broker: context.broker,
    logger: context.logger,
    settings,
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
}
