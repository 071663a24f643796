import Glibc

extension VersionStore {
    /// Makes every version recorded so far durable (fsync of the WAL file); cheap when nothing is new.
    ///
    /// Commits do not fsync (`synchronous=NORMAL`): they reach the WAL file, and the operating
    /// system writes it out when it likes. After `sync()` returns, every version recorded before
    /// it survives `kill -9` and a power cut. Versions that a checkpoint already moved into the
    /// main file are durable already: SQLite fsyncs both files around every checkpoint. The first
    /// sync of a WAL file also syncs the main file and the folder, so that the files themselves,
    /// not only their bytes, are sure to be found after a power cut.
    /// - Throws: `HistoryError.system` when a file cannot be opened or synced (the versions are
    ///   then still to be synced, and the next call tries again).
    public func sync() throws(HistoryError) {
        guard database != nil, hasUnsyncedVersions else { return }
        try syncFiles()
        hasUnsyncedVersions = false
    }

    private func syncFiles() throws(HistoryError) {
        let wal = path + "-wal"
        let descriptor = Glibc.open(wal, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            // No WAL (the journal mode is not WAL after all?): the versions are in the main file.
            guard errno == ENOENT else { throw .system(path: wal, operation: "open it to sync it", errno: errno) }
            return try Self.fsync(path, directory: false)
        }
        defer { Glibc.close(descriptor) }
        guard fdatasync(descriptor) == 0 else { throw .system(path: wal, operation: "sync it", errno: errno) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .system(path: wal, operation: "stat it", errno: errno) }
        let identity = (device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        guard syncedWAL.map({ $0 != identity }) ?? true else { return }
        try Self.fsync(path, directory: false)
        try Self.fsync(Self.folder(of: path), directory: true)
        syncedWAL = identity
    }

    /// fsyncs the file or folder at `path`.
    private static func fsync(_ path: String, directory: Bool) throws(HistoryError) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0))
        guard descriptor >= 0 else { throw .system(path: path, operation: "open it to sync it", errno: errno) }
        defer { Glibc.close(descriptor) }
        guard Glibc.fsync(descriptor) == 0 else { throw .system(path: path, operation: "sync it", errno: errno) }
    }

    /// The folder holding `path` ("." for a bare name).
    static func folder(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }
}
