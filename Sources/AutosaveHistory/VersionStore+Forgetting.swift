import CSQLite

extension VersionStore {
    /// Versions `forget` drops in one transaction.
    static let forgetVersionsPerStep = 512

    /// Removes every version of `path` — those `versions(of:)` lists, under the names the file had
    /// before it moved too, and every version of every path below it when it is a folder — with
    /// the contents only they held, and removes those bytes from the database's files: a secret
    /// written by mistake is gone from `history.sqlite` and its WAL when this returns.
    ///
    /// How: the rows are deleted with `PRAGMA secure_delete` on (SQLite overwrites what it
    /// deletes with zeros); contents compressed against a deleted one are compressed again
    /// without it; then `VACUUM` rewrites the database from the rows that remain (free space
    /// inside a page may still hold bytes of rows SQLite moved when it rebalanced its tree), and a
    /// TRUNCATE checkpoint copies the WAL into the main file and cuts the WAL to nothing (earlier
    /// WAL frames held the pages as they were).
    ///
    /// A content that versions of another path also hold stays (`sharedContents` counts them):
    /// the same bytes under another name are that name's to forget. What is not in this database
    /// (the edit journal, backups of the file, the file itself) is not touched.
    /// - Parameter path: relative to the root; "" forgets every version of every file.
    /// - Throws: `HistoryError.sqlite` when the database cannot be written or the checkpoint
    ///   cannot complete (the versions removed so far stay removed: run it again);
    ///   `.compression` when a content compressed against a forgotten one does not decode (nothing
    ///   of that step is removed); `.corrupt` when the database turns out damaged.
    public func forget(path: String) throws(HistoryError) -> ForgetReport {
        var report = ForgetReport(path: path)
        report.bytesBefore = bytesOnDisk
        var ids = Set(try versions(below: path).map(\.id))
        if !path.isEmpty { ids.formUnion(try versions(of: path).map(\.id)) }
        guard !ids.isEmpty else {
            report.bytesAfter = report.bytesBefore
            return report
        }
        // Restored after: the connection's setting (Debian's SQLite has it on by default) is not ours to change.
        let secureDelete = try pragma("secure_delete")
        try execute("PRAGMA secure_delete = ON")
        defer { try? execute("PRAGMA secure_delete = \(secureDelete)") }
        var held = Set<Int64>()
        let ordered = ids.sorted(by: >)
        for start in stride(from: 0, to: ordered.count, by: Self.forgetVersionsPerStep) {
            let batch = Array(ordered[start..<min(start + Self.forgetVersionsPerStep, ordered.count)])
            let dropped = try transaction(.immediate) { () throws(HistoryError) in try drop(versions: batch, isStrict: true) }
            report.versions += dropped.versions
            report.contents += dropped.contents
            held.formUnion(dropped.held)
            report.reencoded += dropped.reencoded
        }
        report.sharedContents = held.count - report.contents
        try vacuum()
        guard try checkpointAndTruncate() else {
            throw .sqlite(
                path: self.path, operation: "checkpoint the WAL after forgetting \(path)", code: SQLITE_BUSY,
                message: "another connection is reading the database; the forgotten bytes may stay in the WAL until the next checkpoint")
        }
        report.bytesAfter = bytesOnDisk
        return report
    }
}
