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
            if mkdir(partial, mode) == 0 {
                syncFolder(parent)
                continue
            }
            let code = errno
            guard code == EEXIST else { throw Errno(rawValue: code) }
            var status = stat()
            guard lstat(partial, &status) == 0 else { throw Errno(rawValue: errno) }
            if (status.st_mode & S_IFMT) == S_IFLNK { throw .tooManySymbolicLinkLevels }
            guard (status.st_mode & S_IFMT) == S_IFDIR else { throw .notDirectory }
        }
    }

    /// fsyncs the folder `path`, so the names made in it last through a power cut (best effort:
    /// a folder that cannot be opened or synced is left as it is).
    static func syncFolder(_ path: String) {
        let folder = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return }
        fsync(folder)
        close(folder)
    }
}
