// Quartet's native checksums: CRC32C (Castagnoli) and XXH3-64, the two hashes every byte on the
// hot paths goes through (the log envelope and Kafka's RecordBatch use CRC32C; every Iggy message
// frame carries an XXH3-64). The npm packages Quartet falls back to (@node-rs/crc32,
// @node-rs/xxhash) compute the same values; this addon exists for speed:
//
// - crc32c folds 256-byte blocks with carry-less multiplies (VPCLMULQDQ on AVX-512) where the CPU
//   has them (inputs of 512 bytes and more), about 50 GB/s; otherwise it runs three SSE4.2 CRC
//   streams in parallel (the crc32 instruction has a latency of three cycles and a throughput of
//   one) and joins them with precomputed "append N zero bytes" operators, about three times the
//   rate of one stream.
// - xxh3Frames hashes every frame of a batch in one call instead of one call (and one BigInt)
//   per message.
//
// Both pick the hardware path at load time (__builtin_cpu_supports) and fall back to portable C.
//
// Beside them, a few file and socket calls Node does not offer: sync_file_range and fallocate on
// the thread pool (writeback hints, reserved blocks) and sendfile to a socket (SocketSender, for
// poll replies sent from the segment files); and Buffers whose memory is recycled once collected
// (recycledBuffer, for the large reply frames a client reads in place).
// Written from the published algorithms (RFC 3720 appendix B.4 for CRC32C; the XXH3 specification
// in xxHash's doc/xxhash_spec.md), checked in test/native/ against the npm packages.
//
// N-API only (no node-addon-api), so the addon builds against the Node headers node-gyp finds.

#include <node_api.h>
#include <uv.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <unistd.h>
#if defined(__linux__)
#include <fcntl.h>
#include <sys/sendfile.h>
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "quartet_native assumes a little-endian target (Load64/Load32 and the LE checksum fields)"
#endif

#if defined(__x86_64__)
#include <immintrin.h>
#define QUARTET_X86 1
#else
#define QUARTET_X86 0
#endif

namespace {

// ----------------------------------------------------------------------------------------------
// CRC32C: reflected polynomial 0x82F63B78. crc32c(data, crc) continues a CRC the way
// @node-rs/crc32 does: the register is inverted on entry and on exit.

constexpr uint32_t kCrc32cPoly = 0x82f63b78u;

uint32_t crc_table[8][256];

void InitCrcTables() {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kCrc32cPoly : c >> 1;
    crc_table[0][n] = c;
  }
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = crc_table[0][n];
    for (int t = 1; t < 8; t++) {
      c = crc_table[0][c & 0xff] ^ (c >> 8);
      crc_table[t][n] = c;
    }
  }
}

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // x86-64 and aarch64 Linux are little-endian; binding.gyp builds for nothing else.
}

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Slicing-by-8 over the raw register (no inversions).
uint32_t CrcRegisterPortable(uint32_t crc, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    n--;
  }
  while (n >= 8) {
    const uint64_t w = Load64(p) ^ crc;
    crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^ crc_table[5][(w >> 16) & 0xff] ^
          crc_table[4][(w >> 24) & 0xff] ^ crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
          crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

// "Append `len` zero bytes" as a linear operator on the 32-bit register, as four byte tables.
// Appending zeros to a message multiplies its register by x^(8 len) mod P; that map is linear over
// GF(2), so it is a 32x32 bit matrix, built by repeated squaring of the one-zero-bit matrix.
struct ZerosOperator {
  uint32_t table[4][256];
};

uint32_t Gf2MatrixTimes(const uint32_t* mat, uint32_t vec) {
  uint32_t sum = 0;
  for (int i = 0; vec != 0; i++, vec >>= 1) {
    if (vec & 1) sum ^= mat[i];
  }
  return sum;
}

void Gf2MatrixSquare(uint32_t* square, const uint32_t* mat) {
  for (int n = 0; n < 32; n++) square[n] = Gf2MatrixTimes(mat, mat[n]);
}

// `len` must be a power of two (bytes).
void BuildZerosOperator(ZerosOperator* op, size_t len) {
  uint32_t bit[32];  // one zero bit: column n is the image of register bit n
  bit[0] = kCrc32cPoly;
  for (int n = 1; n < 32; n++) bit[n] = 1u << (n - 1);
  uint32_t a[32];
  uint32_t b[32];
  Gf2MatrixSquare(a, bit);  // 2 bits
  Gf2MatrixSquare(b, a);    // 4 bits
  Gf2MatrixSquare(a, b);    // 8 bits = 1 byte
  uint32_t* cur = a;
  uint32_t* other = b;
  for (size_t bytes = 1; bytes < len; bytes <<= 1) {
    Gf2MatrixSquare(other, cur);
    uint32_t* t = cur;
    cur = other;
    other = t;
  }
  for (uint32_t n = 0; n < 256; n++) {
    op->table[0][n] = Gf2MatrixTimes(cur, n);
    op->table[1][n] = Gf2MatrixTimes(cur, n << 8);
    op->table[2][n] = Gf2MatrixTimes(cur, n << 16);
    op->table[3][n] = Gf2MatrixTimes(cur, n << 24);
  }
}

inline uint32_t ApplyZeros(const ZerosOperator& op, uint32_t crc) {
  return op.table[0][crc & 0xff] ^ op.table[1][(crc >> 8) & 0xff] ^ op.table[2][(crc >> 16) & 0xff] ^
         op.table[3][crc >> 24];
}

constexpr size_t kLongBlock = 8192;
constexpr size_t kShortBlock = 256;
ZerosOperator zeros_long;
ZerosOperator zeros_short;

#if QUARTET_X86
__attribute__((target("sse4.2"))) uint32_t CrcRegisterSse42(uint32_t crc0, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc0 = _mm_crc32_u8(crc0, *p++);
    n--;
  }
  // Three interleaved streams over consecutive blocks, joined by the zeros operators.
  const size_t blocks[2] = {kLongBlock, kShortBlock};
  const ZerosOperator* ops[2] = {&zeros_long, &zeros_short};
  for (int k = 0; k < 2; k++) {
    const size_t block = blocks[k];
    while (n >= 3 * block) {
      uint64_t c0 = crc0;
      uint64_t c1 = 0;
      uint64_t c2 = 0;
      const uint8_t* end = p + block;
      do {
        c0 = _mm_crc32_u64(c0, Load64(p));
        c1 = _mm_crc32_u64(c1, Load64(p + block));
        c2 = _mm_crc32_u64(c2, Load64(p + 2 * block));
        p += 8;
      } while (p < end);
      crc0 = ApplyZeros(*ops[k], static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
      crc0 = ApplyZeros(*ops[k], crc0) ^ static_cast<uint32_t>(c2);
      p += 2 * block;
      n -= 3 * block;
    }
  }
  uint64_t c = crc0;
  while (n >= 8) {
    c = _mm_crc32_u64(c, Load64(p));
    p += 8;
    n -= 8;
  }
  crc0 = static_cast<uint32_t>(c);
  while (n-- > 0) crc0 = _mm_crc32_u8(crc0, *p++);
  return crc0;
}

// Folding (the method of Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ",
// written from the algebra): in the bit order of a reflected CRC, a 64-bit word w is the
// polynomial sum of bit i times x^(63-i), a 16-byte lane (lo, hi) is lo * x^64 + hi, and a
// carry-less multiply of two words gives x * a * b as a lane. A lane X moves D bits further down
// the message as X * x^D mod P, which is clmul(lo, x^(D+63) mod P) ^ clmul(hi, x^(D-1) mod P); the
// result is xored into the data D bits on. Once everything is folded into one lane, that lane has
// the same CRC as all the bytes it replaced, and the crc32 instruction finishes it and the tail.
struct FoldMultipliers {
  uint64_t lo;  // x^(D+63) mod P
  uint64_t hi;  // x^(D-1) mod P
};

// x^n mod P, bit-reflected into the upper half of a word (the coefficient of x^j at bit 63 - j).
uint64_t XPowModP(uint32_t n) {
  uint64_t r = 1;
  for (uint32_t i = 0; i < n; i++) {
    r <<= 1;
    if (r & (1ull << 32)) r ^= 0x11edc6f41ull;  // P, not reflected
  }
  uint64_t word = 0;
  for (int j = 0; j < 32; j++) {
    if ((r >> j) & 1) word |= 1ull << (63 - j);
  }
  return word;
}

FoldMultipliers FoldBy(uint32_t bits) { return {XPowModP(bits + 63), XPowModP(bits - 1)}; }

// Fold distances: a 256-byte stride (four 64-byte registers), one register, and the lanes of one
// register onto its last lane.
FoldMultipliers fold_2048;
FoldMultipliers fold_512;
FoldMultipliers fold_384;
FoldMultipliers fold_256;
FoldMultipliers fold_128;
constexpr size_t kFoldMin = 512;  // shorter inputs take the SSE4.2 path

#define QUARTET_VPCLMUL_TARGET __attribute__((target("avx512f,avx512vl,avx512bw,vpclmulqdq,sse4.2")))

QUARTET_VPCLMUL_TARGET inline __m512i FoldInto(__m512i x, __m512i k, __m512i data) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), data,
                                   0x96);  // three-way xor
}

