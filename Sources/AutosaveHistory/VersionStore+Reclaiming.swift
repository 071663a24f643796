import CSQLite

extension VersionStore {
    /// The bytes of the database's pages in use: what the main file shrinks to once its free
    /// pages are given back and the WAL is checkpointed. Counts what the open transaction changed.
    ///
    /// - Throws: `HistoryError.sqlite` when the database cannot be read.
    func liveBytes() throws(HistoryError) -> Int64 {
        let pages = try pragma("page_count") - pragma("freelist_count")
        return pages * (try pragma("page_size"))
    }

    /// Gives free pages back to the file system, at most `pages` of them (moving pages from the
    /// end of the file into the free ones, then cutting the end off).
    ///
    /// New databases are made with `auto_vacuum = INCREMENTAL`. One made without it (by an older
    /// autosave, or another tool) is rebuilt once with it, by `VACUUM`, which rewrites the whole file.
    /// - Returns: whether free pages remain (call again).
    /// - Throws: `HistoryError.sqlite` when SQLite fails (the database stays as it was).
    func releaseFreePages(atMost pages: Int) throws(HistoryError) -> Bool {
        guard try pragma("auto_vacuum") != 0 else {
            try execute("PRAGMA auto_vacuum = INCREMENTAL")
            try execute("VACUUM")
            return false
        }
        try execute("PRAGMA incremental_vacuum(\(max(1, pages)))")
        return try pragma("freelist_count") > 0
    }

    /// Rewrites the whole database into a new file of the pages in use, which leaves nothing of
    /// what was deleted anywhere in the file (a page's free space may otherwise keep bytes of
    /// rows that SQLite moved when it rebalanced the tree).
    ///
    /// - Throws: `HistoryError.sqlite` when SQLite fails (a full disk: it needs room for a copy).
    func vacuum() throws(HistoryError) {
        try execute("VACUUM")
    }

    /// Copies every page the WAL holds into the main file, then truncates the WAL to nothing, so
    /// the space (and any bytes of deleted rows that earlier frames held) is gone from both files.
    ///
    /// - Returns: false when another connection's reader kept part of the WAL from being copied
    ///   (the WAL then stays as it was, to be truncated by a later checkpoint).
    /// - Throws: `HistoryError.sqlite` when SQLite fails.
    @discardableResult
    func checkpointAndTruncate() throws(HistoryError) -> Bool {
        let outcome = try firstRow("PRAGMA wal_checkpoint(TRUNCATE)", []) {
            (row: SQLiteStatement) throws(HistoryError) in (busy: row.int64(at: 0), log: row.int64(at: 1), copied: row.int64(at: 2))
        }
        guard let outcome else { return false }
        // After a TRUNCATE checkpoint that completed, both counts are 0 (the WAL is empty) or equal.
        return outcome.busy == 0 && outcome.log == outcome.copied
    }

    // MARK: - Helpers

    /// The integer `PRAGMA name` answers with (0 when it answers nothing).
    func pragma(_ name: String) throws(HistoryError) -> Int64 {
        try firstRow("PRAGMA \(name)", []) { (row: SQLiteStatement) throws(HistoryError) in row.int64(at: 0) } ?? 0
    }

    /// Runs statements that return nothing of interest, outside the cache of prepared statements.
    func execute(_ sql: String) throws(HistoryError) {
        let database = try connection()
        do {
            try database.execute(sql)
        } catch {
            throw HistoryError(error)
        }
    }
}
