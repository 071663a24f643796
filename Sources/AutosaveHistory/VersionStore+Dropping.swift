import CSQLite

extension VersionStore {
    /// What `drop(versions:isStrict:)` did.
    struct Dropped {
        var versions = 0
        /// Contents deleted: no remaining version held them.
        var contents = 0
        /// Contents the dropped versions held (deleted or not).
        var held = Set<Int64>()
        /// Contents compressed again because their base was deleted.
        var reencoded = 0
    }

    /// Deletes the versions `ids` and every content that only they held, inside the transaction
    /// the caller opened; ids no longer in the database are passed over.
    ///
    /// Keeps the store's invariant: every content is held by a version, and every content's base
    /// exists and is older. A content to be deleted that others were compressed against (their
    /// zstd prefix) makes each such survivor be decoded and compressed again, against the nearest
    /// surviving ancestor of its chain (or on its own, as a keyframe, when none survives); its
    /// depth, and its dependents' depths, shrink accordingly, so no chain grows.
    /// - Parameter isStrict: what to do with a survivor that does not decode (a damaged frame):
    ///   true, throw (nothing is deleted: the transaction rolls back); false, leave it and the
    ///   contents its chain needs where they are, and go on.
    /// - Throws: `HistoryError.sqlite` when writing fails; `.compression` when compressing fails,
    ///   or (strict) a survivor does not decode; `.corrupt` when a chain is broken.
    func drop(versions ids: [Int64], isStrict: Bool) throws(HistoryError) -> Dropped {
        var dropped = Dropped()
        for id in ids {
            let removed = try rows("DELETE FROM versions WHERE id = ? RETURNING content", [.integer(id)]) {
                (row: SQLiteStatement) throws(HistoryError) -> Int64? in row.isNull(at: 0) ? nil : row.int64(at: 0)
            }
            dropped.versions += removed.count
            for case let content? in removed { dropped.held.insert(content) }
        }
        var orphans: [Int64: Int64?] = [:]
        for content in dropped.held {
            let isHeld = try firstRow("SELECT 1 FROM versions WHERE content = ? LIMIT 1", [.integer(content)]) {
                (_: SQLiteStatement) throws(HistoryError) in true
            } ?? false
            if !isHeld {
                // updateValue: a keyframe's nil base must be stored, not remove the entry.
                orphans.updateValue(try chainLink(of: content)?.base, forKey: content)
            }
        }
        var kept = Set<Int64>()
        for orphan in orphans.keys.sorted() {
            let dependents = try rows("SELECT id FROM contents WHERE base = ?", [.integer(orphan)]) {
                (row: SQLiteStatement) throws(HistoryError) in row.int64(at: 0)
            }
            for dependent in dependents where orphans[dependent] == nil {
                // The nearest ancestor that stays: the orphans between are all going.
                var ancestor = orphans[orphan] ?? nil
                var between = [orphan]
                while let current = ancestor, let next = orphans[current] {
                    between.append(current)
                    ancestor = next
                }
                do {
                    try reencode(dependent, against: ancestor)
                    dropped.reencoded += 1
                } catch {
                    guard !isStrict, case .compression = error else { throw error }
                    // It did not decode before either: nothing is lost by leaving it as it is.
                    kept.formUnion(between)
                }
            }
        }
        // Newest first: a content's dependents are newer than it, and any that are going are gone by then.
        for orphan in orphans.keys.sorted(by: >) where !kept.contains(orphan) {
            try run("DELETE FROM contents WHERE id = ?", [.integer(orphan)])
            cache.forget(orphan)
            dropped.contents += 1
        }
        return dropped
    }

    /// Compresses content `id` again against content `base` (nil: on its own), and moves its
    /// chain's depths to match.
    ///
    /// - Throws: `HistoryError.compression` when it does not decode or zstd fails; `.sqlite`.
    private func reencode(_ id: Int64, against base: Int64?) throws(HistoryError) {
        let bytes = try self.bytes(ofContent: id)
        guard let link = try chainLink(of: id) else {
            throw .corrupt(path: path, detail: "content \(id) is missing while it is compressed again")
        }
        var prefix: (id: Int64, depth: Int, bytes: [UInt8])?
        if let base, let baseLink = try chainLink(of: base), baseLink.size > 0 {
            prefix = (base, baseLink.depth + 1, try self.bytes(ofContent: base))
        }
        let data = try zstd.compress(bytes, prefix: prefix?.bytes)
        let depth = prefix?.depth ?? 0
        try run(
            "UPDATE contents SET base = ?, depth = ?, data = ? WHERE id = ?",
            [SQLiteValue(prefix?.id), .integer(Int64(depth)), .blob(data), .integer(id)])
        let shift = link.depth - depth
        guard shift != 0 else { return }
        // Every content compressed against it, directly or down a chain, is as much nearer a keyframe.
        try run(
            """
            WITH RECURSIVE below(id) AS (
                SELECT id FROM contents WHERE base = ?1
                UNION ALL SELECT c.id FROM contents AS c JOIN below ON c.base = below.id
            )
            UPDATE contents SET depth = depth - ?2 WHERE id IN below
            """,
            [.integer(id), .integer(Int64(shift))])
    }

    /// Content `id`'s place in its chain; nil when there is no such content.
    func chainLink(of id: Int64) throws(HistoryError) -> (base: Int64?, depth: Int, size: Int)? {
        try firstRow("SELECT base, depth, size FROM contents WHERE id = ?", [.integer(id)]) {
            (row: SQLiteStatement) throws(HistoryError) in
            (row.isNull(at: 0) ? nil : row.int64(at: 0), Int(row.int64(at: 1)), Int(row.int64(at: 2)))
        }
    }
}
