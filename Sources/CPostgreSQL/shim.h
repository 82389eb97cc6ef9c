// libpq, PostgreSQL's client library (Debian's libpq-dev; pkg-config's libpq adds its include directory).
#include <libpq-fe.h>
