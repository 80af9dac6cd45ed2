// A listener's ConnectionContext with some of its parts replaced: the Cursus port hands a
// connection its chunks itself (readInto), and a v1 connection hears of its authentication
// (authenticated) to lift its limit on unauthenticated bodies. Everything else stays the
// listener's, read live (inFlight).

import type { ConnectionContext } from '../transport.js';

export function overrideContext(c: ConnectionContext, parts: Partial<Pick<ConnectionContext, 'readInto' | 'authenticated'>>): ConnectionContext {
  const readInto = parts.readInto ?? c.readInto;
  return {
    id: c.id,
    listener: c.listener,
    remote: c.remote,
    tls: c.tls,
    logger: c.logger,
    beginRequest: (operation) => c.beginRequest(operation),
    get inFlight() {
      return c.inFlight;
    },
    authenticated: parts.authenticated ?? (() => c.authenticated()),
    unauthenticated: () => c.unauthenticated(),
    ...(readInto !== undefined ? { readInto } : {}),
  };
}