QUARTET_VPCLMUL_TARGET inline __m512i EveryLane(const FoldMultipliers& f) {
  return _mm512_set_epi64(static_cast<long long>(f.hi), static_cast<long long>(f.lo), static_cast<long long>(f.hi),
                          static_cast<long long>(f.lo), static_cast<long long>(f.hi), static_cast<long long>(f.lo),
                          static_cast<long long>(f.hi), static_cast<long long>(f.lo));
}

// n >= kFoldMin.
QUARTET_VPCLMUL_TARGET uint32_t CrcRegisterVpclmul(uint32_t crc, const uint8_t* p, size_t n) {
  // The register enters as the first 32 bits of the message xored with it. (Intrinsics here are
  // ones GCC 8 already has: the _mm512_zext* family came later.)
  __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_maskz_set1_epi32(1, static_cast<int>(crc)));
  __m512i x1 = _mm512_loadu_si512(p + 64);
  __m512i x2 = _mm512_loadu_si512(p + 128);
  __m512i x3 = _mm512_loadu_si512(p + 192);
  p += 256;
  n -= 256;
  const __m512i stride = EveryLane(fold_2048);
  while (n >= 256) {
    x0 = FoldInto(x0, stride, _mm512_loadu_si512(p));
    x1 = FoldInto(x1, stride, _mm512_loadu_si512(p + 64));
    x2 = FoldInto(x2, stride, _mm512_loadu_si512(p + 128));
    x3 = FoldInto(x3, stride, _mm512_loadu_si512(p + 192));
    p += 256;
    n -= 256;
  }
  const __m512i one = EveryLane(fold_512);
  __m512i x = FoldInto(FoldInto(FoldInto(x0, one, x1), one, x2), one, x3);
  while (n >= 64) {
    x = FoldInto(x, one, _mm512_loadu_si512(p));
    p += 64;
    n -= 64;
  }
  // Lanes 0, 1 and 2 move 384, 256 and 128 bits on, onto lane 3.
  const __m512i lanes = _mm512_set_epi64(0, 0, static_cast<long long>(fold_128.hi), static_cast<long long>(fold_128.lo),
                                         static_cast<long long>(fold_256.hi), static_cast<long long>(fold_256.lo),
                                         static_cast<long long>(fold_384.hi), static_cast<long long>(fold_384.lo));
  const __m512i t = _mm512_xor_si512(_mm512_clmulepi64_epi128(x, lanes, 0x00), _mm512_clmulepi64_epi128(x, lanes, 0x11));
  // (The maskz forms: GCC 12's plain extract reads an uninitialised register, and -Wall says so.)
  const __m128i last = _mm_xor_si128(_mm_xor_si128(_mm512_maskz_extracti32x4_epi32(0xf, t, 0), _mm512_maskz_extracti32x4_epi32(0xf, t, 1)),
                                     _mm_xor_si128(_mm512_maskz_extracti32x4_epi32(0xf, t, 2), _mm512_maskz_extracti32x4_epi32(0xf, x, 3)));
  uint64_t c = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(last)));
  c = _mm_crc32_u64(c, static_cast<uint64_t>(_mm_extract_epi64(last, 1)));
  return CrcRegisterSse42(static_cast<uint32_t>(c), p, n);
}
#endif

bool use_sse42 = false;
bool use_vpclmul = false;

// Which implementation crc32c may use at most (tests run each).
enum CrcPath : uint32_t { kCrcPortable = 0, kCrcSse42 = 1, kCrcBest = 2 };

uint32_t Crc32c(uint32_t crc, const uint8_t* p, size_t n, uint32_t path) {
  uint32_t reg = ~crc;
#if QUARTET_X86
  if (use_vpclmul && path >= kCrcBest && n >= kFoldMin) return ~CrcRegisterVpclmul(reg, p, n);
  if (use_sse42 && path >= kCrcSse42) return ~CrcRegisterSse42(reg, p, n);
#endif
  return ~CrcRegisterPortable(reg, p, n);
}

// ----------------------------------------------------------------------------------------------
// XXH3-64 with seed 0 and the default secret (xxHash's doc/xxhash_spec.md). Every length class is
// here; Iggy frames (48-byte header minus the 8-byte checksum, plus payload) take the 17..128,
// 129..240 and long paths.

constexpr uint64_t kPrime32_1 = 0x9E3779B1u;
constexpr uint64_t kPrime32_2 = 0x85EBCA77u;
constexpr uint64_t kPrime32_3 = 0xC2B2AE3Du;
constexpr uint64_t kPrime64_1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kPrime64_2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime64_3 = 0x165667B19E3779F9ull;
constexpr uint64_t kPrime64_4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kPrime64_5 = 0x27D4EB2F165667C5ull;
constexpr uint64_t kPrimeMx1 = 0x165667919E3779F9ull;
constexpr uint64_t kPrimeMx2 = 0x9FB21C651E98DF25ull;

constexpr size_t kSecretSize = 192;
constexpr size_t kSecretSizeMin = 136;
constexpr size_t kStripeLen = 64;
constexpr size_t kSecretConsumeRate = 8;
constexpr size_t kStripesPerBlock = (kSecretSize - kStripeLen) / kSecretConsumeRate;  // 16
constexpr size_t kBlockLen = kStripeLen * kStripesPerBlock;                           // 1024
constexpr size_t kSecretLastAccStart = 7;
constexpr size_t kSecretMergeAccsStart = 11;
constexpr size_t kMidsizeStartOffset = 3;
constexpr size_t kMidsizeLastOffset = 17;

