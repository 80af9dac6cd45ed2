// The CLI's client for a running broker's admin API (docs/admin-api.md): JSON over HTTP, with the
// caller's credentials as HTTP Basic (user and password) or a Bearer token. Where the broker and
// the credentials come from: --broker, --user, --password, --token, else QUARTET_BROKER,
// QUARTET_USER, QUARTET_PASSWORD, QUARTET_TOKEN; the broker defaults to http://127.0.0.1:9080.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { stringFlag, UsageError, type FlagSpec, type ParsedArgs } from './args.js';
import type { CliIo } from './io.js';

export const DEFAULT_BROKER_URL = 'http://127.0.0.1:9080';
/** A reply larger than this is refused (the biggest is a topic list: ~1 KiB a topic). */
export const ADMIN_REPLY_BYTES_MAX = 64 * 1024 * 1024;
export const ADMIN_REQUEST_TIMEOUT_MS = 30_000;

/** Flags every online command takes. */
export const connectionFlags: Record<string, FlagSpec> = { broker: {}, user: {}, password: {}, token: {}, json: { boolean: true } };

/** The admin API answered with an error (`code` is its error code) or could not be reached (`code` unreachable). */
export class AdminCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'AdminCallError';
  }
}

export interface AdminClient {
  readonly url: string;
  /** The user the credentials name (null for a token). */
  readonly username: string | null;
  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
}

export function adminClientFor(args: ParsedArgs, io: CliIo, command: string): AdminClient {
  const url = (stringFlag(args, 'broker') ?? io.env.QUARTET_BROKER ?? DEFAULT_BROKER_URL).replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--broker takes a URL such as ${DEFAULT_BROKER_URL}, not "${url}"`, command);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--broker must be an http:// or https:// URL, not "${url}"`, command);
  // An empty value counts as unset (QUARTET_TOKEN= in a shell).
  const given = (flag: string, env: string): string | undefined => (stringFlag(args, flag) ?? io.env[env]) || undefined;
  const token = given('token', 'QUARTET_TOKEN');
  const user = given('user', 'QUARTET_USER');
  const password = given('password', 'QUARTET_PASSWORD');
  let authorization: string;
  // A token wins over the environment's user and password, not over a --user flag.
  if (token !== undefined && stringFlag(args, 'user') === undefined) authorization = `Bearer ${token}`;
  else if (user !== undefined && password !== undefined) authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  else throw new UsageError('no credentials: give --user and --password (or QUARTET_USER and QUARTET_PASSWORD), or --token (QUARTET_TOKEN)', command);
  return {
    url,
    username: authorization.startsWith('Basic') ? user! : null,
    call: <T>(method: string, path: string, body?: unknown) => call<T>(parsed, authorization, method, path, body),
  };
}

/** Percent-encodes each segment of an API path. */
export function apiPath(...segments: Array<string | number>): string {
  return segments.map((s) => encodeURIComponent(String(s))).join('/');
}

function call<T>(base: URL, authorization: string, method: string, path: string, body: unknown): Promise<T> {
  const payload = method === 'GET' ? null : Buffer.from(JSON.stringify(body ?? {}));
  const headers: Record<string, string | number> = { Authorization: authorization, Accept: 'application/json' };
  if (payload !== null) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': payload.length });
  const target = new URL(`${base.pathname.replace(/\/$/, '')}/api/v1/${path}`, base);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<T>((resolve, reject) => {
    const req = send(target, { method, headers, timeout: ADMIN_REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      let total = 0;
      res.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > ADMIN_REPLY_BYTES_MAX) {
          req.destroy(new AdminCallError(0, 'reply_too_large', `the reply is larger than ${ADMIN_REPLY_BYTES_MAX} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          reject(new AdminCallError(status, 'bad_reply', `${base.origin} answered ${status} without JSON: is it a Quartet HTTP port?`));
          return;
        }
        if (status >= 200 && status < 300) resolve(parsed as T);
        else {
          const error = (parsed as { error?: { code?: string; message?: string } }).error;
          reject(new AdminCallError(status, error?.code ?? 'error', error?.message ?? `HTTP ${status}`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new AdminCallError(0, 'unreachable', `${base.origin} did not answer within ${ADMIN_REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      reject(err instanceof AdminCallError ? err : new AdminCallError(0, 'unreachable', `cannot reach the broker at ${base.origin}: ${err.code ?? err.message} (is it running? see --broker)`));
    });
    req.end(payload ?? undefined);
  });
}
