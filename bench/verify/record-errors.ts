// KIP-467 against a running broker with a real client (@platformatic/kafka, Produce v9+; npm run
// peers): one batch of 6 records to a compacted topic where records 1 and 4 have no key. Prints
// the batch indexes and messages the client reports.
// Usage: node --import tsx bench/verify/record-errors.ts HOST:PORT COMPACTED-TOPIC
import { loadPlatformaticKafka } from '../../test/peers/platformatic-kafka.js';

const [bootstrap, topic] = process.argv.slice(2) as [string, string];
const k = await loadPlatformaticKafka();
if (k === null) throw new Error('npm run peers first');
const producer = new k.Producer({ clientId: 'verify', bootstrapBrokers: [bootstrap], serializers: k.stringSerializers, autocreateTopics: false, retries: 0 });
try {
  await producer.send({ messages: Array.from({ length: 6 }, (_, i) => ({ topic, partition: 0, ...(i === 1 || i === 4 ? {} : { key: `k${i}` }), value: `v${i}` })), acks: k.ProduceAcks.LEADER });
  console.log('accepted (unexpected)');
} catch (err) {
  const found: string[] = [];
  const walk = (e: unknown, depth: number): void => {
    if (!(e instanceof Error) || depth > 4) return;
    const x = e as Error & { errors?: unknown[]; serverErrorMessage?: string; response?: { responses?: { partitionResponses?: { errorCode: number; errorMessage?: string; recordErrors?: { batchIndex: number; batchIndexErrorMessage?: string }[] }[] }[] } };
    for (const r of x.response?.responses ?? []) for (const p of r.partitionResponses ?? []) found.push(`error_code ${p.errorCode}, error_message ${JSON.stringify(p.errorMessage)}, record_errors ${JSON.stringify(p.recordErrors)}`);
    for (const c of x.errors ?? []) walk(c, depth + 1);
  };
  walk(err, 0);
  console.log([...new Set(found)].join('\n') || String(err));
} finally {
  await producer.close();
}
