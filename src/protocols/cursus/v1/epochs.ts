// v1 producer epochs on Wire v2 (docs/protocols/cursus-v1.md "Producer epochs"). v1 epochs are
// i64; the Go SDK uses the producer's start time in nanoseconds (time.Now().UnixNano(), about
// 1.7e18), while CBV2 and CRQ2 numbers stop at 2^53 - 1. An epoch up to 2^52 is kept as it is;
// a larger one is compressed by 2^11 above 2^52:
//
//   |e| <= 2^52   ->  e
//   |e| >  2^52   ->  sign(e) * (2^52 + floor((|e| - 2^52) / 2^11))      (always < 2^53)
//
// The map is monotonic, so a newer producer still fences an older one, and depends on nothing
// but the epoch, so a producer maps the same way on every connection and after a restart. Two
// nanosecond epochs less than 2,048 ns apart map to one epoch (producers started within 2 µs of
// each other under the same producer id). A v1 producer is answered with the epoch it sent.

export const v1EpochExactMax = 2n ** 52n;
const compressionShift = 11n;

/** The Wire v2 epoch a v1 producer epoch runs as. */
export function v2EpochOf(epoch: bigint): number {
  const magnitude = epoch < 0n ? -epoch : epoch;
  const mapped = magnitude <= v1EpochExactMax ? magnitude : v1EpochExactMax + ((magnitude - v1EpochExactMax) >> compressionShift);
  return Number(epoch < 0n ? -mapped : mapped);
}
