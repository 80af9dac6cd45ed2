import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Broker } from '../../../src/core/broker.js';
import { silentLogger } from '../../../src/base/logger.js';
import { MetricsRegistry } from '../../../src/core/metrics.js';
import { defaultIggySettings, type IggyFrontend } from '../../../src/protocols/iggy/frontend.js';
import { builtinFormats, builtinListenerFactories } from '../../../src/server/listeners.js';
import { loadConfig } from '../../../src/server/config.js';

async function frontendFor(flags: Record<string, string>): Promise<{ frontend: IggyFrontend; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-iggy-listener-'));
  const config = loadConfig({ flags: { 'data-dir': dir, ...flags }, env: {}, cwd: dir }).config;
  const broker = await Broker.open({ formats: builtinFormats(), dataDir: dir, memory: true, maintenanceIntervalMs: 0 });
  const listener = builtinListenerFactories.get('iggy')!({ name: 'iggy', broker, settings: config.listeners.iggy, config, logger: silentLogger, metrics: new MetricsRegistry() });
  const frontend = (listener as unknown as { frontend: IggyFrontend }).frontend;
  return {
    frontend,
    close: async () => {
      await broker.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('iggy listener settings', () => {
  it('passes the iggy.* limits from the configuration to the front-end', async () => {
    const { frontend, close } = await frontendFor({
      'iggy-frame-bytes-max': '70000',
      'iggy-in-flight-requests-max': '7',
      'iggy-heartbeat-interval-ms': '5000',
      'iggy-poll-bytes-max': '100000',
      'iggy-poll-messages-max': '123',
    });
    try {
      assert.equal(frontend.settings.frameBytesMax, 70_000);
      assert.equal(frontend.settings.inFlightRequestsMax, 7);
      assert.equal(frontend.settings.heartbeatIntervalMs, 5_000);
      assert.equal(frontend.settings.pollBytesMax, 100_000);
      assert.equal(frontend.settings.pollMessagesMax, 123);
    } finally {
      await close();
    }
  });

  it('keeps the front-end defaults when nothing is set', async () => {
    const { frontend, close } = await frontendFor({});
    try {
      assert.deepEqual(frontend.settings, defaultIggySettings);
    } finally {
      await close();
    }
  });
});
