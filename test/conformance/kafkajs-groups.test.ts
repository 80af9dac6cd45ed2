// KafkaJS 2.2.4 consumer groups against Quartet: JoinGroup/SyncGroup/Heartbeat/LeaveGroup and
// OffsetCommit/OffsetFetch as a real client drives them.
// - Three consumers in one group split a 6-partition topic two partitions each; a fourth joining
//   and then one leaving are observed as rebalances; every produced record is consumed exactly
//   once overall (same keys and values, per partition, no duplicates).
// - Committed offsets are resumed by a new consumer of the group, and again after the broker
//   restarts on the same data directory.
// - A committed offset past the log end is reset to the earliest offset (KafkaJS commits -2).
// Everything waits on events or polls with a deadline; nothing sleeps a fixed time.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type Consumer, type EachMessagePayload } from 'kafkajs';
import { startBroker, type StartedBroker } from './helpers.js';

const deadlineMs = 15_000;

async function waitFor(what: string, condition: () => boolean, timeoutMs = deadlineMs): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function client(bootstrap: string): Kafka {
  return new Kafka({ clientId: 'quartet-groups', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
}

interface Received {
  consumer: string;
  partition: number;
  offset: string;
  key: string;
  value: string;
}

interface Member {
  name: string;
  consumer: Consumer;
  /** The latest assignment (GROUP_JOIN event): partitions of the topic. */
  assigned: number[];
  joins: number;
}

async function startMember(kafka: Kafka, name: string, groupId: string, topic: string, received: Received[]): Promise<Member> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, rebalanceTimeout: 10_000, heartbeatInterval: 200, maxWaitTimeInMs: 100 });
  const member: Member = { name, consumer, assigned: [], joins: 0 };
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    member.assigned = [...(e.payload.memberAssignment[topic] ?? [])].sort((a, b) => a - b);
    member.joins++;
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }: EachMessagePayload) => {
      received.push({ consumer: name, partition, offset: message.offset, key: message.key!.toString(), value: message.value!.toString() });
    },
  });
  return member;
}

/** The members split all partitions, disjointly, with these many partitions each. */
function splitAs(members: Member[], partitions: number, sizes: number[]): boolean {
  const all = members.flatMap((m) => m.assigned);
  const sorted = members.map((m) => m.assigned.length).sort((a, b) => b - a);
  return all.length === partitions && new Set(all).size === partitions && sorted.join() === [...sizes].sort((a, b) => b - a).join();
}

