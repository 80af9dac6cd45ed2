"""confluent-kafka-python 1.7 (librdkafka 2.0.2) consumer group against Quartet.

Usage: confluent_groups.py BOOTSTRAP TOPIC PARTITIONS GROUP

Two consumers join one group and split the topic's partitions; once both have consumed the first
batch, the second one closes (commits, LeaveGroup) and the first must take over every partition
and consume a second batch. Prints one JSON object: the assignments seen and every record read,
as [consumer, partition, offset, key, value, owned by the reader then]. The Node test (../confluent-groups.test.ts) checks
it. Every wait polls with a deadline.
"""

import json
import sys
import time

from confluent_kafka import Consumer, Producer

DEADLINE_S = 25.0


def main():
    bootstrap, topic, partitions, group = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    started = time.monotonic()
    records = []
    assigned = {"c1": [], "c2": []}

    def out_of_time():
        return time.monotonic() - started > DEADLINE_S

    def produce(phase, count):
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        for i in range(count):
            producer.produce(topic, key=f"{phase}-k{i}", value=f"{phase}-v{i}", partition=i % partitions)
        if producer.flush(10) != 0:
            raise SystemExit("produce did not complete")

    def consumer(name):
        def on_assign(c, parts):
            assigned[name] = sorted(p.partition for p in parts)

        def on_revoke(c, parts):
            assigned[name] = []

        c = Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": name,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
            "session.timeout.ms": 10000,
            "heartbeat.interval.ms": 300,
        })
        c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
        return c

    def poll(name, c):
        msg = c.poll(0.05)
        if msg is None:
            return
        if msg.error():
            raise SystemExit(f"{name}: {msg.error()}")
        owned = msg.partition() in assigned[name]
        records.append([name, msg.partition(), msg.offset(), msg.key().decode(), msg.value().decode(), owned])

    produce("one", 40)
    c1, c2 = consumer("c1"), consumer("c2")
    split = None
    while True:
        poll("c1", c1)
        poll("c2", c2)
        both = assigned["c1"] and assigned["c2"]
        if both and split is None:
            split = {"c1": list(assigned["c1"]), "c2": list(assigned["c2"])}
        if both and len(records) >= 40:
            break
        if out_of_time():
            raise SystemExit(f"phase one: assigned={assigned} records={len(records)}")
    split = {"c1": list(assigned["c1"]), "c2": list(assigned["c2"])}

    c2.close()
    while len(assigned["c1"]) != partitions:
        poll("c1", c1)
        if out_of_time():
            raise SystemExit(f"rebalance after leave: assigned={assigned}")
    after_leave = list(assigned["c1"])

    produce("two", 20)
    while len(records) < 60:
        poll("c1", c1)
        if out_of_time():
            raise SystemExit(f"phase two: records={len(records)}")
    # Let a wrong replay of committed records surface.
    until = time.monotonic() + 0.5
    while time.monotonic() < until:
        poll("c1", c1)
    c1.close()
    print(json.dumps({"split": split, "afterLeave": after_leave, "records": records}))


if __name__ == "__main__":
    main()
