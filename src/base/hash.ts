// Key hashes the protocols route records by: FNV-1a 64 modulo the partition count (Cursus spec §8
// "Partition Keys"; Felix keyed publishes, docs/felix.md), computed in 32-bit halves.

/** FNV-1a 64 of `key`, modulo `n`, in 32-bit halves (exact, no BigInt per byte). */
export function fnv1a64Mod(key: Buffer, n: number): number {
  // Offset basis 0xcbf29ce484222325; prime 0x100000001b3 = 2^40 + 0x1b3.
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < key.length; i++) {
    lo = (lo ^ key[i]!) >>> 0;
    const low = lo * 0x1b3;
    const carry = Math.floor(low / 0x1_0000_0000);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = low >>> 0;
  }
  return Number(((BigInt(hi) << 32n) | BigInt(lo)) % BigInt(n));
}
