// `quartet iggy send --key K`: the key partitions the messages and is the record key Kafka
// consumers see (the Iggy user header `key`, docs/mapping.md), checked with kcat. Skipped without
// kcat (and failing in CI, QUARTET_REQUIRE_CLIENTS=1), as the conformance tests.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { kcatClient, run, startBroker, type StartedBroker } from '../conformance/helpers.js';

const kcat = kcatClient();

describe('quartet iggy send --key', { skip: kcat.skip, timeout: 60_000 }, () => {
  let broker: StartedBroker;

  before(async () => {
    broker = await startBroker({ flags: { 'iggy-enabled': true } });
    assert.ok(broker.iggyAddress, 'the Iggy listener started');
  });
  after(async () => {
    await broker?.stop();
  });

  async function iggy(argv: string[]): Promise<string> {
    let out = '';
    let err = '';
    const io: CliIo = {
      stdout: (t) => void (out += t),
      stderr: (t) => void (err += t),
      readStdin: async () => '',
      env: { QUARTET_IGGY_ADDR: broker.iggyAddress!, QUARTET_ROOT_PASSWORD: 'root-password' },
      cwd: process.cwd(),
    };
    assert.equal(await main(['iggy', ...argv], io), 0, `quartet iggy ${argv.join(' ')}: ${err}`);
    return out;
  }

  /** key:payload of every record of the Kafka topic's partition, as kcat prints them. */
  async function kcatRead(topic: string, partition: number): Promise<string[]> {
    const { stdout } = await run('kcat', ['-b', broker.bootstrap, '-C', '-t', topic, '-p', String(partition), '-o', 'beginning', '-e', '-q', '-K:', '-f', '%k:%s\\n']);
    return stdout.split('\n').filter((l) => l !== '');
  }

  test('kcat sees the key of every message; other headers stay headers', async () => {
    await iggy(['stream', 'create', 'cli-keys']);
    await iggy(['topic', 'create', 'cli-keys', 'orders', '--partitions', '1']);
    assert.equal(await iggy(['send', 'cli-keys', 'orders', 'first', 'second', '--key', 'customer-7', '--headers', 'source=cli']), 'sent 2 messages to cli-keys/orders\n');
    assert.equal(await iggy(['send', 'cli-keys', 'orders', 'unkeyed']), 'sent 1 message to cli-keys/orders\n');
    // Iggy stream `cli-keys`, topic `orders` is Kafka topic `cli-keys.orders`.
    assert.deepEqual(await kcatRead('cli-keys.orders', 0), ['customer-7:first', 'customer-7:second', ':unkeyed']);
    const { stdout } = await run('kcat', ['-b', broker.bootstrap, '-C', '-t', 'cli-keys.orders', '-p', '0', '-o', 'beginning', '-c', '1', '-e', '-q', '-f', '%h\\n']);
    assert.equal(stdout.trim(), 'source=cli', 'the key is not repeated as a header');
  });

  test('with --partition the messages go there and keep their key', async () => {
    await iggy(['stream', 'create', 'cli-keys-p']);
    await iggy(['topic', 'create', 'cli-keys-p', 't', '--partitions', '3']);
    await iggy(['send', 'cli-keys-p', 't', 'to-two', '--partition', '2', '--key', 'k2']);
    assert.deepEqual(await kcatRead('cli-keys-p.t', 2), ['k2:to-two']);
  });
});
