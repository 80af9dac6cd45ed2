// Shared by the conformance suites (real third-party Kafka clients against a real Quartet server).
//
// startBroker() starts the whole server (startServer from src/server/server.ts: lock, broker,
// listeners) in this process, or as a child process with `childProcess: true`, on 127.0.0.1 with
// free ports (port 0) and a fresh temp data dir, and returns the Kafka bootstrap address. The
// in-process form also returns the Broker, so a test can look at the log directly.
//
// requireClient() decides what a missing Debian client means: the test is SKIPPED with an install
// hint, except in CI (QUARTET_REQUIRE_CLIENTS=1), where it FAILS (test/missing-client.ts). The npm
// clients that need a newer Node are installed apart: test/peers/.
//
// startBrokerWithSdks() adds the Iggy and Cursus listeners and the SDK clients of both, for the
// tests that cross records between them.

import assert from 'node:assert/strict';
import { CursusClient } from '../../src/clients/cursus/index.js';
import { IggyClient } from '../../src/clients/iggy/index.js';
import { protocolNames } from '../../src/server/listeners.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allGlobalGrants, globalGrants, type Grants, type TopicGrants } from '../../src/core/access.js';
import { Broker } from '../../src/core/broker.js';
import { createLogger, type Logger, type LogLevel } from '../../src/base/logger.js';
import { loadConfig, type QuartetConfig } from '../../src/server/config.js';
import { startServer, type QuartetServer } from '../../src/server/server.js';
import { missingClient } from '../missing-client.js';

export const repoRoot = new URL('../..', import.meta.url).pathname;

export interface SaslOptions {
  /** Users created before the listener opens (username → password), with every global grant unless `grants` names theirs. */
  users?: Record<string, string>;
  /** Grants of some of those users (src/core/access.ts): Kafka checks them (docs/kafka-sasl.md "Authorization"). */
  grants?: Record<string, Grants>;
  /** Mechanisms offered; the frontend default when absent. */
  mechanisms?: string[];
}

export interface StartBrokerOptions {
  /** Open the Kafka listener (default true). */
  kafka?: boolean;
  /** Require SASL on the Kafka listener, with these users. */
  sasl?: SaslOptions;
  /** QUARTET_* variables, read like the process environment (e.g. QUARTET_DEFAULT_PARTITIONS). */
  env?: Record<string, string>;
  /** Extra flags, as on the command line without dashes: { 'default-partitions': '3' }. */
  flags?: Record<string, string | boolean>;
  /** Run `quartet serve` as a child process instead of in this process. */
  childProcess?: boolean;
  /** Server log level (default: QUARTET_TEST_LOG_LEVEL or 'warn'). */
  logLevel?: LogLevel;
}

/** Grants on one default-stream topic only (Kafka name `topic`), for a restricted SASL user. */
export function grantsOnTopic(broker: Broker, topic: string, rights: Partial<Omit<TopicGrants, 'topicId'>>): Grants {
  const t = broker.catalog.getTopic({ namespace: 'default', topic });
  if (t === null) throw new Error(`no topic ${topic}`);
  const grants = globalGrants([]);
  grants.streams.push({
    streamId: t.namespaceId, manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false,
    topics: [{ topicId: t.id, manageTopic: false, readTopic: false, pollMessages: false, sendMessages: false, ...rights }],
  });
  return grants;
}

export interface StartedBroker {
  /** "127.0.0.1:<port>" of the Kafka listener. */
  bootstrap: string;
  host: string;
  port: number;
  dataDir: string;
  /** The in-process broker (null for a child process). */
  broker: Broker | null;
  server: QuartetServer | null;
  /** "127.0.0.1:<port>" of the Iggy listener, when it is enabled (in-process brokers only). */
  iggyAddress?: string;
  /** Stops the server and removes the data directory. Idempotent. */
  stop(): Promise<void>;
}

