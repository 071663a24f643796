import ByteNames
import Glibc
import SystemPackage

/// Making the agent's own folders (the state dir, the journal's), with plain errno errors a
/// user can read: Foundation's `createDirectory` reports an `NSCocoaErrorDomain` dump instead.
enum Folders {
    /// Makes `path` and any missing parents (new ones get `mode`), each durably: the folder it
    /// was made in is fsync'd, so a power cut cannot take away a folder whose files were made
    /// durable in it (the journal's, the state directory).
    ///
    /// A component that is a symbolic link is not followed: these are the agent's own folders,
    /// which hold no link (the root above them has none, being resolved when the agent starts).
    ///
    /// - Throws: the `Errno` of the first component that could not be made; `ENOTDIR` when one
    ///   exists but is not a folder, `ELOOP` when it is a symbolic link.
    static func make(_ path: String, mode: mode_t = 0o700) throws(Errno) {
        var partial = ""
        for component in path.pathComponents {
            let parent = partial.isEmpty ? "/" : partial
            partial += "/" + component
            do throws(Errno) {
                try SystemCall.check { mkdir(partial, mode) }
                syncFolder(parent)
                continue
            } catch {
                guard error == .fileExists else { throw error }
            }
            var status = stat()
            try SystemCall.check { lstat(partial, &status) }
            if (status.st_mode & S_IFMT) == S_IFLNK { throw .tooManySymbolicLinkLevels }
            guard (status.st_mode & S_IFMT) == S_IFDIR else { throw .notDirectory }
        }
    }

    /// fsyncs the folder `path`, so the names made in it last through a power cut (best effort:
    /// a folder that cannot be opened or synced is left as it is).
    static func syncFolder(_ path: String) {
        guard let folder = try? FileDescriptor.open(FilePath(path), .readOnly, options: [.directory, .closeOnExec]) else { return }
        try? folder.sync()
        try? folder.close()
    }
}
