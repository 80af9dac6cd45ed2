"""confluent-kafka-python 1.7 (librdkafka 2.0.2, Debian python3-confluent-kafka) against the topic
rules Produce applies: the AdminClient creates a compacted topic and one with
compression.type=zstd, message.timestamp.type=LogAppendTime and a timestamp window; a producer
sends one batch to the compacted topic in which some records have no key, a gzip batch to the
zstd topic, and a record far in the past to the windowed one; a consumer reads the zstd topic
back. Prints one JSON object on stdout: each record's delivery error code (0 when delivered),
the error strings, and what the consumer saw.

Usage: confluent_produce_rules.py BOOTSTRAP
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TIMESTAMP_LOG_APPEND_TIME
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
TIMEOUT = 10
out = {}

admin = AdminClient({'bootstrap.servers': bootstrap})
futures = admin.create_topics([
    NewTopic('ck-compact', num_partitions=1, replication_factor=1, config={'cleanup.policy': 'compact'}),
    NewTopic('ck-zstd', num_partitions=1, replication_factor=1, config={
        'compression.type': 'zstd', 'message.timestamp.type': 'LogAppendTime'}),
    NewTopic('ck-window', num_partitions=1, replication_factor=1, config={'message.timestamp.before.max.ms': '60000'}),
])
created = {}
for name, f in sorted(futures.items()):
    try:
        f.result(timeout=TIMEOUT)
        created[name] = 'ok'
    except KafkaException as err:
        created[name] = err.args[0].name()
out['create'] = created


def produce_all(topic, records, conf):
    """Sends records (key, value, timestamp or None) in one batch; returns their delivery outcomes in order."""
    producer = Producer({'bootstrap.servers': bootstrap, 'linger.ms': 200, 'enable.idempotence': False,
                         'retries': 0, 'message.timeout.ms': 10000, **conf})
    outcomes = [None] * len(records)

    def report(i):
        def cb(err, msg):
            outcomes[i] = [0, None] if err is None else [err.code(), err.str()]
        return cb

    for i, (key, value, ts) in enumerate(records):
        extra = {} if ts is None else {'timestamp': ts}
        producer.produce(topic, value=value, key=key, partition=0, on_delivery=report(i), **extra)
    left = producer.flush(15)
    return outcomes if left == 0 else {'undelivered': left}


# Ten records in one batch; 3 and 7 have no key.
records = [(None if i in (3, 7) else f'k{i}', f'v{i}', None) for i in range(10)]
out['compact'] = produce_all('ck-compact', records, {'compression.type': 'none'})

out['zstd'] = produce_all('ck-zstd', [(f'k{i}', f'z{i}', None) for i in range(5)], {'compression.type': 'gzip'})

hour_ago = int(time.time() * 1000) - 3600 * 1000
out['window'] = produce_all('ck-window', [('k0', 'now', None), ('k1', 'old', hour_ago)], {'compression.type': 'none'})

consumer = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'ck-rules', 'auto.offset.reset': 'earliest', 'enable.auto.commit': False})
consumer.subscribe(['ck-zstd'])
seen = []
deadline = time.time() + 15
while len(seen) < 5 and time.time() < deadline:
    msg = consumer.poll(0.5)
    if msg is None or msg.error() is not None:
        continue
    ts_type, ts = msg.timestamp()
    seen.append([msg.value().decode(), ts_type == TIMESTAMP_LOG_APPEND_TIME, abs(ts - time.time() * 1000) < 60000])
consumer.close()
out['zstd_read'] = seen
print(json.dumps(out))