function testLogger(level: LogLevel): Logger {
  return createLogger(level, (line) => process.stderr.write(`[quartet] ${line}\n`));
}

function defaultLogLevel(): LogLevel {
  const v = process.env.QUARTET_TEST_LOG_LEVEL;
  return v === 'debug' || v === 'info' || v === 'warn' || v === 'error' || v === 'silent' ? v : 'warn';
}

export async function startBroker(options: StartBrokerOptions = {}): Promise<StartedBroker> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-conformance-'));
  const flags: Record<string, string | boolean> = {
    'data-dir': join(dataDir, 'data'),
    'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0',
    // Every protocol listener on a free loopback port: a test never collides with a running
    // broker's default ports, or with another test.
    ...Object.fromEntries(protocolNames.map((p) => [`${p}-addr`, '127.0.0.1:0'])),
    'kafka-enabled': options.kafka ?? true,
    ...(options.sasl ? { 'kafka-sasl-required': true } : {}),
    ...(options.flags ?? {}),
  };
  const env = { QUARTET_ROOT_PASSWORD: 'root-password', ...(options.env ?? {}) };
  if (options.childProcess) return startChild(dataDir, flags, env, options.logLevel ?? defaultLogLevel());

  let config: QuartetConfig;
  try {
    config = loadConfig({ flags, env, cwd: dataDir }).config;
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  if (options.sasl?.mechanisms) {
    // The mechanisms offered have no server setting: they go to the Kafka front-end with the rest
    // of config.kafka (see listener.ts), as embedding code would pass them.
    const kafka = { ...(config.kafka ?? {}), saslMechanisms: options.sasl.mechanisms };
    (config as { kafka?: unknown }).kafka = kafka;
  }
  const users = options.sasl?.users ?? {};
  const server = await startServer(config, {
    logger: testLogger(options.logLevel ?? defaultLogLevel()),
    handleSignals: false,
    stdout: () => {},
    // Users must exist before the first client connects: create them as the broker opens.
    ...(Object.keys(users).length > 0
      ? {
          openBroker: async (brokerOptions) => {
            const broker = await Broker.open(brokerOptions);
            for (const [username, password] of Object.entries(users)) {
              if (broker.users.get(username) === null) await broker.users.create({ username, password, permissions: options.sasl?.grants?.[username] ?? allGlobalGrants() });
            }
            return broker;
          },
        }
      : {}),
  });
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopped ??= server
      .stop('test done')
      .then(() => undefined)
      .finally(() => rmSync(dataDir, { recursive: true, force: true }));
    return stopped;
  };
  try {
    await server.ready;
  } catch (err) {
    await stop();
    throw err;
  }
  const address = server.listenerAddresses().get('kafka');
  if (options.kafka !== false && !address) {
    await stop();
    throw new Error('the Kafka listener did not start');
  }
  const host = '127.0.0.1';
  const port = address?.port ?? 0;
  const iggy = server.listenerAddresses().get('iggy');
  return { bootstrap: `${host}:${port}`, host, port, dataDir, broker: server.broker(), server, stop, ...(iggy ? { iggyAddress: `${host}:${iggy.port}` } : {}) };
}

async function startChild(dataDir: string, flags: Record<string, string | boolean>, env: Record<string, string>, logLevel: LogLevel): Promise<StartedBroker> {
  // The command from the TypeScript sources (bin/quartet.js runs dist/, which the suite never needs).
  const args = [join(repoRoot, 'scripts/quartet-from-source.mjs'), 'serve', '--log-level', 'info'];
  for (const [k, v] of Object.entries(flags)) args.push(typeof v === 'boolean' ? `--${k}=${v}` : `--${k}`, ...(typeof v === 'boolean' ? [] : [v]));
  const child: ChildProcess = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`quartet serve did not start: ${buffered.slice(-2000)}`)), 20_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (logLevel === 'debug' || logLevel === 'info') process.stderr.write(`[quartet] ${line}\n`);
        try {
          const rec = JSON.parse(line) as { msg?: string; listener?: string; address?: string };
          if (rec.msg === 'listening' && rec.listener === 'kafka' && rec.address) {
            clearTimeout(timer);
            resolve(Number(rec.address.slice(rec.address.lastIndexOf(':') + 1)));
          }
        } catch {
          // not a log line
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`quartet serve exited with ${code}: ${buffered.slice(-2000)}`));
    });
  });
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }).finally(() => rmSync(dataDir, { recursive: true, force: true }));
    return stopped;
  };
  return { bootstrap: `127.0.0.1:${port}`, host: '127.0.0.1', port, dataDir, broker: null, server: null, stop };
}

