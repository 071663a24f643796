extension VersionStore {
    /// The index that finds a path's moves without reading its other versions: a file's history
    /// is followed back across moves, and a file with 10,000 versions and no move would otherwise
    /// have every one of them read to learn that it has none. Partial, so it costs nothing for the
    /// other versions; made at open for a database that predates it (the schema version is the same:
    /// code that does not know it reads the database as before, and SQLite keeps it up to date).
    static let movesIndex = """
        CREATE INDEX IF NOT EXISTS versions_moves ON versions(path, id)
        WHERE kind = '\(VersionKind.moved.rawValue)' AND from_path IS NOT NULL
        """

    /// The latest move onto a path (`?` 1) before a version id (`?` 2): its id and the path the
    /// file came from. The kind is written out, not bound: SQLite uses a partial index only for a
    /// query whose terms imply the index's own.
    static let moveBefore = """
        SELECT id, from_path FROM versions
        WHERE path = ? AND id < ? AND kind = '\(VersionKind.moved.rawValue)' AND from_path IS NOT NULL
        ORDER BY id DESC LIMIT 1
        """

    /// One stretch of a file's history, as `versions(of:)` follows it: the versions `path` had
    /// with ids from `first` (the move that brought the file there; nil for all earlier ones) up
    /// to, not including, `end`.
    struct Stretch {
        var path: String
        var first: Int64?
        var end: Int64

        /// The SQL condition on `versions AS v` for the stretch, and its arguments.
        var condition: (String, [SQLiteValue]) {
            ("v.path = ? AND v.id >= ? AND v.id < ?", [.text(path), .integer(first ?? Int64.min), .integer(end)])
        }
    }

    // MARK: - One version of a file

    /// Version `id` when it is one of the versions `versions(of: path)` lists; nil otherwise.
    ///
    /// Reads the one row and the file's moves, not every version of the file.
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read.
    public func version(of path: String, id: Int64) throws(HistoryError) -> Version? {
        var found: Version?
        _ = try firstStretch(of: path) { (stretch: Stretch) throws(HistoryError) -> Bool? in
            // Stretches go back in time: one that starts after `id` cannot hold it, an earlier one may.
            guard id >= stretch.first ?? Int64.min else { return nil }
            let (condition, arguments) = stretch.condition
            found = try firstRow(
                "SELECT \(Self.versionColumns) FROM \(Self.versionSource) WHERE \(condition) AND v.id = ?",
                arguments + [.integer(id)], storedVersion)?.version
            // This stretch is the only one that can hold it.
            return true
        }
        return found
    }

    /// The version `count` places before the latest in `versions(of: path)`'s order (0: the
    /// latest), conflict copies not counted (the file never held them); nil when the file held
    /// no more than `count` versions.
    ///
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read.
    public func version(of path: String, back count: Int) throws(HistoryError) -> Version? {
        guard count >= 0 else { return nil }
        var remaining = Int64(count)
        return try firstStretch(of: path) { (stretch: Stretch) throws(HistoryError) -> Version? in
            let (condition, arguments) = stretch.condition
            if let found = try firstRow(
                """
                SELECT \(Self.versionColumns) FROM \(Self.versionSource) WHERE \(condition) AND \(Self.isOnDisk)
                ORDER BY v.id DESC LIMIT 1 OFFSET ?
                """,
                arguments + [.integer(remaining)], storedVersion)
            {
                return found.version
            }
            // Not this stretch: only now are its versions counted, to go on in the one before.
            remaining -= try firstRow(
                "SELECT count(*) FROM versions AS v WHERE \(condition) AND \(Self.isOnDisk)", arguments
            ) { (row: SQLiteStatement) throws(HistoryError) in row.int64(at: 0) } ?? 0
            return nil
        }
    }

    /// The first version in `versions(of: path)`'s order (newest first) recorded at or before
    /// `time`, a conflict copy never: what the file held then. Nil when every version is later.
    ///
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read.
    public func version(of path: String, atOrBefore time: Int64) throws(HistoryError) -> Version? {
        try firstStretch(of: path) { (stretch: Stretch) throws(HistoryError) -> Version? in
            let (condition, arguments) = stretch.condition
            return try firstRow(
                """
                SELECT \(Self.versionColumns) FROM \(Self.versionSource) WHERE \(condition) AND \(Self.isOnDisk)
                AND v.time <= ? ORDER BY v.id DESC LIMIT 1
                """,
                arguments + [.integer(time)], storedVersion)?.version
        }
    }

    // MARK: - Helpers

    /// The first non-nil value `visit` gives for the stretches of the file at `path`, newest
    /// first (its own versions since it moved there, then those of the path it came from before
    /// the move, and so on); nil when none gives one. In one read transaction.
    private func firstStretch<Found>(
        of path: String, _ visit: (Stretch) throws(HistoryError) -> Found?
    ) throws(HistoryError) -> Found? {
        try transaction(.deferred) { () throws(HistoryError) -> Found? in
            var stretch = Stretch(path: path, first: nil, end: Int64.max)
            while true {
                let move = try firstRow(Self.moveBefore, [.text(stretch.path), .integer(stretch.end)]) {
                    (row: SQLiteStatement) throws(HistoryError) in (id: row.int64(at: 0), from: row.text(at: 1))
                }
                stretch.first = move?.id
                if let found = try visit(stretch) { return found }
                // Each stretch ends where the one before began: the walk ends, even in a damaged file.
                guard let move else { return nil }
                stretch = Stretch(path: move.from, first: nil, end: move.id)
            }
        }
    }
}
