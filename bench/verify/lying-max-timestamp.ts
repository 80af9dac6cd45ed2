// A Kafka Produce v9 whose batch claims a maxTimestamp (1 ms after the epoch, and a day ahead)
// that none of its records has, sent raw to a running broker; prints what the broker answers.
// Read the stored batch back with `quartet log dump ... --json` (maxTimestamp).
// Usage: node --import tsx bench/verify/lying-max-timestamp.ts HOST:PORT TOPIC
import { connect } from 'node:net';
import { ApiKey } from '../../src/protocols/kafka/codec/api-keys.js';
import { decodeResponse, encodeRequest } from '../../src/protocols/kafka/codec/frames.js';
import { buildRecordBatch } from '../../src/protocols/kafka/codec/record-batch.js';

const [addr, topic] = process.argv.slice(2) as [string, string];
const now = Date.now();
const socket = connect({ host: addr.slice(0, addr.lastIndexOf(':')), port: Number(addr.slice(addr.lastIndexOf(':') + 1)) });
await new Promise((resolve) => socket.once('connect', resolve));
let buf = Buffer.alloc(0);
socket.on('data', (d: Buffer) => (buf = Buffer.concat([buf, d])));
for (const [i, lie] of [1, now + 86_400_000].entries()) {
  const records = buildRecordBatch([0, 1, 2].map((j) => ({ timestamp: now + j * 10, key: Buffer.from(`k${j}`), value: Buffer.from(`v${j}`), headers: [] })), { partitionLeaderEpoch: -1, maxTimestamp: lie });
  const body = { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] };
  for (const c of encodeRequest(ApiKey.Produce, 9, i + 1, 'lying', body as never)) socket.write(c);
  const deadline = Date.now() + 5000;
  while ((buf.length < 4 || buf.length < 4 + buf.readInt32BE(0)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const frame = buf.subarray(4, 4 + buf.readInt32BE(0));
  buf = buf.subarray(4 + frame.length);
  const r = decodeResponse(ApiKey.Produce, 9, frame);
  console.log(`claimed maxTimestamp ${lie}, records at ${now}..${now + 20}:`, JSON.stringify(r.ok ? r.body.responses[0]!.partitionResponses[0] : r, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
}
socket.destroy();
console.log(`expected stored maxTimestamp: ${now + 20}`);
