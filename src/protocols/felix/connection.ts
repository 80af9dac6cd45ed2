// One Felix QUIC connection: the streams its client opens (each a FelixStream with its own
// authentication), the event streams the broker opens for its subscriptions, and its deadline.
// There is no connection-level login (notes §4): the connection counts as authenticated once any
// of its streams has; if none has within the listener's authTimeoutMs, the connection is closed
// with QUIC application code 1 (notes §4 "authentication timeout").

import { setMaxListeners } from 'node:events';
import type { Duplex, Readable, Writable } from 'node:stream';
import type { Logger } from '../../base/logger.js';
import type { RequestDone } from '../transport.js';
import { CloseCode } from './codec/index.js';
import type { FelixFrontend } from './frontend.js';
import type { FelixQuicConnection } from './quic.js';
import { FelixStream, type FelixStreamHost } from './stream.js';

export interface FelixConnectionHooks {
  logger: Logger;
  /** 0: never. */
  authTimeoutMs: number;
  /** The first stream authenticated. */
  onAuthenticated(): void;
  onAuthTimeout(): void;
  beginRequest(operation: string): RequestDone;
}

export class FelixConnection implements FelixStreamHost {
  readonly logger: Logger;
  private readonly stopped = new AbortController();
  private subscriptions = 0;
  private isAuthenticated = false;
  private authTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly frontend: FelixFrontend,
    readonly quic: FelixQuicConnection,
    private readonly hooks: FelixConnectionHooks,
  ) {
    this.logger = hooks.logger;
    // Every subscription and long poll of the connection listens for its end.
    setMaxListeners(0, this.stopped.signal);
    quic.on('bidi', (stream: Duplex) => new FelixStream(frontend, this, 'bidi', stream, stream));
    quic.on('uni', (stream: Readable) => new FelixStream(frontend, this, 'uni', stream, null));
    quic.once('close', () => this.stopped.abort());
    if (hooks.authTimeoutMs > 0) {
      this.authTimer = setTimeout(() => {
        this.authTimer = null;
        if (this.isAuthenticated) return;
        hooks.onAuthTimeout();
        void this.close(CloseCode.authTimeout, 'authentication timeout');
      }, hooks.authTimeoutMs);
      this.authTimer.unref();
    }
  }

  get remote(): string {
    return this.quic.remoteAddress;
  }

  get closed(): AbortSignal {
    return this.stopped.signal;
  }

  authenticated(): void {
    if (this.isAuthenticated) return;
    this.isAuthenticated = true;
    if (this.authTimer !== null) clearTimeout(this.authTimer);
    this.authTimer = null;
    this.hooks.onAuthenticated();
  }

  beginRequest(operation: string): RequestDone {
    return this.hooks.beginRequest(operation);
  }

  openUni(): Writable {
    return this.quic.openUni();
  }

  addSubscription(): boolean {
    if (this.subscriptions >= this.frontend.settings.subscriptionsPerConnectionMax) return false;
    this.subscriptions++;
    return true;
  }

  removeSubscription(): void {
    this.subscriptions--;
  }

  /** Closes the connection (QUIC application close `code`); its subscriptions end. */
  async close(code: number, reason: string): Promise<void> {
    if (this.authTimer !== null) clearTimeout(this.authTimer);
    this.stopped.abort();
    try {
      await this.quic.close(code, reason);
    } catch (error) {
      this.logger.debug('felix connection close failed', { error: String(error) });
    }
  }
}
