import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isQuartetError } from '../../src/base/errors.js';
import {
  builtinTopicDefaults,
  describeTopicConfig,
  effectiveTopicConfig,
  mergeTopicConfig,
  parseTopicConfig,
  topicConfigKeys,
  topicConfigProblem,
  toLogConfig,
} from '../../src/core/topic-config.js';
import { defaultLogConfig } from '../../src/log/types.js';

function rejects(input: Record<string, unknown>, pattern: RegExp): void {
  assert.throws(
    () => parseTopicConfig(input),
    (err: unknown) => isQuartetError(err) && err.code === 'invalid_config' && pattern.test(err.message),
    `expected invalid_config matching ${pattern} for ${JSON.stringify(input)}`,
  );
}

test('every key accepts good values, as strings (Kafka) or numbers', () => {
  assert.deepEqual(
    parseTopicConfig({
      'retention.ms': '-1',
      'retention.bytes': 1048576,
      'segment.bytes': '1024',
      'segment.ms': 60000,
      'cleanup.policy': 'delete,compact',
      'max.message.bytes': '1000000',
      'flush.ms': 5,
      'quartet.fsync.policy': 'always',
    }),
    {
      'retention.ms': -1,
      'retention.bytes': 1048576,
      'segment.bytes': 1024,
      'segment.ms': 60000,
      'cleanup.policy': 'compact,delete',
      'max.message.bytes': 1000000,
      'flush.ms': 5,
      'quartet.fsync.policy': 'always',
    },
  );
  assert.equal(parseTopicConfig({ 'cleanup.policy': 'compact' })['cleanup.policy'], 'compact');
  assert.equal(parseTopicConfig({ 'cleanup.policy': ' Compact , Delete ' })['cleanup.policy'], 'compact,delete');
  assert.equal(parseTopicConfig({ 'retention.ms': 0 })['retention.ms'], 0);
  assert.deepEqual([true, 'False', ' TRUE '].map((v) => parseTopicConfig({ preallocate: v }).preallocate), ['true', 'false', 'true']);
});

test('bad values are rejected with invalid_config naming the key and why', () => {
  rejects({ 'retention.ms': -2 }, /^retention\.ms must be between -1/);
  rejects({ 'retention.ms': '7 days' }, /^retention\.ms must be an integer, got "7 days"/);
  rejects({ 'retention.ms': 1.5 }, /^retention\.ms must be an integer/);
  rejects({ 'retention.bytes': -5 }, /^retention\.bytes must be between -1/);
  rejects({ 'retention.bytes': '1e9' }, /^retention\.bytes must be an integer/);
  rejects({ 'segment.bytes': 100 }, /^segment\.bytes must be between 1024/);
  rejects({ 'segment.bytes': 2 ** 31 }, /^segment\.bytes must be between/);
  rejects({ 'segment.ms': 0 }, /^segment\.ms must be between 1/);
  rejects({ 'cleanup.policy': 'forever' }, /^cleanup\.policy must be delete, compact or compact,delete/);
  rejects({ 'cleanup.policy': 3 }, /^cleanup\.policy must be a string/);
  rejects({ 'max.message.bytes': 0 }, /^max\.message\.bytes must be between 1/);
  rejects({ 'max.message.bytes': 2 ** 30 }, /^max\.message\.bytes must be between/);
  rejects({ 'flush.ms': 0 }, /^flush\.ms must be between 1/);
  rejects({ 'flush.ms': 2 ** 31 }, /^flush\.ms must be between/);
  rejects({ 'quartet.fsync.policy': 'sometimes' }, /^quartet\.fsync\.policy must be interval or always/);
  rejects({ preallocate: 'yes' }, /^preallocate must be true or false, got "yes"/);
  rejects({ preallocate: 1 }, /^preallocate must be true or false, got 1/);
  rejects({ 'compression.type': 'brotli' }, /^compression\.type must be one of producer, uncompressed, gzip, snappy, lz4, zstd/);
  rejects({ 'message.timestamp.type': 'createtime' }, /^message\.timestamp\.type must be CreateTime or LogAppendTime/);
  rejects({ 'message.timestamp.before.max.ms': '-1' }, /^message\.timestamp\.before\.max\.ms must be a non-negative integer/);
  rejects({ 'message.timestamp.after.max.ms': '9223372036854775808' }, /^message\.timestamp\.after\.max\.ms must be at most 9223372036854775807/);
  rejects({ 'no.such.key': 1 }, /unknown topic config key 'no\.such\.key'/);
  rejects({ 'retention.ms': null }, /^retention\.ms must be an integer, got null/);
});