alignas(64) constexpr uint8_t kSecret[kSecretSize] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

inline uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t Mul128Fold64(uint64_t a, uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

inline uint64_t Xxh64Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kPrime64_2;
  h ^= h >> 29;
  h *= kPrime64_3;
  return h ^ (h >> 32);
}

inline uint64_t Xxh3Avalanche(uint64_t h) {
  h ^= h >> 37;
  h *= kPrimeMx1;
  return h ^ (h >> 32);
}

inline uint64_t Rrmxmx(uint64_t h, uint64_t len) {
  h ^= Rotl64(h, 49) ^ Rotl64(h, 24);
  h *= kPrimeMx2;
  h ^= (h >> 35) + len;
  h *= kPrimeMx2;
  return h ^ (h >> 28);
}

inline uint64_t Mix16(const uint8_t* in, const uint8_t* secret) {
  return Mul128Fold64(Load64(in) ^ Load64(secret), Load64(in + 8) ^ Load64(secret + 8));
}

uint64_t Xxh3Len0To16(const uint8_t* in, size_t len) {
  if (len > 8) {
    const uint64_t bitflip1 = Load64(kSecret + 24) ^ Load64(kSecret + 32);
    const uint64_t bitflip2 = Load64(kSecret + 40) ^ Load64(kSecret + 48);
    const uint64_t lo = Load64(in) ^ bitflip1;
    const uint64_t hi = Load64(in + len - 8) ^ bitflip2;
    const uint64_t acc = len + __builtin_bswap64(lo) + hi + Mul128Fold64(lo, hi);
    return Xxh3Avalanche(acc);
  }
  if (len >= 4) {
    const uint64_t bitflip = Load64(kSecret + 8) ^ Load64(kSecret + 16);
    const uint64_t input64 = Load32(in + len - 4) + (static_cast<uint64_t>(Load32(in)) << 32);
    return Rrmxmx(input64 ^ bitflip, len);
  }
  if (len > 0) {
    const uint32_t combined = (static_cast<uint32_t>(in[0]) << 16) | (static_cast<uint32_t>(in[len >> 1]) << 24) |
                              static_cast<uint32_t>(in[len - 1]) | (static_cast<uint32_t>(len) << 8);
    const uint64_t bitflip = Load32(kSecret) ^ Load32(kSecret + 4);
    return Xxh64Avalanche(static_cast<uint64_t>(combined) ^ bitflip);
  }
  return Xxh64Avalanche(Load64(kSecret + 56) ^ Load64(kSecret + 64));
}

uint64_t Xxh3Len17To128(const uint8_t* in, size_t len) {
  uint64_t acc = len * kPrime64_1;
  if (len > 32) {
    if (len > 64) {
      if (len > 96) {
        acc += Mix16(in + 48, kSecret + 96);
        acc += Mix16(in + len - 64, kSecret + 112);
      }
      acc += Mix16(in + 32, kSecret + 64);
      acc += Mix16(in + len - 48, kSecret + 80);
    }
    acc += Mix16(in + 16, kSecret + 32);
    acc += Mix16(in + len - 32, kSecret + 48);
  }
  acc += Mix16(in, kSecret);
  acc += Mix16(in + len - 16, kSecret + 16);
  return Xxh3Avalanche(acc);
}

uint64_t Xxh3Len129To240(const uint8_t* in, size_t len) {
  uint64_t acc = len * kPrime64_1;
  const size_t rounds = len / 16;
  for (size_t i = 0; i < 8; i++) acc += Mix16(in + 16 * i, kSecret + 16 * i);
  acc = Xxh3Avalanche(acc);
  for (size_t i = 8; i < rounds; i++) acc += Mix16(in + 16 * i, kSecret + 16 * (i - 8) + kMidsizeStartOffset);
  acc += Mix16(in + len - 16, kSecret + kSecretSizeMin - kMidsizeLastOffset);
  return Xxh3Avalanche(acc);
}

// One 64-byte stripe into the eight accumulators.
inline void AccumulateStripePortable(uint64_t* acc, const uint8_t* in, const uint8_t* secret) {
  for (int i = 0; i < 8; i++) {
    const uint64_t data = Load64(in + 8 * i);
    const uint64_t key = data ^ Load64(secret + 8 * i);
    acc[i ^ 1] += data;
    acc[i] += (key & 0xffffffffu) * (key >> 32);
  }
}

inline void ScramblePortable(uint64_t* acc, const uint8_t* secret) {
  for (int i = 0; i < 8; i++) {
    uint64_t a = acc[i];
    a ^= a >> 47;
    a ^= Load64(secret + 8 * i);
    acc[i] = a * kPrime32_1;
  }
}

inline uint64_t MergeAccs(const uint64_t* acc, const uint8_t* secret, uint64_t start) {
  uint64_t result = start;
  for (int i = 0; i < 4; i++) {
    result += Mul128Fold64(acc[2 * i] ^ Load64(secret + 16 * i), acc[2 * i + 1] ^ Load64(secret + 16 * i + 8));
  }
  return Xxh3Avalanche(result);
}

uint64_t Xxh3LongPortable(const uint8_t* in, size_t len) {
  uint64_t acc[8] = {kPrime32_3, kPrime64_1, kPrime64_2, kPrime64_3, kPrime64_4, kPrime32_2, kPrime64_5, kPrime32_1};
  const size_t blocks = (len - 1) / kBlockLen;
  for (size_t b = 0; b < blocks; b++) {
    const uint8_t* block = in + b * kBlockLen;
    for (size_t s = 0; s < kStripesPerBlock; s++) AccumulateStripePortable(acc, block + s * kStripeLen, kSecret + s * kSecretConsumeRate);
    ScramblePortable(acc, kSecret + kSecretSize - kStripeLen);
  }
  const size_t stripes = ((len - 1) - blocks * kBlockLen) / kStripeLen;
  const uint8_t* last = in + blocks * kBlockLen;
  for (size_t s = 0; s < stripes; s++) AccumulateStripePortable(acc, last + s * kStripeLen, kSecret + s * kSecretConsumeRate);
  AccumulateStripePortable(acc, in + len - kStripeLen, kSecret + kSecretSize - kStripeLen - kSecretLastAccStart);
  return MergeAccs(acc, kSecret + kSecretMergeAccsStart, len * kPrime64_1);
}

#if QUARTET_X86
// The same long path with AVX2: each 256-bit lane holds four accumulators.
__attribute__((target("avx2"))) inline void AccumulateStripeAvx2(__m256i* acc, const uint8_t* in, const uint8_t* secret) {
  for (int i = 0; i < 2; i++) {
    const __m256i data = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in) + i);
    const __m256i key = _mm256_xor_si256(data, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(secret) + i));
    const __m256i product = _mm256_mul_epu32(key, _mm256_srli_epi64(key, 32));
    const __m256i swapped = _mm256_shuffle_epi32(data, _MM_SHUFFLE(1, 0, 3, 2));
    acc[i] = _mm256_add_epi64(_mm256_add_epi64(acc[i], swapped), product);
  }
}

