// The native checksum addon against independent implementations (@node-rs/crc32 and
// @node-rs/xxhash), for every XXH3 length class, unaligned starts, each of the addon's paths
// (CRC32C folded with VPCLMULQDQ where the CPU has it, SSE4.2, portable C), and the JS fallback
// used when the addon is absent.
import { crc32c as referenceCrc32c } from '@node-rs/crc32';
import { xxh3 as referenceXxh3 } from '@node-rs/xxhash';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { addonChecksums, crc32c, fallbackChecksums, nativeStatus, startWriteback, xxh3, type ChecksumImplementation } from '../../src/base/native.js';

const implementations: [string, ChecksumImplementation | null][] = [
  ['addon (fastest paths)', addonChecksums('best')],
  ['addon (CRC32C on SSE4.2)', addonChecksums('sse42')],
  ['addon (portable C paths)', addonChecksums('portable')],
  ['fallback (@node-rs)', fallbackChecksums],
];


const notBuilt = 'native addon not built: run `npm install` (node-gyp, g++ and make)';

describe('native checksum addon', () => {
  it('is loaded when QUARTET_REQUIRE_NATIVE=1 (CI)', { skip: process.env['QUARTET_REQUIRE_NATIVE'] === '1' ? false : 'set QUARTET_REQUIRE_NATIVE=1 to require it' }, () => {
    assert.equal(nativeStatus.loaded, true, `addon at ${nativeStatus.path}: ${nativeStatus.reason ?? ''}`);
  });

  it('the addon throws TypeError for arguments of the wrong type, and reads nothing', { skip: nativeStatus.loaded ? false : notBuilt }, () => {
    const addon = addonChecksums()!;
    assert.throws(() => addon.crc32c('abc' as unknown as Uint8Array), TypeError);
    assert.throws(() => addon.crc32c(new Uint16Array(4) as unknown as Uint8Array), TypeError);
    assert.throws(() => addon.crc32c(Buffer.alloc(4), '1' as unknown as number), TypeError);
    assert.throws(() => addon.xxh3(null as unknown as Uint8Array), TypeError);
    assert.throws(() => addon.xxh3Frames(Buffer.alloc(16), [0, 16] as unknown as Uint32Array, 1, false), TypeError);
    assert.throws(() => addon.xxh3Frames(Buffer.alloc(16), new Int32Array(2) as unknown as Uint32Array, 1, false), TypeError);
  });

  it('startWriteback starts writeback of a file range on the thread pool and reports errno for a bad fd', { skip: nativeStatus.loaded ? false : notBuilt }, async () => {
    const errnoOf = (fd: number, offset: number, length: number) =>
      new Promise<number>((resolve) => assert.equal(startWriteback(fd, offset, length, resolve), true));
    const dir = mkdtempSync(join(tmpdir(), 'quartet-wb-'));
    const fd = openSync(join(dir, 'f'), 'w+');
    try {
      writeSync(fd, Buffer.alloc(1 << 20, 1));
      assert.equal(await errnoOf(fd, 0, 1 << 20), 0);
      assert.equal(await errnoOf(fd, 4096, 0), 0, 'length 0: to the end of the file');
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(await errnoOf(2 ** 30, 0, 1), 9, 'EBADF for an fd that cannot be open');
    const noop = () => undefined;
    assert.throws(() => startWriteback(-1, 0, 1, noop), TypeError);
    assert.throws(() => startWriteback(3, -1, 1, noop), TypeError);
    assert.throws(() => startWriteback(3, 0, 1, 'x' as unknown as () => void), TypeError);
  });

  it('uses the VPCLMULQDQ CRC32C path exactly when the CPU has VPCLMULQDQ and AVX-512 F/VL/BW', { skip: nativeStatus.loaded && existsSync('/proc/cpuinfo') && process.arch === 'x64' ? false : 'needs the addon on Linux x64' }, () => {
    const flags = new Set(/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim().split(/\s+/) ?? []);
    const capable = ['sse4_2', 'avx512f', 'avx512vl', 'avx512bw', 'vpclmulqdq'].every((f) => flags.has(f));
    assert.equal(nativeStatus.vpclmul, capable, `cpu flags say ${capable ? '' : 'not '}capable`);
  });

  it('the exported functions are the addon when it loaded', () => {
    const data = randomBytes(4096);
    assert.equal(crc32c(data), referenceCrc32c(data));
    assert.equal(xxh3(data), referenceXxh3.xxh64(data));
  });
});

for (const [name, impl] of implementations) {
  describe(`checksums: ${name}`, () => {
    const skip = impl === null ? notBuilt : false;

    it('known values: CRC32C("123456789") = 0xe3069283, XXH3-64("") = 0x2d06800538d394c2', { skip }, () => {
      assert.equal(impl!.crc32c(Buffer.from('123456789')), 0xe3069283);
      assert.equal(impl!.xxh3(Buffer.alloc(0)), 0x2d06800538d394c2n);
    });

    it('equal the reference for every length 0..2,100 at unaligned starts, and continue a CRC', { skip }, () => {
      const pool = randomBytes(2200);
      for (let len = 0; len <= 2100; len++) {
        const at = len % 13;
        const b = pool.subarray(at, at + len);
        assert.equal(impl!.xxh3(b), referenceXxh3.xxh64(b), `xxh3 length ${len}`);
        assert.equal(impl!.crc32c(b), referenceCrc32c(b), `crc32c length ${len}`);
        assert.equal(impl!.crc32c(b, 0xdeadbeef), referenceCrc32c(b, 0xdeadbeef), `crc32c continued, length ${len}`);
      }
    });

    it('equal the reference on large buffers (the 3-way CRC blocks, many XXH3 blocks)', { skip }, () => {
      for (const len of [3 * 256 - 1, 3 * 8192, 3 * 8192 + 777, 262_144, 1_048_576 + 5]) {
        const b = randomBytes(len + 3).subarray(3);
        assert.equal(impl!.crc32c(b), referenceCrc32c(b), `crc32c length ${len}`);
        assert.equal(impl!.xxh3(b), referenceXxh3.xxh64(b), `xxh3 length ${len}`);
        const half = len >> 1;
        assert.equal(impl!.crc32c(b.subarray(half), impl!.crc32c(b.subarray(0, half))), referenceCrc32c(b), `crc32c in two parts, length ${len}`);
      }
    });

    it('xxh3Frames writes every frame checksum, verifies them, and names the first bad frame', { skip }, () => {
      const sizes = [8, 9, 24, 56, 200, 1048, 5000, 48];
      const bounds = new Uint32Array(sizes.length + 2);
      let at = 5; // frames need not start at 0
      for (let i = 0; i < sizes.length; i++) {
        bounds[i] = at;
        at += sizes[i]!;
      }
      bounds[sizes.length] = at;
      const bytes = randomBytes(at + 7);
      assert.equal(impl!.xxh3Frames(bytes, bounds, sizes.length, true), -1);
      for (let i = 0; i < sizes.length; i++) {
        const expected = referenceXxh3.xxh64(bytes.subarray(bounds[i]! + 8, bounds[i + 1]!));
        assert.equal(bytes.readBigUInt64LE(bounds[i]!), expected, `frame ${i}`);
      }
      assert.equal(impl!.xxh3Frames(bytes, bounds, sizes.length, false), -1);
      bytes[bounds[5]! + 100]! ^= 1;
      bytes[bounds[6]!]! ^= 1;
      assert.equal(impl!.xxh3Frames(bytes, bounds, sizes.length, false), 5);
      assert.equal(impl!.xxh3Frames(bytes, bounds, 5, false), -1, 'only the first count frames are checked');
      assert.equal(impl!.xxh3Frames(bytes, bounds, 0, false), -1);
    });

    it('xxh3Frames refuses bounds outside the bytes or frames under 8 bytes', { skip }, () => {
      const bytes = Buffer.alloc(64);
      assert.throws(() => impl!.xxh3Frames(bytes, Uint32Array.of(0, 65), 1, false), RangeError);
      assert.throws(() => impl!.xxh3Frames(bytes, Uint32Array.of(0, 7), 1, true), RangeError);
      assert.throws(() => impl!.xxh3Frames(bytes, Uint32Array.of(40, 32), 1, false), RangeError);
      assert.throws(() => impl!.xxh3Frames(bytes, Uint32Array.of(0), 1, false), RangeError);
      assert.deepEqual(bytes, Buffer.alloc(64), 'nothing written');
    });
  });
}
