// SHA-256 (FIPS 180-4) on the x86-64 SHA extensions: the message schedule with SHA256MSG1 and
// SHA256MSG2, the rounds two at a time with SHA256RNDS2. Checked against libsodium in KeygateAuditTests.

#include "CAuditHash.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// Runs the compression function over `blocks` 64-byte blocks. `state` is a..h.
__attribute__((target("sha,sse4.1,ssse3"))) static void compress(uint32_t state[8], const uint8_t *data,
                                                                    size_t blocks) {
    // The instructions keep the state as ABEF and CDGH (highest lane first).
    __m128i abcd = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i efgh = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i badc = _mm_shuffle_epi32(abcd, 0xB1);
    __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);
    __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);
    __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);
    // Reverses the bytes of each 32-bit word (the message is big-endian).
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    while (blocks-- > 0) {
        // The last 16 words of the schedule, four to a vector, oldest first.
        __m128i words[4];
        for (int i = 0; i < 4; i++) words[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * i)), swap);
        __m128i abef_before = abef;
        __m128i cdgh_before = cdgh;
        for (int t = 0; t < 64; t += 4) {
            __m128i next;
            if (t < 16) {
                next = words[t / 4];
            } else {
                // W[t..t+3] from W[t-16..t-1]: MSG1 adds sigma0, the aligned words add W[t-7..t-4],
                // MSG2 adds sigma1.
                next = _mm_sha256msg2_epu32(
                    _mm_add_epi32(_mm_sha256msg1_epu32(words[0], words[1]), _mm_alignr_epi8(words[3], words[2], 4)),
                    words[3]);
                words[0] = words[1];
                words[1] = words[2];
                words[2] = words[3];
                words[3] = next;
            }
            __m128i keyed = _mm_add_epi32(next, _mm_loadu_si128((const __m128i *)&round_constants[t]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, keyed);
            keyed = _mm_shuffle_epi32(keyed, 0x0E);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, keyed);
        }
        abef = _mm_add_epi32(abef, abef_before);
        cdgh = _mm_add_epi32(cdgh, cdgh_before);
        data += 64;
    }
    __m128i abfe = _mm_shuffle_epi32(abef, 0x1B);
    __m128i ghcd = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(abfe, ghcd, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(ghcd, abfe, 8));
}

static int detect(void) {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    int ssse3 = (ecx >> 9) & 1, sse41 = (ecx >> 19) & 1;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    int sha = (ebx >> 29) & 1;
    return ssse3 && sse41 && sha;
}

int keygate_sha256_accelerated(void) {
    static int known = -1;  // a benign race: every thread computes the same answer
    if (known < 0) known = detect();
    return known;
}

int keygate_sha256(uint8_t digest[32], const uint8_t *input, size_t length) {
    if (!keygate_sha256_accelerated()) return -1;
    uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t whole = length / 64;
    if (whole > 0) compress(state, input, whole);
    // The last partial block, the 0x80 marker, zeros and the length in bits (one or two blocks).
    uint8_t tail[128];
    size_t rest = length - whole * 64;
    memset(tail, 0, sizeof tail);
    if (rest > 0) memcpy(tail, input + whole * 64, rest);
    tail[rest] = 0x80;
    size_t tail_length = rest < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)length * 8;
    for (int i = 0; i < 8; i++) tail[tail_length - 1 - i] = (uint8_t)(bits >> (8 * i));
    compress(state, tail, tail_length / 64);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)state[i];
    }
    return 0;
}

#else

int keygate_sha256_accelerated(void) { return 0; }

int keygate_sha256(uint8_t digest[32], const uint8_t *input, size_t length) {
    (void)digest;
    (void)input;
    (void)length;
    return -1;
}

#endif