describe('KafkaJS consumer groups', { timeout: 40_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('three consumers split six partitions; a fourth joins, one leaves; every record is consumed exactly once', async () => {
    const topic = 'groups-six';
    const partitions = 6;
    await b.broker!.createTopic('default', topic, { partitions });
    const kafka = client(b.bootstrap);
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const sent: Array<{ partition: number; key: string; value: string }> = [];
    const produce = async (phase: string, count: number): Promise<void> => {
      const messages = Array.from({ length: count }, (_, i) => ({ partition: i % partitions, key: `${phase}-k${i}`, value: `${phase}-v${i}` }));
      sent.push(...messages);
      await producer.send({ topic, acks: -1, messages });
    };
    const received: Received[] = [];
    const members: Member[] = [];
    try {
      for (const name of ['c1', 'c2', 'c3']) members.push(await startMember(kafka, name, 'six', topic, received));
      await waitFor('three consumers with two partitions each', () => splitAs(members, partitions, [2, 2, 2]));

      await produce('one', 60);
      await waitFor('phase one consumed', () => received.length >= sent.length);
      const bySplit = new Map(members.map((m) => [m.name, m.assigned]));
      for (const r of received) assert.ok(bySplit.get(r.consumer)!.includes(r.partition), `${r.consumer} read partition ${r.partition} it was not assigned`);

      const joinsBefore = members.map((m) => m.joins);
      members.push(await startMember(kafka, 'c4', 'six', topic, received));
      await waitFor('four consumers splitting 2/2/1/1', () => splitAs(members, partitions, [2, 2, 1, 1]) && members.slice(0, 3).every((m, i) => m.joins > joinsBefore[i]!));
      await produce('two', 60);
      await waitFor('phase two consumed', () => received.length >= sent.length);

      const leaving = members.shift()!;
      await leaving.consumer.disconnect();
      await waitFor('three consumers again, 2/2/2', () => splitAs(members, partitions, [2, 2, 2]));
      await produce('three', 60);
      await waitFor('phase three consumed', () => received.length >= sent.length);
      // Anything redelivered would show up now.
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      for (const m of members) await m.consumer.disconnect();
      await producer.disconnect();
    }

    assert.equal(received.length, sent.length, 'each record exactly once');
    for (let p = 0; p < partitions; p++) {
      const got = received.filter((r) => r.partition === p).sort((x, y) => Number(x.offset) - Number(y.offset));
      const want = sent.filter((m) => m.partition === p);
      assert.deepEqual(got.map((r) => [r.offset, r.key, r.value]), want.map((m, i) => [String(i), m.key, m.value]), `partition ${p}`);
    }
  });

  it('committed offsets resume after the consumers restart and after the broker restarts', async () => {
    const topic = 'groups-resume';
    const dataDir = mkdtempSync(join(tmpdir(), 'quartet-groups-restart-'));
    let first: StartedBroker | null = await startBroker({ flags: { 'data-dir': dataDir } });
    let second: StartedBroker | null = null;
    try {
      await first.broker!.createTopic('default', topic, { partitions: 3 });
      const consumeNew = async (bootstrap: string, produced: string[]): Promise<string[]> => {
        const kafka = client(bootstrap);
        const producer = kafka.producer({ allowAutoTopicCreation: false });
        await producer.connect();
        await producer.send({ topic, acks: -1, messages: produced.map((value, i) => ({ partition: i % 3, key: value, value })) });
        await producer.disconnect();
        const got: Received[] = [];
        const member = await startMember(kafka, 'resumer', 'resume', topic, got);
        try {
          await waitFor(`${produced.length} records`, () => got.length >= produced.length);
          // Give an (incorrect) replay of older records the chance to arrive.
          await new Promise((resolve) => setTimeout(resolve, 300));
        } finally {
          await member.consumer.disconnect();
        }
        return got.map((r) => r.value);
      };

      const batch1 = Array.from({ length: 9 }, (_, i) => `a${i}`);
      assert.deepEqual((await consumeNew(first.bootstrap, batch1)).sort(), [...batch1].sort());
      const batch2 = Array.from({ length: 6 }, (_, i) => `b${i}`);
      assert.deepEqual((await consumeNew(first.bootstrap, batch2)).sort(), [...batch2].sort(), 'a new consumer resumes from the committed offsets');

      await first.stop();
      first = null;
      second = await startBroker({ flags: { 'data-dir': dataDir } });
      const batch3 = Array.from({ length: 6 }, (_, i) => `c${i}`);
      assert.deepEqual((await consumeNew(second.bootstrap, batch3)).sort(), [...batch3].sort(), 'offsets survive a broker restart');
    } finally {
      await first?.stop();
      await second?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a consumer whose committed offset is past the log end resets to the earliest offset and keeps consuming', async () => {
    // KafkaJS answers OFFSET_OUT_OF_RANGE by committing -2 (its "earliest"): refusing that commit
    // crashed the consumer with a non-retriable error (found with consumers across Iggy purges).
    const topic = 'kjs-reset';
    await b.broker!.createTopic('default', topic, { partitions: 1 });
    const kafka = client(b.bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    await admin.setOffsets({ groupId: 'reset', topic, partitions: [{ partition: 0, offset: '50' }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
    await producer.disconnect();
    const got: Received[] = [];
    const member = await startMember(kafka, 'resetter', 'reset', topic, got);
    let crashed: unknown = null;
    member.consumer.on(member.consumer.events.CRASH, (e) => (crashed = e.payload.error));
    try {
      await waitFor('the 5 records after the reset', () => got.length >= 5 || crashed !== null);
      assert.equal(crashed, null, `the consumer crashed: ${String(crashed)}`);
      assert.deepEqual(got.map((r) => [r.offset, r.value]), [0, 1, 2, 3, 4].map((i) => [String(i), `v${i}`]));
    } finally {
      await member.consumer.disconnect();
    }
  });
});
