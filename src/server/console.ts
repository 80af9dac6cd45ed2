// The web console's files on the HTTP port: `/` is the page, `/console/<file>` its ES modules and
// CSS. They are plain files checked in under console/ at the package root (no build step), served
// from a fixed list, read once and kept in memory. The page talks to the admin API (admin/api.ts)
// with the credentials the user types in; these files hold no data, so they need no authentication.
// Every answer carries a strict Content-Security-Policy: only this origin's scripts, styles and
// API, no inline code, no framing, no form posts anywhere.

import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { QuartetError } from '../base/errors.js';

/** The console's folder: console/ at the package root, from src/server/ and from dist/server/ alike. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const types: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/** URL path to file name: the only paths served. */
const files: Record<string, string> = {
  '/': 'index.html',
  '/console/app.js': 'app.js',
  '/console/api.js': 'api.js',
  '/console/chart.js': 'chart.js',
  '/console/pages.js': 'pages.js',
  '/console/console.css': 'console.css',
};

interface Asset {
  type: string;
  body: Buffer;
}

export class ConsoleAssets {
  private readonly assets = new Map<string, Asset>();

  /** Reads every file now, so that a missing one fails at start-up rather than on a request. */
  constructor(dir = CONSOLE_DIR) {
    for (const [path, name] of Object.entries(files)) {
      let body: Buffer;
      try {
        body = readFileSync(dir + name);
      } catch (err) {
        throw new QuartetError('storage_error', `the web console file ${dir}${name} cannot be read: ${(err as Error).message}`, err);
      }
      this.assets.set(path, { type: types[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream', body });
    }
  }

  handles(path: string): boolean {
    return this.assets.has(path);
  }

  /** Serves one file (GET and HEAD; other methods 405). A query string is ignored, never read. */
  serve(path: string, req: IncomingMessage, res: ServerResponse): void {
    const asset = this.assets.get(path);
    const headers: Record<string, string | number> = {
      'Content-Security-Policy': CONSOLE_CSP,
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cache-Control': 'no-cache',
    };
    if (asset === undefined) {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...headers, Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('method not allowed\n');
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': asset.type, 'Content-Length': asset.body.length });
    res.end(req.method === 'HEAD' ? undefined : asset.body);
  }
}
