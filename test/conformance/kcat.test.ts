// kcat 1.7.1 (librdkafka 2.0.2, Debian) against Quartet: metadata (-L), produce with every
// compression codec (-P -z, keys with -K, headers with -H) and a plain consumer (-C -e -o
// beginning -J) that must return exactly the records produced: count, per-partition order, keys,
// values, headers. The stored batches are then checked to be kept compressed as sent.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readBatchHeader } from '../../src/protocols/kafka/codec/record-batch.js';
import { grantsOnTopic, kcatClient, run, startBroker, type StartedBroker } from './helpers.js';

const client = kcatClient();
const partitions = 3;
const codecs = [
  { name: 'none', id: 0 },
  { name: 'gzip', id: 1 },
  { name: 'snappy', id: 2 },
  { name: 'lz4', id: 3 },
  { name: 'zstd', id: 4 },
] as const;

interface KcatRecord {
  topic: string;
  partition: number;
  offset: number;
  tstype: string;
  ts: number;
  broker: number;
  headers?: string[];
  key: string | null;
  payload: string | null;
}

function parseJsonLines(text: string): KcatRecord[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as KcatRecord);
}

describe('kcat', { skip: client.skip, timeout: 60_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker({ flags: { 'default-partitions': String(partitions) } });
  });
  after(async () => {
    await b?.stop();
  });

  it('-L lists this broker as the controller, and the topics with their partitions', async () => {
    await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'listed', '-p', '0'], { input: 'x\n' });
    const { stdout } = await run('kcat', ['-b', b.bootstrap, '-L', '-J']);
    const md = JSON.parse(stdout) as {
      controllerid: number;
      brokers: Array<{ id: number; name: string }>;
      topics: Array<{ topic: string; partitions: Array<{ partition: number; leader: number; replicas: Array<{ id: number }>; isrs: Array<{ id: number }> }> }>;
    };
    assert.deepEqual(md.brokers, [{ id: 1, name: `127.0.0.1:${b.port}` }]);
    assert.equal(md.controllerid, 1);
    const topic = md.topics.find((t) => t.topic === 'listed');
    assert.ok(topic, 'auto-created topic listed');
    assert.deepEqual(
      topic.partitions.map((p) => [p.partition, p.leader, p.replicas.map((r) => r.id), p.isrs.map((r) => r.id)]),
      [0, 1, 2].map((p) => [p, 1, [1], [1]]),
    );
  });

  for (const codec of codecs) {
    it(`produces with -z ${codec.name} and reads back exactly the same records`, async () => {
      const topic = `kcat-${codec.name}`;
      const count = 30;
      const lines = Array.from({ length: count }, (_, i) => `key-${i}:value-${i}-${'x'.repeat(i * 7)}`);
      await run('kcat', ['-b', b.bootstrap, '-P', '-t', topic, '-z', codec.name, '-K:', '-H', 'h1=one', '-H', 'h2=two', '-X', 'linger.ms=50'], { input: lines.join('\n') + '\n' });

      const { stdout } = await run('kcat', ['-b', b.bootstrap, '-C', '-t', topic, '-e', '-o', 'beginning', '-J', '-q']);
      const records = parseJsonLines(stdout);
      assert.equal(records.length, count, 'record count');
      const byPartition = new Map<number, KcatRecord[]>();
      for (const r of records) {
        assert.equal(r.topic, topic);
        assert.equal(r.tstype, 'create');
        assert.equal(r.broker, 1);
        assert.deepEqual(r.headers, ['h1', 'one', 'h2', 'two']);
        const i = Number(r.key!.slice('key-'.length));
        assert.equal(r.payload, `value-${i}-${'x'.repeat(i * 7)}`);
        byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), r]);
      }
      assert.deepEqual([...new Set(records.map((r) => r.key))].sort(), lines.map((l) => l.split(':')[0]).sort(), 'every key exactly once');
      for (const [partition, list] of byPartition) {
        assert.ok(partition >= 0 && partition < partitions);
        // Offsets dense from 0, and records in the order they were produced.
        assert.deepEqual(list.map((r) => r.offset), list.map((_, i) => i), `offsets of partition ${partition}`);
        const order = list.map((r) => Number(r.key!.slice(4)));
        assert.deepEqual(order, [...order].sort((x, y) => x - y), `produce order kept in partition ${partition}`);
      }

      // Stored as sent: the batches keep the producer's compression codec. librdkafka sends a batch
      // uncompressed when compressing would not make it smaller (a partition that got only a few
      // short records), so each batch has the codec or none, and some batch has the codec.
      const broker = b.broker!;
      let compressed = 0;
      for (let p = 0; p < partitions; p++) {
        for (const batch of await broker.read({ topic }, p, 0, { maxBytes: 1 << 20 })) {
          const h = readBatchHeader(batch.payload);
          assert.ok(h.compression === codec.id || h.compression === 0, `partition ${p} batch at ${batch.baseOffset}: codec ${h.compression}`);
          assert.equal(h.partitionLeaderEpoch, 0);
          if (h.compression === codec.id) compressed++;
        }
      }
      assert.ok(compressed >= 1, 'at least one batch stored compressed with the codec');
    });
  }

  it('reads records without a key back with a null key, on the partition asked', async () => {
    const topic = 'kcat-nulls';
    await run('kcat', ['-b', b.bootstrap, '-P', '-t', topic, '-p', '1'], { input: 'plain\nsecond\n' });
    const { stdout } = await run('kcat', ['-b', b.bootstrap, '-C', '-t', topic, '-p', '1', '-e', '-o', 'beginning', '-J', '-q']);
    const records = parseJsonLines(stdout);
    assert.deepEqual(
      records.map((r) => [r.offset, r.key, r.payload]),
      [
        [0, null, 'plain'],
        [1, null, 'second'],
      ],
    );
  });
});

