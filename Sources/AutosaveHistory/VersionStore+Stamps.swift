/// What a file on disk looked like when history last stored it: enough to tell, without reading
/// it, that it has not changed since (the baseline's resume after a restart).
public struct FileStamp: Sendable, Equatable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// `st_mtim` in ns since the epoch.
    public var modified: Int64
    /// `st_ctim` in ns since the epoch: a write that puts back the old mtime (`touch -d`, `cp -p`,
    /// `git checkout` of an older file) still moves it.
    public var changed: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
    }
}

extension VersionStore {
    /// The table of stamps, made at every open when missing: it is the baseline's bookkeeping,
    /// not versions, so a database from before it simply has none (every file is read once more).
    static let stampsSchema = """
        CREATE TABLE IF NOT EXISTS file_stamps(
            path TEXT PRIMARY KEY,
            device INTEGER NOT NULL,
            inode INTEGER NOT NULL,
            size INTEGER NOT NULL,
            modified INTEGER NOT NULL,
            changed INTEGER NOT NULL
        ) WITHOUT ROWID
        """

    /// The stamp stored for `path` by `setStamp`; nil when none is.
    ///
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read.
    public func stamp(of path: String) throws(HistoryError) -> FileStamp? {
        try firstRow(
            "SELECT device, inode, size, modified, changed FROM file_stamps WHERE path = ?", [.text(path)]
        ) { (row: SQLiteStatement) throws(HistoryError) -> FileStamp in
            FileStamp(
                device: UInt64(bitPattern: row.int64(at: 0)), inode: UInt64(bitPattern: row.int64(at: 1)),
                size: row.int64(at: 2), modified: row.int64(at: 3), changed: row.int64(at: 4))
        }
    }

    /// Stores `stamp` as what `path` looked like when its latest content was stored.
    ///
    /// - Throws: `HistoryError.sqlite` when the database cannot be written.
    public func setStamp(_ stamp: FileStamp, for path: String) throws(HistoryError) {
        try run(
            "INSERT OR REPLACE INTO file_stamps(path, device, inode, size, modified, changed) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .text(path), .integer(Int64(bitPattern: stamp.device)), .integer(Int64(bitPattern: stamp.inode)),
                .integer(stamp.size), .integer(stamp.modified), .integer(stamp.changed),
            ])
        hasUnsyncedVersions = true
    }

    /// Forgets the stamp of `path`: its latest version no longer comes from the read the stamp
    /// describes (a save, an outside change), so a stamp that matches the file again later (a
    /// power cut that put an unsynced write back) must not make the baseline skip it.
    ///
    /// - Throws: `HistoryError.sqlite` when the database cannot be written.
    public func clearStamp(of path: String) throws(HistoryError) {
        try run("DELETE FROM file_stamps WHERE path = ?", [.text(path)])
    }
}
