#ifndef KEYGATE_CSQLITE_SHIM_H
#define KEYGATE_CSQLITE_SHIM_H

// SQLite (Debian: libsqlite3-dev).
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: bound values are copied by SQLite.
static inline sqlite3_destructor_type keygate_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// Process-wide settings, only before SQLite initialises (sqlite3_config is variadic: Swift cannot
// call it). No bulk page-cache allocation at a connection's first read (SQLITE_CONFIG_PAGECACHE
// with no memory and 0 initial pages): pages are allocated as they are first used, so a process
// that reads a few pages does not touch SQLite's default 20 up front. No memory statistics
// (SQLITE_CONFIG_MEMSTATUS off): every SQLite allocation and free otherwise takes a global mutex
// and asks malloc for the block's size to keep counts Keygate never reads (sqlite3_memory_used,
// the soft heap limit). Returns SQLITE_OK when both were set.
static inline int keygate_sqlite_configure(void) {
    int code = sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
    return code == SQLITE_OK ? sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) : code;
}

#endif
