// The admin API on the HTTP port: JSON under /api/v1/, for the `quartet` CLI and the web console.
// It is a thin layer over the core (catalog, logs, offsets, groups, users): each route checks the
// caller's grants (core/access.ts) and calls the core; docs/admin-api.md lists the routes.
//
// Every request authenticates: `Authorization: Basic` (a Quartet user and password) or `Bearer`
// (a personal access token), through the core's failed-login throttle. Nothing is read from
// query strings (a query string is refused: URLs end up in logs) and no cookie is ever set or
// read. A request that changes something (POST, PUT, PATCH, DELETE) must say
// `Content-Type: application/json`, which a cross-site form cannot send without a CORS preflight
// that this API never answers; a request with an Origin header that is not this host is refused.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { QuartetError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import type { Broker } from '../../core/broker.js';
import type { User } from '../../core/users.js';
import { AdminHttpError, errorReply } from './errors.js';

export const ADMIN_API_PREFIX = '/api/v1/';
/** A request body larger than this is refused (413) before it is parsed. */
export const ADMIN_BODY_BYTES_MAX = 64 * 1024;
/** The protocol name the auth throttle counts the API's failed logins under. */
export const ADMIN_AUTH_PROTOCOL = 'http';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route handler gets: the authenticated caller, the path parameters and the JSON body. */
export interface AdminRequest {
  broker: Broker;
  user: User;
  params: Readonly<Record<string, string>>;
  /** The parsed JSON body; {} when there was none. */
  body: unknown;
  info: AdminServerInfo;
}

export interface AdminReply {
  status?: number;
  body: unknown;
}

export type RouteHandler = (request: AdminRequest) => Promise<AdminReply> | AdminReply;

export interface Route {
  method: HttpMethod;
  /** Segments after /api/v1/; `:name` matches one segment (percent-decoded). */
  path: string;
  handler: RouteHandler;
}

/** What the server tells the API about itself (the overview route). */
export interface AdminServerInfo {
  version: string;
  startedAtMs: number;
  listeners: () => Array<{ name: string; address: string }>;
}

export interface AdminApiOptions {
  broker: () => Broker | null;
  routes: readonly Route[];
  info: AdminServerInfo;
  logger: Logger;
}

interface CompiledRoute extends Route {
  segments: string[];
}

const mutatingMethods = new Set<string>(['POST', 'PUT', 'PATCH', 'DELETE']);

export class AdminApi {
  private readonly routes: CompiledRoute[];

  constructor(private readonly options: AdminApiOptions) {
    this.routes = options.routes.map((r) => ({ ...r, segments: r.path.split('/').filter((s) => s !== '') }));
  }

  static handles(url: string): boolean {
    return url.startsWith(ADMIN_API_PREFIX) || url === ADMIN_API_PREFIX.slice(0, -1);
  }

