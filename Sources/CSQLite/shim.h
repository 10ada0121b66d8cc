#ifndef KEYGATE_CSQLITE_SHIM_H
#define KEYGATE_CSQLITE_SHIM_H

// SQLite (Debian: libsqlite3-dev).
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: bound values are copied by SQLite.
static inline sqlite3_destructor_type keygate_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// No bulk page-cache allocation at a connection's first read (SQLITE_CONFIG_PAGECACHE with no
// memory and 0 initial pages): pages are allocated as they are first used, so a process that
// reads a few pages does not touch SQLite's default 20 up front. Only before SQLite initialises
// (sqlite3_config is variadic: Swift cannot call it).
static inline int keygate_sqlite_lazy_page_cache(void) { return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0); }

#endif
