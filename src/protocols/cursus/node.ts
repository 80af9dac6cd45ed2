// This broker as Cursus names it (spec §4 "Cluster Discovery"): a single node, broker id
// `broker-<node id>`, reached at the advertised address (the listener's setting, else the bound
// address with 127.0.0.1 for a wildcard host). It leads every partition and coordinates every
// group and transaction, so METADATA, FIND_COORDINATOR, LIST_CLUSTER and DESCRIBE all name it.

import type { ListenAddress } from '../transport.js';

const wildcardHosts = new Set(['0.0.0.0', '::', '']);

export class CursusNode {
  /** The broker id Cursus replies carry. */
  readonly id: string;
  private bound: ListenAddress | null = null;

  constructor(
    readonly nodeId: number,
    private readonly advertised: ListenAddress | null = null,
  ) {
    this.id = `broker-${nodeId}`;
  }

  /** The listener's bound address, once it is known. */
  setBoundAddress(address: ListenAddress): void {
    this.bound = address;
  }

  /** Where clients reach this broker. */
  address(): ListenAddress {
    if (this.advertised !== null) return this.advertised;
    const bound = this.bound ?? { host: '127.0.0.1', port: 9000 };
    return { host: wildcardHosts.has(bound.host) ? '127.0.0.1' : bound.host, port: bound.port };
  }

  /** `host:port`, IPv6 hosts in brackets. */
  hostPort(): string {
    const { host, port } = this.address();
    return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  }
}
