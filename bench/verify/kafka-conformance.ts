// Kafka topic-config conformance against a running broker, with kafkajs (a real client): topics
// created with compression.type (gzip, snappy, lz4, zstd, uncompressed), LogAppendTime and the
// timestamp limits; records produced uncompressed and with old, current and future timestamps;
// prints what was accepted or refused and what a consumer reads back (value and timestamp).
// Usage: node --import tsx bench/verify/kafka-conformance.ts HOST:PORT
import { Kafka, logLevel } from 'kafkajs';

const broker = process.argv[2]!;
const kafka = new Kafka({ brokers: [broker], clientId: 'verify', logLevel: logLevel.NOTHING, retry: { retries: 0 } });
const admin = kafka.admin();
await admin.connect();
const run = Date.now().toString(36);
const topics: Record<string, Record<string, string>> = {
  gzip: { 'compression.type': 'gzip' },
  snappy: { 'compression.type': 'snappy' },
  lz4: { 'compression.type': 'lz4' },
  zstd: { 'compression.type': 'zstd' },
  uncompressed: { 'compression.type': 'uncompressed' },
  lat: { 'message.timestamp.type': 'LogAppendTime' },
  diff: { 'message.timestamp.difference.max.ms': '60000' },
  before: { 'message.timestamp.before.max.ms': '60000' },
  after: { 'message.timestamp.after.max.ms': '60000' },
};
const name = (k: string): string => `v-${k}-${run}`;
await admin.createTopics({ topics: Object.entries(topics).map(([k, c]) => ({ topic: name(k), numPartitions: 1, configEntries: Object.entries(c).map(([n, value]) => ({ name: n, value })) })) });
const described = await admin.describeConfigs({ resources: Object.keys(topics).map((k) => ({ type: 2, name: name(k), configNames: Object.keys(topics[k]!) })), includeSynonyms: false });
for (const r of described.resources) console.log(`created ${r.resourceName}: ${r.configEntries.map((e) => `${e.configName}=${e.configValue}`).join(', ')}`);

const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: false });
await producer.connect();
const now = Date.now();
async function send(k: string, timestamp: number, label: string): Promise<void> {
  try {
    const r = await producer.send({ topic: name(k), acks: -1, messages: [{ key: 'k', value: `${label}`, timestamp: String(timestamp) }] });
    console.log(`produce ${label} to ${k}: ok, logAppendTime ${r[0]!.logAppendTime}`);
  } catch (err) {
    console.log(`produce ${label} to ${k}: refused ${(err as { type?: string }).type ?? (err as Error).message}`);
  }
}
for (const k of ['gzip', 'snappy', 'lz4', 'zstd', 'uncompressed']) await send(k, now, `value-${k}`);
await send('lat', 1_000_000, 'old-1970');
for (const k of ['diff', 'before', 'after']) {
  await send(k, now - 3_600_000, 'an-hour-old');
  await send(k, now, 'now');
  await send(k, now + 3_600_000, 'an-hour-ahead');
}
await producer.disconnect();

const consumer = kafka.consumer({ groupId: `verify-${run}` });
await consumer.connect();
await consumer.subscribe({ topics: Object.keys(topics).map(name), fromBeginning: true });
const seen: string[] = [];
await consumer.run({ eachMessage: async ({ topic, message }) => void seen.push(`${topic.split('-')[1]}: ${message.value?.toString()} ts=${message.timestamp}${topic.includes('-lat-') ? ` (${Math.abs(Number(message.timestamp) - now) < 60_000 ? 'the append time' : 'NOT the append time'})` : ''}`) });
const deadline = Date.now() + 15_000;
while (seen.length < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
await new Promise((r) => setTimeout(r, 1000));
await consumer.disconnect();
await admin.disconnect();
for (const s of seen.sort()) console.log(`consumed ${s}`);
process.exit(0);