__attribute__((target("avx2"))) inline void ScrambleAvx2(__m256i* acc, const uint8_t* secret) {
  const __m256i prime = _mm256_set1_epi32(static_cast<int>(kPrime32_1));
  for (int i = 0; i < 2; i++) {
    __m256i a = _mm256_xor_si256(acc[i], _mm256_srli_epi64(acc[i], 47));
    a = _mm256_xor_si256(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(secret) + i));
    const __m256i lo = _mm256_mul_epu32(a, prime);
    const __m256i hi = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), prime);
    acc[i] = _mm256_add_epi64(lo, _mm256_slli_epi64(hi, 32));
  }
}

__attribute__((target("avx2"))) uint64_t Xxh3LongAvx2(const uint8_t* in, size_t len) {
  alignas(32) uint64_t init[8] = {kPrime32_3, kPrime64_1, kPrime64_2, kPrime64_3, kPrime64_4, kPrime32_2, kPrime64_5, kPrime32_1};
  __m256i acc[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(init)),
                    _mm256_load_si256(reinterpret_cast<const __m256i*>(init) + 1)};
  const size_t blocks = (len - 1) / kBlockLen;
  for (size_t b = 0; b < blocks; b++) {
    const uint8_t* block = in + b * kBlockLen;
    for (size_t s = 0; s < kStripesPerBlock; s++) AccumulateStripeAvx2(acc, block + s * kStripeLen, kSecret + s * kSecretConsumeRate);
    ScrambleAvx2(acc, kSecret + kSecretSize - kStripeLen);
  }
  const size_t stripes = ((len - 1) - blocks * kBlockLen) / kStripeLen;
  const uint8_t* last = in + blocks * kBlockLen;
  for (size_t s = 0; s < stripes; s++) AccumulateStripeAvx2(acc, last + s * kStripeLen, kSecret + s * kSecretConsumeRate);
  AccumulateStripeAvx2(acc, in + len - kStripeLen, kSecret + kSecretSize - kStripeLen - kSecretLastAccStart);
  alignas(32) uint64_t out[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), acc[0]);
  _mm256_store_si256(reinterpret_cast<__m256i*>(out) + 1, acc[1]);
  return MergeAccs(out, kSecret + kSecretMergeAccsStart, len * kPrime64_1);
}
#endif

bool use_avx2 = false;

uint64_t Xxh3(const uint8_t* in, size_t len, bool portable) {
  if (len <= 16) return Xxh3Len0To16(in, len);
  if (len <= 128) return Xxh3Len17To128(in, len);
  if (len <= 240) return Xxh3Len129To240(in, len);
#if QUARTET_X86
  if (use_avx2 && !portable) return Xxh3LongAvx2(in, len);
#endif
  return Xxh3LongPortable(in, len);
}

// ----------------------------------------------------------------------------------------------
// N-API glue. Arguments are checked here (types, ranges) and reported as TypeError / RangeError:
// a wrong call from JavaScript must throw, never read outside a buffer.

bool GetBytes(napi_env env, napi_value v, const char* what, uint8_t** data, size_t* length) {
  bool is_typed = false;
  napi_is_typedarray(env, v, &is_typed);
  if (!is_typed) {
    napi_throw_type_error(env, nullptr, what);
    return false;
  }
  napi_typedarray_type type;
  void* raw = nullptr;
  size_t count = 0;
  napi_get_typedarray_info(env, v, &type, &count, &raw, nullptr, nullptr);
  if (type != napi_uint8_array) {
    napi_throw_type_error(env, nullptr, what);
    return false;
  }
  *data = static_cast<uint8_t*>(raw);
  *length = count;
  return true;
}

bool GetUint32Array(napi_env env, napi_value v, const char* what, uint32_t** data, size_t* length) {
  bool is_typed = false;
  napi_is_typedarray(env, v, &is_typed);
  napi_typedarray_type type = napi_int8_array;
  void* raw = nullptr;
  size_t count = 0;
  if (is_typed) napi_get_typedarray_info(env, v, &type, &count, &raw, nullptr, nullptr);
  if (!is_typed || type != napi_uint32_array) {
    napi_throw_type_error(env, nullptr, what);
    return false;
  }
  *data = static_cast<uint32_t*>(raw);
  *length = count;
  return true;
}

bool GetUint32(napi_env env, napi_value v, const char* what, uint32_t* out) {
  if (napi_get_value_uint32(env, v, out) != napi_ok) {
    napi_throw_type_error(env, nullptr, what);
    return false;
  }
  return true;
}

// Reads exactly `n` arguments into argv, or throws TypeError(usage) and returns false.
bool GetArgs(napi_env env, napi_callback_info info, size_t n, napi_value* argv, const char* usage) {
  size_t argc = n;
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < n) {
    napi_throw_type_error(env, nullptr, usage);
    return false;
  }
  return true;
}

bool GetFlag(napi_env env, napi_value v) {
  bool flag = false;
  napi_get_value_bool(env, v, &flag);
  return flag;
}

// crc32c(bytes: Uint8Array, initial: number, path: number): number
// path: 0 portable C, 1 at most SSE4.2, 2 the fastest the CPU has.
napi_value JsCrc32c(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!GetArgs(env, info, 3, argv, "crc32c: expected (bytes, initial, path)")) return nullptr;
  uint8_t* data = nullptr;
  size_t length = 0;
  uint32_t initial = 0;
  uint32_t path = 0;
  if (!GetBytes(env, argv[0], "crc32c: bytes must be a Uint8Array", &data, &length) ||
      !GetUint32(env, argv[1], "crc32c: initial must be a u32", &initial) ||
      !GetUint32(env, argv[2], "crc32c: path must be 0, 1 or 2", &path)) {
    return nullptr;
  }
  if (path > kCrcBest) {
    napi_throw_range_error(env, nullptr, "crc32c: path must be 0, 1 or 2");
    return nullptr;
  }
  napi_value result;
  napi_create_uint32(env, Crc32c(initial, data, length, path), &result);
  return result;
}

// xxh3Frames(bytes: Uint8Array, bounds: Uint32Array, count: number, write: boolean,
//            portable: boolean): number
//
// Frame i spans bytes[bounds[i], bounds[i + 1]); its first 8 bytes hold XXH3-64 (LE) of the rest.
// write: stores each frame's hash there and returns -1. Otherwise: returns the index of the first
// frame whose stored hash differs, or -1.
napi_value JsXxh3Frames(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!GetArgs(env, info, 5, argv, "xxh3Frames: expected (bytes, bounds, count, write, portable)")) return nullptr;
  uint8_t* data = nullptr;
  size_t length = 0;
  uint32_t* bounds = nullptr;
  size_t bounds_length = 0;
  uint32_t count = 0;
  if (!GetBytes(env, argv[0], "xxh3Frames: bytes must be a Uint8Array", &data, &length) ||
      !GetUint32Array(env, argv[1], "xxh3Frames: bounds must be a Uint32Array", &bounds, &bounds_length) ||
      !GetUint32(env, argv[2], "xxh3Frames: count must be a u32", &count)) {
    return nullptr;
  }
  const bool write = GetFlag(env, argv[3]);
  const bool portable = GetFlag(env, argv[4]);
  if (static_cast<size_t>(count) + 1 > bounds_length) {
    napi_throw_range_error(env, nullptr, "xxh3Frames: bounds holds fewer than count + 1 entries");
    return nullptr;
  }
  // All bounds are checked before any frame is written (a bad bound in a well-formed call rewrites
  // nothing), and each is checked again as it is used: memory safety even if `bounds` shares
  // memory with `bytes` and a rewrite changes a later bound.
  for (uint32_t i = 0; i < count; i++) {
    if (bounds[i] + static_cast<size_t>(8) > bounds[i + 1] || bounds[i + 1] > length) {
      napi_throw_range_error(env, nullptr, "xxh3Frames: a frame is shorter than 8 bytes or outside bytes");
      return nullptr;
    }
  }
  int64_t mismatch = -1;
  for (uint32_t i = 0; i < count; i++) {
    // Read each bound once (bounds may share memory with bytes) and re-check it before use.
    const size_t start = bounds[i];
    const size_t end = bounds[i + 1];
    if (start + 8 > end || end > length) {
      napi_throw_range_error(env, nullptr, "xxh3Frames: bounds changed while hashing");
      return nullptr;
    }
    uint8_t* frame = data + start;
    const uint64_t hash = Xxh3(frame + 8, end - start - 8, portable);
    if (write) {
      std::memcpy(frame, &hash, 8);
    } else if (Load64(frame) != hash) {
      mismatch = i;
      break;
    }
  }
  napi_value result;
  napi_create_int64(env, mismatch, &result);
  return result;
}

