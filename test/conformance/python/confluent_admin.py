"""confluent-kafka-python 1.7 (librdkafka 2.0.2, Debian python3-confluent-kafka) AdminClient
against Quartet: CreateTopics (v4) with configs and validate_only, Metadata, DescribeConfigs (v1)
for a topic and the broker, the legacy AlterConfigs (v0: 1.7 has no incremental_alter_configs,
added in 2.2) replacing a topic's whole set, CreatePartitions (v0), DeleteTopics (v1). Prints one
JSON object on stdout.

Usage: confluent_admin.py BOOTSTRAP
"""
import json
import sys

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

bootstrap = sys.argv[1]
admin = AdminClient({'bootstrap.servers': bootstrap, 'client.id': 'ck-admin'})
TIMEOUT = 10


def outcome(future):
    try:
        future.result(timeout=TIMEOUT)
        return 'ok'
    except KafkaException as err:
        e = err.args[0]
        return [e.code(), e.name()]


def results(futures):
    return {name: outcome(f) for name, f in sorted(futures.items())}


def topics(prefix='ck-'):
    md = admin.list_topics(timeout=TIMEOUT)
    return {name: len(t.partitions) for name, t in sorted(md.topics.items()) if name.startswith(prefix)}


out = {}
out['create'] = results(admin.create_topics([
    NewTopic('ck-admin', num_partitions=3, replication_factor=1, config={'retention.ms': '120000', 'cleanup.policy': 'compact,delete'}),
    NewTopic('ck-bad-config', num_partitions=1, replication_factor=1, config={'min.insync.replicas': '2'}),
    NewTopic('ck-unknown-key', num_partitions=1, replication_factor=1, config={'no.such.key': '1'}),
    NewTopic('ck-rf2', num_partitions=1, replication_factor=2),
], request_timeout=TIMEOUT))
out['validate_only'] = results(admin.create_topics([NewTopic('ck-dry', num_partitions=2, replication_factor=1)], validate_only=True, request_timeout=TIMEOUT))
out['topics'] = topics()

described = admin.describe_configs([ConfigResource('topic', 'ck-admin'), ConfigResource('broker', '1')], request_timeout=TIMEOUT)
for resource, future in described.items():
    entries = future.result(timeout=TIMEOUT)
    if resource.restype == ConfigResource.Type.TOPIC:
        wanted = ('retention.ms', 'cleanup.policy', 'retention.bytes', 'compression.type', 'preallocate')
        out['describe_topic'] = {k: [entries[k].value, entries[k].source, entries[k].is_read_only, entries[k].is_default] for k in wanted}
        out['describe_topic_keys'] = len(entries)
    else:
        wanted = ('num.partitions', 'default.replication.factor', 'log.retention.ms')
        out['describe_broker'] = {k: [entries[k].value, entries[k].source, entries[k].is_read_only] for k in wanted}

altered = admin.alter_configs([ConfigResource('topic', 'ck-admin', set_config={'retention.bytes': '123456'})], request_timeout=TIMEOUT)
out['alter'] = {r.name: outcome(f) for r, f in altered.items()}
refused = admin.alter_configs([ConfigResource('topic', 'ck-admin', set_config={'segment.bytes': '1'})], request_timeout=TIMEOUT)
out['alter_refused'] = {r.name: outcome(f) for r, f in refused.items()}
after_alter = admin.describe_configs([ConfigResource('topic', 'ck-admin')], request_timeout=TIMEOUT)
for resource, future in after_alter.items():
    entries = future.result(timeout=TIMEOUT)
    out['after_alter'] = {k: [entries[k].value, entries[k].source] for k in ('retention.bytes', 'retention.ms')}

out['create_partitions'] = results(admin.create_partitions([NewPartitions('ck-admin', 5), NewPartitions('ck-missing', 2)], request_timeout=TIMEOUT))
out['topics_grown'] = topics()
out['delete'] = results(admin.delete_topics(['ck-admin', 'ck-missing'], request_timeout=TIMEOUT))
out['topics_after'] = topics()
print(json.dumps(out))
