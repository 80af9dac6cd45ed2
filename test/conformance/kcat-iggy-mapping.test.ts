// kcat 1.7.1 and the Iggy SDK (src/clients/iggy) on one server: Iggy stream `s1` / topic `t1` is
// the Kafka topic `s1.t1` (docs/mapping.md). A message sent through Iggy is consumed by
// `kcat -C -t s1.t1`; a record produced by `kcat -P -t s1.t1` is polled through Iggy. `kcat -L`
// lists the topic under that name, and nothing is created in the default namespace. A batch over
// 4 MiB, which the Iggy front-end stores as parts, reaches kcat whole and in order.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IggyClient, headerValue } from '../../src/clients/iggy/index.js';
import { kcatClient, run, startBroker, type StartedBroker } from './helpers.js';

const client = kcatClient();

interface KcatRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  payload: string | null;
}

describe('kcat ↔ iggy through the mapped topic name', { skip: client.skip, timeout: 60_000 }, () => {
  let b: StartedBroker;
  let iggy: IggyClient;
  before(async () => {
    b = await startBroker({ flags: { 'iggy-enabled': true } });
    assert.ok(b.iggyAddress, 'the Iggy listener is up');
    iggy = new IggyClient({ addr: b.iggyAddress, credentials: { username: 'root', password: 'root-password' }, pingIntervalMs: 0, requestTimeoutMs: 10_000, reconnect: false });
    await iggy.connect();
  });
  after(async () => {
    await iggy?.close();
    await b?.stop();
  });

  it('kcat reads what Iggy sent to s1/t1 from s1.t1, and Iggy polls what kcat produced', async () => {
    await iggy.createStream('s1');
    await iggy.createTopic({ streamId: 's1', name: 't1', partitionsCount: 1 });
    await iggy.sendMessages({ streamId: 's1', topicId: 't1', partitioning: { partitionId: 0 }, messages: [{ payload: 'from-iggy', headers: { key: 'k1' } }] });

    const listed = JSON.parse((await run('kcat', ['-b', b.bootstrap, '-L', '-J'])).stdout) as { topics: Array<{ topic: string; partitions: unknown[] }> };
    assert.deepEqual(listed.topics.filter((t) => t.topic.startsWith('s1')).map((t) => [t.topic, t.partitions.length]), [['s1.t1', 1]]);

    const consumed = await run('kcat', ['-b', b.bootstrap, '-C', '-t', 's1.t1', '-e', '-o', 'beginning', '-J', '-q']);
    const records = consumed.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as KcatRecord);
    assert.deepEqual(records.map((r) => [r.topic, r.partition, r.offset, r.key, r.payload]), [['s1.t1', 0, 0, 'k1', 'from-iggy']]);

    await run('kcat', ['-b', b.bootstrap, '-P', '-t', 's1.t1', '-p', '0', '-K:'], { input: 'k2:from-kcat\n' });
    const polled = await iggy.pollMessages({ streamId: 's1', topicId: 't1', partitionId: 0, consumer: { consumer: 1 }, strategy: { offset: 1 }, count: 10 });
    assert.deepEqual(polled.messages.map((m) => [m.offset, m.payload.toString()]), [[1n, 'from-kcat']]);
    // The Kafka key arrives as the Iggy "key" header (raw bytes).
    const key = headerValue(polled.messages[0]!, 'key');
    assert.equal(key?.kind, 'raw');
    assert.equal(key.kind === 'raw' ? key.value.toString() : null, 'k2');
    assert.equal(b.broker!.catalog.getTopic({ namespace: 'default', topic: 's1.t1' }), null, 'kcat created nothing in the default namespace');
  });

  it('kcat reads a batch over 4 MiB that Iggy stored as parts, every message once and in order', async () => {
    await iggy.createStream('s2');
    await iggy.createTopic({ streamId: 's2', name: 'big', partitionsCount: 1 });
    const payloads = Array.from({ length: 3000 }, (_, i) => `${i}:`.padEnd(2000, String.fromCharCode(97 + (i % 26))));
    const sent = await iggy.sendMessages({ streamId: 's2', topicId: 'big', partitioning: { partitionId: 0 }, messages: payloads });
    assert.equal(sent.baseOffset, 0n);
    assert.ok(b.broker!.partition({ namespace: 's2', topic: 'big' }, 0).stats().sizeBytes > 6_000_000);
    const consumed = await run('kcat', ['-b', b.bootstrap, '-C', '-t', 's2.big', '-e', '-o', 'beginning', '-J', '-q']);
    const records = consumed.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as KcatRecord);
    assert.deepEqual(records.map((r) => r.offset), Array.from({ length: 3000 }, (_, i) => i));
    assert.deepEqual(records.map((r) => r.payload), payloads);
  });
});
