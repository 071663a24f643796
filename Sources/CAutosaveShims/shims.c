// The rest is static inline in include/CAutosaveShims.h; the extended-attribute calls are wrapped
// here because their header cannot be included there (see the header).
#include "CAutosaveShims.h"
#include <sys/xattr.h>
#include <spawn.h>
#include <unistd.h>

int CAutosaveShims_pipeCloseOnExec(int *fds) { return pipe2(fds, O_CLOEXEC); }

int CAutosaveShims_spawnActionsChangeDirectory(void *actions, const char *directory) {
    return posix_spawn_file_actions_addchdir_np((posix_spawn_file_actions_t *)actions, directory);
}

int CAutosaveShims_spawnActionsCloseFrom(void *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, lowest);
}

long CAutosaveShims_listAttributes(const char *path, char *names, size_t size) {
    return llistxattr(path, names, size);
}

long CAutosaveShims_getAttribute(const char *path, const char *name, void *value, size_t size) {
    return lgetxattr(path, name, value, size);
}

int CAutosaveShims_setAttribute(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

#include <errno.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

int CAutosaveShims_openBeneath(int directory, const char *path, int flags) {
#ifdef SYS_openat2
    struct open_how how = {
        .flags = (unsigned long long)flags,
        .mode = 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(SYS_openat2, directory, path, &how, sizeof how);
#else
    errno = ENOSYS;
    return -1;
#endif
}

#include <sys/resource.h>

int CAutosaveShims_lowerThreadPriority(void) {
    pid_t thread = (pid_t)syscall(SYS_gettid);
    // On Linux a nice value belongs to the thread whose id it is given, not to the process.
    if (setpriority(PRIO_PROCESS, (id_t)thread, 19) != 0) return -1;
#ifdef SYS_ioprio_set
    // IOPRIO_WHO_PROCESS (1) with a thread id, class IOPRIO_CLASS_IDLE (3) in bits 13 and up.
    if (syscall(SYS_ioprio_set, 1, thread, 3 << 13) != 0) return -1;
#endif
    return 0;
}
