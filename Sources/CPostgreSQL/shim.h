// libpq's declarations only (Debian's libpq-dev): the library itself is opened at run time, when a
// PostgreSQL store is first used (Sources/Database/LibPQ.swift), so nothing here is linked.
#include <postgresql/libpq-fe.h>
