// The web console's files on the HTTP endpoint, without a browser: what is served at / and under
// /console/, with which types and security headers, what is not served, and a missing console
// folder failing at start-up with the path.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { silentLogger } from '../../src/base/logger.js';
import { MetricsRegistry } from '../../src/core/metrics.js';
import { ConsoleAssets } from '../../src/server/console.js';
import { HttpEndpoint } from '../../src/server/http.js';

const endpoint = new HttpEndpoint({ addr: { host: '127.0.0.1', port: 0 }, metrics: new MetricsRegistry(), readiness: () => 'ready', logger: silentLogger, console: new ConsoleAssets() });
let origin = '';

before(async () => {
  origin = `http://127.0.0.1:${(await endpoint.start()).port}`;
});
after(() => endpoint.stop());

test('/ is the console page with a strict Content-Security-Policy and no cookie', async () => {
  const res = await fetch(`${origin}/`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(res.headers.get('x-frame-options'), 'DENY');
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(res.headers.get('set-cookie'), null);
  const html = await res.text();
  assert.match(html, /<form id="login"/);
  assert.doesNotMatch(html, /<script>|style=/, 'no inline script or style, which the policy would block');
});

test('the modules and the style sheet are served with their types; nothing else is', async () => {
  for (const [file, type] of [['app.js', /^text\/javascript/], ['pages.js', /^text\/javascript/], ['api.js', /^text\/javascript/], ['chart.js', /^text\/javascript/], ['console.css', /^text\/css/]] as const) {
    const res = await fetch(`${origin}/console/${file}`);
    assert.equal(res.status, 200, file);
    assert.match(res.headers.get('content-type') ?? '', type, file);
    assert.ok((await res.text()).length > 100, file);
  }
  for (const path of ['/console/', '/console/missing.js', '/console/%2e%2e/package.json', '/index.html']) {
    assert.equal((await fetch(`${origin}${path}`)).status, 404, path);
  }
});

test('only GET and HEAD: other methods are 405 with Allow', async () => {
  const post = await fetch(`${origin}/`, { method: 'POST', body: 'x' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD');
  const head = await fetch(`${origin}/console/app.js`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.ok(Number(head.headers.get('content-length')) > 100);
});

test('a console folder that is missing fails when the server starts, naming the file', () => {
  assert.throws(() => new ConsoleAssets('/nonexistent-quartet-console/'), /\/nonexistent-quartet-console\/index\.html cannot be read/);
});
