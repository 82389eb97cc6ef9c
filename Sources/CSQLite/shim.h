#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
/* SQLite's declarations only (Debian's libsqlite3-dev): the library itself is opened at run time, when
   a link store is first opened (Sources/Database/LibSQLite.swift), so nothing here is linked. */
#include <sqlite3.h>
/* SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import: bound text is
   copied by SQLite before the call returns. */
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }
#endif
