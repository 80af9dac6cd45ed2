// Records crossing between Cursus and real clients of the other protocols, on one server (the
// whole server in this process, every listener on a free loopback port): what the Cursus SDK
// publishes (a CRQ2 text PUBLISH and a CBV2 batch, keyed and not) is read by kcat (Kafka) and by
// the Iggy SDK (stream `default`, topic of the same name: docs/mapping.md), and what kcat and the
// Iggy SDK produce is consumed through the Cursus SDK, keys and payloads intact. The kcat parts
// are skipped without kcat (and fail in CI, QUARTET_REQUIRE_CLIENTS=1), as the conformance tests.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CursusClient } from '../../../src/clients/cursus/index.js';
import { IggyClient, headerValue, type IggyMessage } from '../../../src/clients/iggy/index.js';
import type { CursusRecord } from '../../../src/protocols/cursus/codec/batch.js';
import { kcatClient, run, startBrokerWithSdks, type BrokerWithSdks, type StartedBroker } from '../../conformance/helpers.js';

const kcat = kcatClient();

interface KcatRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  payload: string | null;
}

/** What the Cursus SDK publishes to `topic`, in offset order: [key, payload]. */
const published: Array<[string | null, string]> = [
  ['k-text', 'text message=with spaces'],
  ['k-batch-1', 'cbv2 one'],
  [null, 'cbv2 unkeyed'],
  ['k-batch-2', 'cbv2 two'],
];

async function publishThroughCursus(cursus: CursusClient, topic: string): Promise<void> {
  await cursus.createTopic(topic, { partitions: 1 });
  const text = await cursus.publish(topic, published[0]![1], { key: published[0]![0]!, partition: 0, acks: 'all' });
  assert.equal(text?.lastOffset, 0);
  const records: CursusRecord[] = published.slice(1).map(([key, payload]) => ({ topic, partition: 0, offset: 0, payload: Buffer.from(payload), ...(key === null ? {} : { key: Buffer.from(key) }) }));
  const batch = await cursus.publishBatch({ idempotent: false, topic, partition: 0, acks: 'all', batchStart: 0, batchEnd: 0, records });
  assert.equal(batch?.lastOffset, 3);
}

/** Every record of partition 0, from the start to the end, as kcat -J prints them. */
async function kcatRead(bootstrap: string, topic: string): Promise<KcatRecord[]> {
  const { stdout } = await run('kcat', ['-b', bootstrap, '-C', '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-J', '-q']);
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as KcatRecord);
}

/** The Iggy `key` header as text (the Kafka key travels as a raw header), or null. */
function iggyKey(m: IggyMessage): string | null {
  const key = headerValue(m, 'key');
  if (key === undefined) return null;
  assert.ok(key.kind === 'raw' || key.kind === 'string', `key header kind ${key.kind}`);
  return key.value.toString();
}

/** [offset, key, payload (latin1: every byte kept)] of every record CONSUME returns from offset 0. */
async function consumeAll(cursus: CursusClient, topic: string): Promise<Array<[number, string | null, string]>> {
  const batch = await cursus.consume({ topic, partition: 0, offset: 0, member: 'cross-test' });
  return batch.records.map((r) => [r.offset, r.key?.toString() ?? null, r.payload.toString('latin1')]);
}

describe('records across Cursus, kcat and the Iggy SDK', { timeout: 90_000 }, () => {
  let b: StartedBroker;
  let cursus: CursusClient;
  let iggy: IggyClient;
  let started: BrokerWithSdks | undefined;

  before(async () => {
    started = await startBrokerWithSdks();
    ({ b, cursus, iggy } = started);
  });
  after(() => started?.stop());

  it('the Iggy SDK polls what the Cursus SDK published (text and CBV2) from stream default, keys as the key header', async () => {
    await publishThroughCursus(cursus, 'cursus-to-iggy');
    const polled = await iggy.pollMessages({ streamId: 'default', topicId: 'cursus-to-iggy', partitionId: 0, consumer: { consumer: 1 }, strategy: { offset: 0 }, count: 10 });
    assert.deepEqual(
      polled.messages.map((m) => [Number(m.offset), iggyKey(m), m.payload.toString()]),
      published.map(([key, payload], i) => [i, key, payload]),
    );
  });

  it('the Cursus SDK consumes what the Iggy SDK sent to stream default, the key header as the record key', async () => {
    await cursus.createTopic('iggy-to-cursus', { partitions: 1 });
    await iggy.sendMessages({
      streamId: 'default',
      topicId: 'iggy-to-cursus',
      partitioning: { partitionId: 0 },
      messages: [{ payload: 'from-iggy keyed', headers: { key: 'ik-1' } }, { payload: 'from-iggy unkeyed' }, { payload: Buffer.from([0, 1, 2, 0xff]), headers: { key: 'ik-2' } }],
    });
    assert.deepEqual(await consumeAll(cursus, 'iggy-to-cursus'), [
      [0, 'ik-1', 'from-iggy keyed'],
      [1, null, 'from-iggy unkeyed'],
      [2, 'ik-2', Buffer.from([0, 1, 2, 0xff]).toString('latin1')],
    ]);
  });

  describe('kcat', { skip: kcat.skip }, () => {
    it('kcat reads what the Cursus SDK published (text and CBV2), with keys', async () => {
      await publishThroughCursus(cursus, 'cursus-to-kcat');
      const records = await kcatRead(b.bootstrap, 'cursus-to-kcat');
      assert.deepEqual(
        records.map((r) => [r.topic, r.partition, r.offset, r.key, r.payload]),
        published.map(([key, payload], i) => ['cursus-to-kcat', 0, i, key, payload]),
      );
    });

    it('the Cursus SDK consumes what kcat produced, keyed and not', async () => {
      await cursus.createTopic('kcat-to-cursus', { partitions: 1 });
      await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'kcat-to-cursus', '-p', '0', '-K:'], { input: 'kk-1:from kcat one\nkk-2:from kcat two\n' });
      await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'kcat-to-cursus', '-p', '0'], { input: 'from kcat unkeyed\n' });
      assert.deepEqual(await consumeAll(cursus, 'kcat-to-cursus'), [
        [0, 'kk-1', 'from kcat one'],
        [1, 'kk-2', 'from kcat two'],
        [2, null, 'from kcat unkeyed'],
      ]);
    });

    it('a record crosses all three: Iggy sends, kcat reads it, Cursus reads what kcat sent back', async () => {
      await cursus.createTopic('three-ways', { partitions: 1 });
      await iggy.sendMessages({ streamId: 'default', topicId: 'three-ways', partitioning: { partitionId: 0 }, messages: [{ payload: 'hop-1', headers: { key: 'hk' } }] });
      const [first] = await kcatRead(b.bootstrap, 'three-ways');
      assert.deepEqual([first?.key, first?.payload], ['hk', 'hop-1']);
      await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'three-ways', '-p', '0', '-K:'], { input: `${first!.key}:${first!.payload}-back\n` });
      assert.deepEqual(await consumeAll(cursus, 'three-ways'), [
        [0, 'hk', 'hop-1'],
        [1, 'hk', 'hop-1-back'],
      ]);
    });
  });
});
