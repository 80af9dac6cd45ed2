// The Felix SDK package (packages/felix, @quartet/felix) as a user gets it, apart from the broker:
//
// - from the sources: the SDK's entry and everything it imports stay in src/base, src/clients/common,
//   src/protocols/felix/codec, the QUIC transport (src/protocols/felix/quic.ts, self-signed.ts) and
//   src/clients/felix, and the npm packages they import are exactly the package's dependencies
//   (the same ranges as the root's);
// - packed: `npm pack` (whose prepare script builds the package) holds the compiled JavaScript and
//   declarations of exactly those sources, no more; installed into a fresh project, the tree has
//   none of the broker's own dependencies (better-sqlite3, zstd) and no quartet; plain Node (no
//   tsx) imports it, and a connection to a UDP port nobody answers (so the QUIC addon loads)
//   fails with FelixConnectionError; TypeScript checks a user's file against the declarations.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { commandMsMax, npmMissing, ok, run } from './npm-run.js';
import { assertPackageShape, packAndInstall, readJson, repoRoot, sdkClosure } from './sdk-package.js';

const packageDir = join(repoRoot, 'packages/felix');
const sdkEntry = 'src/clients/felix/index.ts';
/** The folders of src/ the SDK may be built from: base, the SDKs' common code, its codec and QUIC transport, itself. */
const allowedSources = /^src\/(base\/|clients\/common\/|protocols\/felix\/codec\/|protocols\/felix\/quic\.ts$|protocols\/felix\/self-signed\.ts$|clients\/felix\/)/;

const rootPkg = readJson(join(repoRoot, 'package.json'));
const sdkPkg = readJson(join(packageDir, 'package.json'));

/** Upper bounds per child process (the 2-vCPU machine, loaded by the rest of the suite). */
/** tsc checks @matrixai/quic's declarations and the DOM lib too: several times a small project's work. */
const typecheckMsMax = 120_000;
const packMsMax = 90_000;
const installMsMax = 120_000;

