import Glibc

/// What `stat` says about one version of a file: enough to notice that it was replaced or edited.
///
/// Two fingerprints are equal when device, inode, size and modification time are. The change
/// time is kept apart: a rename changes it without changing the content.
public struct Fingerprint: Sendable, Hashable, CustomStringConvertible {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// `st_mtim` in ns since the epoch.
    public var modified: Int64
    /// `st_ctim` in ns since the epoch; not part of equality.
    public var changed: Int64
    public var mode: UInt32
    public var owner: UInt32
    public var group: UInt32
    public var links: UInt64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        changed = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
        mode = UInt32(status.st_mode)
        owner = UInt32(status.st_uid)
        group = UInt32(status.st_gid)
        links = UInt64(status.st_nlink)
    }

    public static func == (lhs: Fingerprint, rhs: Fingerprint) -> Bool {
        lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size && lhs.modified == rhs.modified
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(device)
        hasher.combine(inode)
        hasher.combine(size)
        hasher.combine(modified)
    }

    /// Whether this is a regular file (not a directory, link, device or socket).
    public var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }

    /// Whether this is a symbolic link (only seen when a final link was not followed).
    public var isSymbolicLink: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFLNK) }

    public var description: String { "dev=\(device) ino=\(inode) size=\(size) mtime=\(modified)" }

    /// The fingerprint of `path` without following a final symlink; nil when nothing is there.
    public static func of(_ path: String) -> Fingerprint? {
        var status = stat()
        return lstat(path, &status) == 0 ? Fingerprint(status) : nil
    }

    /// The fingerprint of an open descriptor.
    static func of(descriptor: CInt) -> Fingerprint? {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? Fingerprint(status) : nil
    }

    /// The fingerprint of `name` in the directory `directory` (never following a final symlink).
    static func of(_ name: String, in directory: CInt) -> Fingerprint? {
        var status = stat()
        return fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0 ? Fingerprint(status) : nil
    }
}
