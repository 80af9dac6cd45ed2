// confluent-kafka-python 1.7 (librdkafka 2.0.2, Debian's python3-confluent-kafka, run with
// /usr/bin/python3) AdminClient against Quartet: CreateTopics v4 with configs (accepted, refused
// by the core, refused as a fixed key, unknown key, replication factor 2) and validate_only,
// DescribeConfigs v1 for a topic and for the broker (values, sources, read-only, is_default),
// the legacy AlterConfigs v0 (1.7 has no incremental_alter_configs): the whole set is replaced, so
// the values set at creation go back to their defaults; CreatePartitions v0 and DeleteTopics v1.
// The client side is
// python/confluent_admin.py; this file starts the broker and checks its JSON report.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot, requireClient, run, startBroker, type StartedBroker } from './helpers.js';

// Debian's module lives in the system interpreter; a `python3` earlier on PATH may lack it.
const python = '/usr/bin/python3';
const client = requireClient('python3-confluent-kafka', [python, '-c', 'import confluent_kafka'], 'apt-get install python3-confluent-kafka');

const DYNAMIC_TOPIC_CONFIG = 1;
const STATIC_BROKER_CONFIG = 4;
const DEFAULT_CONFIG = 5;

describe('confluent-kafka-python AdminClient', { skip: client.skip, timeout: 40_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  it('creates with configs, describes, grows and deletes topics with exact results', async () => {
    const { stdout } = await run(python, [join(repoRoot, 'test/conformance/python/confluent_admin.py'), b.bootstrap], { timeoutMs: 30_000 });
    const report = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    assert.deepEqual(report, {
      create: {
        'ck-admin': 'ok',
        'ck-bad-config': [40, 'INVALID_CONFIG'],
        'ck-rf2': [38, 'INVALID_REPLICATION_FACTOR'],
        'ck-unknown-key': [40, 'INVALID_CONFIG'],
      },
      validate_only: { 'ck-dry': 'ok' },
      topics: { 'ck-admin': 3 },
      describe_topic: {
        'retention.ms': ['120000', DYNAMIC_TOPIC_CONFIG, false, false],
        'cleanup.policy': ['compact,delete', DYNAMIC_TOPIC_CONFIG, false, false],
        'retention.bytes': ['-1', DEFAULT_CONFIG, false, true],
        'compression.type': ['producer', DEFAULT_CONFIG, false, true],
        preallocate: ['false', DEFAULT_CONFIG, false, true],
      },
      // 15 honoured keys + 5 fixed ones (docs/kafka-admin.md).
      describe_topic_keys: 20,
      describe_broker: {
        'num.partitions': ['1', STATIC_BROKER_CONFIG, true],
        'default.replication.factor': ['1', DEFAULT_CONFIG, true],
        'log.retention.ms': ['604800000', DEFAULT_CONFIG, true],
      },
      alter: { 'ck-admin': 'ok' },
      alter_refused: { 'ck-admin': [40, 'INVALID_CONFIG'] },
      after_alter: { 'retention.bytes': ['123456', DYNAMIC_TOPIC_CONFIG], 'retention.ms': ['604800000', DEFAULT_CONFIG] },
      create_partitions: { 'ck-admin': 'ok', 'ck-missing': [3, 'UNKNOWN_TOPIC_OR_PART'] },
      topics_grown: { 'ck-admin': 5 },
      delete: { 'ck-admin': 'ok', 'ck-missing': [3, 'UNKNOWN_TOPIC_OR_PART'] },
      topics_after: {},
    });
  });
});
