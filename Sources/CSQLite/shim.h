#pragma once
#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift cannot call; this wraps the one option epf uses.
static inline int epf_sqlite_config_memstatus(int enabled) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, enabled);
}
