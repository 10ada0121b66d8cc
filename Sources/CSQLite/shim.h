#ifndef KEYGATE_CSQLITE_SHIM_H
#define KEYGATE_CSQLITE_SHIM_H

// SQLite (Debian: libsqlite3-dev).
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: bound values are copied by SQLite.
static inline sqlite3_destructor_type keygate_sqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
