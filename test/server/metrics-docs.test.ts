import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { silentLogger } from '../../src/base/logger.js';
import { loadConfig } from '../../src/server/config.js';
import { startServer } from '../../src/server/server.js';

const root = mkdtempSync(join(tmpdir(), 'quartet-metrics-docs-'));
after(() => rmSync(root, { recursive: true, force: true }));
const docs = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');

test('every metric a running broker exposes is in docs/metrics.md, and the Grafana dashboard uses only documented ones', async () => {
  const flags = { 'data-dir': join(root, 'data'), 'http-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'iggy-addr': '127.0.0.1:0', 'cursus-addr': '127.0.0.1:0', 'felix-enabled': false };
  const { config } = loadConfig({ flags, env: {} });
  const server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
  try {
    await server.ready;
    await server.metrics.collect();
    const names = [...server.metrics.render().matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
    assert.ok(names.includes('quartet_group_lag') && names.includes('nodejs_eventloop_lag_seconds'), names.join(' '));
    const missing = names.filter((n) => !docs.includes(`\`${n}\``));
    assert.deepEqual(missing, [], 'undocumented metrics');
  } finally {
    assert.equal(await server.stop(), 0);
  }
  const dashboard = readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8');
  const used = new Set([...dashboard.matchAll(/\b((?:quartet|process|nodejs)_[a-z_]+?)(?:_bucket|_sum|_count)?\b/g)].map((m) => m[1]!));
  assert.ok(used.size > 10);
  assert.deepEqual([...used].filter((n) => !docs.includes(`\`${n}\``)), [], 'dashboard metrics not documented');
});
