"""confluent-kafka-python 1.7 (librdkafka 2.0.2): idempotence and transactions against Quartet.

Usage: confluent_transactions.py BOOTSTRAP IDEM_TOPIC IDEM_COUNT IN_TOPIC OUT_TOPIC GROUP TXN_ID

1. An idempotent producer (enable.idempotence) sends IDEM_COUNT records to IDEM_TOPIC (partition i % 2).
2. A consume-transform-produce loop: a group member of GROUP reads the first 5 records of IN_TOPIC;
   a transactional producer (TXN_ID) then runs
     T1: c1-0..9 to OUT_TOPIC + send_offsets_to_transaction(IN_TOPIC/0 -> 5, the member's
         group metadata) -> commit
     T2: a-0..9 -> flushed (in the log), then abort
     T3: open-0..4 -> flushed, left open while a read_committed consumer reads OUT_TOPIC
         (rc_open), then aborted
     T4: c2-0..4 -> commit
   then a fresh read_committed consumer (rc_final) and a read_uncommitted one (ru_final) read
   OUT_TOPIC from the beginning, and the group's committed offset is read back.
Records go to partition i % 2. Consumers read until they have the expected count, then keep
polling IDLE_S more to catch anything extra. Prints one JSON report; the Node test checks it.
"""

import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition, OFFSET_BEGINNING

DEADLINE_S = 30.0
IDLE_S = 1.0


def main():
    bootstrap, idem_topic, idem_count, in_topic, out_topic, group, txn_id = sys.argv[1:8]
    idem_count = int(idem_count)
    started = time.monotonic()

    def out_of_time():
        return time.monotonic() - started > DEADLINE_S

    # 1. Idempotent producer.
    idem = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 2, "batch.num.messages": 17})
    for i in range(idem_count):
        idem.produce(idem_topic, value=f"idem-{i}", partition=i % 2)
        if i % 50 == 0:
            idem.poll(0)
    if idem.flush(15) != 0:
        raise SystemExit("idempotent produce did not complete")

    # 2. The input side: a group member reads the first 5 records of IN_TOPIC.
    src = Producer({"bootstrap.servers": bootstrap})
    for i in range(8):
        src.produce(in_topic, value=f"in-{i}", partition=0)
    if src.flush(10) != 0:
        raise SystemExit("input produce did not complete")
    member = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 10000,
        "heartbeat.interval.ms": 300,
    })
    member.subscribe([in_topic])
    consumed = []
    while len(consumed) < 5:
        msg = member.poll(0.1)
        if out_of_time():
            raise SystemExit(f"input consume: {consumed}")
        if msg is None:
            continue
        if msg.error():
            raise SystemExit(f"input consume: {msg.error()}")
        consumed.append(msg.value().decode())

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 2})
    producer.init_transactions(15)

    def txn(prefix, count, end, offsets=False):
        producer.begin_transaction()
        for i in range(count):
            producer.produce(out_topic, value=f"{prefix}-{i}", partition=i % 2)
        if offsets:
            producer.send_offsets_to_transaction([TopicPartition(in_topic, 0, 5)], member.consumer_group_metadata(), 15)
        if end == "commit":
            producer.commit_transaction(15)
        elif end == "abort":
            # Flush first: abort_transaction purges records still queued in the client, and the
            # point is that aborted records reach the log and are filtered by readers.
            if producer.flush(15) != 0:
                raise SystemExit("aborted transaction: flush did not complete")
            producer.abort_transaction(15)
        else:
            if producer.flush(15) != 0:
                raise SystemExit("open transaction: flush did not complete")

    def read(isolation, expected):
        c = Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{isolation}-{time.monotonic_ns()}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
        })
        c.assign([TopicPartition(out_topic, p, OFFSET_BEGINNING) for p in (0, 1)])
        got = []
        idle_until = None
        while True:
            msg = c.poll(0.05)
            if msg is not None:
                if msg.error():
                    raise SystemExit(f"{isolation}: {msg.error()}")
                got.append([msg.partition(), msg.offset(), msg.value().decode()])
            if len(got) >= expected and idle_until is None:
                idle_until = time.monotonic() + IDLE_S
            if idle_until is not None and time.monotonic() > idle_until:
                break
            if out_of_time():
                raise SystemExit(f"{isolation}: expected {expected}, got {got}")
        c.close()
        return got

    txn("c1", 10, "commit", offsets=True)
    txn("a", 10, "abort")
    txn("open", 5, "open")
    rc_open = read("read_committed", 10)
    producer.abort_transaction(15)
    txn("c2", 5, "commit")
    rc_final = read("read_committed", 15)
    ru_final = read("read_uncommitted", 30)

    committed = member.committed([TopicPartition(in_topic, 0)], 10)
    member.close()
    print(json.dumps({
        "consumedInput": consumed,
        "committedOffset": committed[0].offset,
        "rcOpen": rc_open,
        "rcFinal": rc_final,
        "ruFinal": ru_final,
    }))


if __name__ == "__main__":
    try:
        main()
    except KafkaException as e:
        raise SystemExit(f"KafkaException: {e}")
