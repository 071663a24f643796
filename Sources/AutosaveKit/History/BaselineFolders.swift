import AutosaveHistory
import ByteNames
import Glibc

/// The folders of one baseline batch, each opened once through the walls, whose files the pass
/// stats and reads by name from the folder's descriptor.
///
/// Why: reading each file through `DiskVersion.read` walks its whole path through `PathResolver`
/// and opens it twice (a handle, then again through `/proc/self/fd`), about fourteen system calls a
/// file; a file read by name in a folder already opened through the walls takes six (`fstatat`,
/// `openat`, `fstat`, `read`, `fstat`, `close`), and the baseline reads every file of the tree.
///
/// The walls hold as for `DiskVersion.read`: the folder is reached by `PathResolver` (no link out
/// of the root, into `.git/` or the state directory), and a file is opened with `O_NOFOLLOW` in
/// that very folder, so no link swapped in after the walk is followed. A folder reached through a
/// link inside the root, and a file that is itself a link, are read the slow way, which follows
/// such links while they stay inside.
///
/// Not `Sendable`: one batch on the idle thread owns it; its descriptors close with it.
final class BaselineFolders {
    private let files: HistoryFiles
    /// Per folder (relative to the root, "" for the root; keyed by its bytes, as two names Swift
    /// takes for equal can be two folders): its opened descriptor, or nil when its files go the
    /// slow way.
    private var opened: [[UInt8]: Location?] = [:]
    /// Per opened folder, whether `isInPlace` found it still there.
    private var verified: [[UInt8]: Bool] = [:]

    init(files: HistoryFiles) {
        self.files = files
    }

    /// What reading one file gave.
    enum Read {
        /// Its bytes, and the stamp they belong to.
        case version(DiskVersion)
        /// No version to keep: gone, not a regular file, over a cap, refused, unreadable.
        case none
    }

    /// The file's stamp now, not following a link at its end; nil when it is not a regular file
    /// (or is gone). Only to tell whether it changed since it was stored or read.
    func stamp(of path: String) -> FileStamp? {
        var status = stat()
        let found: Bool
        if let (folder, name) = place(of: path) {
            found = fstatat(folder.folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0
        } else {
            found = lstat(files.resolver.root + "/" + path, &status) == 0
        }
        guard found, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileStamp(Fingerprint(status))
    }

    /// The file's bytes and their fingerprint, when history keeps a version of it (see `HistoryFiles`).
    func read(_ path: String) -> Read {
        guard let (folder, name) = place(of: path) else { return slowly(path) }
        var status = stat()
        guard fstatat(folder.folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return .none }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        // A link inside the root is followed the slow way, as a buffer would open it.
        case S_IFLNK: return slowly(path)
        default: return .none
        }
        guard status.st_size <= files.maxFileBytes else { return .none }
        let fd = openat(folder.folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ELOOP ? slowly(path) : .none }
        defer { close(fd) }
        guard let version = Self.readWhole(fd, limit: files.maxFileBytes), files.isKept(version.bytes) else { return .none }
        return .version(version)
    }

    /// Whether the folder `path` was read from is still the one the walls lead to by its name:
    /// not moved out of the root, nor swapped for a link, since it was opened. Asked once the
    /// batch's files are read and before they are recorded: bytes read through a folder that
    /// left the root meanwhile are not the tree's, and are dropped (the watcher reports whatever
    /// is at the name now).
    func isInPlace(_ path: String) -> Bool {
        guard let (location, _) = place(of: path) else { return true }
        let folder = Array(path.pathComponents.dropLast().joined(separator: "/").utf8)
        if let known = verified[folder] { return known }
        var now = stat()
        var then = stat()
        let isInPlace =
            (try? files.resolver.resolve(path).location).map { current in
                fstat(current.folder, &now) == 0 && fstat(location.folder, &then) == 0 && now.st_dev == then.st_dev
                    && now.st_ino == then.st_ino
            } ?? false
        verified[folder] = isInPlace
        return isInPlace
    }

    /// The opened folder of `path` and its last name; nil when its folder's files go the slow way.
    private func place(of path: String) -> (Location, String)? {
        let components = path.pathComponents
        guard let name = components.last else { return nil }
        let folder = Array(components.dropLast().joined(separator: "/").utf8)
        if let known = opened[folder] { return known.map { ($0, name) } }
        let location = try? files.resolver.resolve(path).location
        // Reached through a link (its folder is elsewhere in the tree), or a last name that is a
        // link into another folder: the slow way, per file.
        let isDirect = location.map { $0.path.pathComponents.dropLast().elementsEqual(components.dropLast()) { $0.utf8.elementsEqual($1.utf8) } } ?? false
        opened[folder] = isDirect ? location : .some(nil)
        return isDirect ? location.map { ($0, name) } : nil
    }

    private func slowly(_ path: String) -> Read {
        files.readVersion(path).map(Read.version) ?? .none
    }

    /// The open regular file's bytes, read into one buffer of its size; nil when it is not a
    /// regular file, is over `limit`, cannot be read, or changed while it was read (the watcher
    /// reports that change, and its version is recorded then).
    static func readWhole(_ fd: CInt, limit: Int) -> DiskVersion? {
        var before = stat()
        guard fstat(fd, &before) == 0, before.st_mode & S_IFMT == S_IFREG, before.st_size <= limit else { return nil }
        let size = Int(before.st_size)
        // One byte more than the size: a file that grew shows it without another read.
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, count in
            count = 0
            while count < buffer.count {
                let got = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
                if got < 0, errno == EINTR { continue }
                if got < 0 { failed = true }
                if got <= 0 { break }
                count += got
            }
        }
        var after = stat()
        guard !failed, bytes.count == size, fstat(fd, &after) == 0 else { return nil }
        let fingerprint = Fingerprint(after)
        guard fingerprint == Fingerprint(before), fingerprint.size == Int64(size) else { return nil }
        return DiskVersion(bytes: bytes, fingerprint: fingerprint)
    }
}
