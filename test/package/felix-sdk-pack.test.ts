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
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { npmMissing } from './npm-run.js';
import { assertConnectionFailure, assertInstalledDist, assertPackageShape, assertSdkSources, packAndInstall, packWorkDir, readJson, repoRoot, runInstalledCheck, typecheckConsumer } from './sdk-package.js';

/** The folders of src/ the SDK may be built from: base, the SDKs' common code, its codec and QUIC transport, itself. */
const allowedSources = /^src\/(base\/|clients\/common\/|protocols\/felix\/codec\/|protocols\/felix\/quic\.ts$|protocols\/felix\/self-signed\.ts$|clients\/felix\/)/;

const rootPkg = readJson(join(repoRoot, 'package.json'));
const sdkPkg = readJson(join(repoRoot, 'packages/felix/package.json'));

/** Upper bounds per child process (the 2-vCPU machine, loaded by the rest of the suite). */
/** tsc checks @matrixai/quic's declarations and the DOM lib too: several times a small project's work. */
const typecheckMsMax = 120_000;
const packMsMax = 90_000;
const installMsMax = 120_000;

describe('the Felix SDK package (packages/felix)', () => {
  it('is built from base, the SDKs\' common code, the Felix codec and QUIC transport and the SDK only, and depends on what they import', () => {
    const { sources } = assertSdkSources({ sdk: 'felix', allowed: allowedSources, sdkPkg, rootPkg });
    assert.ok(sources.includes('src/protocols/felix/quic.ts') && sources.includes('src/clients/felix/subscriber.ts'), sources.join('\n'));
    assert.ok(!sources.some((f) => /^src\/(core|log|server)\//.test(f)));
  });

  it('is an ESM package for Node 20 with typed exports, versioned with Quartet, and the root exports quartet/felix', () => {
    assertPackageShape(sdkPkg, rootPkg, 'felix');
    assert.deepEqual(rootPkg.exports?.['./felix'], { types: './dist/clients/felix/index.d.ts', default: './dist/clients/felix/index.js' });
  });

  const work = packWorkDir('felix');

  it('packs, installs without the broker, imports with plain Node and type-checks', { skip: npmMissing(), timeout: 300_000 }, async (t) => {
    const { app, names } = await packAndInstall(t, { sdk: 'felix', work, sdkPkg, rootPkg, packMsMax, installMsMax });
    assert.ok(names.has('@matrixai/quic'), [...names].join(', '));
    const installedDist = assertInstalledDist(app, 'felix');
    assert.ok(readdirSync(join(installedDist, 'protocols/felix')).includes('quic.js'));

    // Plain node: a connection to a UDP port nobody answers (so the QUIC addon loads) fails.
    const result = await runInstalledCheck(app, {
      sdk: 'felix',
      exports: ['FelixClient', 'FelixPublisher', 'FelixSubscription', 'FelixCache', 'FelixGroupConsumer', 'FelixError', 'FelixConnectionError', 'isFelixClientError'],
      script: `import dgram from 'node:dgram';
const silent = dgram.createSocket('udp4');
await new Promise((resolve) => silent.bind(0, '127.0.0.1', resolve));
const silentFailure = await failure(new felix.FelixClient({ addr: '127.0.0.1:' + silent.address().port, ca: '', connectTimeoutMs: 1000, connectAttemptsMax: 1 }));
silent.close();
const checks = { silentFailure };
`,
    });
    assertConnectionFailure(result['silentFailure'], 'FelixConnectionError');

    // @matrixai/quic's own declarations name DOM types (EventInit, BufferSource): a project checking
    // library declarations needs the DOM lib (docs/sdk-felix.md says so).
    await typecheckConsumer(app, {
      sdk: 'felix',
      lib: ['ES2023', 'DOM'],
      msMax: typecheckMsMax,
      source: `import { FelixClient, FelixError, FelixCursorError, isRetryable, type EventBatch, type FelixClientOptions, type PublishResult } from '@quartet/felix';
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
    });
  });
});
