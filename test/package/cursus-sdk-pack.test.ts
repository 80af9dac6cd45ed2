// The Cursus SDK package (packages/cursus, @quartet/cursus) as a user gets it, apart from the broker:
//
// - from the sources: the SDK's entry and everything it imports stay in src/base,
//   src/protocols/cursus/codec and src/clients/cursus, and the npm packages they import are
//   exactly the package's dependencies (the same ranges as the root's);
// - packed: `npm pack` (whose prepare script builds the package) holds the compiled JavaScript and
//   declarations of exactly those sources, no more; installed into a fresh project, the tree has
//   none of the broker's own dependencies (better-sqlite3, zstd) and no quartet; plain Node (no
//   tsx) imports it, partitions a key as the sources do, negotiates lz4 with a minimal peer and
//   reads its lz4-compressed reply (so the compression addons load), sends its negotiation frame to
//   a socket that closes and gets CursusConnectionError, and TypeScript checks a user's file
//   against the declarations.

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { partitionForKey } from '../../src/clients/cursus/partitioning.js';
import { npmMissing } from './npm-run.js';
import { assertConnectionFailure, assertInstalledDist, assertPackageShape, assertSdkSources, packAndInstall, packWorkDir, readJson, repoRoot, runInstalledCheck, typecheckConsumer } from './sdk-package.js';

/** The folders of src/ the SDK may be built from: base, its protocol's codec, the SDKs' common code, itself. */
const allowedSources = /^src\/(base|protocols\/cursus\/codec|clients\/cursus|clients\/common)\//;

const rootPkg = readJson(join(repoRoot, 'package.json'));
const sdkPkg = readJson(join(repoRoot, 'packages/cursus/package.json'));

/** Upper bounds per child process (the 2-vCPU machine, loaded by the rest of the suite). */
const packMsMax = 90_000;
const installMsMax = 120_000;

