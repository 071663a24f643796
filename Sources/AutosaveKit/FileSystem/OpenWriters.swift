import ByteNames
import CAutosaveShims
import Glibc

/// Whether another process holds a file open for writing: a logger appending to it, an editor or
/// a tool in the middle of writing it.
///
/// The agent asks before it replaces a file (the writer's later writes would go to the replaced
/// inode, then be deleted with it) and before it settles a change (the writer may be half way).
/// The cheap way first: a read lease (`F_SETLEASE F_RDLCK`), which the kernel refuses with EAGAIN
/// exactly when the file is open for writing, and which is given back at once. Where leases are
/// refused for another reason (a file of another owner without `CAP_LEASE`, FUSE, NFS), every
/// process's open files are looked at in `/proc` instead.
public enum OpenWriters {
    /// Whether `name` in `directory` is open for writing by any process; false when it is not a
    /// regular file or cannot be opened (nothing there to protect).
    ///
    /// - Parameter lookingAgain: whether a file found open is looked at again over ~40 ms before
    ///   it counts as held (see below); the watcher, which hears the writer's close, does not.
    public static func isHeld(_ name: String, in directory: CInt, lookingAgain: Bool = true) -> Bool {
        ignoreLeaseBreaks
        let descriptor = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return false }
        // A process between fork and exec holds a copy of every descriptor its parent had, for
        // a few milliseconds: a writer only if it still holds the file a moment later.
        for pause in lookingAgain ? recheckPauses : [nil] {
            if CAutosaveShims_setLease(descriptor, CAutosaveShims_readLease()) == 0 {
                _ = CAutosaveShims_setLease(descriptor, CAutosaveShims_noLease())
                return false
            }
            guard errno == EAGAIN else {
                return isOpenForWritingByAnyProcess(device: status.st_dev, inode: status.st_ino)
            }
            guard let pause else { return true }
            usleep(pause)
        }
        return true
    }

    /// The pauses (microseconds) between looks at a file found open for writing; nil: the last.
    private static let recheckPauses: [useconds_t?] = [2_000, 10_000, 30_000, nil]

    /// `isHeld` for an absolute path.
    public static func isHeld(_ absolutePath: String) -> Bool {
        guard absolutePath.isAbsolutePath else { return false }
        let (folder, name) = absolutePath.folderAndName
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return false }
        defer { close(directory) }
        return isHeld(name, in: directory)
    }

    /// The kernel signals a lease holder (SIGIO, fatal by default) when someone opens the file in
    /// the instant the lease is held; the lease is given back at once anyway, so the signal is
    /// ignored, once for the process.
    private static let ignoreLeaseBreaks: Void = { signal(SIGIO, SIG_IGN) }()

    /// The slow way: every `/proc/PID/fd/N` that is this file, opened with `O_WRONLY` or `O_RDWR`.
    static func isOpenForWritingByAnyProcess(device: dev_t, inode: ino_t) -> Bool {
        !processesWriting(device: device, inode: inode, firstOnly: true).isEmpty
    }

    /// The processes that hold `name` in `directory` open for writing now, by pid and program
    /// name (`/proc/PID/comm`); empty when none does, or it is not a regular file. It looks at
    /// every process's open files: asked only of a file already found held.
    public static func writers(of name: String, in directory: CInt) -> [WritingProcess] {
        var status = stat()
        guard fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFREG else { return [] }
        return processesWriting(device: status.st_dev, inode: status.st_ino, firstOnly: false).map { pid in
            let comm = (try? FileContents.read("/proc/\(pid)/comm")).map { String(decoding: $0, as: UTF8.self) } ?? ""
            return WritingProcess(pid: pid, program: String(comm.prefix { $0 != "\n" }))
        }
    }

    /// The pids (but ours) with a descriptor open for writing on the file `device`/`inode`.
    private static func processesWriting(device: dev_t, inode: ino_t, firstOnly: Bool) -> [Int32] {
        guard let processes = opendir("/proc") else { return [] }
        defer { closedir(processes) }
        let me = getpid()
        var found: [Int32] = []
        while let entry = readdir(processes) {
            let pid = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let number = Int32(pid), number != me else { continue }
            guard let descriptors = opendir("/proc/\(pid)/fd") else { continue }
            defer { closedir(descriptors) }
            while let fd = readdir(descriptors) {
                let name = withUnsafeBytes(of: fd.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard Int(name) != nil else { continue }
                var status = stat()
                guard stat("/proc/\(pid)/fd/\(name)", &status) == 0, status.st_dev == device, status.st_ino == inode else { continue }
                if isWritable(flagsOf: "/proc/\(pid)/fdinfo/\(name)") {
                    found.append(number)
                    if firstOnly { return found }
                    break
                }
            }
        }
        return found
    }

    /// Whether an `fdinfo` file's `flags:` (octal) open the file for writing.
    private static func isWritable(flagsOf fdinfo: String) -> Bool {
        guard let bytes = try? FileContents.read(fdinfo) else { return false }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("flags:") {
            let value = line.dropFirst("flags:".count).trimmingPrefix { $0 == " " || $0 == "\t" }
            guard let flags = Int32(value, radix: 8) else { return false }
            return flags & O_ACCMODE == O_WRONLY || flags & O_ACCMODE == O_RDWR
        }
        return false
    }
}

/// A process seen writing a file: who an outside change came from, when the agent saw it.
public struct WritingProcess: Sendable, Hashable {
    public var pid: Int32
    /// Its program's name, as the kernel keeps it (`/proc/PID/comm`, at most 15 bytes).
    public var program: String

    public init(pid: Int32, program: String) {
        self.pid = pid
        self.program = program
    }
}
