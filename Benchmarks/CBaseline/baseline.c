// The C baseline: SQLite point select / INSERT and libsodium XChaCha20-Poly1305, with the
// columns of Keygate's items table and the identity and access control as associated data.

#include "KeygateBenchC.h"

#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kb_store {
    sqlite3 *db;
    sqlite3_stmt *select;
    sqlite3_stmt *insert;
    unsigned char key[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
};

static const char *schema =
    "CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY AUTOINCREMENT, agrp TEXT NOT NULL,"
    " acct TEXT NOT NULL, svce TEXT NOT NULL, sync INTEGER NOT NULL, labl TEXT, gena BLOB,"
    " pdmn TEXT NOT NULL, accc TEXT NOT NULL, cdat INTEGER NOT NULL, mdat INTEGER NOT NULL,"
    " nonce BLOB NOT NULL, value BLOB NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS items_primary_key ON items (agrp, acct, svce, sync);";

static const char *group = "keygate";
static const char *account = "bench";
static const char *control = "ak;dacl(true)";

// The benchmark's fixed key: the baseline measures cost, not key management.
static void fixed_key(unsigned char *key) {
    for (size_t i = 0; i < crypto_aead_xchacha20poly1305_ietf_KEYBYTES; i++) key[i] = (unsigned char)(i * 7 + 1);
}

static size_t associated_data(char *out, size_t capacity, const char *service) {
    int length = snprintf(out, capacity, "%s\037%s\037%s\0370\037%s", group, account, service, control);
    return length < 0 ? 0 : (size_t)length;
}

static int prepare(kb_store *store) {
    if (sqlite3_prepare_v3(store->db, "SELECT nonce, value, accc FROM items WHERE agrp = ? AND acct = ? AND svce = ? AND sync = 0",
                           -1, SQLITE_PREPARE_PERSISTENT, &store->select, NULL) != SQLITE_OK) return -1;
    if (sqlite3_prepare_v3(store->db,
                           "INSERT INTO items (agrp, acct, svce, sync, labl, gena, pdmn, accc, cdat, mdat, nonce, value)"
                           " VALUES (?, ?, ?, 0, NULL, NULL, 'ak', ?, ?, ?, ?, ?)",
                           -1, SQLITE_PREPARE_PERSISTENT, &store->insert, NULL) != SQLITE_OK) return -1;
    return 0;
}

