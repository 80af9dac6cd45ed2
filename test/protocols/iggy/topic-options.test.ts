import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Topic } from '../../../src/core/catalog.js';
import type { TopicConfig } from '../../../src/core/topic-config.js';
import { IggyErrorCode, option, parseOptionsBlock, u64Max } from '../../../src/protocols/iggy/codec/index.js';
import { IggyFailure } from '../../../src/protocols/iggy/errors.js';
import {
  admitTopicOptions,
  coreConfigFor,
  deserializeTopicOptions,
  parseHumanDuration,
  parseHumanSize,
  patchTopicOptions,
  maxTopicSizeSpread,
  optionsOverCoreConfig,
  serializeTopicOptions,
  topicOptionDefaults,
} from '../../../src/protocols/iggy/topic-options.js';

function code(fn: () => unknown): number {
  try {
    fn();
  } catch (err) {
    if (err instanceof IggyFailure) return err.code;
    throw err;
  }
  return 0;
}

describe('iggy topic options', () => {
  it('admits the golden options vector (enforce_fsync, segment_size)', () => {
    const golden = Buffer.from('020d000000656e666f7263655f6673796e6303010000000102' + '0c000000' + Buffer.from('segment_size').toString('hex') + '0c080000000000004000000000', 'hex');
    const entries = parseOptionsBlock(golden);
    assert.ok(Array.isArray(entries));
    const s = admitTopicOptions(entries, 1);
    assert.equal(s.values.enforce_fsync, true);
    assert.equal(s.values.segment_size, 1024n * 1024n * 1024n);
    assert.deepEqual(s.explicit, ['enforce_fsync', 'segment_size']);
  });

  it('parses durations and sizes', () => {
    assert.equal(parseHumanDuration('7 days'), 7n * 86_400_000_000n);
    assert.equal(parseHumanDuration('1h 30m'), 5_400_000_000n);
    assert.equal(parseHumanDuration('250'), 250n);
    assert.equal(parseHumanDuration('never'), u64Max);
    assert.equal(parseHumanDuration('soon'), null);
    // humantime's units, as the reference server reads them: M is a month (30.44 days), m a minute.
    assert.equal(parseHumanDuration('1M'), 2_630_016_000_000n);
    assert.equal(parseHumanDuration('1m'), 60_000_000n);
    assert.equal(parseHumanDuration('2y'), 2n * 31_557_600_000_000n);
    assert.equal(parseHumanDuration('1 year 1 month'), 31_557_600_000_000n + 2_630_016_000_000n);
    assert.equal(parseHumanDuration('1500ns'), 1n, 'rounded down to whole µs');
    assert.equal(parseHumanDuration('3µs'), 3n);
    assert.equal(parseHumanDuration('7 Days'), 7n * 86_400_000_000n, 'other units in any case');
    assert.equal(parseHumanSize('1 GiB'), 1024n ** 3n);
    assert.equal(parseHumanSize('5MB'), 5_000_000n);
    assert.equal(parseHumanSize('unlimited'), u64Max);
    assert.equal(parseHumanSize('1 GiBs'), null);
    assert.equal(parseHumanSize('1.5 GiB'), 3n * 512n * 1024n ** 2n);
    assert.equal(parseHumanSize('0.5KB'), 500n);
    assert.equal(parseHumanSize('1.'), null);
  });

  it('validates every option and patches only the updatable ones', () => {
    assert.equal(code(() => admitTopicOptions([option('segment_size', { kind: 'uint64', value: 2n * 1024n ** 3n })], 1)), IggyErrorCode.invalidOptionValue);
    assert.equal(code(() => admitTopicOptions([option('size_of_messages_required_to_save', { kind: 'uint64', value: 0n })], 1)), IggyErrorCode.invalidOptionValue);
    assert.equal(code(() => admitTopicOptions([option('nope', { kind: 'bool', value: true })], 1)), IggyErrorCode.unsupportedOptionKey);
    assert.equal(code(() => admitTopicOptions([option('message_expiry', { kind: 'int64', value: -1n })], 1)), IggyErrorCode.invalidOptionValue);
    const s = admitTopicOptions([], 1);
    assert.deepEqual(s.values, topicOptionDefaults);
    const p = patchTopicOptions(s, [option('compression_algorithm', { kind: 'string', value: 'gzip' })]);
    assert.equal(p.values.compression_algorithm, 'gzip');
    // A create-only key in an update is an unsupported key there (4041), as the reference server.
    assert.equal(code(() => patchTopicOptions(s, [option('enforce_fsync', { kind: 'bool', value: true })])), IggyErrorCode.unsupportedOptionKey);
  });

  it('reads 0 as the server default for message_expiry, max_topic_size and segment_size (the ServerDefault sentinel)', () => {
    const zeros = [
      option('message_expiry', { kind: 'uint64', value: 0n }),
      option('max_topic_size', { kind: 'uint64', value: 0n }),
      option('segment_size', { kind: 'string', value: '0' }),
    ];
    const s = admitTopicOptions(zeros, 2);
    assert.deepEqual(s.values, topicOptionDefaults);
    assert.deepEqual(s.explicit, [], 'a sentinel is not an explicit value');
    // In an update the sentinel changes nothing.
    const set = admitTopicOptions([option('message_expiry', { kind: 'uint64', value: 5_000_000n })], 1);
    assert.equal(patchTopicOptions(set, [option('message_expiry', { kind: 'uint64', value: 0n })]).values.message_expiry, 5_000_000n);
    // Other keys keep their rules: 0 is out of range there.
    assert.equal(code(() => admitTopicOptions([option('messages_required_to_save', { kind: 'uint32', value: 0 })], 1)), IggyErrorCode.invalidOptionValue);
  });

  it('takes compression_algorithm by name or by code (1 none, 2 gzip)', () => {
    assert.equal(admitTopicOptions([option('compression_algorithm', { kind: 'uint8', value: 2 })], 1).values.compression_algorithm, 'gzip');
    assert.equal(admitTopicOptions([option('compression_algorithm', { kind: 'uint8', value: 1 })], 1).values.compression_algorithm, 'none');
    assert.equal(admitTopicOptions([option('compression_algorithm', { kind: 'string', value: 'GZIP' })], 1).values.compression_algorithm, 'gzip');
    assert.equal(code(() => admitTopicOptions([option('compression_algorithm', { kind: 'uint8', value: 3 })], 1)), IggyErrorCode.invalidOptionValue);
    assert.equal(code(() => admitTopicOptions([option('compression_algorithm', { kind: 'string', value: 'lz4' })], 1)), IggyErrorCode.invalidOptionValue);
  });

  it('maps onto the core topic config and survives serialization', () => {
    const s = admitTopicOptions([option('max_topic_size', { kind: 'uint64', value: 4n * 1024n ** 3n }), option('message_expiry', { kind: 'uint64', value: 1500n })], 4);
    assert.deepEqual(coreConfigFor(s.values, 4), { 'segment.bytes': 1024 ** 3, 'quartet.fsync.policy': 'interval', 'retention.ms': 2, 'retention.bytes': 1024 ** 3, preallocate: 'false', 'max.message.bytes': 128 * 1024 * 1024, 'quartet.segment.roll': 'after' });
    const preallocated = admitTopicOptions([option('preallocate_segments', { kind: 'bool', value: true })], 4);
    assert.equal(coreConfigFor(preallocated.values, 4).preallocate, 'true');
    assert.deepEqual(deserializeTopicOptions(JSON.parse(JSON.stringify(serializeTopicOptions(s)))), s);
  });
  it('reads each option back from the core config where another protocol changed what it maps to', () => {
    const stored = admitTopicOptions([option('message_expiry', { kind: 'uint64', value: 1_500n }), option('max_topic_size', { kind: 'uint64', value: 3n * 1024n ** 3n })], 3);
    const topicWith = (config: Partial<Record<keyof TopicConfig, unknown>>, partitions = 3): Topic => {
      const merged: Record<string, unknown> = { ...coreConfigFor(stored.values, 3), ...config };
      for (const [k, v] of Object.entries(config)) if (v === undefined) delete merged[k];
      return { internalId: 1, namespaceId: 1, namespace: 'default', id: 0, name: 't', uuid: Buffer.alloc(16, 1), partitions, config: merged as TopicConfig, createdAt: 0 };
    };
    // What the options map to (retention.ms rounded up to 2 ms, 1 GiB per partition): as stored, exactly.
    assert.equal(optionsOverCoreConfig(stored, topicWith({}), {}), stored);
    assert.equal(optionsOverCoreConfig(stored, topicWith({ 'quartet.fsync.policy': 'always' }), {}).values.enforce_fsync, true);
    const moved = optionsOverCoreConfig(stored, topicWith({ 'retention.ms': 60_000, 'segment.bytes': 8 * 1024 * 1024 }), {});
    assert.equal(moved.values.message_expiry, 60_000_000n);
    assert.equal(moved.values.segment_size, 8n * 1024n * 1024n);
    assert.equal(moved.values.max_topic_size, 3n * 1024n ** 3n, 'unchanged');
    assert.deepEqual(moved.explicit, ['message_expiry', 'max_topic_size', 'segment_size']);
    // A key removed from the topic (back to the broker default) reads as derived.
    const reset = optionsOverCoreConfig(stored, topicWith({ 'retention.bytes': undefined }), { 'retention.bytes': 1024 });
    assert.equal(reset.values.max_topic_size, 3072n);
    assert.deepEqual(reset.explicit, ['message_expiry']);
    // The per-partition limit over the partitions; with none there is nothing to read it from.
    assert.equal(optionsOverCoreConfig(stored, topicWith({}, 4), {}).values.max_topic_size, 4n * 1024n ** 3n, 'a count changed without a spread');
    assert.equal(optionsOverCoreConfig(stored, topicWith({ 'retention.bytes': 1024 }, 0), {}).values.max_topic_size, 3n * 1024n ** 3n);
  });

  it('spreads max_topic_size over a new partition count only while the core config holds its spread', () => {
    const mib = 1024 * 1024;
    const sized = admitTopicOptions([option('max_topic_size', { kind: 'uint64', value: 12n * BigInt(mib) }), option('segment_size', { kind: 'uint64', value: BigInt(mib) })], 2);
    const topic = (retentionBytes: number, partitions: number) => ({ partitions, config: { ...coreConfigFor(sized.values, 2), 'retention.bytes': retentionBytes } }) as unknown as Topic;
    assert.deepEqual(maxTopicSizeSpread(sized, topic(6 * mib, 2), {}, 3), { 'retention.bytes': 4 * mib });
    assert.equal(maxTopicSizeSpread(sized, topic(6 * mib, 2), {}, 0), null, 'no partitions left: the last spread stays');
    assert.deepEqual(maxTopicSizeSpread(sized, topic(6 * mib, 0), {}, 4), { 'retention.bytes': 3 * mib }, 'from none: spread again');
    assert.equal(maxTopicSizeSpread(sized, topic(mib, 2), {}, 3), null, 'another protocol set retention.bytes: it stays');
    assert.equal(maxTopicSizeSpread(admitTopicOptions([], 2), topic(-1, 2), {}, 3), null, 'unlimited');
    const derivedOnly = { explicit: [], values: { ...sized.values } };
    assert.equal(maxTopicSizeSpread(derivedOnly, topic(6 * mib, 2), {}, 3), null, 'a size Iggy did not set');
  });
});