  /** Answers one request; never throws (a failure is a JSON error reply). Changes are logged with their user. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.serve(req)
      .then(({ reply, user }) => {
        const status = reply.status ?? 200;
        if (mutatingMethods.has(req.method ?? '')) this.options.logger.info('admin api change', { user: user.username, method: req.method, path: pathOf(req), status });
        sendJson(res, status, reply.body);
      })
      .catch((err: unknown) => {
        const { status, code, message } = errorReply(err);
        if (status === 500) this.options.logger.error('admin api request failed', { method: req.method, path: pathOf(req), error: err });
        const headers: Record<string, string> = status === 401 ? { 'WWW-Authenticate': 'Bearer realm="quartet"' } : {};
        if (code === 'method_not_allowed') headers.Allow = this.allowedMethods(pathOf(req)).join(', ');
        sendJson(res, status, { error: { code, message } }, headers);
        // A body left unread would be parsed as the next request on a kept-alive connection.
        if (!req.complete) res.once('finish', () => req.socket.destroy());
      });
  }

  private async serve(req: IncomingMessage): Promise<{ reply: AdminReply; user: User }> {
    const url = req.url ?? '/';
    if (url.includes('?')) throw new AdminHttpError('query_not_allowed', 'the admin API takes no query string; parameters go in the path or a JSON body');
    const method = req.method ?? 'GET';
    const { route, params } = this.match(method, pathOf(req));
    checkOrigin(req);
    const mutating = mutatingMethods.has(method);
    if (mutating) checkContentType(req);
    const broker = this.options.broker();
    if (broker === null) throw new QuartetError('not_ready', 'the broker is not ready (starting or stopping)');
    const user = await authenticate(broker, req);
    const body = mutating ? await readJsonBody(req) : {};
    return { reply: await route.handler({ broker, user, params, body, info: this.options.info }), user };
  }

  private match(method: string, path: string): { route: CompiledRoute; params: Record<string, string> } {
    const segments = splitPath(path);
    let pathMatched = false;
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (params === null) continue;
      pathMatched = true;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params };
    }
    if (pathMatched) throw new AdminHttpError('method_not_allowed', `${method} is not allowed on ${path}`);
    throw new AdminHttpError('not_found', `no admin API route ${path}`);
  }

  private allowedMethods(path: string): string[] {
    const segments = splitPath(path);
    return [...new Set(this.routes.filter((r) => matchSegments(r.segments, segments) !== null).map((r) => r.method))];
  }
}

function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').split('?', 1)[0]!;
}

/** The segments after /api/v1/, percent-decoded (a bad escape is a 404: no route has it). */
function splitPath(path: string): string[] {
  const rest = path.startsWith(ADMIN_API_PREFIX) ? path.slice(ADMIN_API_PREFIX.length) : '';
  try {
    return rest.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  } catch {
    throw new AdminHttpError('not_found', `malformed path ${path}`);
  }
}

function matchSegments(pattern: readonly string[], segments: readonly string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p.startsWith(':')) params[p.slice(1)] = segments[i]!;
    else if (p !== segments[i]) return null;
  }
  return params;
}

/** A browser request from another site names it in Origin; this API serves its own host only. */
function checkOrigin(req: IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw new AdminHttpError('forbidden_origin', `malformed Origin ${JSON.stringify(origin)}`);
  }
  if (host !== req.headers.host) throw new AdminHttpError('forbidden_origin', `requests from ${origin} are not allowed`);
}

function checkContentType(req: IncomingMessage): void {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new AdminHttpError('unsupported_media_type', `a ${req.method} request must have Content-Type: application/json`);
  }
}

async function authenticate(broker: Broker, req: IncomingMessage): Promise<User> {
  const header = req.headers.authorization;
  if (header === undefined) throw new QuartetError('unauthenticated', 'credentials required: HTTP Basic (user and password) or Bearer (a personal access token)');
  const space = header.indexOf(' ');
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const value = space < 0 ? '' : header.slice(space + 1).trim();
  const remote = `${req.socket.remoteAddress ?? 'unknown'}:${req.socket.remotePort ?? 0}`;
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new QuartetError('unauthenticated', 'malformed Basic credentials');
    const username = decoded.slice(0, colon);
    return checked(broker, username, remote, () => broker.users.verifyPassword(username, decoded.slice(colon + 1)));
  }
  if (scheme === 'bearer') return checked(broker, null, remote, async () => broker.users.verifyToken(value));
  throw new QuartetError('unauthenticated', `unsupported authorization scheme '${scheme}': use Basic or Bearer`);
}

/** Runs a credentials check under the core's failed-login throttle. */
async function checked(broker: Broker, username: string | null, remote: string, verify: () => Promise<User>): Promise<User> {
  const throttle = broker.authThrottle;
  const admission = await throttle.admit(username, remote, ADMIN_AUTH_PROTOCOL);
  if (!admission.admitted) {
    throttle.failed(username, remote, ADMIN_AUTH_PROTOCOL);
    throw new QuartetError('invalid_credentials', 'too many failed logins; try again later');
  }
  try {
    const user = await verify();
    throttle.succeeded(user.username);
    return user;
  } catch (err) {
    throttle.failed(username, remote, ADMIN_AUTH_PROTOCOL);
    throw err;
  }
}

/** The JSON body, at most ADMIN_BODY_BYTES_MAX bytes; an empty body is {}. */
async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > ADMIN_BODY_BYTES_MAX) throw new AdminHttpError('payload_too_large', `the body is larger than ${ADMIN_BODY_BYTES_MAX} bytes`);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > ADMIN_BODY_BYTES_MAX) throw new AdminHttpError('payload_too_large', `the body is larger than ${ADMIN_BODY_BYTES_MAX} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new QuartetError('invalid_request', `the body is not valid JSON: ${(err as Error).message}`);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body) + '\n';
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? '' : text);
}
