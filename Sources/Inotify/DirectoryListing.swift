import CInotifyTools
import Glibc
import SystemPackage

/// One entry of a directory listing.
struct DirectoryEntry: Sendable {
    var name: String
    var isDirectory: Bool
    /// `st_ctim` in ns since the epoch, when the listing was asked to stat files.
    var changeTime: Int64?
}

/// Lists a directory with `readdir` and `d_type`, without an `lstat` per entry.
///
/// Only file systems that leave `d_type` unknown cost an `fstatat`. Symbolic links are entries,
/// never followed, so a link to a directory is not walked into.
enum DirectoryListing {
    /// - Throws: `Errno` from `opendir` (`ENOENT` when it vanished, `EACCES`, `ENOTDIR`).
    static func entries(of absolutePath: String, statFiles: Bool) throws(Errno) -> [DirectoryEntry] {
        guard let directory = opendir(absolutePath) else { throw Errno(rawValue: errno) }
        defer { closedir(directory) }
        let fd = dirfd(directory)
        var result: [DirectoryEntry] = []
        while let entry = readdir(directory) {
            let namePointer = CInotifyTools_direntName(entry)
            if namePointer[0] == 0x2E
                && (namePointer[1] == 0 || (namePointer[1] == 0x2E && namePointer[2] == 0))
            {
                continue
            }
            let name = String(cString: namePointer)
            var type = CInotifyTools_direntType(entry)
            var changeTime: Int64?
            if type == UInt8(DT_UNKNOWN) || (statFiles && type != UInt8(DT_DIR)) {
                var status = stat()
                if fstatat(fd, namePointer, &status, AT_SYMLINK_NOFOLLOW) != 0 { continue }
                type = (status.st_mode & S_IFMT) == S_IFDIR ? UInt8(DT_DIR) : UInt8(DT_REG)
                changeTime = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
            }
            let isDirectory = type == UInt8(DT_DIR)
            result.append(DirectoryEntry(name: name, isDirectory: isDirectory, changeTime: isDirectory ? nil : changeTime))
        }
        return result
    }

    /// - Throws: `Errno` from `stat`, or `ENOTDIR` when the path is not a directory.
    static func requireDirectory(_ absolutePath: String) throws(Errno) {
        var status = stat()
        guard stat(absolutePath, &status) == 0 else { throw Errno(rawValue: errno) }
        guard (status.st_mode & S_IFMT) == S_IFDIR else { throw .notDirectory }
    }

    /// Who owns what is at `absolutePath` (not following a final symlink); nil when nothing is.
    static func owner(of absolutePath: String) -> uid_t? {
        var status = stat()
        return lstat(absolutePath, &status) == 0 ? status.st_uid : nil
    }

    /// A monotonic clock in milliseconds, for how long a scan took.
    static func monotonicMilliseconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
    }

    /// The wall clock in ns since the epoch, the unit of `st_ctim`.
    static func wallClockNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