// xxh3(bytes: Uint8Array, portable: boolean): bigint
napi_value JsXxh3(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!GetArgs(env, info, 2, argv, "xxh3: expected (bytes, portable)")) return nullptr;
  uint8_t* data = nullptr;
  size_t length = 0;
  if (!GetBytes(env, argv[0], "xxh3: bytes must be a Uint8Array", &data, &length)) return nullptr;
  napi_value result;
  napi_create_bigint_uint64(env, Xxh3(data, length, GetFlag(env, argv[1])), &result);
  return result;
}

// startWritebackAsync(fd: number, offset: number, length: number, done: (errno: number) => void): void
//
// Asks the kernel to start writing back the dirty pages of a file range (sync_file_range with
// SYNC_FILE_RANGE_WRITE) on libuv's thread pool: the call can block while the device queue is
// full, so it stays off the event loop. `done` gets 0 or the errno (ENOSYS off Linux). The log
// calls it every few MiB under the 'interval' policy so that the dirty data a periodic fsync (and
// ext4's journal commit) must flush stays small. It makes nothing durable. The caller keeps `fd`
// open until `done` runs.
//
// preallocateAsync(fd: number, offset: number, length: number, done: (errno: number) => void): void
//
// Reserves disk blocks for a file range without changing the file size (fallocate with
// FALLOC_FL_KEEP_SIZE), on the thread pool. `done` gets 0 or the errno (EOPNOTSUPP where the
// filesystem cannot, ENOSYS off Linux). Segments of topics that ask for preallocation reserve
// their whole size when created, so writeback of appends finds the blocks allocated. The size
// stays at the data's end, so recovery reads exactly what was written; an ftruncate to the size
// releases what was not used.
// Thread-pool work with a JavaScript `done` callback: QueueWork keeps `done` alive and queues the
// work; FinishWork (in the completion) calls done(arg), then frees the reference and the work.
bool QueueWork(napi_env env, napi_value done, const char* name, napi_async_execute_callback execute, napi_async_complete_callback complete, void* data,
               napi_async_work* work, napi_ref* done_ref) {
  napi_value resource_name;
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name);
  if (napi_create_reference(env, done, 1, done_ref) != napi_ok || napi_create_async_work(env, nullptr, resource_name, execute, complete, data, work) != napi_ok ||
      napi_queue_async_work(env, *work) != napi_ok) {
    if (*work != nullptr) napi_delete_async_work(env, *work);
    if (*done_ref != nullptr) napi_delete_reference(env, *done_ref);
    napi_throw_error(env, nullptr, "could not queue the work");
    return false;
  }
  return true;
}

void FinishWork(napi_env env, napi_ref done_ref, napi_async_work work, napi_value arg) {
  napi_value done;
  napi_value global;
  // done always runs (its caller may be waiting on it): with undefined if no result could be made.
  if (arg == nullptr) napi_get_undefined(env, &arg);
  if (napi_get_reference_value(env, done_ref, &done) == napi_ok && napi_get_global(env, &global) == napi_ok) {
    napi_call_function(env, global, done, 1, &arg, nullptr);
  }
  napi_delete_reference(env, done_ref);
  napi_delete_async_work(env, work);
}

enum class FileOp { kWriteback, kPreallocate };

struct FileWork {
  napi_async_work work = nullptr;
  napi_ref done = nullptr;
  FileOp op = FileOp::kWriteback;
  int32_t fd = -1;
  int64_t offset = 0;
  int64_t length = 0;
  int rc = 0;
};

