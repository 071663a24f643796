import SystemPackage

/// Why a save did not happen. Every case leaves the file on disk as it was and the buffer dirty.
public enum WriteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file on disk is no longer the version the buffer was based on: someone else wrote it.
    /// Nothing was written; the save becomes a reconcile.
    case changedOnDisk(path: String)
    /// The path leads where no client may write: outside the root (through a symbolic link),
    /// into `.git/` or into the state directory.
    case refused(PathRefusal)
    /// The path is a directory or another kind of file that is not a regular file.
    case notARegularFile(path: String)
    /// Another process holds the file open for writing; nothing was written (the save waits for
    /// it to close, then writes in place if it will not).
    case heldOpen(path: String)
    /// A system call failed (`EACCES`, `ENOSPC`, `EROFS`, `EIO`, a failed `fsync`, …).
    case system(path: String, operation: String, Errno)

    /// Whether the file has nowhere to land: its folder (or the folder a symlink leads to) is
    /// gone, or its path now leads where the agent may not write (a link swapped in).
    public var isNowhereToLand: Bool {
        if case .refused = self { return true }
        return errno == .noSuchFileOrDirectory || errno == .notDirectory
    }

    /// The save's error for a path the resolver could not resolve: a failure a plain `open`
    /// would have met stays a system error (`ENOTDIR`, `EACCES`, `ENOSPC` making a folder, …),
    /// a path leading out of bounds is a refusal.
    init(_ refusal: PathRefusal) {
        if case .system(let path, let operation, let errno) = refusal {
            self = .system(path: path, operation: operation, errno)
        } else if let errno = refusal.errno {
            self = .system(path: refusal.path, operation: "resolve", errno)
        } else {
            self = .refused(refusal)
        }
    }

    /// The errno behind the failure, when there is one.
    public var errno: Errno? {
        if case .system(_, _, let errno) = self { return errno }
        return nil
    }

    public var description: String {
        switch self {
        case .changedOnDisk(let path): "\(path) changed on disk since it was read; nothing was written"
        case .refused(let refusal): "\(refusal); refused"
        case .notARegularFile(let path): "\(path) is not a regular file"
        case .heldOpen(let path): "\(path) is open for writing by another process; nothing was written"
        case .system(let path, let operation, let errno): "\(operation) \(path): \(errno.description)"
        }
    }
}
