import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocols/kafka/codec/errors.js';
import { zeroUuid } from '../../../../src/protocols/kafka/codec/reader.js';
import { deleteTopicsHandler } from '../../../../src/protocols/kafka/handlers/delete-topics.js';
import { adminHarness } from './admin-harness.js';

describe('DeleteTopics', () => {
  it('deletes by name (v1) and answers UNKNOWN_TOPIC_OR_PARTITION for an unknown one', async (t) => {
    const h = await adminHarness(t, { topics: { a: 2, b: 1 } });
    const res = await h.call(deleteTopicsHandler, 1, { topicNames: ['a', 'nope'], timeoutMs: 1000 });
    assert.deepEqual(res.responses.map((r) => [r.name, r.errorCode]), [
      ['a', 0],
      ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    assert.deepEqual(h.broker.catalog.listTopics().map((tp) => tp.name), ['b']);
  });

  it('carries error messages from v5 and flags names given twice', async (t) => {
    const h = await adminHarness(t, { topics: { a: 1 } });
    const res = await h.call(deleteTopicsHandler, 5, { topicNames: ['a', 'a', 'x'], timeoutMs: 1000 });
    assert.deepEqual(res.responses, [
      { name: 'a', topicId: zeroUuid, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic name.' },
      { name: 'x', topicId: zeroUuid, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'This server does not host this topic-partition.' },
    ]);
    assert.notEqual(h.broker.catalog.getTopic({ topic: 'a' }), null);
  });

  it('deletes by topic id in v6, and refuses unknown ids and ambiguous entries', async (t) => {
    const h = await adminHarness(t, { topics: { a: 1, b: 1 } });
    const a = h.broker.catalog.getTopic({ topic: 'a' })!;
    const unknown = Buffer.alloc(16, 7);
    const res = await h.call(deleteTopicsHandler, 6, {
      topics: [
        { name: null, topicId: a.uuid },
        { name: 'b', topicId: zeroUuid },
        { name: null, topicId: unknown },
        { name: null, topicId: zeroUuid },
        { name: 'b', topicId: unknown },
      ],
      timeoutMs: 1000,
    });
    assert.deepEqual(res.responses, [
      { name: 'a', topicId: a.uuid, errorCode: 0, errorMessage: null },
      { name: 'b', topicId: res.responses[1]!.topicId, errorCode: 0, errorMessage: null },
      { name: null, topicId: unknown, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: 'This server does not host this topic ID.' },
      { name: null, topicId: zeroUuid, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Neither topic name nor id were specified.' },
      { name: 'b', topicId: unknown, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'You may not specify both topic name and topic id.' },
    ]);
    assert.equal(res.responses[1]!.topicId.equals(zeroUuid), false);
    assert.equal(h.broker.catalog.listTopics().length, 0);
  });

  it('lets a deleted name be created again, as a new topic', async (t) => {
    const h = await adminHarness(t, { topics: { a: 1 } });
    const before = h.broker.catalog.getTopic({ topic: 'a' })!;
    await h.call(deleteTopicsHandler, 4, { topicNames: ['a'], timeoutMs: 1000 });
    const again = await h.broker.createTopic('default', 'a', { partitions: 1 });
    assert.equal(again.uuid.equals(before.uuid), false);
    assert.equal(h.broker.partition({ topic: 'a' }, 0).stats().nextOffset, 0);
  });
});
