// The C baseline of Keygate's benchmark suite: what an embedded secret store written
// directly against SQLite and libsodium costs, with the same shape of row as Keygate's
// items table. Also a counter of heap allocations, for the evaluator's rows.
#ifndef KEYGATE_BENCH_C_H
#define KEYGATE_BENCH_C_H

#include <stdint.h>
#include <stddef.h>

/// An open baseline database (one connection, statements prepared once).
typedef struct kb_store kb_store;

/// Creates (or replaces) a baseline database at `path` holding `small` items of 64 bytes
/// (`svc-<i>`) and `large` items of 4096 bytes (`big-<i>`), all sealed with
/// XChaCha20-Poly1305, inserted in one transaction. Returns 0, or -1 on error.
int kb_create(const char *path, int64_t small, int64_t large);

/// Opens a baseline database made by kb_create (WAL, synchronous FULL, busy timeout 10 s).
kb_store *kb_open(const char *path);

/// Closes it.
void kb_close(kb_store *store);

/// One point select by primary key plus one AEAD open of item `index` (`big-<index>` when
/// `large`); the plaintext goes to `out` (`capacity` bytes). Returns its length, or -1.
int64_t kb_read(kb_store *store, int64_t index, int large, uint8_t *out, size_t capacity);

/// Seals a fresh 64-byte value and INSERTs it as `add-<tag>-<index>` in its own transaction,
/// retrying while SQLite reports SQLITE_BUSY. Returns the number of busy retries, or -1.
int64_t kb_add(kb_store *store, int64_t tag, int64_t index);

/// The number of rows in the items table, or -1.
int64_t kb_count(kb_store *store);

/// Heap allocations (malloc, calloc, realloc, aligned) made by this process so far.
uint64_t kb_allocations(void);

/// Connects to the D-Bus at `address`, owns org.freedesktop.login1 there and, on a thread of its
/// own until the process ends (or the bus goes away), answers `LockedHint` = false for login
/// session `session`, as systemd-logind does. Returns 0, or a negative errno.
int kb_logind_start(const char *address, const char *session);

/// Asks `LockedHint` of login session `session` as a client does, over a connection of its own to
/// the D-Bus at `address` (connect, authenticate, Hello, the property Get, close), with sd-bus.
/// Returns the hint (0 or 1), or a negative errno.
int kb_logind_ask(const char *address, const char *session);

/// How many `LockedHint` questions the stand-in logind has answered in this process.
int64_t kb_logind_answered(void);

/// Runs `count` PAM transactions (pam_start, pam_authenticate, pam_acct_mgmt, pam_end on this
/// thread, every prompt answered with `secret`) through the PAM library at `library` (already
/// loaded: the same handle). Returns how many succeeded, or -1 when the library cannot be used.
int64_t kb_pam_transactions(const char *library, const char *service, const char *user, const char *secret,
                            int64_t count);

#endif
