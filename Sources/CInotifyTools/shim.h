#ifndef C_INOTIFY_TOOLS_SHIM_H
#define C_INOTIFY_TOOLS_SHIM_H

// _GNU_SOURCE first: it makes renameat2, O_TMPFILE and friends visible to Swift.
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/inotify.h>
#include <inotifytools/inotifytools.h>

/// The event mask the agent asks the kernel for on every watched directory.
static inline uint32_t CInotifyTools_agentEventMask(void) {
    return IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO
        | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK;
}

/// `IN_ALL_EVENTS` does not import into Swift (it is a compound macro).
static inline uint32_t CInotifyTools_allEvents(void) { return IN_ALL_EVENTS; }

/// The name that follows an `inotify_event`; Swift cannot see the flexible array member.
static inline const char *_Nonnull CInotifyTools_eventName(const struct inotify_event *_Nonnull event) {
    return event->len > 0 ? event->name : "";
}

/// `d_type` of a directory entry, so Swift needs no knowledge of `struct dirent`'s layout.
static inline unsigned char CInotifyTools_direntType(const struct dirent *_Nonnull entry) { return entry->d_type; }

/// The NUL-terminated name of a directory entry.
static inline const char *_Nonnull CInotifyTools_direntName(const struct dirent *_Nonnull entry) { return entry->d_name; }

/// `getdents64` on an open directory: up to `size` bytes of `struct dirent64` records. A scan
/// reads each directory through one buffer of its own instead of `opendir`'s allocation and
/// `fstat`, for a hundred thousand directories.
static inline long CInotifyTools_readEntries(int fd, void *_Nonnull buffer, size_t size) {
    return getdents64(fd, buffer, size);
}

/// The record length, `d_type` and name of the `struct dirent64` at `record`.
static inline unsigned short CInotifyTools_recordLength(const void *_Nonnull record) {
    return ((const struct dirent64 *)record)->d_reclen;
}
static inline unsigned char CInotifyTools_recordType(const void *_Nonnull record) {
    return ((const struct dirent64 *)record)->d_type;
}
static inline const char *_Nonnull CInotifyTools_recordName(const void *_Nonnull record) {
    return ((const struct dirent64 *)record)->d_name;
}

#endif
