// SHA-256 with the x86-64 SHA extensions, for the audit trail's hash chain (KeygateAudit).
// libsodium's SHA-256 is portable C, several times slower per byte on processors that have
// these instructions; where they are missing, keygate_sha256 says so and the caller uses
// libsodium. The result is the same SHA-256 (FIPS 180-4) either way.

#ifndef KEYGATE_AUDIT_HASH_H
#define KEYGATE_AUDIT_HASH_H

#include <stddef.h>
#include <stdint.h>

/// Whether this processor has the SHA extensions (and SSSE3 and SSE4.1), checked once.
int keygate_sha256_accelerated(void);

/// The SHA-256 of `length` bytes at `input` into `digest` (32 bytes).
/// Returns 0, or -1 without touching `digest` when the processor lacks the instructions.
int keygate_sha256(uint8_t digest[32], const uint8_t *input, size_t length);

#endif