describe('the Felix SDK package (packages/felix)', () => {
  it('is built from base, the SDKs\' common code, the Felix codec and QUIC transport and the SDK only, and depends on what they import', () => {
    const { sources, packages } = sdkClosure(sdkEntry);
    assert.deepEqual(sources.filter((f) => !allowedSources.test(f)), [], `the SDK (${sdkEntry}) imports sources it may not: @quartet/felix would carry them`);
    assert.ok(sources.includes('src/protocols/felix/quic.ts') && sources.includes('src/clients/felix/subscriber.ts'), sources.join('\n'));
    assert.ok(!sources.some((f) => /^src\/(core|log|server)\//.test(f)));
    assert.deepEqual(Object.keys(sdkPkg.dependencies ?? {}).sort(), packages, 'packages/felix/package.json dependencies must be exactly the npm packages the SDK imports');
    for (const [name, range] of Object.entries(sdkPkg.dependencies ?? {})) {
      assert.equal(range, rootPkg.dependencies?.[name], `${name}: the SDK package and the root ask for the same range`);
    }
  });

  it('is an ESM package for Node 20 with typed exports, versioned with Quartet, and the root exports quartet/felix', () => {
    assertPackageShape(sdkPkg, rootPkg, 'felix');
    assert.deepEqual(rootPkg.exports?.['./felix'], { types: './dist/clients/felix/index.d.ts', default: './dist/clients/felix/index.js' });
  });

  const work = mkdtempSync(join(tmpdir(), 'quartet-felix-pack-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  it('packs, installs without the broker, imports with plain Node and type-checks', { skip: npmMissing(), timeout: 300_000 }, async (t) => {
    const { app, names } = await packAndInstall(t, { sdk: 'felix', work, sdkPkg, rootPkg, packMsMax, installMsMax });
    assert.ok(names.has('@matrixai/quic'), [...names].join(', '));
    const installedDist = join(app, 'node_modules/@quartet/felix/dist');
    assert.deepEqual(readdirSync(installedDist).sort(), ['base', 'clients', 'protocols']);
    assert.deepEqual(readdirSync(join(installedDist, 'clients')).sort(), ['common', 'felix']);

    writeFileSync(
      join(app, 'check.mjs'),
      `import dgram from 'node:dgram';
import * as felix from '@quartet/felix';
const kinds = Object.fromEntries(['FelixClient', 'FelixPublisher', 'FelixSubscription', 'FelixCache', 'FelixGroupConsumer', 'FelixError', 'FelixConnectionError', 'isFelixClientError'].map((n) => [n, typeof felix[n]]));
const silent = dgram.createSocket('udp4');
await new Promise((resolve) => silent.bind(0, '127.0.0.1', resolve));
const client = new felix.FelixClient({ addr: '127.0.0.1:' + silent.address().port, ca: '', connectTimeoutMs: 1000, connectAttemptsMax: 1 });
let failure;
try {
  await client.connect();
  failure = 'connected';
} catch (err) {
  failure = { name: err.name, kind: err.kind, branded: felix.isFelixClientError(err) };
}
await client.close();
silent.close();
let broker;
try {
  await import('quartet');
  broker = 'importable';
} catch (err) {
  broker = err.code;
}
console.log(JSON.stringify({ resolved: import.meta.resolve('@quartet/felix'), kinds, failure, broker }));
process.exit(0);
`,
    );
    const checked = ok(await run(process.execPath, ['check.mjs'], app, commandMsMax), 'node check.mjs');
    const result = JSON.parse(checked.stdout) as Record<string, unknown>;
    assert.match(String(result['resolved']), /\/node_modules\/@quartet\/felix\/dist\/clients\/felix\/index\.js$/);
    assert.deepEqual(result['kinds'], {
      FelixClient: 'function',
      FelixPublisher: 'function',
      FelixSubscription: 'function',
      FelixCache: 'function',
      FelixGroupConsumer: 'function',
      FelixError: 'function',
      FelixConnectionError: 'function',
      isFelixClientError: 'function',
    });
    assert.deepEqual(result['failure'], { name: 'FelixConnectionError', kind: 'connection', branded: true });
    assert.equal(result['broker'], 'ERR_MODULE_NOT_FOUND');

    writeFileSync(
      join(app, 'consumer.ts'),
      `import { FelixClient, FelixError, FelixCursorError, isRetryable, type EventBatch, type FelixClientOptions, type PublishResult } from '@quartet/felix';
const options: FelixClientOptions = { addr: '127.0.0.1:5000', ca: 'PEM', tenantId: 't1', token: 't' };
export const client: FelixClient = new FelixClient(options);
export const sent: Promise<PublishResult> = client.publisher('orders').send('x', { key: 'k' });
export const batches: EventBatch[] = [];
export function what(err: unknown): string | undefined {
  if (err instanceof FelixCursorError) return err.reason;
  if (err instanceof FelixError) return err.text;
  return isRetryable(err) ? 'retry' : undefined;
}
// @ts-expect-error the trusted certificate is required
export const bad = new FelixClient({ addr: '127.0.0.1:5000' });
// @ts-expect-error ack modes are none, per_message and per_batch
export const wrong = client.publisher('orders', { ack: 'all' });
`,
    );
    // @matrixai/quic's own declarations name DOM types (EventInit, BufferSource): a project checking
    // library declarations needs the DOM lib (docs/sdk-felix.md says so).
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2023', 'DOM'], strict: true, skipLibCheck: false, noEmit: true, types: ['node'], typeRoots: [join(repoRoot, 'node_modules/@types')] },
        files: ['consumer.ts'],
      }),
    );
    const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
    const typed = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], app, typecheckMsMax);
    assert.equal(typed.code, 0, `tsc on a consumer of @quartet/felix:\n${typed.stdout}${typed.stderr}`);
  });
});
