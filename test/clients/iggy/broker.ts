// Starts the real broker in this process (startServer) with the Iggy listener on 127.0.0.1:0, a
// temp data dir and a known root password, for the SDK's end-to-end tests.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../../src/base/logger.js';
import { loadConfig } from '../../../src/server/config.js';
import { builtinListenerFactories } from '../../../src/server/listeners.js';
import { startServer } from '../../../src/server/server.js';

export const rootUsername = 'root';
export const rootPassword = 'root-password';

/** Why the end-to-end tests cannot run yet, or false when they can. */
export const e2eSkip: string | false = builtinListenerFactories.has('iggy') ? false : 'iggy listener not registered yet';

export interface IggyBroker {
  addr: string;
  stop(): Promise<void>;
}

export async function startIggyBroker(): Promise<IggyBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-iggy-sdk-'));
  const flags = {
    'data-dir': join(dir, 'data'),
    'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0',
    'iggy-addr': '127.0.0.1:0',
    'iggy-enabled': true,
    'kafka-enabled': false,
    'cursus-enabled': false,
  };
  const env = { QUARTET_ROOT_USERNAME: rootUsername, QUARTET_ROOT_PASSWORD: rootPassword };
  const { config } = loadConfig({ flags, env, cwd: dir });
  const level = process.env.QUARTET_TEST_LOG_LEVEL === 'debug' ? 'debug' : 'error';
  const server = await startServer(config, {
    logger: createLogger(level, (line) => process.stderr.write(`[quartet] ${line}\n`)),
    handleSignals: false,
    stdout: () => {},
  });
  const stop = async (): Promise<void> => {
    await server.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await server.ready;
  } catch (err) {
    await stop();
    throw err;
  }
  const address = server.listenerAddresses().get('iggy');
  if (!address) {
    await stop();
    throw new Error('the Iggy listener did not start');
  }
  return { addr: `127.0.0.1:${address.port}`, stop };
}
