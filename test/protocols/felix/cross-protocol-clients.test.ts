// Records crossing between Felix and real clients of the other protocols, on one server (the
// whole server in this process, every listener on a free loopback port): what the Felix SDK
// publishes over QUIC (binary acked batches, keyed and not) is read by kcat (Kafka) and by the
// Iggy SDK (stream `default`, topic of the same name: docs/mapping.md), keys included; and what
// kcat and the Iggy SDK produce reaches a Felix SDK subscription with its offsets (Felix event
// batches carry payloads and offsets, no keys). The kcat parts are skipped without kcat (and fail in CI,
// QUARTET_REQUIRE_CLIENTS=1), as the conformance tests.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FelixClient, type EventBatch } from '../../../src/clients/felix/index.js';
import { IggyClient, headerValue, type IggyMessage } from '../../../src/clients/iggy/index.js';
import { selfSignedCertificateFile } from '../../../src/protocols/felix/listener.js';
import { kcatClient, run, startBroker, type StartedBroker } from '../../conformance/helpers.js';

const kcat = kcatClient();

interface KcatRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  payload: string | null;
}

/** What the Felix client publishes, in offset order: [key, payload]. */
const published: Array<[string | null, string]> = [
  ['fk-1', 'felix keyed one'],
  ['fk-1', 'felix keyed two'],
  [null, 'felix unkeyed'],
];

describe('records across Felix, kcat and the Iggy SDK', { timeout: 90_000 }, () => {
  let b: StartedBroker;
  let felix: FelixClient;
  let iggy: IggyClient;

  before(async () => {
    b = await startBroker({ flags: { 'iggy-enabled': true, 'felix-enabled': true } });
    const port = b.server!.listenerAddresses().get('felix')?.port;
    assert.ok(port, 'the Felix listener is up');
    const ca = readFileSync(join(b.dataDir, 'data', selfSignedCertificateFile), 'utf8');
    felix = new FelixClient({ addr: `127.0.0.1:${port}`, ca, tenantId: 'default', token: 'any', requestTimeoutMs: 10_000 });
    iggy = new IggyClient({ addr: b.iggyAddress!, credentials: { username: 'root', password: 'root-password' }, pingIntervalMs: 0, requestTimeoutMs: 10_000, reconnect: false });
    await iggy.connect();
  });
  after(async () => {
    await felix?.close();
    await iggy?.close();
    await b?.stop();
  });

  /** Publishes `published` to `stream` (one partition, created first) through the SDK: a keyed batch, then an unkeyed record. */
  async function publishThroughFelix(stream: string): Promise<void> {
    await b.broker!.createTopic('default', stream, { partitions: 1 });
    await felix.publisher(stream, { key: 'fk-1' }).sendBatch([published[0]![1], published[1]![1]], { ack: 'per_batch' });
    await felix.publisher(stream).send(published[2]![1]);
  }

  /** [offset, payload] of the first `count` records a Felix SDK subscription from earliest gets. */
  async function subscribeAll(stream: string, count: number): Promise<Array<[number, string]>> {
    const sub = await felix.subscribe(stream, { start: 'earliest' });
    const out: Array<[number, string]> = [];
    sub.on('batch', (batch: EventBatch) => batch.payloads.forEach((p, i) => out.push([Number(batch.baseOffset) + i, p.toString('latin1')])));
    const deadline = Date.now() + 15_000;
    while (out.length < count) {
      if (Date.now() > deadline) throw new Error(`${out.length} of ${count} records`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await sub.close();
    return out;
  }

  /** The Iggy `key` header as text, or null. */
  function iggyKey(m: IggyMessage): string | null {
    const key = headerValue(m, 'key');
    return key === undefined ? null : key.value.toString();
  }

  it('the Iggy SDK polls what Felix published from stream default, keys as the key header', async () => {
    await publishThroughFelix('felix-to-iggy');
    const polled = await iggy.pollMessages({ streamId: 'default', topicId: 'felix-to-iggy', partitionId: 0, consumer: { consumer: 1 }, strategy: { offset: 0 }, count: 10 });
    assert.deepEqual(
      polled.messages.map((m) => [Number(m.offset), iggyKey(m), m.payload.toString()]),
      published.map(([key, payload], i) => [i, key, payload]),
    );
  });

  it('a Felix subscriber gets what the Iggy SDK sent, with its offsets', async () => {
    await b.broker!.createTopic('default', 'iggy-to-felix', { partitions: 1 });
    await iggy.sendMessages({
      streamId: 'default',
      topicId: 'iggy-to-felix',
      partitioning: { partitionId: 0 },
      messages: [{ payload: 'from-iggy keyed', headers: { key: 'ik-1' } }, { payload: 'from-iggy unkeyed' }, { payload: Buffer.from([0, 1, 2, 0xff]) }],
    });
    assert.deepEqual(await subscribeAll('iggy-to-felix', 3), [
      [0, 'from-iggy keyed'],
      [1, 'from-iggy unkeyed'],
      [2, Buffer.from([0, 1, 2, 0xff]).toString('latin1')],
    ]);
  });

  describe('kcat', { skip: kcat.skip }, () => {
    it('kcat reads what Felix published, with keys', async () => {
      await publishThroughFelix('felix-to-kcat');
      const { stdout } = await run('kcat', ['-b', b.bootstrap, '-C', '-t', 'felix-to-kcat', '-p', '0', '-o', 'beginning', '-e', '-J', '-q']);
      const records = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as KcatRecord);
      assert.deepEqual(
        records.map((r) => [r.topic, r.partition, r.offset, r.key, r.payload]),
        published.map(([key, payload], i) => ['felix-to-kcat', 0, i, key, payload]),
      );
    });

    it('a Felix subscriber gets what kcat produced, keyed and not, with its offsets', async () => {
      await b.broker!.createTopic('default', 'kcat-to-felix', { partitions: 1 });
      await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'kcat-to-felix', '-p', '0', '-K:'], { input: 'kk-1:from kcat one\nkk-2:from kcat two\n' });
      await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'kcat-to-felix', '-p', '0'], { input: 'from kcat unkeyed\n' });
      assert.deepEqual(await subscribeAll('kcat-to-felix', 3), [
        [0, 'from kcat one'],
        [1, 'from kcat two'],
        [2, 'from kcat unkeyed'],
      ]);
    });
  });
});