static kb_store *open_store(const char *path) {
    if (sodium_init() < 0) return NULL;
    kb_store *store = calloc(1, sizeof *store);
    if (store == NULL) return NULL;
    fixed_key(store->key);
    if (sqlite3_open_v2(path, &store->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        sqlite3_busy_timeout(store->db, 10000) != SQLITE_OK ||
        sqlite3_exec(store->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(store->db, schema, NULL, NULL, NULL) != SQLITE_OK || prepare(store) != 0) {
        kb_close(store);
        return NULL;
    }
    return store;
}

kb_store *kb_open(const char *path) { return open_store(path); }

void kb_close(kb_store *store) {
    if (store == NULL) return;
    sqlite3_finalize(store->select);
    sqlite3_finalize(store->insert);
    sqlite3_close(store->db);
    sodium_memzero(store->key, sizeof store->key);
    free(store);
}

// Seals `length` bytes for `service` and runs the prepared INSERT (not reset on busy).
static int insert(kb_store *store, const char *service, size_t length) {
    unsigned char value[4096], nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    unsigned char sealed[4096 + crypto_aead_xchacha20poly1305_ietf_ABYTES];
    char ad[256];
    unsigned long long sealed_length = 0;
    randombytes_buf(value, length);
    randombytes_buf(nonce, sizeof nonce);
    size_t ad_length = associated_data(ad, sizeof ad, service);
    crypto_aead_xchacha20poly1305_ietf_encrypt(sealed, &sealed_length, value, length, (unsigned char *)ad, ad_length,
                                               NULL, nonce, store->key);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t nanoseconds = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    sqlite3_stmt *statement = store->insert;
    sqlite3_reset(statement);
    sqlite3_bind_text(statement, 1, group, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 2, account, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 3, service, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(statement, 4, control, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 5, nanoseconds);
    sqlite3_bind_int64(statement, 6, nanoseconds);
    sqlite3_bind_blob(statement, 7, nonce, sizeof nonce, SQLITE_TRANSIENT);
    sqlite3_bind_blob(statement, 8, sealed, (int)sealed_length, SQLITE_TRANSIENT);
    int status = sqlite3_step(statement);
    sqlite3_reset(statement);
    return status;
}

int kb_create(const char *path, int64_t small, int64_t large) {
    remove(path);
    char extra[4096];
    snprintf(extra, sizeof extra, "%s-wal", path);
    remove(extra);
    snprintf(extra, sizeof extra, "%s-shm", path);
    remove(extra);
    kb_store *store = open_store(path);
    if (store == NULL) return -1;
    int failed = sqlite3_exec(store->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK;
    char service[64];
    for (int64_t i = 0; !failed && i < small; i++) {
        snprintf(service, sizeof service, "svc-%lld", (long long)i);
        failed = insert(store, service, 64) != SQLITE_DONE;
    }
    for (int64_t i = 0; !failed && i < large; i++) {
        snprintf(service, sizeof service, "big-%lld", (long long)i);
        failed = insert(store, service, 4096) != SQLITE_DONE;
    }
    failed = failed || sqlite3_exec(store->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK;
    sqlite3_exec(store->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    kb_close(store);
    return failed ? -1 : 0;
}

int64_t kb_read(kb_store *store, int64_t index, int large, uint8_t *out, size_t capacity) {
    char service[64], ad[256];
    snprintf(service, sizeof service, large ? "big-%lld" : "svc-%lld", (long long)index);
    sqlite3_stmt *statement = store->select;
    sqlite3_bind_text(statement, 1, group, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 2, account, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 3, service, -1, SQLITE_STATIC);
    int64_t result = -1;
    if (sqlite3_step(statement) == SQLITE_ROW) {
        const unsigned char *nonce = sqlite3_column_blob(statement, 0);
        const unsigned char *sealed = sqlite3_column_blob(statement, 1);
        int sealed_length = sqlite3_column_bytes(statement, 1);
        const char *row_control = (const char *)sqlite3_column_text(statement, 2);
        size_t ad_length = associated_data(ad, sizeof ad, service);
        unsigned long long length = 0;
        if (nonce != NULL && sealed != NULL && row_control != NULL &&
            sqlite3_column_bytes(statement, 0) == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES &&
            (size_t)sealed_length <= capacity + crypto_aead_xchacha20poly1305_ietf_ABYTES &&
            crypto_aead_xchacha20poly1305_ietf_decrypt(out, &length, NULL, sealed, (unsigned long long)sealed_length,
                                                       (unsigned char *)ad, ad_length, nonce, store->key) == 0) {
            result = (int64_t)length;
        }
    }
    sqlite3_reset(statement);
    return result;
}

int64_t kb_add(kb_store *store, int64_t tag, int64_t index) {
    char service[64];
    snprintf(service, sizeof service, "add-%lld-%lld", (long long)tag, (long long)index);
    int64_t retries = 0;
    for (;;) {
        int status = insert(store, service, 64);
        if (status == SQLITE_DONE) return retries;
        if ((status & 0xff) != SQLITE_BUSY || retries > 1000) return -1;
        retries++;
    }
}

int64_t kb_count(kb_store *store) {
    sqlite3_stmt *statement = NULL;
    int64_t count = -1;
    if (sqlite3_prepare_v2(store->db, "SELECT count(*) FROM items", -1, &statement, NULL) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
        count = sqlite3_column_int64(statement, 0);
    }
    sqlite3_finalize(statement);
    return count;
}
