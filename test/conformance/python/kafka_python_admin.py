"""kafka-python 2.0.2 (Debian python3-kafka) against Quartet: admin, producer, group consumer.

Usage: kafka_python_admin.py BOOTSTRAP SCENARIO [USER PASSWORD]
  SCENARIO admin      create/list/describe/create-partitions/delete topics
  SCENARIO produce    produce 10 records, consume them with a group, commit, read the commit back
  SCENARIO sasl-plain | sasl-scram-sha-256   the same produce/consume over SASL (SaslHandshake v0,
                      raw tokens) with USER/PASSWORD
  SCENARIO sasl-bad-password MECHANISM       expect the connection to fail authentication
  SCENARIO quota BYTES  produce BYTES of 1 KiB records as client id kp-quota (a producer_byte_rate
                      quota is set on it) and report the elapsed time and produce-throttle-time-max
  SCENARIO acls       alter_configs (AlterConfigs v1) on topic kp-acl, then create_acls /
                      describe_acls / delete_acls (v1) for user alice on it
Prints one JSON object on stdout; the TypeScript test asserts on it.
"""
import json
import sys

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ConfigResource, ConfigResourceType,
                         NewPartitions, NewTopic, ResourcePattern, ResourcePatternFilter, ResourceType)
from kafka.errors import KafkaError

bootstrap, scenario = sys.argv[1], sys.argv[2]
TIMEOUT_MS = 10000


def security(mechanism=None, user=None, password=None):
    if mechanism is None:
        return {}
    return {
        'security_protocol': 'SASL_PLAINTEXT',
        'sasl_mechanism': mechanism,
        'sasl_plain_username': user,
        'sasl_plain_password': password,
    }


def error_name(err):
    return type(err).__name__


def admin_scenario():
    out = {}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id='kp-admin', request_timeout_ms=TIMEOUT_MS)
    try:
        created = admin.create_topics([
            NewTopic('kp-admin', num_partitions=3, replication_factor=1, topic_configs={'retention.ms': '60000', 'cleanup.policy': 'compact'}),
            NewTopic('kp-other', num_partitions=1, replication_factor=1),
        ], timeout_ms=TIMEOUT_MS)
        out['create'] = sorted([name, code] for name, code, *_ in created.topic_errors)
        try:
            admin.create_topics([NewTopic('kp-admin', num_partitions=1, replication_factor=1)], timeout_ms=TIMEOUT_MS)
            out['create_again'] = 'no error'
        except KafkaError as err:
            out['create_again'] = error_name(err)
        try:
            admin.create_topics([NewTopic('kp-rf3', num_partitions=1, replication_factor=3)], timeout_ms=TIMEOUT_MS)
            out['create_rf3'] = 'no error'
        except KafkaError as err:
            out['create_rf3'] = error_name(err)
        out['list'] = sorted(t for t in admin.list_topics() if t.startswith('kp-'))
        described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, 'kp-admin')])
        resources = [r for resp in described for r in resp.resources]
        (error_code, _message, resource_type, resource_name, entries) = resources[0]
        out['describe'] = {
            'error_code': error_code,
            'resource_type': resource_type,
            'resource_name': resource_name,
            # v2 entries: (name, value, read_only, config_source, is_sensitive, synonyms)
            'configs': {e[0]: [e[1], e[2], e[3]] for e in entries if e[0] in ('retention.ms', 'cleanup.policy', 'segment.bytes', 'min.insync.replicas')},
        }
        grown = admin.create_partitions({'kp-admin': NewPartitions(total_count=5)}, timeout_ms=TIMEOUT_MS)
        out['create_partitions'] = [[name, code] for name, code, *_ in grown.topic_errors]
        meta = admin.describe_topics(['kp-admin'])
        out['partitions_after'] = len(meta[0]['partitions'])
        deleted = admin.delete_topics(['kp-admin', 'kp-other'], timeout_ms=TIMEOUT_MS)
        out['delete'] = sorted([name, code] for name, code in deleted.topic_error_codes)
        out['list_after'] = sorted(t for t in admin.list_topics() if t.startswith('kp-'))
    finally:
        admin.close()
    return out