describe('the Cursus SDK package (packages/cursus)', () => {
  it('is built from base, the Cursus codec and the SDK only, and depends on what they import', () => {
    const { sources, packages } = assertSdkSources({ sdk: 'cursus', allowed: allowedSources, sdkPkg, rootPkg });
    assert.ok(sources.includes('src/protocols/cursus/codec/index.ts') && sources.includes('src/clients/cursus/consumer.ts'), sources.join('\n'));
    assert.ok(!packages.includes('better-sqlite3'));
  });

  it('is an ESM package for Node 20 with typed exports, versioned with Quartet, and the root exports quartet/cursus', () => {
    assertPackageShape(sdkPkg, rootPkg, 'cursus');
    assert.deepEqual(rootPkg.exports?.['./cursus'], { types: './dist/clients/cursus/index.d.ts', default: './dist/clients/cursus/index.js' });
  });

  const work = packWorkDir('cursus');

  it('packs, installs without the broker, imports with plain Node and type-checks', { skip: npmMissing(), timeout: 300_000 }, async (t) => {
    const { app, names } = await packAndInstall(t, { sdk: 'cursus', work, sdkPkg, rootPkg, packMsMax, installMsMax });
    assert.ok(names.has('lz4-napi') && names.has('snappy'), [...names].join(', '));
    const installedDist = assertInstalledDist(app, 'cursus');
    assert.deepEqual(readdirSync(join(installedDist, 'protocols/cursus')), ['codec']);

    // Plain node: a partition choice, a real exchange with lz4 both ways against a minimal peer
    // written here from the pinned layout (CRC32C and LZ4 from the SDK's own dependencies), the
    // negotiation frame sent to a server that hangs up, then a refused connection.
    const result = await runInstalledCheck(app, {
      sdk: 'cursus',
      exports: ['CursusClient', 'CursusProducer', 'CursusConsumer', 'CursusTransactionalProducer', 'CursusEventStore', 'CursusError', 'CursusConnectionError', 'isCursusClientError', 'partitionForKey'],
      script: `import net from 'node:net';
import { crc32c } from '@node-rs/crc32';
import { compressFrameSync } from 'lz4-napi';
function frame(kind, flags, command, requestId, payload, decoded) {
  const h = Buffer.alloc(32);
  h.write('CRS2', 0, 'latin1');
  h.writeUInt16BE(2, 4); h[6] = kind; h[7] = flags; h.writeUInt16BE(command, 8); h.writeUInt16BE(0, 10);
  h.writeBigUInt64BE(requestId, 12); h.writeUInt32BE(payload.length, 20); h.writeUInt32BE(decoded, 24);
  h.writeUInt32BE(payload.length === 0 ? 0 : crc32c(payload) >>> 0, 28);
  return Buffer.concat([h, payload]);
}
const peer = net.createServer((s) => {
  let stage = 0;
  let buf = Buffer.alloc(0);
  s.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 32 && buf.length >= 32 + buf.readUInt32BE(20)) {
      const f = buf.subarray(0, 32 + buf.readUInt32BE(20));
      buf = buf.subarray(f.length);
      if (stage++ === 0) { s.write(frame(2, 0, 33, 0n, Buffer.from([0, 2, 3]), 3)); continue; }
      const reply = Buffer.from('OK count=1 topics=packed');
      s.write(frame(4, 3, f.readUInt16BE(8), f.readBigUInt64BE(12), compressFrameSync(reply), reply.length));
    }
  });
});
await new Promise((resolve) => peer.listen(0, '127.0.0.1', resolve));
const live = new cursus.CursusClient({ addr: '127.0.0.1:' + peer.address().port, reconnect: false });
const connected = await live.connect();
const topics = await live.listTopics();
await live.close();
await new Promise((resolve) => peer.close(resolve));
const received = [];
const server = net.createServer((socket) => socket.on('data', (d) => { received.push(d); socket.destroy(); }));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const addr = '127.0.0.1:' + server.address().port;
const options = { addr, reconnect: false, connectTimeoutMs: 5000, requestTimeoutMs: 5000 };
const closed = await failure(new cursus.CursusClient(options));
await new Promise((resolve) => server.close(resolve));
const refused = await failure(new cursus.CursusClient(options));
const f = Buffer.concat(received);
const checks = {
  partition: cursus.partitionForKey('order-42', 12),
  connected,
  topics,
  closed,
  refused,
  frame: { magic: f.toString('latin1', 0, 4), kind: f[6], command: f.readUInt16BE(8), payload: f.subarray(32).toString('hex') },
};
`,
    });
    assert.equal(result['partition'], partitionForKey('order-42', 12));
    assert.deepEqual(result['connected'], { address: (result['connected'] as { address: string }).address, compression: 'lz4' });
    assert.deepEqual(result['topics'], ['packed']);
    // NEGOTIATE (kind 1, command 33): versions 2..2, four compressions lz4, snappy, gzip, none.
    assert.deepEqual(result['frame'], { magic: 'CRS2', kind: 1, command: 33, payload: '0002000200040302' + '0100' });
    assertConnectionFailure(result['closed'], 'CursusConnectionError');
    assert.match(assertConnectionFailure(result['refused'], 'CursusConnectionError'), /ECONNREFUSED/);

    await typecheckConsumer(app, {
      sdk: 'cursus',
      source: `import { CursusClient, CursusConsumer, CursusError, CursusProducer, isRetryable, partitionForKey, type AckResponse, type ConsumedBatch, type CursusClientOptions } from '@quartet/cursus';
const options: CursusClientOptions = { addr: '127.0.0.1:9000', compression: ['lz4', 'none'], credentials: { principal: 'alice', token: 't' } };
export const client: CursusClient = new CursusClient(options);
export const producer: typeof CursusProducer = CursusProducer;
export const consumer: typeof CursusConsumer = CursusConsumer;
export const partition: number = partitionForKey('key', 3);
export const batches: ConsumedBatch[] = [];
export const ack: AckResponse | null = null;
export function code(err: unknown): string | undefined {
  if (err instanceof CursusError) return err.code + err.class;
  return isRetryable(err) ? 'retry' : undefined;
}
// @ts-expect-error partitionForKey returns a number
export const wrong: string = partitionForKey('key', 3);
// @ts-expect-error compression names are none, gzip, snappy or lz4
export const bad = new CursusClient({ compression: ['zstd'] });
`,
    });
  });
});