test('topicConfigProblem returns a reason instead of throwing', () => {
  assert.equal(topicConfigProblem('segment.ms', '10'), null);
  assert.match(topicConfigProblem('segment.ms', 'x') ?? '', /segment\.ms must be an integer/);
  assert.match(topicConfigProblem('nope', 1) ?? '', /unknown topic config key/);
});

test('effective values: topic over broker defaults over built-in defaults', () => {
  const effective = effectiveTopicConfig({ 'retention.ms': 1000 }, { 'retention.ms': 5, 'segment.bytes': 4096 });
  assert.equal(effective['retention.ms'], 1000);
  assert.equal(effective['segment.bytes'], 4096);
  assert.equal(effective['cleanup.policy'], builtinTopicDefaults['cleanup.policy']);
  const described = describeTopicConfig({ 'retention.ms': 1000 }, { 'segment.bytes': 4096 });
  assert.equal(described.length, topicConfigKeys.length);
  const byKey = Object.fromEntries(described.map((e) => [e.key, e]));
  assert.equal(byKey['retention.ms']!.source, 'topic');
  assert.equal(byKey['segment.bytes']!.source, 'broker');
  assert.equal(byKey['flush.ms']!.source, 'default');
  for (const e of described) assert.ok(e.doc.length > 0);
});

test('merge: null removes a key, replace drops keys not given, and values are validated', () => {
  const current = parseTopicConfig({ 'retention.ms': 10, 'segment.ms': 20 });
  assert.deepEqual(mergeTopicConfig(current, { 'retention.ms': null, 'flush.ms': '7' }), { 'segment.ms': 20, 'flush.ms': 7 });
  assert.deepEqual(mergeTopicConfig(current, { 'flush.ms': 7 }, true), { 'flush.ms': 7 });
  assert.throws(() => mergeTopicConfig(current, { bogus: null }), /unknown topic config key/);
  assert.throws(() => mergeTopicConfig(current, { 'flush.ms': -1 }), /flush\.ms/);
});

test('conversion to the log config', () => {
  assert.deepEqual(toLogConfig({}), { ...defaultLogConfig, maxBatchBytes: builtinTopicDefaults['max.message.bytes'], preallocate: false, segmentRoll: 'before' });
  const log = toLogConfig(
    { 'cleanup.policy': 'compact', 'quartet.fsync.policy': 'always', 'max.message.bytes': 2048, preallocate: 'true', 'quartet.segment.roll': 'after' },
    { 'segment.bytes': 8192, 'retention.bytes': 100000, 'flush.ms': 250, 'segment.ms': 60000, 'retention.ms': 120000 },
  );
  assert.deepEqual(log, {
    segmentBytes: 8192,
    segmentMs: 60000,
    retentionMs: 120000,
    retentionBytes: 100000,
    cleanupPolicy: 'compact',
    fsyncPolicy: 'always',
    fsyncIntervalMs: 250,
    maxBatchBytes: 2048,
    indexIntervalBytes: defaultLogConfig.indexIntervalBytes,
    preallocate: true,
    segmentRoll: 'after',
  });
  assert.throws(() => parseTopicConfig({ 'quartet.segment.roll': 'sideways' }), /before or after/);
});
