// The Iggy SDK package (packages/iggy, @quartet/iggy) as a user gets it, apart from the broker:
//
// - from the sources: the SDK's entry and everything it imports stay in src/base,
//   src/protocols/iggy/codec and src/clients/iggy, and the npm packages they import are exactly
//   the package's dependencies (the same ranges as the root's);
// - packed: `npm pack` (whose prepare script builds the package) holds the compiled JavaScript and
//   declarations of exactly those sources, no more; installed into a fresh project, the tree has
//   none of the broker's own dependencies (better-sqlite3, the compression codecs) and no quartet;
//   plain Node (no tsx) imports it, partitions a key as the sources do, sends a real login frame to
//   a socket that closes and gets IggyConnectionError, and TypeScript checks a user's file against
//   the declarations.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { partitionForKey } from '../../src/clients/iggy/partitioning.js';
import { commandMsMax, npmMissing, ok, run } from './npm-run.js';
import { assertPackageShape, packAndInstall, readJson, repoRoot, sdkClosure } from './sdk-package.js';

const packageDir = join(repoRoot, 'packages/iggy');
const sdkEntry = 'src/clients/iggy/index.ts';
/** The folders of src/ the SDK may be built from: base, its protocol's codec, the SDKs' common code, itself. */
const allowedSources = /^src\/(base|protocols\/iggy\/codec|clients\/iggy|clients\/common)\//;

const rootPkg = readJson(join(repoRoot, 'package.json'));
const sdkPkg = readJson(join(packageDir, 'package.json'));

/** Upper bounds per child process (the 2-vCPU machine, loaded by the rest of the suite). */
const packMsMax = 90_000;
const installMsMax = 90_000;

