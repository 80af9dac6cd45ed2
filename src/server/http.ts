// The HTTP endpoint for orchestrators and scrapers: liveness, readiness and Prometheus metrics.
// These three serve no data, so they need no authentication; the admin API authenticates each request.
//
//   GET /live     200 as soon as the process is up
//   GET /ready    200 once recovery finished and the listeners are up; 503 before, while stopping,
//                 while appends fail because the disk is full (body `storage_full`), and while
//                 the logs hold batches found corrupt on disk (body `storage_corrupt`)
//   GET /metrics  the MetricsRegistry in the Prometheus text format 0.0.4
//   /api/v1/...   the admin API (admin/api.ts), authenticated, when the server gives one
//   /, /console/* the web console's page and files (console.ts), when the server gives them
//   anything else 404; other methods on these paths 405 (HEAD is served like GET)

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../base/logger.js';
import type { MetricsRegistry } from '../core/metrics.js';
import type { HostPort } from './config.js';
import { AdminApi } from './admin/api.js';
import type { ConsoleAssets } from './console.js';
import type { ListenAddress } from './listeners.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
/**
 * Probes, scrapers, the console and the CLI: a handful of connections at a time. A new connection
 * beyond this closes the oldest one that has no request in progress (still sending its headers, or
 * idle between keep-alive requests), so slow or idle peers cannot lock probes out; when every
 * connection is busy, the new one is closed.
 */
export const HTTP_CONNECTIONS_MAX = 64;
export const HTTP_HEADERS_TIMEOUT_MS = 5_000;
export const HTTP_REQUEST_TIMEOUT_MS = 10_000;
export const HTTP_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often Node checks the headers and request timeouts (its default, 30 s, let a peer keep 5 s of headers going for up to 35 s). */
export const HTTP_TIMEOUT_CHECK_MS = 500;

/**
 * 'storage_full': running, but appends fail for lack of disk space; 'storage_corrupt': running,
 * but the logs hold batches found corrupt on disk, which are not served (core/storage-health.ts).
 */
export type Readiness = 'starting' | 'ready' | 'storage_full' | 'storage_corrupt' | 'stopping';

export interface HttpEndpointOptions {
  addr: HostPort;
  metrics: MetricsRegistry;
  readiness: () => Readiness;
  logger: Logger;
  /** The admin API under /api/v1/ (absent: those paths are 404). */
  admin?: AdminApi;
  /** The web console at / (absent: 404). */
  console?: ConsoleAssets;
}

export class HttpEndpoint {
  private readonly server: Server;
  /** Open connections, oldest first, each with whether a request is in progress on it. */
  private readonly sockets = new Map<Socket, { busy: boolean }>();
  private readonly evictedTotal;
  private bound: ListenAddress | null = null;

  constructor(private readonly options: HttpEndpointOptions) {
    this.server = createServer(
      {
        requestTimeout: HTTP_REQUEST_TIMEOUT_MS,
        headersTimeout: HTTP_HEADERS_TIMEOUT_MS,
        keepAliveTimeout: HTTP_KEEP_ALIVE_TIMEOUT_MS,
        connectionsCheckingInterval: HTTP_TIMEOUT_CHECK_MS,
      },
      (req, res) => this.handle(req, res),
    );
    this.evictedTotal = options.metrics.counter(
      'quartet_http_connections_evicted_total',
      'HTTP connections closed to make room for a new one (the endpoint was full): the oldest without a request in progress, or the new one when all were busy',
    );
    this.server.on('connection', (socket: Socket) => this.admit(socket));
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const state = this.sockets.get(req.socket);
      if (!state) return;
      state.busy = true;
      res.once('close', () => void (state.busy = false));
    });
    this.server.on('clientError', (err, socket) => {
      options.logger.debug('http client error', { error: err });
      socket.destroy();
    });
  }

  address(): ListenAddress | null {
    return this.bound;
  }

  start(): Promise<ListenAddress> {
    const { host, port } = this.options.addr;
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(new Error(`cannot listen for http on ${host}:${port}: ${err.message}`, { cause: err }));
      this.server.once('error', onError);
      this.server.listen({ host, port }, () => {
        this.server.off('error', onError);
        this.server.on('error', (err) => this.options.logger.error('http server error', { error: err }));
        const info = this.server.address() as AddressInfo;
        this.bound = { host: info.address, port: info.port };
        resolve(this.bound);
      });
    });
  }

  /** Closes the listening socket and every open connection (probes need no draining). */
  stop(): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets.keys()) socket.destroy();
    });
  }

  /** Makes room for a new connection when the endpoint is full (see HTTP_CONNECTIONS_MAX). */
  private admit(socket: Socket): void {
    if (this.sockets.size >= HTTP_CONNECTIONS_MAX) {
      const idle = [...this.sockets].find(([, state]) => !state.busy)?.[0];
      this.evictedTotal.inc();
      if (!idle) {
        socket.destroy();
        return;
      }
      idle.destroy();
      this.sockets.delete(idle);
    }
    this.sockets.set(socket, { busy: false });
    socket.once('close', () => this.sockets.delete(socket));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (this.options.admin && AdminApi.handles(path ?? '')) return this.options.admin.handle(req, res);
    if (this.options.console?.handles(path ?? '')) return this.options.console.serve(path ?? '', req, res);
    const route = routes[path ?? ''];
    if (!route) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    }
    // Scrape-time values (consumer lag, disk bytes, process figures) are computed first.
    const collected = path === '/metrics' ? this.options.metrics.collect() : Promise.resolve();
    void collected.then(() => {
      const { status, type, body } = route(this.options);
      send(res, status, type, req.method === 'HEAD' ? '' : body, Buffer.byteLength(body));
    });
  }
}

interface Reply {
  status: number;
  type: string;
  body: string;
}

const routes: Record<string, (options: HttpEndpointOptions) => Reply> = {
  '/live': () => ({ status: 200, type: 'text/plain; charset=utf-8', body: 'live\n' }),
  '/ready': (o) => {
    const state = o.readiness();
    return { status: state === 'ready' ? 200 : 503, type: 'text/plain; charset=utf-8', body: `${state}\n` };
  },
  '/metrics': (o) => ({ status: 200, type: PROMETHEUS_CONTENT_TYPE, body: o.metrics.render() }),
};

function send(res: ServerResponse, status: number, type: string, body: string, length = Buffer.byteLength(body)): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': length, 'Cache-Control': 'no-store' });
  res.end(body);
}
