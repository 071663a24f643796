#ifndef C_AUTOSAVE_SHIMS_H
#define C_AUTOSAVE_SHIMS_H

// Linux calls and types that plain Glibc hides from Swift (renameat2 without _GNU_SOURCE, the
// extended-attribute calls of <sys/xattr.h>, struct ucred's layout).
// <sys/xattr.h> is not included here: under _GNU_SOURCE it brings <sys/select.h>, whose fd_set
// clashes with Glibc's Swift module on a clean build. shims.c includes it and wraps the calls.
// Declarations only.
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>

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
/// `fcntl(fd, F_SETLEASE, type)`: `F_RDLCK` is refused with EAGAIN while any process holds the
/// file open for writing; `F_UNLCK` gives the lease back. Hidden from Swift behind _GNU_SOURCE.
static inline int CAutosaveShims_setLease(int fd, int type) { return fcntl(fd, F_SETLEASE, type); }

/// Whether a lease may be asked for: the read lease type, and the one that gives a lease back.
static inline int CAutosaveShims_readLease(void) { return F_RDLCK; }
static inline int CAutosaveShims_noLease(void) { return F_UNLCK; }

/// `malloc_trim(0)`: hands the heap's free pages back to the kernel, in every arena (glibc's
/// <malloc.h>, which Glibc's Swift module leaves out). Returns 1 when memory was released.
int malloc_trim(size_t pad);
static inline int CAutosaveShims_trimHeap(void) { return malloc_trim(0); }

/// `llistxattr`: the NUL-separated attribute names of `path` (its final symlink not followed).
long CAutosaveShims_listAttributes(const char *_Nonnull path, char *_Nullable names, size_t size);

/// `lgetxattr`: one attribute's value.
long CAutosaveShims_getAttribute(const char *_Nonnull path, const char *_Nonnull name, void *_Nullable value,
                                 size_t size);

/// `fsetxattr`: sets one attribute on an open file, creating or replacing it.
int CAutosaveShims_setAttribute(int fd, const char *_Nonnull name, const void *_Nullable value, size_t size);

/// `openat2(directory, path, {flags, resolve: RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
/// RESOLVE_NO_MAGICLINKS})`: opens `path` below `directory` only if no step of it is a symbolic
/// link and none climbs above `directory` (ELOOP, EXDEV otherwise); ENOSYS before Linux 5.6.
int CAutosaveShims_openBeneath(int directory, const char *_Nonnull path, int flags);

/// The layout of Linux's `struct ucred` (what `SO_PEERCRED` returns). Declared here rather than
/// taken from <sys/socket.h>: that header under _GNU_SOURCE clashes with Glibc's Swift module.
typedef struct {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
} CAutosaveShims_PeerCredentials;

/// For the end-to-end tests' spawner (Foundation's `Process.run()` over-reads /proc/self/fd):
/// `pipe2(fds, O_CLOEXEC)`, and the `posix_spawn` file actions `addchdir_np` and `addclosefrom_np`
/// (glibc 2.29 and 2.34), which Swift's Glibc hides behind _GNU_SOURCE. `actions` is a
/// `posix_spawn_file_actions_t *` (<spawn.h> is included in shims.c only).
int CAutosaveShims_pipeCloseOnExec(int *_Nonnull fds);
int CAutosaveShims_spawnActionsChangeDirectory(void *_Nonnull actions, const char *_Nonnull directory);
int CAutosaveShims_spawnActionsCloseFrom(void *_Nonnull actions, int lowest);

/// Lowers the calling thread, and only it, to the lowest CPU priority (nice 19) and the idle I/O
/// class (`ioprio_set(IOPRIO_WHO_PROCESS, gettid(), IOPRIO_CLASS_IDLE)`), for background work
/// that must yield to everything else. Returns 0, or -1 with errno from the call that failed
/// (the thread then runs on at whatever priority it got).
int CAutosaveShims_lowerThreadPriority(void);
#endif
