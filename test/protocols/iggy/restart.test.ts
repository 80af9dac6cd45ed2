// Durability across a broker restart on the same data directory: streams, topics (with their
// Iggy options), users (with permissions), tokens, consumer offsets, consumer groups and
// messages are all there after close + reopen.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { metadataDbPath } from '../../../src/core/metadata-store.js';
import { CommandCode, ConsumerKind, PollingKind, option, parsePolledBatches, polledBuffers, type ParsedBatch } from '../../../src/protocols/iggy/codec/index.js';
import { sendRequest, sid, startIggy } from './harness.js';

describe('iggy restart', () => {
  it('keeps streams, topics, users, tokens, offsets, groups and messages', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quartet-iggy-restart-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    let token = '';
    {
      const h = await startIggy(t, { dataDir });
      const c = await h.root();
      const s = await c.ok(CommandCode.createStream, { name: 'durable', options: [] });
      await c.ok(CommandCode.createTopic, { streamId: sid(s.id), partitionsCount: 2, name: 'events', options: [option('message_expiry', { kind: 'uint64', value: 3_600_000_000n })] });
      await c.ok(CommandCode.sendMessages, sendRequest(sid('durable'), sid('events'), ['one', 'two', 'three'], { kind: 'partitionId', partitionId: 1 }));
      await c.ok(CommandCode.createUser, { username: 'bob', password: 'password-1', status: 1, permissions: { global: { manageServers: false, readServers: true, manageUsers: false, readUsers: false, manageStreams: false, readStreams: true, manageTopics: false, readTopics: false, pollMessages: true, sendMessages: false }, streams: [] }, options: [] });
      token = (await c.ok(CommandCode.createPersonalAccessToken, { name: 'keep', expiry: 0n })).token;
      await c.ok(CommandCode.storeConsumerOffset, { consumer: { kind: ConsumerKind.consumer, id: sid(7) }, streamId: sid('durable'), topicId: sid('events'), partitionId: 1, offset: 1n, ack: 1 });
      await c.ok(CommandCode.createConsumerGroup, { streamId: sid('durable'), topicId: sid('events'), name: 'workers' });
      await h.stop();
    }
    const h = await startIggy(t, { dataDir });
    const bob = await h.client();
    assert.ok('value' in (await bob.login('bob', 'password-1')));
    const viaToken = await h.client();
    assert.ok('value' in (await viaToken.loginWithToken(token)));
    const c = await h.root();
    const topic = await c.ok(CommandCode.getTopic, { streamId: sid('durable'), topicId: sid('events') });
    assert.equal(topic?.partitionsCount, 2);
    assert.equal(topic?.messageExpiry, 3_600_000_000n);
    assert.deepEqual(topic?.explicitOptions.map((o) => o.key), ['message_expiry']);
    assert.equal(topic?.messagesCount, 3n);
    const offset = await c.ok(CommandCode.getConsumerOffset, { consumer: { kind: ConsumerKind.consumer, id: sid(7) }, streamId: sid('durable'), topicId: sid('events'), partitionId: 1 });
    assert.equal(offset?.storedOffset, 1n);
    const polled = await c.ok(CommandCode.pollMessages, { consumer: { kind: ConsumerKind.consumer, id: sid(7) }, streamId: sid('durable'), topicId: sid('events'), partitionId: 1, strategy: { kind: PollingKind.next, value: 0n }, count: 10, autoCommit: false });
    const batches = parsePolledBatches(Buffer.concat(polledBuffers(polled))) as ParsedBatch[];
    assert.deepEqual(batches.flatMap((b) => b.frames.map((f) => f.payload.toString())), ['three']);
    assert.deepEqual((await c.ok(CommandCode.getConsumerGroups, { streamId: sid('durable'), topicId: sid('events') })).map((g) => g.name), ['workers']);
    assert.ok((await bob.ok(CommandCode.getStreams, {})).some((x) => x.name === 'durable'));
    await h.stop(); // before the data directory is removed (after-hooks run in registration order)
  });

  it('a data directory from before the topic options and group id tables keeps its Iggy options and group ids', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quartet-iggy-old-layout-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    {
      const h = await startIggy(t, { dataDir });
      const c = await h.root();
      const s = await c.ok(CommandCode.createStream, { name: 'durable', options: [] });
      await c.ok(CommandCode.createTopic, { streamId: sid(s.id), partitionsCount: 1, name: 'events', options: [option('message_expiry', { kind: 'uint64', value: 3_600_000_000n })] });
      for (const name of ['first', 'second']) await c.ok(CommandCode.createConsumerGroup, { streamId: sid('durable'), topicId: sid('events'), name });
      await c.ok(CommandCode.deleteConsumerGroup, { streamId: sid('durable'), topicId: sid('events'), groupId: sid('second') });
      await h.stop();
    }
    // Back to schema version 2: the options and the next group id as rows of the group store.
    const db = new Database(metadataDbPath(dataDir));
    const put = db.prepare('INSERT INTO groups (scope, group_id, state, updated_at) VALUES (?, ?, ?, 0)');
    for (const r of db.prepare('SELECT * FROM topic_options').all() as Array<{ topic_internal_id: number; options: string }>) put.run('iggy.topic-options', String(r.topic_internal_id), r.options);
    for (const r of db.prepare('SELECT * FROM group_id_counters').all() as Array<{ topic_internal_id: number; next_id: number }>) {
      put.run('iggy', `${r.topic_internal_id}/next`, JSON.stringify({ topicInternalId: r.topic_internal_id, nextGroupId: r.next_id }));
    }
    db.exec('DROP TABLE topic_options; DROP TABLE group_id_counters; DROP TABLE producer_names; DROP TABLE event_snapshots; DROP TABLE client_quotas; DELETE FROM schema_migrations WHERE version >= 3');
    db.close();

    const h = await startIggy(t, { dataDir });
    const c = await h.root();
    const topic = await c.ok(CommandCode.getTopic, { streamId: sid('durable'), topicId: sid('events') });
    assert.equal(topic?.messageExpiry, 3_600_000_000n);
    assert.deepEqual(topic?.explicitOptions.map((o) => o.key), ['message_expiry']);
    const third = await c.ok(CommandCode.createConsumerGroup, { streamId: sid('durable'), topicId: sid('events'), name: 'third' });
    assert.equal(third.id, 2, 'the deleted group id 1 is not given again');
    assert.deepEqual((await c.ok(CommandCode.getConsumerGroups, { streamId: sid('durable'), topicId: sid('events') })).map((g) => [g.id, g.name]), [[0, 'first'], [2, 'third']]);
    await h.stop();
  });
});