export interface ClientAvailability {
  /** Absent client: the reason to pass as `skip` (a string), or false when it is present. */
  skip: string | false;
}

/**
 * Whether a Debian-packaged client is installed. Missing: returns a skip reason with the install
 * hint, or throws when QUARTET_REQUIRE_CLIENTS=1 (CI must not silently skip conformance).
 * `probe` is a command that must exit 0 (e.g. ['kcat', '-V'] or [debianPython, '-c', 'import kafka']).
 */
export function requireClient(name: string, probe: readonly string[], installHint: string): ClientAvailability {
  const [cmd, ...args] = probe;
  const present = cmd !== undefined && (cmd.includes('/') ? existsSync(cmd) : true) && spawnSync(cmd, args, { stdio: 'ignore', timeout: 10_000 }).status === 0;
  if (present) return { skip: false };
  return { skip: missingClient(`${name} is not installed (${installHint})`) };
}

export const kcatClient = (): ClientAvailability => requireClient('kcat', ['kcat', '-V'], 'apt-get install kcat');
/** Debian's interpreter: the python3-kafka and python3-confluent-kafka packages install there, not into a pyenv or venv python3 earlier on PATH. */
export const debianPython = '/usr/bin/python3';

export const kafkaPythonClient = (): ClientAvailability => requireClient('python3-kafka', [debianPython, '-c', 'import kafka'], 'apt-get install python3-kafka');
export const confluentKafkaClient = (): ClientAvailability =>
  requireClient('python3-confluent-kafka', [debianPython, '-c', 'import confluent_kafka'], 'apt-get install python3-confluent-kafka');

/** Runs a command to completion with a timeout; rejects with its stderr on a non-zero exit. */
export function run(cmd: string, args: readonly string[], options: { input?: string | Buffer; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...(options.env ?? {}) }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString();
      const stderr = Buffer.concat(err).toString();
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code ?? signal}\n${stderr}`));
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A broker with the Iggy and Cursus listeners, a Cursus SDK client and a connected Iggy SDK client (as root) on it. */
export interface BrokerWithSdks {
  b: StartedBroker;
  cursus: CursusClient;
  iggy: IggyClient;
  /** Closes both clients and stops the broker. */
  stop(): Promise<void>;
}

export async function startBrokerWithSdks(): Promise<BrokerWithSdks> {
  const b = await startBroker({ flags: { 'iggy-enabled': true, 'cursus-enabled': true } });
  const cursusAddress = b.server!.listenerAddresses().get('cursus');
  assert.ok(cursusAddress, 'the Cursus listener is up');
  assert.ok(b.iggyAddress, 'the Iggy listener is up');
  const cursus = new CursusClient({ addr: `127.0.0.1:${cursusAddress.port}`, reconnect: false, requestTimeoutMs: 10_000 });
  const iggy = new IggyClient({ addr: b.iggyAddress, credentials: { username: 'root', password: 'root-password' }, pingIntervalMs: 0, requestTimeoutMs: 10_000, reconnect: false });
  await iggy.connect();
  return {
    b,
    cursus,
    iggy,
    async stop() {
      await cursus.close();
      await iggy.close();
      await b.stop();
    },
  };
}
