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
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { partitionForKey } from '../../src/clients/iggy/partitioning.js';
import { npmMissing } from './npm-run.js';
import { assertConnectionFailure, assertInstalledDist, assertPackageShape, assertSdkSources, packAndInstall, packWorkDir, readJson, repoRoot, runInstalledCheck, typecheckConsumer } from './sdk-package.js';

/** The folders of src/ the SDK may be built from: base, its protocol's codec, the SDKs' common code, itself. */
const allowedSources = /^src\/(base|protocols\/iggy\/codec|clients\/iggy|clients\/common)\//;

const rootPkg = readJson(join(repoRoot, 'package.json'));
const sdkPkg = readJson(join(repoRoot, 'packages/iggy/package.json'));

/** Upper bounds per child process (the 2-vCPU machine, loaded by the rest of the suite). */
const packMsMax = 90_000;
const installMsMax = 90_000;

describe('the Iggy SDK package (packages/iggy)', () => {
  it('is built from base, the Iggy codec and the SDK only, and depends on what they import', () => {
    const { sources, packages } = assertSdkSources({ sdk: 'iggy', allowed: allowedSources, sdkPkg, rootPkg });
    assert.ok(sources.includes('src/protocols/iggy/codec/index.ts') && sources.includes('src/base/errors.ts'), sources.join('\n'));
    assert.ok(!packages.includes('better-sqlite3'));
  });

  it('is an ESM package for Node 20 with typed exports, versioned with Quartet', () => {
    assertPackageShape(sdkPkg, rootPkg, 'iggy');
  });

  const work = packWorkDir('iggy');

  it('packs, installs without the broker, imports with plain Node and type-checks', { skip: npmMissing(), timeout: 240_000 }, async (t) => {
    const { app, names } = await packAndInstall(t, { sdk: 'iggy', work, sdkPkg, rootPkg, packMsMax, installMsMax });
    assert.ok(names.has('@node-rs/xxhash'), [...names].join(', '));
    const installedDist = assertInstalledDist(app, 'iggy');
    assert.deepEqual(readdirSync(join(installedDist, 'protocols/iggy')), ['codec']);

    // Plain node: a partition choice (XXH32 from @node-rs/xxhash), and a login frame (the codec)
    // sent to a server that reads it and hangs up, then a refused connection.
    const result = await runInstalledCheck(app, {
      sdk: 'iggy',
      exports: ['IggyClient', 'IggyProducer', 'IggyConsumer', 'IggyError', 'IggyConnectionError', 'isIggyClientError', 'partitionForKey', 'RoundRobin', 'prepareMessage'],
      script: `import net from 'node:net';
const received = [];
const server = net.createServer((socket) => socket.on('data', (d) => {
  received.push(d);
  if (Buffer.concat(received).length >= 256) socket.destroy();
}));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const addr = '127.0.0.1:' + server.address().port;
const options = { addr, reconnect: false, connectTimeoutMs: 5000, requestTimeoutMs: 5000 };
const closed = await failure(new iggy.IggyClient({ ...options, credentials: { username: 'check-user', password: 'check-password' } }));
await new Promise((resolve) => server.close(resolve));
const refused = await failure(new iggy.IggyClient(options));
const frame = Buffer.concat(received);
const checks = {
  partition: iggy.partitionForKey('order-42', 12),
  sdk: [iggy.sdkName, iggy.sdkVersion],
  closed,
  refused,
  frame: { bytes: frame.length, command: frame[60], operation: frame[176], user: frame.includes('check-user'), sdkName: frame.includes(iggy.sdkName) },
};
`,
    });
    assert.equal(result['partition'], partitionForKey('order-42', 12));
    // dist/base/version.js reads the installed package's package.json.
    assert.deepEqual(result['sdk'], ['quartet-ts', sdkPkg.version]);
    // A request frame (command 5) for Register (operation 1): LoginRegister, with the user and the SDK's name.
    assert.deepEqual(result['frame'], { bytes: (result['frame'] as { bytes: number }).bytes, command: 5, operation: 1, user: true, sdkName: true });
    assert.ok((result['frame'] as { bytes: number }).bytes > 256);
    assertConnectionFailure(result['closed'], 'IggyConnectionError');
    assert.match(assertConnectionFailure(result['refused'], 'IggyConnectionError'), /ECONNREFUSED/);

    await typecheckConsumer(app, {
      sdk: 'iggy',
      source: `import { IggyClient, IggyProducer, IggyConsumer, IggyError, isIggyClientError, partitionForKey, type IggyClientOptions, type IggyMessage, type SendResult } from '@quartet/iggy';
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
    });
  });
});
