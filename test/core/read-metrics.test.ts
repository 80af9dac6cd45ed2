// quartet_topic_read_bytes_total / quartet_topic_read_records_total, counted by the read service
// for every front-end: reads through Kafka (kcat), Iggy (the Iggy SDK) and Cursus (the Cursus
// SDK) on one server move their protocol's series by what was served. A topic read in the format
// it was written in is served as stored, so its read bytes equal its appended bytes. The kcat
// part is skipped without kcat (and fails in CI, QUARTET_REQUIRE_CLIENTS=1).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CursusClient } from '../../src/clients/cursus/index.js';
import { IggyClient } from '../../src/clients/iggy/index.js';
import type { CursusRecord } from '../../src/protocols/cursus/codec/batch.js';
import { BatchFormat } from '../../src/base/batch.js';
import type { Topic } from '../../src/core/catalog.js';
import { MetricsRegistry } from '../../src/core/metrics.js';
import { ReadMetrics } from '../../src/core/read-metrics.js';
import { kcatClient, run, startBrokerWithSdks, type BrokerWithSdks, type StartedBroker } from '../conformance/helpers.js';

const kcat = kcatClient();

describe('bytes and records read, per topic and protocol', { timeout: 90_000 }, () => {
  let b: StartedBroker;
  let cursus: CursusClient;
  let iggy: IggyClient;
  let started: BrokerWithSdks | undefined;

  before(async () => {
    started = await startBrokerWithSdks();
    ({ b, cursus, iggy } = started);
  });
  after(() => started?.stop());

  /** The value of a series of `name` with exactly these labels, 0 when absent, as a scrape sees it. */
  async function value(name: string, labels: Record<string, string>): Promise<number> {
    await b.broker!.metrics.collect();
    const key = Object.keys(labels)
      .sort()
      .map((k) => `${k}="${labels[k]}"`)
      .join(',');
    const line = b.broker!.metrics.render().split('\n').find((l) => l.startsWith(`${name}{${key}} `));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  const read = async (topic: string, protocol: string) => ({
    bytes: await value('quartet_topic_read_bytes_total', { namespace: 'default', topic, protocol }),
    records: await value('quartet_topic_read_records_total', { namespace: 'default', topic, protocol }),
  });
  const appendedBytes = (topic: string) => value('quartet_partition_appended_bytes_total', { namespace: 'default', topic, partition: '0' });

  it('Iggy: a poll counts the records and bytes it served', async () => {
    await b.broker!.createTopic('default', 'iggy-reads', { partitions: 1 });
    await iggy.sendMessages({ streamId: 'default', topicId: 'iggy-reads', partitioning: { partitionId: 0 }, messages: [{ payload: 'one' }, { payload: 'two' }, { payload: 'three' }] });
    assert.deepEqual(await read('iggy-reads', 'iggy'), { bytes: 0, records: 0 });
    const poll = (offset: number) => iggy.pollMessages({ streamId: 'default', topicId: 'iggy-reads', partitionId: 0, consumer: { consumer: 1 }, strategy: { offset }, count: 10 });
    assert.equal((await poll(0)).messages.length, 3);
    assert.deepEqual(await read('iggy-reads', 'iggy'), { bytes: await appendedBytes('iggy-reads'), records: 3 });
    // A poll at the end serves nothing and counts nothing.
    assert.equal((await poll(3)).messages.length, 0);
    assert.deepEqual(await read('iggy-reads', 'iggy'), { bytes: await appendedBytes('iggy-reads'), records: 3 });
  });

  it('Cursus: a consume counts the records and bytes it served; another protocol reading the topic has its own series', async () => {
    await cursus.createTopic('cursus-reads', { partitions: 1 });
    const records: CursusRecord[] = ['a', 'b', 'c', 'd'].map((p) => ({ topic: 'cursus-reads', partition: 0, offset: 0, payload: Buffer.from(p) }));
    await cursus.publishBatch({ idempotent: false, topic: 'cursus-reads', partition: 0, acks: 'all', batchStart: 0, batchEnd: 0, records });
    const batch = await cursus.consume({ topic: 'cursus-reads', partition: 0, offset: 0, member: 'read-metrics' });
    assert.equal(batch.records.length, 4);
    assert.deepEqual(await read('cursus-reads', 'cursus'), { bytes: await appendedBytes('cursus-reads'), records: 4 });

    // The Iggy SDK reads the same records, transcoded: counted under iggy, the Cursus series unchanged.
    const polled = await iggy.pollMessages({ streamId: 'default', topicId: 'cursus-reads', partitionId: 0, consumer: { consumer: 1 }, strategy: { offset: 1 }, count: 2 });
    assert.equal(polled.messages.length, 2);
    const iggyRead = await read('cursus-reads', 'iggy');
    assert.equal(iggyRead.records, 2);
    assert.ok(iggyRead.bytes > 0);
    assert.deepEqual(await read('cursus-reads', 'cursus'), { bytes: await appendedBytes('cursus-reads'), records: 4 });
  });

  it('Kafka: a fetch (kcat) counts the batches it served, by their headers', { skip: kcat.skip }, async () => {
    await b.broker!.createTopic('default', 'kafka-reads', { partitions: 1 });
    await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'kafka-reads', '-p', '0'], { input: 'r1\nr2\nr3\nr4\nr5\n' });
    assert.equal(await value('quartet_partition_appended_records_total', { namespace: 'default', topic: 'kafka-reads', partition: '0' }), 5);
    const { stdout } = await run('kcat', ['-b', b.bootstrap, '-C', '-t', 'kafka-reads', '-p', '0', '-o', 'beginning', '-e', '-q']);
    assert.deepEqual(stdout.split('\n').filter((l) => l !== ''), ['r1', 'r2', 'r3', 'r4', 'r5']);
    assert.deepEqual(await read('kafka-reads', 'kafka'), { bytes: await appendedBytes('kafka-reads'), records: 5 });
  });

  it('a deleted topic takes its read series with it', async () => {
    await b.broker!.createTopic('default', 'gone-reads', { partitions: 1 });
    await iggy.sendMessages({ streamId: 'default', topicId: 'gone-reads', partitioning: { partitionId: 0 }, messages: [{ payload: 'x' }] });
    await iggy.pollMessages({ streamId: 'default', topicId: 'gone-reads', partitionId: 0, consumer: { consumer: 1 }, strategy: { offset: 0 }, count: 10 });
    assert.equal((await read('gone-reads', 'iggy')).records, 1);
    await b.broker!.deleteTopic({ namespace: 'default', topic: 'gone-reads' });
    await b.broker!.metrics.collect();
    assert.doesNotMatch(b.broker!.metrics.render(), /topic="gone-reads"/);
  });
});

