// The Iggy listener: a TCP listener (src/server/tcp-listener.ts) whose connections are
// IggyConnections sharing one IggyFrontend. The frontend loads its tables (topic options,
// consumer groups) before the socket binds and stops its timers after the connections drained.

import type { ListenAddress, ListenerFactory, ProtocolListener } from '../../server/listeners.js';
import { tcpProtocolListener } from '../../server/tcp-listener.js';
import { IggyConnection } from './connection.js';
import { IggyFrontend } from './frontend.js';

/**
 * Large SendMessages bodies are read straight into their pooled buffers (readInto), and a peer's
 * FIN is handled by the connection (allowHalfOpen), which answers the requests sent before it, as
 * the reference server reads and answers them one by one before it sees the end of input.
 */
export const iggySocketOptions = { readInto: true, allowHalfOpen: true } as const;

export const iggyListenerFactory: ListenerFactory = (context) => {
  const frontend = new IggyFrontend({
    broker: context.broker,
    logger: context.logger,
    advertisedAddr: context.settings.advertisedAddr ?? null,
    // Validated limits from the configuration (src/server/config.ts `iggy` section), else defaults.
    ...(context.config.iggy ? { settings: { ...context.config.iggy } } : {}),
  });
  const tcp = tcpProtocolListener(() => (socket, conn) => new IggyConnection(frontend, socket, conn), iggySocketOptions)(context);
  const listener: ProtocolListener = {
    name: tcp.name,
    async start(): Promise<ListenAddress> {
      await frontend.start();
      const address = await tcp.start();
      frontend.setBoundAddress(address);
      return address;
    },
    async stop(drainTimeoutMs: number): Promise<void> {
      await tcp.stop(drainTimeoutMs);
      frontend.close();
    },
  };
  return Object.assign(listener, { frontend });
};
