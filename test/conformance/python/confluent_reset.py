"""confluent-kafka-python 1.7 (librdkafka 2.0.2): a consumer whose position is past the log end resets.

Usage: confluent_reset.py BOOTSTRAP TOPIC

Produces 5 records to partition 0, then assigns partition 0 at offset 100 (past the end) with
auto.offset.reset=earliest: the fetch there is answered OFFSET_OUT_OF_RANGE, librdkafka resets to
the earliest offset and reads the 5 records. Prints one JSON object: the records read, as
[offset, value]. Every wait polls with a deadline.
"""

import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition

DEADLINE_S = 15.0


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(5):
        producer.produce(topic, value=f"v{i}", partition=0)
    if producer.flush(10) != 0:
        raise SystemExit("produce did not complete")
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "confluent-reset", "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 100)])
    started = time.monotonic()
    records = []
    while len(records) < 5:
        if time.monotonic() - started > DEADLINE_S:
            raise SystemExit(f"read {len(records)} of 5 records after the reset")
        msg = c.poll(0.1)
        if msg is None:
            continue
        if msg.error():
            raise SystemExit(str(msg.error()))
        records.append([msg.offset(), msg.value().decode()])
    c.close()
    print(json.dumps({"records": records}))


main()