void ExecuteFileWork(napi_env, void* data) {
  auto* w = static_cast<FileWork*>(data);
#if defined(__linux__)
  if (w->op == FileOp::kWriteback) {
    w->rc = sync_file_range(w->fd, w->offset, w->length, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
  } else {
    w->rc = fallocate(w->fd, FALLOC_FL_KEEP_SIZE, w->offset, w->length) == 0 ? 0 : errno;
  }
#else
  w->rc = ENOSYS;
#endif
}

void CompleteFileWork(napi_env env, napi_status status, void* data) {
  auto* w = static_cast<FileWork*>(data);
  napi_value arg = nullptr;
  napi_create_int32(env, status == napi_ok ? w->rc : ECANCELED, &arg);
  FinishWork(env, w->done, w->work, arg);
  delete w;
}

// Both functions: (fd, offset, length, done), queued on the thread pool.
napi_value QueueFileWork(napi_env env, napi_callback_info info, FileOp op, const char* name, const char* usage) {
  napi_value argv[4];
  if (!GetArgs(env, info, 4, argv, usage)) return nullptr;
  auto* w = new FileWork();
  w->op = op;
  napi_valuetype done_type = napi_undefined;
  if (napi_get_value_int32(env, argv[0], &w->fd) != napi_ok || napi_get_value_int64(env, argv[1], &w->offset) != napi_ok ||
      napi_get_value_int64(env, argv[2], &w->length) != napi_ok || napi_typeof(env, argv[3], &done_type) != napi_ok ||
      done_type != napi_function || w->fd < 0 || w->offset < 0 || w->length < 0) {
    delete w;
    napi_throw_type_error(env, nullptr, usage);
    return nullptr;
  }
  if (!QueueWork(env, argv[3], name, ExecuteFileWork, CompleteFileWork, w, &w->work, &w->done)) delete w;
  return nullptr;
}

napi_value JsStartWriteback(napi_env env, napi_callback_info info) {
  return QueueFileWork(env, info, FileOp::kWriteback, "quartet.startWritebackAsync",
                       "startWritebackAsync: expected (fd, offset, length, done), non-negative integers and a function");
}

napi_value JsPreallocate(napi_env env, napi_callback_info info) {
  return QueueFileWork(env, info, FileOp::kPreallocate, "quartet.preallocateAsync",
                       "preallocateAsync: expected (fd, offset, length, done), non-negative integers and a function");
}

// ----------------------------------------------------------------------------------------------
// Socket sender: file ranges written to a TCP socket with sendfile(2), so that the bytes of a
// poll or fetch reply go from the page cache to the socket without passing through JavaScript
// buffers (no pread copy, no copy from a user buffer into the socket).
//
// socketSenderOpen(fd: number): SocketSender   (an opaque external)
//   dup()s the socket's fd: every later call uses the duplicate, so a socket that Node closes
//   meanwhile (its fd number then free for reuse) is never confused with another one. The caller
//   writes nothing else to the socket while it sends through the duplicate.
// socketSenderSendFile(s, fileFd, position, length, done: (result: number) => void): void
//   On the thread pool (sendfile reads pages that are not cached from the disk, which must not
//   block the event loop): sends file bytes [position, position + length) until done or until the
//   socket's buffer is full (the socket is non-blocking, as libuv leaves it). done gets the bytes
//   sent (fewer than length: wait, then send the rest), or -errno: a socket error, -ENODATA when
//   the file ends first, -EBADF once closed. One send at a time; the caller keeps fileFd open.
// socketSenderWait(s, done: (status: number) => void): void
//   Calls done(0) once the socket is writable (or done(uv error) if polling fails). One wait at a
//   time. After socketSenderClose, done is never called.
// socketSenderClose(s): void
//   Stops any wait and closes the duplicate (after a send still running on the thread pool has
//   returned). Idempotent; the external's finalizer does it too.
struct SocketSender {
  napi_env env = nullptr;
  int fd = -1;
  bool closed = false;
  // A sendfile is running on the thread pool: the duplicate stays open until it returns.
  bool sending = false;
  // Inside the wait callback: the async context it runs under is destroyed after it returns.
  bool in_callback = false;
  // Owners: the JavaScript external, the poll handle while it is open, a send in flight; freed at zero.
  int owners = 1;
  uv_poll_t* poll = nullptr;
  bool poll_closing = false;
  napi_ref done = nullptr;
  napi_async_context async_context = nullptr;
};

void ReleaseSender(SocketSender* s) {
  if (--s->owners == 0) delete s;
}

// The duplicate goes once the sender is closed, no send uses it and epoll no longer watches it.
void MaybeCloseSenderFd(SocketSender* s) {
  if (s->closed && !s->sending && s->poll == nullptr && !s->poll_closing && s->fd >= 0) {
    close(s->fd);
    s->fd = -1;
  }
}

void OnSenderPollClosed(uv_handle_t* handle) {
  auto* s = static_cast<SocketSender*>(handle->data);
  delete reinterpret_cast<uv_poll_t*>(handle);
  s->poll_closing = false;
  MaybeCloseSenderFd(s);
  ReleaseSender(s);
}

void CloseSender(SocketSender* s, bool can_touch_js) {
  if (s->closed) return;
  s->closed = true;
  if (s->done != nullptr && can_touch_js) napi_delete_reference(s->env, s->done);
  s->done = nullptr;
  if (s->async_context != nullptr && can_touch_js && !s->in_callback) {
    napi_async_destroy(s->env, s->async_context);
    s->async_context = nullptr;
  }
  if (s->poll != nullptr) {
    uv_poll_stop(s->poll);
    uv_close(reinterpret_cast<uv_handle_t*>(s->poll), OnSenderPollClosed);
    s->poll = nullptr;
    s->poll_closing = true;
  }
  MaybeCloseSenderFd(s);
}

void FinalizeSender(napi_env, void* data, void*) {
  auto* s = static_cast<SocketSender*>(data);
  // A finalizer must not call into JavaScript: a missed close only leaks the two references.
  CloseSender(s, false);
  ReleaseSender(s);
}

SocketSender* GetSender(napi_env env, napi_value v, const char* usage) {
  void* data = nullptr;
  napi_valuetype type = napi_undefined;
  if (napi_typeof(env, v, &type) != napi_ok || type != napi_external || napi_get_value_external(env, v, &data) != napi_ok || data == nullptr) {
    napi_throw_type_error(env, nullptr, usage);
    return nullptr;
  }
  return static_cast<SocketSender*>(data);
}

// Calls `fn(arg)` from a libuv callback, under the sender's async context; an exception it throws
// is reported as uncaught instead of being left pending.
void CallFromLoop(napi_env env, napi_async_context context, napi_value fn, int32_t arg) {
  napi_value receiver;
  napi_value value;
  if (napi_get_global(env, &receiver) != napi_ok || napi_create_int32(env, arg, &value) != napi_ok) return;
  if (napi_make_callback(env, context, receiver, fn, 1, &value, nullptr) == napi_pending_exception) {
    napi_value error;
    if (napi_get_and_clear_last_exception(env, &error) == napi_ok) napi_fatal_exception(env, error);
  }
}

napi_value JsSocketSenderOpen(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  const char* usage = "socketSenderOpen: expected (fd), a non-negative integer";
  if (!GetArgs(env, info, 1, argv, usage)) return nullptr;
  int32_t fd = -1;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, nullptr, usage);
    return nullptr;
  }
#if defined(__linux__)
  const int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
#else
  const int dup_fd = -1;
  errno = ENOSYS;
#endif
  if (dup_fd < 0) {
    napi_throw_error(env, nullptr, strerror(errno));
    return nullptr;
  }
  auto* s = new SocketSender();
  s->env = env;
  s->fd = dup_fd;
  napi_value result;
  napi_value name;
  napi_create_string_utf8(env, "quartet.socketSender", NAPI_AUTO_LENGTH, &name);
  if (napi_create_external(env, s, FinalizeSender, nullptr, &result) != napi_ok) {
    close(dup_fd);
    delete s;
    napi_throw_error(env, nullptr, "socketSenderOpen: could not create the sender");
    return nullptr;
  }
  if (napi_async_init(env, result, name, &s->async_context) != napi_ok) {
    // The external owns it now: its finalizer frees it.
    CloseSender(s, true);
    napi_throw_error(env, nullptr, "socketSenderOpen: could not create the sender");
    return nullptr;
  }
  return result;
}

struct SendWork {
  napi_async_work work = nullptr;
  napi_ref done = nullptr;
  SocketSender* sender = nullptr;
  int socket_fd = -1;
  int32_t file_fd = -1;
  int64_t position = 0;
  int64_t length = 0;
  int64_t result = 0;
};

void ExecuteSendWork(napi_env, void* data) {
  auto* w = static_cast<SendWork*>(data);
#if defined(__linux__)
  off_t at = static_cast<off_t>(w->position);
  int64_t sent = 0;
  int64_t failure = 0;
  while (sent < w->length) {
    const size_t want = static_cast<size_t>(w->length - sent > 0x40000000 ? 0x40000000 : w->length - sent);
    const ssize_t n = sendfile(w->socket_fd, w->file_fd, &at, want);
    if (n > 0) {
      sent += n;
    } else if (n == 0) {
      failure = -ENODATA;
      break;
    } else if (errno == EINTR) {
      continue;
    } else {
      if (errno != EAGAIN && errno != EWOULDBLOCK) failure = -errno;
      break;
    }
  }
  w->result = failure != 0 ? failure : sent;
#else
  w->result = -ENOSYS;
#endif
}

void CompleteSendWork(napi_env env, napi_status status, void* data) {
  auto* w = static_cast<SendWork*>(data);
  SocketSender* s = w->sender;
  s->sending = false;
  MaybeCloseSenderFd(s);
  napi_value arg = nullptr;
  napi_create_int64(env, status == napi_ok ? w->result : -ECANCELED, &arg);
  FinishWork(env, w->done, w->work, arg);
  delete w;
  ReleaseSender(s);
}