describe('kcat with SASL required', { skip: client.skip, timeout: 60_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker({ sasl: { users: { alice: 'alice-secret' } } });
  });
  after(async () => {
    await b?.stop();
  });
  const sasl = (mechanism: string, password: string) => ['-X', 'security.protocol=SASL_PLAINTEXT', '-X', `sasl.mechanisms=${mechanism}`, '-X', 'sasl.username=alice', '-X', `sasl.password=${password}`];

  // librdkafka's SCRAM client sends its client nonce again before the server's in its final
  // message; Kafka accepts that, and so must Quartet.
  for (const mechanism of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']) {
    it(`${mechanism}: authenticates, produces and consumes`, async () => {
      const topic = `kcat-sasl-${mechanism.toLowerCase()}`;
      await run('kcat', ['-b', b.bootstrap, ...sasl(mechanism, 'alice-secret'), '-P', '-t', topic, '-p', '0'], { input: 'one\ntwo\n' });
      const { stdout } = await run('kcat', ['-b', b.bootstrap, ...sasl(mechanism, 'alice-secret'), '-C', '-t', topic, '-o', 'beginning', '-e', '-q']);
      assert.deepEqual(stdout.trim().split('\n'), ['one', 'two']);
    });
  }

  it('a wrong password or no SASL at all gets no metadata', async () => {
    await assert.rejects(run('kcat', ['-b', b.bootstrap, ...sasl('SCRAM-SHA-256', 'wrong'), '-L', '-m', '3']));
    await assert.rejects(run('kcat', ['-b', b.bootstrap, '-L', '-m', '3']));
  });

  it('a user is held to its grants: it sees, writes and reads only the topic it was given', async () => {
    await run('kcat', ['-b', b.bootstrap, ...sasl('PLAIN', 'alice-secret'), '-P', '-t', 'kcat-granted', '-p', '0'], { input: 'g1\n' });
    await run('kcat', ['-b', b.bootstrap, ...sasl('PLAIN', 'alice-secret'), '-P', '-t', 'kcat-secret', '-p', '0'], { input: 's1\n' });
    const broker = b.broker!;
    await broker.users.create({ username: 'bob', password: 'bob-secret', permissions: grantsOnTopic(broker, 'kcat-granted', { pollMessages: true, sendMessages: true }) });
    const bob = ['-b', b.bootstrap, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=SCRAM-SHA-256', '-X', 'sasl.username=bob', '-X', 'sasl.password=bob-secret'];
    const listed = JSON.parse((await run('kcat', [...bob, '-L', '-J', '-m', '5'])).stdout) as { topics: Array<{ topic: string }> };
    assert.deepEqual(listed.topics.map((t) => t.topic), ['kcat-granted']);
    await run('kcat', [...bob, '-P', '-t', 'kcat-granted', '-p', '0'], { input: 'g2\n' });
    const { stdout } = await run('kcat', [...bob, '-C', '-t', 'kcat-granted', '-o', 'beginning', '-e', '-q']);
    assert.deepEqual(stdout.trim().split('\n'), ['g1', 'g2']);
    const write = await run('kcat', [...bob, '-P', '-t', 'kcat-secret', '-p', '0', '-m', '5'], { input: 'nope\n' }).then(() => null, (err: Error) => err);
    assert.match(String(write?.message), /authorization failed/i, 'kcat reports the refusal');
    const read = await run('kcat', [...bob, '-C', '-t', 'kcat-secret', '-o', 'beginning', '-e', '-m', '5']).then(() => null, (err: Error) => err);
    assert.match(String(read?.message), /authorization failed/i);
    const secret = broker.catalog.getTopic({ namespace: 'default', topic: 'kcat-secret' })!;
    assert.equal(broker.partition(secret, 0).stats().highWatermark, 1, 'nothing was appended for bob');
  });
});
