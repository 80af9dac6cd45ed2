// The Iggy listener: a TCP listener (../tcp-listener.ts) whose connections are
// IggyConnections sharing one IggyFrontend. The frontend loads its tables (topic options,
// consumer groups) before the socket binds and stops its timers after the connections drained.

import { tcpProtocolListener } from '../tcp-listener.js';
import type { ListenAddress, ListenerContext, ProtocolListener } from '../transport.js';
import { IggyConnection } from './connection.js';
import { IggyFrontend, type IggySettings } from './frontend.js';

/**
 * Large SendMessages bodies are read straight into their pooled buffers (readInto), and a peer's
 * FIN is handled by the connection (allowHalfOpen), which answers the requests sent before it, as
 * the reference server reads and answers them one by one before it sees the end of input.
 */
export const iggySocketOptions = { readInto: true, allowHalfOpen: true } as const;

/** The Iggy listener; `settings`: limits over the defaults (the server passes its `iggy` section). */
export function createIggyListener(context: ListenerContext, settings?: Partial<IggySettings>): ProtocolListener & { frontend: IggyFrontend } {
  const frontend = new IggyFrontend({
    broker: context.broker,
    logger: context.logger,
    advertisedAddr: context.settings.advertisedAddr ?? null,
    ...(settings ? { settings: { ...settings } } : {}),
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
}