napi_value JsSocketSenderSendFile(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  const char* usage = "socketSenderSendFile: expected (sender, fileFd, position, length, done), non-negative integers and a function";
  if (!GetArgs(env, info, 5, argv, usage)) return nullptr;
  SocketSender* s = GetSender(env, argv[0], usage);
  if (s == nullptr) return nullptr;
  int32_t file_fd = -1;
  int64_t position = -1;
  int64_t length = -1;
  napi_valuetype done_type = napi_undefined;
  if (napi_get_value_int32(env, argv[1], &file_fd) != napi_ok || napi_get_value_int64(env, argv[2], &position) != napi_ok ||
      napi_get_value_int64(env, argv[3], &length) != napi_ok || napi_typeof(env, argv[4], &done_type) != napi_ok ||
      done_type != napi_function || file_fd < 0 || position < 0 || length < 0) {
    napi_throw_type_error(env, nullptr, usage);
    return nullptr;
  }
  if (s->closed || s->sending) {
    napi_throw_error(env, nullptr, s->closed ? "socketSenderSendFile: the sender is closed" : "socketSenderSendFile: a send is already running");
    return nullptr;
  }
  auto* w = new SendWork();
  w->sender = s;
  w->socket_fd = s->fd;
  w->file_fd = file_fd;
  w->position = position;
  w->length = length;
  if (!QueueWork(env, argv[4], "quartet.socketSenderSendFile", ExecuteSendWork, CompleteSendWork, w, &w->work, &w->done)) {
    delete w;
    return nullptr;
  }
  // The completion (on this thread, later) clears it and drops the owner.
  s->sending = true;
  s->owners++;
  return nullptr;
}

void OnSenderWritable(uv_poll_t* poll, int status, int) {
  auto* s = static_cast<SocketSender*>(poll->data);
  uv_poll_stop(poll);
  if (s->closed || s->done == nullptr) return;
  napi_env env = s->env;
  napi_ref done_ref = s->done;
  s->done = nullptr;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value done;
  if (napi_get_reference_value(env, done_ref, &done) == napi_ok) {
    // Through make_callback, so the promise reactions it queues run when it returns. They may
    // close the sender: its async context is destroyed only after the call.
    s->in_callback = true;
    CallFromLoop(env, s->async_context, done, status < 0 ? status : 0);
    s->in_callback = false;
  }
  napi_delete_reference(env, done_ref);
  if (s->closed && s->async_context != nullptr) {
    napi_async_destroy(env, s->async_context);
    s->async_context = nullptr;
  }
  napi_close_handle_scope(env, scope);
}

napi_value JsSocketSenderWait(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  const char* usage = "socketSenderWait: expected (sender, done), done a function";
  if (!GetArgs(env, info, 2, argv, usage)) return nullptr;
  SocketSender* s = GetSender(env, argv[0], usage);
  if (s == nullptr) return nullptr;
  napi_valuetype type = napi_undefined;
  if (napi_typeof(env, argv[1], &type) != napi_ok || type != napi_function) {
    napi_throw_type_error(env, nullptr, usage);
    return nullptr;
  }
  if (s->closed || s->done != nullptr) {
    napi_throw_error(env, nullptr, s->closed ? "socketSenderWait: the sender is closed" : "socketSenderWait: already waiting");
    return nullptr;
  }
  if (s->poll == nullptr) {
    uv_loop_t* loop = nullptr;
    auto* poll = new uv_poll_t();
    if (napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, poll, s->fd) != 0) {
      delete poll;
      napi_throw_error(env, nullptr, "socketSenderWait: could not poll the socket");
      return nullptr;
    }
    poll->data = s;
    s->poll = poll;
    s->owners++;
  }
  const int rc = uv_poll_start(s->poll, UV_WRITABLE, OnSenderWritable);
  if (rc != 0) {
    napi_throw_error(env, nullptr, uv_strerror(rc));
    return nullptr;
  }
  napi_create_reference(env, argv[1], 1, &s->done);
  return nullptr;
}

napi_value JsSocketSenderClose(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  const char* usage = "socketSenderClose: expected (sender)";
  if (!GetArgs(env, info, 1, argv, usage)) return nullptr;
  SocketSender* s = GetSender(env, argv[0], usage);
  if (s == nullptr) return nullptr;
  CloseSender(s, true);
  return nullptr;
}

// ----------------------------------------------------------------------------------------------
// Recycled buffers: memory for large frames a client assembles from the socket (an Iggy poll
// reply of ~1 MB), handed out as Buffers whose memory goes back to a small free list when V8 has
// collected the Buffer and every view of it, instead of back to malloc.
//
// Why: glibc may give large freed blocks back to the kernel (munmap, or trimming the heap top);
// a fresh 1 MB Buffer per reply is then faulted in page by page and zeroed by the kernel on first
// touch, up to ~0.2 ms of CPU per 1 MB reply in a read-back probe (docs/benchmarks.md, sixth
// session). Reused memory is already mapped.
//
// Nothing is reused while a view of it can still be used. Node calls the finalizer on the thread
// of the environment that made the Buffer, after V8 has freed the backing store; or, when that
// environment (a worker) shuts down, from its cleanup hook after detaching the still-live
// ArrayBuffers (their views then have length 0), so the block is unreachable either way.
//
// recycledBuffer(length: number): Buffer   (an integer, 1..2^31-1; contents are whatever was there)
// recycledBufferStats(): { fresh, reused, freeBlocks, freeBytes, finalized, evicted }
//
// The free list is process-wide (worker threads share it, hence the mutex) and bounded by block
// count and bytes: a block that does not fit evicts the oldest ones (freed), so the list follows
// the sizes in use; a block larger than the whole bound is freed at once. A request takes the
// smallest free block that fits and is at most twice its size, else malloc's.
constexpr size_t kRecycledStep = 64 * 1024;
constexpr size_t kRecycledBlocksMax = 32;
constexpr size_t kRecycledBytesMax = 64 * 1024 * 1024;

struct RecycledPool {
  uv_mutex_t mutex;
  // Oldest first.
  void* blocks[kRecycledBlocksMax];
  size_t capacities[kRecycledBlocksMax];
  size_t count = 0;
  size_t bytes = 0;
  double fresh = 0;
  double reused = 0;
  double finalized = 0;
  double evicted = 0;
  RecycledPool() {
    if (uv_mutex_init(&mutex) != 0) abort();
  }
};

RecycledPool& Recycled() {
  static RecycledPool pool;  // initialised once, thread-safely (C++11 statics)
  return pool;
}

// Removes block i (keeping the order); the caller holds the mutex.
void RemoveRecycled(RecycledPool& pool, size_t i) {
  pool.bytes -= pool.capacities[i];
  for (size_t j = i + 1; j < pool.count; j++) {
    pool.blocks[j - 1] = pool.blocks[j];
    pool.capacities[j - 1] = pool.capacities[j];
  }
  pool.count--;
}