describe('the Iggy SDK package (packages/iggy)', () => {
  it('is built from base, the Iggy codec and the SDK only, and depends on what they import', () => {
    const { sources, packages } = sdkClosure(sdkEntry);
    assert.deepEqual(
      sources.filter((f) => !allowedSources.test(f)),
      [],
      `the SDK (${sdkEntry}) imports sources outside src/base, src/protocols/iggy/codec and src/clients/iggy: @quartet/iggy would carry them`,
    );
    assert.ok(sources.includes('src/protocols/iggy/codec/index.ts') && sources.includes('src/base/errors.ts'), sources.join('\n'));
    assert.deepEqual(Object.keys(sdkPkg.dependencies ?? {}).sort(), packages, 'packages/iggy/package.json dependencies must be exactly the npm packages the SDK imports');
    for (const [name, range] of Object.entries(sdkPkg.dependencies ?? {})) {
      assert.equal(range, rootPkg.dependencies?.[name], `${name}: the SDK package and the root ask for the same range`);
    }
    assert.ok(!packages.includes('better-sqlite3'));
  });

  it('is an ESM package for Node 20 with typed exports, versioned with Quartet', () => {
    assertPackageShape(sdkPkg, rootPkg, 'iggy');
  });

  const work = mkdtempSync(join(tmpdir(), 'quartet-iggy-pack-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  it('packs, installs without the broker, imports with plain Node and type-checks', { skip: npmMissing(), timeout: 240_000 }, async (t) => {
    const { app, names } = await packAndInstall(t, { sdk: 'iggy', work, sdkPkg, rootPkg, packMsMax, installMsMax });
    assert.ok(names.has('@node-rs/xxhash'), [...names].join(', '));
    const installedDist = join(app, 'node_modules/@quartet/iggy/dist');
    assert.deepEqual(readdirSync(installedDist).sort(), ['base', 'clients', 'protocols']);
    assert.deepEqual(readdirSync(join(installedDist, 'protocols')), ['iggy']);
    assert.deepEqual(readdirSync(join(installedDist, 'protocols/iggy')), ['codec']);

    // Plain node: a partition choice (XXH32 from @node-rs/xxhash), and a login frame (the codec)
    // sent to a server that reads it and hangs up, then a refused connection.
    writeFileSync(
      join(app, 'check.mjs'),
      `import net from 'node:net';
import * as iggy from '@quartet/iggy';
const kinds = Object.fromEntries(['IggyClient', 'IggyProducer', 'IggyConsumer', 'IggyError', 'IggyConnectionError', 'isIggyClientError', 'partitionForKey', 'RoundRobin', 'prepareMessage'].map((n) => [n, typeof iggy[n]]));
const received = [];
const server = net.createServer((socket) => socket.on('data', (d) => {
  received.push(d);
  if (Buffer.concat(received).length >= 256) socket.destroy();
}));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const addr = '127.0.0.1:' + server.address().port;
const failure = async (client) => {
  try {
    await client.connect();
    return 'connected';
  } catch (err) {
    return { name: err.name, kind: err.kind, branded: iggy.isIggyClientError(err), message: err.message };
  } finally {
    await client.close().catch(() => {});
  }
};
const options = { addr, reconnect: false, connectTimeoutMs: 5000, requestTimeoutMs: 5000 };
const closed = await failure(new iggy.IggyClient({ ...options, credentials: { username: 'check-user', password: 'check-password' } }));
await new Promise((resolve) => server.close(resolve));
const refused = await failure(new iggy.IggyClient(options));
const frame = Buffer.concat(received);
let broker;
try {
  await import('quartet');
  broker = 'importable';
} catch (err) {
  broker = err.code;
}
console.log(JSON.stringify({
  resolved: import.meta.resolve('@quartet/iggy'),
  kinds,
  partition: iggy.partitionForKey('order-42', 12),
  sdk: [iggy.sdkName, iggy.sdkVersion],
  closed,
  refused,
  frame: { bytes: frame.length, command: frame[60], operation: frame[176], user: frame.includes('check-user'), sdkName: frame.includes(iggy.sdkName) },
  broker,
}));
`,
    );
    const checked = ok(await run(process.execPath, ['check.mjs'], app, commandMsMax), 'node check.mjs');
    const result = JSON.parse(checked.stdout) as Record<string, unknown>;
    assert.match(String(result['resolved']), /\/node_modules\/@quartet\/iggy\/dist\/clients\/iggy\/index\.js$/);
    assert.deepEqual(result['kinds'], {
      IggyClient: 'function',
      IggyProducer: 'function',
      IggyConsumer: 'function',
      IggyError: 'function',
      IggyConnectionError: 'function',
      isIggyClientError: 'function',
      partitionForKey: 'function',
      RoundRobin: 'function',
      prepareMessage: 'function',
    });
    assert.equal(result['partition'], partitionForKey('order-42', 12));
    // dist/base/version.js reads the installed package's package.json.
    assert.deepEqual(result['sdk'], ['quartet-ts', sdkPkg.version]);
    // A request frame (command 5) for Register (operation 1): LoginRegister, with the user and the SDK's name.
    assert.deepEqual(result['frame'], { bytes: (result['frame'] as { bytes: number }).bytes, command: 5, operation: 1, user: true, sdkName: true });
    assert.ok((result['frame'] as { bytes: number }).bytes > 256);
    assert.deepEqual(result['closed'], { name: 'IggyConnectionError', kind: 'connection', branded: true, message: (result['closed'] as { message: string }).message });
    const refused = result['refused'] as { name: string; kind: string; branded: boolean; message: string };
    assert.deepEqual({ ...refused, message: undefined }, { name: 'IggyConnectionError', kind: 'connection', branded: true, message: undefined });
    assert.match(refused.message, /ECONNREFUSED/);
    assert.equal(result['broker'], 'ERR_MODULE_NOT_FOUND');

    // The declarations, as a TypeScript project sees them (the repository's tsc and @types/node,
    // which the app lacks; the package's .d.ts checked too, skipLibCheck off). The two lines
    // marked as expected errors fail the check if the types were loose (any).
    writeFileSync(
      join(app, 'consumer.ts'),
      `import { IggyClient, IggyProducer, IggyConsumer, IggyError, isIggyClientError, partitionForKey, type IggyClientOptions, type IggyMessage, type SendResult } from '@quartet/iggy';
const options: IggyClientOptions = { addr: '127.0.0.1:8090', credentials: { username: 'iggy', password: 'iggy' }, reconnect: false };
export const client: IggyClient = new IggyClient(options);
export const producer: typeof IggyProducer = IggyProducer;
export const consumer: typeof IggyConsumer = IggyConsumer;
export const partition: number = partitionForKey('key', 3);
export const messages: IggyMessage[] = [];
export const sent: SendResult | null = null;
export function code(err: unknown): number | undefined {
  if (err instanceof IggyError) return err.code;
  return isIggyClientError(err) && err.retriable ? -1 : undefined;
}
// @ts-expect-error partitionForKey returns a number
export const wrong: string = partitionForKey('key', 3);
// @ts-expect-error addr is a string
export const bad = new IggyClient({ addr: 8090 });
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2023'], strict: true, skipLibCheck: false, noEmit: true, types: ['node'], typeRoots: [join(repoRoot, 'node_modules/@types')] },
        files: ['consumer.ts'],
      }),
    );
    const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
    const typed = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], app, commandMsMax);
    assert.equal(typed.code, 0, `tsc on a consumer of @quartet/iggy:\n${typed.stdout}${typed.stderr}`);
  });
});
