#ifndef C_AUTOSAVE_SHIMS_H
#define C_AUTOSAVE_SHIMS_H

// Linux calls and types that plain Glibc hides from Swift without _GNU_SOURCE (renameat2, struct ucred).
// Declarations only.
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>

/// `renameat2(…, RENAME_NOREPLACE)`: fails with EEXIST instead of replacing an existing name.
static inline int CAutosaveShims_renameNoReplace(int fromDirectory, const char *_Nonnull from, int toDirectory,
                                                 const char *_Nonnull to) {
    return renameat2(fromDirectory, from, toDirectory, to, RENAME_NOREPLACE);
}

#endif
