// Iggy personal access tokens that have expired, against a running broker: creates one that lives
// 1 s and one that never expires, waits until the first has expired, then lists the tokens, logs in
// with each, and deletes the expired one. Prints each answer.
// Usage: node --import tsx bench/verify/iggy-expired-tokens.ts HOST:PORT USER PASSWORD
import { IggyClient } from '../../src/clients/iggy/index.js';

const [addr, username, password] = process.argv.slice(2) as [string, string, string];
const c = new IggyClient({ addr, credentials: { username, password } });
await c.connect();
const tag = Date.now().toString(36);
const shortLived = await c.createPersonalAccessToken(`short-${tag}`, 1_000_000n);
const forever = await c.createPersonalAccessToken(`forever-${tag}`);
const expiresAt = Date.now() + 1_000;
while (Date.now() < expiresAt + 1_500) await new Promise((r) => setTimeout(r, 100));
const listed = (await c.getPersonalAccessTokens()).filter((t) => t.name.endsWith(tag));
console.log('listed after expiry:', listed.map((t) => `${t.name} expiry=${t.expiryAt} (${t.expiryAt === 0n ? 'never' : new Date(Number(t.expiryAt / 1000n)).toISOString()})`).join('; '));
for (const [name, token] of [['short (expired)', shortLived], ['forever', forever]] as const) {
  const t = new IggyClient({ addr, credentials: { token } });
  try {
    await t.connect();
    console.log(`login with ${name}: ok`);
  } catch (err) {
    console.log(`login with ${name}: refused ${(err as Error).message}`);
  }
  await t.close();
}
try {
  await c.deletePersonalAccessToken(`short-${tag}`);
  console.log('delete expired: ok; listed now:', (await c.getPersonalAccessTokens()).filter((t) => t.name.endsWith(tag)).map((t) => t.name).join(', '));
} catch (err) {
  console.log('delete expired: refused', (err as Error).message);
}
await c.deletePersonalAccessToken(`forever-${tag}`);
await c.close();
process.exit(0);
