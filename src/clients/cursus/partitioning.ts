// Client-side partition choice, the rules a Cursus topic's partitioner applies (spec §8,
// "Partition Keys"): hash_key sends a keyed record to FNV-1a 64(key) mod partitions and an
// unkeyed one round robin; round_robin ignores keys. The producer resolves partitions itself when
// it must keep per-partition sequences (idempotent and transactional producers) or when asked to.

const fnvOffsetBasis = 0xcbf29ce484222325n;
const fnvPrime = 0x100000001b3n;
const u64Mask = (1n << 64n) - 1n;

/** FNV-1a, 64 bits. */
export function fnv1a64(bytes: Buffer): bigint {
  let h = fnvOffsetBasis;
  for (const b of bytes) h = ((h ^ BigInt(b)) * fnvPrime) & u64Mask;
  return h;
}

/** The partition a key maps to under partitioner=hash_key. */
export function partitionForKey(key: Buffer | string, partitions: number): number {
  if (!(partitions >= 1)) throw new RangeError('a topic has at least one partition');
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  return Number(fnv1a64(bytes) % BigInt(partitions));
}

/** Round robin over a topic's partitions, one step per call. */
export class RoundRobin {
  private next = 0;

  pick(partitions: number): number {
    if (!(partitions >= 1)) throw new RangeError('a topic has at least one partition');
    const p = this.next % partitions;
    this.next = (p + 1) % partitions;
    return p;
  }
}

/** The partition for one record: hash_key with a key hashes it, anything else goes round robin. */
export function choosePartition(partitioner: string, key: Buffer | string | undefined, partitions: number, roundRobin: RoundRobin): number {
  if (partitioner === 'hash_key' && key !== undefined) return partitionForKey(key, partitions);
  return roundRobin.pick(partitions);
}
