extension VersionStore {
    /// A version as a row holds it: the public value, and the content row it refers to.
    struct StoredVersion {
        var version: Version
        /// The `contents` row of its bytes; nil when it has none.
        var content: Int64?
        /// That content's chain depth.
        var depth: Int?
    }

    /// The columns `storedVersion(_:)` reads, from `versionSource`.
    static let versionColumns =
        "v.id, v.path, v.time, v.who, v.kind, v.content, v.from_path, v.program, v.pid, c.size, c.digest, c.depth, v.added, v.removed, v.parent"
    static let versionSource = "versions AS v LEFT JOIN contents AS c ON c.id = v.content"

    // MARK: - Listing

    /// The path's versions, newest first; follows the file across `moved` versions (the versions it
    /// had under earlier names, before it moved, come after — i.e. older), at most `limit`.
    ///
    /// The list follows one file back in time: at a `moved` version it continues with the versions
    /// of the path it came from, older than the move. Versions `path` had before a file was moved
    /// onto it belong to the file that was there then, and are not in this list (they are in
    /// `versions(below:)`).
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read.
    public func versions(of path: String, limit: Int? = nil) throws(HistoryError) -> [Version] {
        var versions: [Version] = []
        try forEachVersion(of: path, limit: limit) { versions.append($0) }
        return versions
    }

    /// `versions(of:limit:)` given to `body` one by one, as they are read: 10,000 versions go
    /// where they are needed (an answer's text) with no list of them held on the way.
    ///
    /// - Throws: what `body` throws; `HistoryError.sqlite` or `.corrupt` when the database
    ///   cannot be read.
    public func forEachVersion(of path: String, limit: Int? = nil, _ body: (Version) throws(HistoryError) -> Void) throws(HistoryError) {
        try transaction(.deferred) { () throws(HistoryError) in
            var count = 0
            var name = path
            var before = Int64.max
            while true {
                // SQLite reads a negative LIMIT as none.
                let remaining = limit.map { max(0, $0) - count } ?? -1
                guard remaining != 0 else { break }
                // Up to and with a move, which goes on from its old name, older than the move.
                var move: Version?
                try forEachRow(
                    "SELECT \(Self.versionColumns) FROM \(Self.versionSource) WHERE v.path = ? AND v.id < ? ORDER BY v.id DESC LIMIT ?",
                    [.text(name), .integer(before), .integer(Int64(remaining))]
                ) { row throws(HistoryError) in
                    let version = try storedVersion(row).version
                    count += 1
                    try body(version)
                    guard version.kind == .moved, version.from != nil else { return true }
                    move = version
                    return false
                }
                guard let move, let from = move.from else { break }
                name = from
                before = move.id
            }
        }
    }

    /// Versions of every path at or below `folder` ("" = whole tree), newest first, at most `limit`.
    ///
    /// `folder` names a folder relative to the root, with or without a trailing "/"; paths are
    /// compared as bytes, so "d" covers "d" and "d/x" but not "d.txt", "d-x" or "dd/y".
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read.
    public func versions(below folder: String, limit: Int? = nil) throws(HistoryError) -> [Version] {
        var versions: [Version] = []
        try forEachVersion(below: folder, limit: limit) { versions.append($0) }
        return versions
    }

    /// `versions(below:limit:)` given to `body` one by one, as they are read.
    ///
    /// - Throws: what `body` throws; `HistoryError.sqlite` or `.corrupt` when the database
    ///   cannot be read.
    public func forEachVersion(below folder: String, limit: Int? = nil, _ body: (Version) throws(HistoryError) -> Void) throws(HistoryError) {
        let (condition, arguments) = Self.paths(below: folder, column: "v.path")
        let limit = Int64(limit.map { max(0, $0) } ?? -1)
        try forEachRow(
            "SELECT \(Self.versionColumns) FROM \(Self.versionSource) WHERE \(condition) ORDER BY v.id DESC LIMIT ?", arguments + [.integer(limit)]
        ) { row throws(HistoryError) in
            try body(try storedVersion(row).version)
            return true
        }
    }

    /// Paths whose latest version is a tombstone (`removed`), at or below `folder`, newest first:
    /// the files that were removed and can still be brought back.
    ///
    /// - Returns: each such path's tombstone, which keeps the content the file last had.
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read.
    public func deleted(below folder: String) throws(HistoryError) -> [Version] {
        let (condition, arguments) = Self.paths(below: folder, column: "path")
        return try rows(
            """
            SELECT \(Self.versionColumns) FROM \(Self.versionSource)
            WHERE v.id IN (SELECT max(id) FROM versions WHERE \(condition) AND \(Self.isOnDisk) GROUP BY path) AND v.kind = ?
            ORDER BY v.id DESC
            """,
            arguments + [.text(VersionKind.removed.rawValue)], storedVersion
        ).map(\.version)
    }