def produce_consume_scenario(topic, group, sec):
    out = {}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id='kp-admin', request_timeout_ms=TIMEOUT_MS, **sec)
    try:
        created = admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)], timeout_ms=TIMEOUT_MS)
        out['create'] = [[name, code] for name, code, *_ in created.topic_errors]
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id='kp-producer', acks='all', request_timeout_ms=TIMEOUT_MS, **sec)
    try:
        futures = [producer.send(topic, key=('k%d' % (i % 2)).encode(), value=('v%d' % i).encode(), partition=i % 2) for i in range(10)]
        producer.flush(timeout=10)
        metas = [f.get(timeout=10) for f in futures]
        out['offsets'] = sorted([m.partition, m.offset] for m in metas)
    finally:
        producer.close(timeout=5)
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        client_id='kp-consumer',
        group_id=group,
        auto_offset_reset='earliest',
        enable_auto_commit=False,
        consumer_timeout_ms=8000,
        **sec,
    )
    try:
        values = []
        for record in consumer:
            values.append(record.value.decode())
            if len(values) == 10:
                break
        out['consumed'] = sorted(values, key=lambda v: int(v[1:]))
        consumer.commit()
        out['committed'] = sorted([p, consumer.committed(TopicPartition(topic, p))] for p in (0, 1))
    finally:
        consumer.close()
    return out


def bad_password_scenario(mechanism):
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=3000, api_version_auto_timeout_ms=3000,
                                 **security(mechanism, 'alice', 'wrong-password'))
        admin.close()
        return {'result': 'connected'}
    except Exception as err:  # NoBrokersAvailable after the failed authentication
        return {'result': error_name(err)}


def acl_text(acl):
    p = acl.resource_pattern
    return [p.resource_type.name, p.resource_name, p.pattern_type.name, acl.principal, acl.host, acl.operation.name, acl.permission_type.name]


def acls_scenario():
    out = {}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id='kp-acl', request_timeout_ms=TIMEOUT_MS)
    try:
        altered = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, 'kp-acl', configs={'retention.ms': '90000'})])
        out['alter_configs'] = [[r[0], r[3]] for r in altered.resources]
        topic = ResourcePattern(ResourceType.TOPIC, 'kp-acl', ACLResourcePatternType.LITERAL)
        created = admin.create_acls([
            ACL('User:alice', '*', ACLOperation.READ, ACLPermissionType.ALLOW, topic),
            ACL('User:alice', '*', ACLOperation.WRITE, ACLPermissionType.DENY, topic),
        ])
        out['created'] = [acl_text(a) for a in created['succeeded']]
        out['refused'] = [[acl_text(a)[5], e.__name__ if isinstance(e, type) else error_name(e)] for a, e in created['failed']]
        every = ACLFilter(principal='User:alice', host='*', operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                          resource_pattern=ResourcePatternFilter(ResourceType.TOPIC, 'kp-acl', ACLResourcePatternType.ANY))
        acls, error = admin.describe_acls(every)
        out['described'] = [acl_text(a) for a in acls]
        deleted = admin.delete_acls([every])
        out['deleted'] = [[acl_text(a) for a, _err in matches] for _filter, matches, _err in deleted]
        out['after_delete'] = [acl_text(a) for a in admin.describe_acls(every)[0]]
    finally:
        admin.close()
    return out


def quota_scenario(total_bytes):
    import time
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id='kp-quota', acks=1, linger_ms=5)
    try:
        value = b'q' * 1024
        started = time.monotonic()
        futures = [producer.send('kp-quota', value) for _ in range(total_bytes // len(value))]
        producer.flush(timeout=60)
        elapsed = time.monotonic() - started
        sent = sum(1 for f in futures if f.succeeded())
        metrics = producer.metrics()['producer-metrics']
        return {'sent': sent, 'elapsed_s': elapsed, 'throttle_max_ms': metrics['produce-throttle-time-max']}
    finally:
        producer.close()


if scenario == 'admin':
    result = admin_scenario()
elif scenario == 'quota':
    result = quota_scenario(int(sys.argv[3]))
elif scenario == 'acls':
    result = acls_scenario()
elif scenario == 'produce':
    result = produce_consume_scenario('kp-data', 'kp-group', {})
elif scenario == 'sasl-plain':
    result = produce_consume_scenario('kp-sasl-plain', 'kp-group-plain', security('PLAIN', sys.argv[3], sys.argv[4]))
elif scenario == 'sasl-scram-sha-256':
    result = produce_consume_scenario('kp-sasl-scram', 'kp-group-scram', security('SCRAM-SHA-256', sys.argv[3], sys.argv[4]))
elif scenario == 'sasl-bad-password':
    result = bad_password_scenario(sys.argv[3])
else:
    raise SystemExit('unknown scenario ' + scenario)
print(json.dumps(result))