describe('ReadMetrics', () => {
  const topic = (name: string) => ({ internalId: 7, namespace: 'shop', name }) as Topic;

  it('sums reads until a scrape collects them, per format; a dropped topic (renamed) counts no more under its old name', async () => {
    const metrics = new MetricsRegistry();
    const reads = new ReadMetrics(metrics);
    const series = reads.of(topic('events'));
    assert.equal(reads.of(topic('events')), series, 'one series object per topic');
    series.count(BatchFormat.kafka, 100, 3);
    series.count(BatchFormat.kafka, 50, 2);
    series.count(BatchFormat.iggy, 10, 1);
    series.count(BatchFormat.iggy, 0, 0);
    await metrics.collect();
    const text = metrics.render();
    assert.match(text, /^quartet_topic_read_bytes_total\{namespace="shop",protocol="kafka",topic="events"\} 150$/m);
    assert.match(text, /^quartet_topic_read_records_total\{namespace="shop",protocol="kafka",topic="events"\} 5$/m);
    assert.match(text, /^quartet_topic_read_records_total\{namespace="shop",protocol="iggy",topic="events"\} 1$/m);
    await metrics.collect();
    assert.match(metrics.render(), /^quartet_topic_read_records_total\{namespace="shop",protocol="kafka",topic="events"\} 5$/m, 'a second scrape adds nothing');

    reads.drop(7);
    series.count(BatchFormat.kafka, 100, 3); // a read that began under the old name
    reads.of(topic('orders')).count(BatchFormat.kafka, 1, 1);
    await metrics.collect();
    assert.doesNotMatch(metrics.render(), /topic="events"/);
    assert.match(metrics.render(), /^quartet_topic_read_records_total\{namespace="shop",protocol="kafka",topic="orders"\} 1$/m);
  });
});