    /// The version with id `id`; nil when there is none.
    ///
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read.
    public func version(_ id: Int64) throws(HistoryError) -> Version? {
        try firstRow(
            "SELECT \(Self.versionColumns) FROM \(Self.versionSource) WHERE v.id = ?", [.integer(id)], storedVersion
        )?.version
    }

    /// The latest version recorded at `path` (a tombstone when it was removed last), a conflict
    /// copy never; nil when none.
    ///
    /// Unlike `versions(of:)` it does not follow moves: a path's latest version is its own.
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read.
    public func latest(of path: String) throws(HistoryError) -> Version? {
        try latestStored(of: path)?.version
    }

    // MARK: - Contents

    /// The version's bytes, exactly as recorded (nil: it has none, or there is no version `id`).
    ///
    /// Decompresses at most `keyframeInterval` frames (fewer when the contents down its chain
    /// were decoded recently), then checks the result against the digest recorded with it.
    /// - Throws: `HistoryError.compression` when a stored frame does not decode to what was
    ///   recorded (the file was damaged inside a valid database); `.sqlite` or `.corrupt` when the
    ///   database cannot be read.
    public func content(of id: Int64) throws(HistoryError) -> [UInt8]? {
        try transaction(.deferred) { () throws(HistoryError) -> [UInt8]? in
            let content = try firstRow("SELECT content FROM versions WHERE id = ?", [.integer(id)]) {
                (row: SQLiteStatement) throws(HistoryError) -> Int64? in row.isNull(at: 0) ? nil : row.int64(at: 0)
            }
            guard let content = content ?? nil else { return nil }
            return try bytes(ofContent: content)
        }
    }

    // MARK: - Helpers

    /// The latest version recorded at `path` (a conflict copy never: it was not the file), with
    /// its content's row.
    func latestStored(of path: String) throws(HistoryError) -> StoredVersion? {
        try firstRow(
            "SELECT \(Self.versionColumns) FROM \(Self.versionSource) WHERE v.path = ? AND \(Self.isOnDisk) ORDER BY v.id DESC LIMIT 1",
            [.text(path)], storedVersion)
    }

    /// A condition on a `versions` row (unqualified `kind`, which every query here names
    /// unambiguously) that holds for every version but a conflict copy: the versions that were,
    /// at their time, what the file held.
    static let isOnDisk = "kind <> '\(VersionKind.conflictCopy.rawValue)'"

    /// The version in the current row of a statement that selected `versionColumns`.
    ///
    /// - Throws: `HistoryError.corrupt` when its kind is not one this code knows.
    func storedVersion(_ row: SQLiteStatement) throws(HistoryError) -> StoredVersion {
        let id = row.int64(at: 0)
        let kindName = row.text(at: 4)
        guard let kind = VersionKind(rawValue: kindName) else {
            throw .corrupt(path: path, detail: "version \(id) has the unknown kind \"\(kindName)\"")
        }
        let hasContent = !row.isNull(at: 5)
        let version = Version(
            id: id, path: row.text(at: 1), time: row.int64(at: 2), who: row.text(at: 3), kind: kind,
            size: hasContent ? Int(row.int64(at: 9)) : nil,
            from: row.isNull(at: 6) ? nil : row.text(at: 6),
            program: row.isNull(at: 7) ? nil : row.text(at: 7),
            pid: row.isNull(at: 8) ? nil : Int32(truncatingIfNeeded: row.int64(at: 8)),
            digest: hasContent ? UInt64(bitPattern: row.int64(at: 10)) : nil,
            added: row.isNull(at: 12) ? nil : Int(row.int64(at: 12)),
            removed: row.isNull(at: 13) ? nil : Int(row.int64(at: 13)),
            parent: row.isNull(at: 14) ? nil : row.int64(at: 14))
        return StoredVersion(
            version: version, content: hasContent ? row.int64(at: 5) : nil,
            depth: hasContent ? Int(row.int64(at: 11)) : nil)
    }

    /// A condition on `column` that holds for `folder` and every path below it, and its arguments.
    ///
    /// A range, not `LIKE` (which ignores case and treats "_" and "%" as wildcards): every path
    /// below "d" begins with "d/", and sorts at or after "d/" and before "d0", "0" being the byte
    /// after "/". The range is a search of the index on `path`.
    static func paths(below folder: String, column: String) -> (String, [SQLiteValue]) {
        // As bytes, like every name here: a name's Characters are not its bytes.
        var bytes = Array(folder.utf8)
        while bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard !bytes.isEmpty else { return ("1", []) }
        let folder = String(decoding: bytes, as: UTF8.self)
        return (
            "(\(column) = ? OR (\(column) >= ? AND \(column) < ?))",
            [.text(folder), .text(folder + "/"), .text(folder + "0")]
        )
    }
}