void FinalizeRecycled(napi_env, void* data, void* hint) {
  const size_t capacity = reinterpret_cast<size_t>(hint);
  void* evicted[kRecycledBlocksMax + 1];
  size_t n_evicted = 0;
  RecycledPool& pool = Recycled();
  uv_mutex_lock(&pool.mutex);
  pool.finalized++;
  if (capacity > kRecycledBytesMax) {
    evicted[n_evicted++] = data;
  } else {
    while (pool.count > 0 && (pool.count == kRecycledBlocksMax || pool.bytes + capacity > kRecycledBytesMax)) {
      evicted[n_evicted++] = pool.blocks[0];
      RemoveRecycled(pool, 0);
    }
    pool.blocks[pool.count] = data;
    pool.capacities[pool.count] = capacity;
    pool.count++;
    pool.bytes += capacity;
  }
  pool.evicted += static_cast<double>(n_evicted);
  uv_mutex_unlock(&pool.mutex);
  for (size_t i = 0; i < n_evicted; i++) free(evicted[i]);
}

// The smallest free block that fits `capacity` and is at most twice it, taken off the list; or null.
void* TakeRecycled(size_t capacity, size_t* taken_capacity) {
  RecycledPool& pool = Recycled();
  uv_mutex_lock(&pool.mutex);
  size_t best = pool.count;
  for (size_t i = 0; i < pool.count; i++) {
    const size_t cap = pool.capacities[i];
    if (cap >= capacity && cap <= 2 * capacity && (best == pool.count || cap < pool.capacities[best])) best = i;
  }
  void* block = nullptr;
  if (best < pool.count) {
    block = pool.blocks[best];
    *taken_capacity = pool.capacities[best];
    RemoveRecycled(pool, best);
    pool.reused++;
  }
  uv_mutex_unlock(&pool.mutex);
  return block;
}

napi_value JsRecycledBuffer(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  const char* usage = "recycledBuffer: expected (length), an integer from 1 to 2^31 - 1";
  if (!GetArgs(env, info, 1, argv, usage)) return nullptr;
  double length = 0;
  if (napi_get_value_double(env, argv[0], &length) != napi_ok || !(length >= 1 && length <= 2147483647.0) || length != static_cast<double>(static_cast<int64_t>(length))) {
    napi_throw_range_error(env, nullptr, usage);
    return nullptr;
  }
  const size_t wanted = static_cast<size_t>(length);
  const size_t capacity = (wanted + kRecycledStep - 1) / kRecycledStep * kRecycledStep;
  size_t block_capacity = capacity;
  void* block = TakeRecycled(capacity, &block_capacity);
  if (block == nullptr) {
    block = malloc(capacity);
    if (block == nullptr) {
      napi_throw_error(env, "ENOMEM", "recycledBuffer: out of memory");
      return nullptr;
    }
    RecycledPool& pool = Recycled();
    uv_mutex_lock(&pool.mutex);
    pool.fresh++;
    uv_mutex_unlock(&pool.mutex);
  }
  napi_value result;
  const napi_status status = napi_create_external_buffer(env, wanted, block, FinalizeRecycled, reinterpret_cast<void*>(block_capacity), &result);
  if (status != napi_ok) {
    // A generic failure comes from node::Buffer::New, which has already called, or will call, the
    // finalizer: the block is Node's now. Every other status is returned before Node takes it.
    if (status != napi_generic_failure) free(block);
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (!pending) napi_throw_error(env, nullptr, "recycledBuffer: could not create the buffer");
    return nullptr;
  }
  return result;
}

napi_value JsRecycledBufferStats(napi_env env, napi_callback_info) {
  RecycledPool& pool = Recycled();
  uv_mutex_lock(&pool.mutex);
  const double values[6] = {pool.fresh, pool.reused, static_cast<double>(pool.count), static_cast<double>(pool.bytes), pool.finalized, pool.evicted};
  uv_mutex_unlock(&pool.mutex);
  const char* names[6] = {"fresh", "reused", "freeBlocks", "freeBytes", "finalized", "evicted"};
  napi_value result;
  napi_create_object(env, &result);
  for (int i = 0; i < 6; i++) {
    napi_value v;
    napi_create_double(env, values[i], &v);
    napi_set_named_property(env, result, names[i], v);
  }
  return result;
}

napi_value Init(napi_env env, napi_value exports) {
  InitCrcTables();
  BuildZerosOperator(&zeros_long, kLongBlock);
  BuildZerosOperator(&zeros_short, kShortBlock);
#if QUARTET_X86
  __builtin_cpu_init();
  use_sse42 = __builtin_cpu_supports("sse4.2");
  use_avx2 = __builtin_cpu_supports("avx2");
  use_vpclmul = use_sse42 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("vpclmulqdq");
  fold_2048 = FoldBy(2048);
  fold_512 = FoldBy(512);
  fold_384 = FoldBy(384);
  fold_256 = FoldBy(256);
  fold_128 = FoldBy(128);
#endif
  napi_value fn;
  napi_create_function(env, "crc32c", NAPI_AUTO_LENGTH, JsCrc32c, nullptr, &fn);
  napi_set_named_property(env, exports, "crc32c", fn);
  napi_create_function(env, "xxh3Frames", NAPI_AUTO_LENGTH, JsXxh3Frames, nullptr, &fn);
  napi_set_named_property(env, exports, "xxh3Frames", fn);
  napi_create_function(env, "xxh3", NAPI_AUTO_LENGTH, JsXxh3, nullptr, &fn);
  napi_set_named_property(env, exports, "xxh3", fn);
  napi_create_function(env, "startWritebackAsync", NAPI_AUTO_LENGTH, JsStartWriteback, nullptr, &fn);
  napi_set_named_property(env, exports, "startWritebackAsync", fn);
  napi_create_function(env, "preallocateAsync", NAPI_AUTO_LENGTH, JsPreallocate, nullptr, &fn);
  napi_set_named_property(env, exports, "preallocateAsync", fn);
  napi_create_function(env, "socketSenderOpen", NAPI_AUTO_LENGTH, JsSocketSenderOpen, nullptr, &fn);
  napi_set_named_property(env, exports, "socketSenderOpen", fn);
  napi_create_function(env, "socketSenderSendFile", NAPI_AUTO_LENGTH, JsSocketSenderSendFile, nullptr, &fn);
  napi_set_named_property(env, exports, "socketSenderSendFile", fn);
  napi_create_function(env, "socketSenderWait", NAPI_AUTO_LENGTH, JsSocketSenderWait, nullptr, &fn);
  napi_set_named_property(env, exports, "socketSenderWait", fn);
  napi_create_function(env, "socketSenderClose", NAPI_AUTO_LENGTH, JsSocketSenderClose, nullptr, &fn);
  napi_set_named_property(env, exports, "socketSenderClose", fn);
  napi_create_function(env, "recycledBuffer", NAPI_AUTO_LENGTH, JsRecycledBuffer, nullptr, &fn);
  napi_set_named_property(env, exports, "recycledBuffer", fn);
  napi_create_function(env, "recycledBufferStats", NAPI_AUTO_LENGTH, JsRecycledBufferStats, nullptr, &fn);
  napi_set_named_property(env, exports, "recycledBufferStats", fn);
  napi_value flag;
  napi_get_boolean(env, use_sse42, &flag);
  napi_set_named_property(env, exports, "sse42", flag);
  napi_get_boolean(env, use_avx2, &flag);
  napi_set_named_property(env, exports, "avx2", flag);
  napi_get_boolean(env, use_vpclmul, &flag);
  napi_set_named_property(env, exports, "vpclmul", flag);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
