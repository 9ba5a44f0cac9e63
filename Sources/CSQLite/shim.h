#pragma once
// Debian's libsqlite3 is built with the pre-update hook; its header declares the API only with this defined.
#ifndef SQLITE_ENABLE_PREUPDATE_HOOK
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#endif
#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift cannot call; this wraps the one option epf uses.
static inline int epf_sqlite_config_memstatus(int enabled) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, enabled);
}
