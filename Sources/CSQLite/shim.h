// SQLite, the history database: the system's libsqlite3, so every version is kept by a real, crash-safe store.
#include <sqlite3.h>
