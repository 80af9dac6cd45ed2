// One Iggy SendMessages of COUNT x 1 KiB (default 500) to stream default, topic fill, partition 0;
// prints the answer (ok, or the error code and message). For checking a broker on a full disk.
// Usage: node --import tsx bench/verify/iggy-send-full.ts HOST:PORT USER PASSWORD
import { IggyClient } from '../../src/clients/iggy/index.js';

const [addr, username, password] = process.argv.slice(2) as [string, string, string];
const c = new IggyClient({ addr, credentials: { username, password } });
await c.connect();
const count = Number(process.env['COUNT'] ?? 500);
try {
  const r = await c.sendMessages({ streamId: 'default', topicId: 'fill', partitioning: { partitionId: 0 }, messages: Array.from({ length: count }, () => Buffer.alloc(1024, 0x61)) });
  console.log('sent', count, JSON.stringify(r, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
} catch (err) {
  console.log('refused:', (err as Error).message, 'code', (err as { code?: unknown }).code);
}
await c.close();
process.exit(0);
