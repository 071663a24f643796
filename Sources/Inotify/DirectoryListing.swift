import ByteNames
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

/// One directory as a scan keeps it; see `DirectoryListing.contents`.
struct DirectoryContents: Sendable {
    var files = FileNames()
    /// `st_ctim` per file, in the order of `files`, when the listing stat'ed files.
    var changeTimes: [Int64]?
    var directories: [String] = []
    /// Names of ignored files that `EntryFilter.isLeftover` picked out.
    var leftovers: [String] = []
    /// Subdirectories the rules ignore (not watched, not walked into).
    var ignoredDirectories: [String] = []
    /// The directory holds `EntryFilter.privateMarker`: another program's private directory.
    var hasPrivateMarker = false
}

/// Which entries of one directory a scan leaves out, and which of those it points out as
/// leftovers: a tree's rules, bound to one directory so that probes on other threads can use it.
struct EntryFilter: Sendable {
    let mailbox: Mailbox
    /// The directory's path relative to the root.
    let directory: String
    let collectsLeftovers: Bool

    var privateMarker: String? { mailbox.privateMarker }

    func isIgnored(_ name: String, isDirectory: Bool) -> Bool {
        mailbox.ignores(name, in: directory, isDirectory: isDirectory)
    }

    func isLeftover(_ name: String) -> Bool { mailbox.isLeftover(name) }
}

/// Lists a directory with `getdents64` and `d_type`, without an `lstat` per entry.
///
/// Only file systems that leave `d_type` unknown cost an `fstatat`. Symbolic links are entries,
/// never followed, so a link to a directory is not walked into.
enum DirectoryListing {
    /// - Throws: `Errno` from `opendir` (`ENOENT` when it vanished, `EACCES`, `ENOTDIR`).
    static func entries(of absolutePath: String, statFiles: Bool) throws(Errno) -> [DirectoryEntry] {
        var result: [DirectoryEntry] = []
        let failure: Errno? = absolutePath.withCString { path in
            do throws(Errno) {
                try visit(path, statFiles: statFiles) { name, isDirectory, changeTime in
                    result.append(DirectoryEntry(name: name.string, isDirectory: isDirectory, changeTime: changeTime))
                }
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        return result
    }

    /// What a scan keeps of one directory, sorted as it is read: the files' names (compactly,
    /// in the order they were read, which `changeTimes` follows), the subdirectories' names, and
    /// the ignored files `filter` calls leftovers. Runs on any thread, so a scan's probes make
    /// their listings in parallel; `collector` is the thread's scratch for the names.
    ///
    /// - Throws: `Errno` from `opendir` (`ENOENT` when it vanished, `EACCES`, `ENOTDIR`).
    static func contents(
        of absolutePath: UnsafePointer<CChar>, statFiles: Bool, filter: EntryFilter, collector: inout FileNameCollector
    ) throws(Errno) -> DirectoryContents {
        var contents = DirectoryContents(changeTimes: statFiles ? [] : nil)
        collector.begin()
        // Looked up once a directory rather than once a file.
        let screen = filter.mailbox.fileScreen
        try visit(absolutePath, statFiles: statFiles) { entry, isDirectory, changeTime in
            // Most files need no `String`: an ASCII name that no rule may apply to is kept as it
            // was read. Other names are made a `String`, as events make them, so both agree.
            if !isDirectory, entry.isASCII, let screen, !screen.mayApply(toFile: entry.bytes) {
                if collector.insert(entry.bytes) { contents.changeTimes?.append(changeTime ?? 0) }
                return
            }
            // A name that is not UTF-8 is not tracked (docs/guarantees.md, the known limits): no
            // client can name it, and known by its repaired spelling, it was reported removed
            // the first time it was written.
            guard let name = entry.validString else { return }
            if !isDirectory, let marker = filter.privateMarker, name.isSameName(as: marker) { contents.hasPrivateMarker = true }
            if filter.isIgnored(name, isDirectory: isDirectory) {
                if filter.collectsLeftovers, !isDirectory, filter.isLeftover(name) { contents.leftovers.append(name) }
                if isDirectory { contents.ignoredDirectories.append(name) }
            } else if isDirectory {
                contents.directories.append(name)
            } else if collector.insert(name) {
                contents.changeTimes?.append(changeTime ?? 0)
            }
        }
        contents.files = collector.names()
        return contents
    }

    /// `contents(of:statFiles:filter:collector:)` with a scratch of its own, for a listing
    /// of one directory.
    static func contents(of absolutePath: String, statFiles: Bool, filter: EntryFilter) throws(Errno) -> DirectoryContents {
        var collector = FileNameCollector()
        let result: Result<DirectoryContents, Errno> = absolutePath.withCString { path in
            Result { () throws(Errno) in try contents(of: path, statFiles: statFiles, filter: filter, collector: &collector) }
        }
        return try result.get()
    }

    /// Reads a directory with `getdents64` through a buffer on the stack, skipping `.` and `..`;
    /// `body` gets each entry's name, whether it is a directory and, for a file when
    /// `statFiles`, its `st_ctim`.
    private static func visit(
        _ absolutePath: UnsafePointer<CChar>, statFiles: Bool, _ body: (EntryName, Bool, Int64?) -> Void
    ) throws(Errno) {
        let fd = open(absolutePath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        defer { close(fd) }
        let failure: Errno? = withUnsafeTemporaryAllocation(byteCount: 32 * 1024, alignment: 8) { buffer in
            while true {
                let count = CInotifyTools_readEntries(fd, buffer.baseAddress!, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return count < 0 ? Errno(rawValue: errno) : nil }
                var offset = 0
                while offset < count {
                    let record = buffer.baseAddress! + offset
                    offset += Int(CInotifyTools_recordLength(record))
                    let namePointer = CInotifyTools_recordName(record)
                    if namePointer[0] == 0x2E
                        && (namePointer[1] == 0 || (namePointer[1] == 0x2E && namePointer[2] == 0))
                    {
                        continue
                    }
                    var type = CInotifyTools_recordType(record)
                    var changeTime: Int64?
                    if type == UInt8(DT_UNKNOWN) || (statFiles && type != UInt8(DT_DIR)) {
                        var status = stat()
                        if fstatat(fd, namePointer, &status, AT_SYMLINK_NOFOLLOW) != 0 { continue }
                        type = (status.st_mode & S_IFMT) == S_IFDIR ? UInt8(DT_DIR) : UInt8(DT_REG)
                        changeTime = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
                    }
                    let isDirectory = type == UInt8(DT_DIR)
                    body(EntryName(namePointer), isDirectory, isDirectory ? nil : changeTime)
                }
            }
        }
        if let failure { throw failure }
    }

    /// One entry's name as `getdents64` wrote it, valid until the next read into the buffer.
    private struct EntryName {
        let bytes: UnsafeBufferPointer<UInt8>
        let isASCII: Bool

        init(_ terminated: UnsafePointer<CChar>) {
            var length = 0
            var highBits: UInt8 = 0
            let raw = UnsafeRawPointer(terminated).assumingMemoryBound(to: UInt8.self)
            while raw[length] != 0 {
                highBits |= raw[length]
                length += 1
            }
            bytes = UnsafeBufferPointer(start: raw, count: length)
            isASCII = highBits < 0x80
        }

        /// The name as a `String`, invalid UTF-8 repaired as `String(cString:)` does.
        var string: String { String(decoding: bytes, as: UTF8.self) }

        /// The name as a `String`; nil when it is not valid UTF-8.
        var validString: String? { isASCII ? string : String(validating: bytes, as: UTF8.self) }
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
