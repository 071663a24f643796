#ifndef C_AUTOSAVE_SHIMS_H
#define C_AUTOSAVE_SHIMS_H

// Linux calls and types that plain Glibc hides from Swift (renameat2 without _GNU_SOURCE, the
// extended-attribute calls of <sys/xattr.h>, struct ucred's layout).
// Declarations only.
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/xattr.h>

/// `renameat2(…, RENAME_NOREPLACE)`: fails with EEXIST instead of replacing an existing name.
static inline int CAutosaveShims_renameNoReplace(int fromDirectory, const char *_Nonnull from, int toDirectory,
                                                 const char *_Nonnull to) {
    return renameat2(fromDirectory, from, toDirectory, to, RENAME_NOREPLACE);
}

/// `renameat2(…, RENAME_EXCHANGE)`: swaps the two names atomically; neither file is destroyed.
static inline int CAutosaveShims_renameExchange(int fromDirectory, const char *_Nonnull from, int toDirectory,
                                                const char *_Nonnull to) {
    return renameat2(fromDirectory, from, toDirectory, to, RENAME_EXCHANGE);
}
/// The layout of Linux's `struct ucred` (what `SO_PEERCRED` returns). Declared here rather than
/// taken from <sys/socket.h>: that header under _GNU_SOURCE clashes with Glibc's Swift module.
typedef struct {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
} CAutosaveShims_PeerCredentials;

#endif
