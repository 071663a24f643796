extension VersionStore {
    /// The kinds for which the path's latest content, seen again, is no new version: an event
    /// reporting what history already holds. A removal, move, restore or conflict copy is an
    /// event of its own even with the same bytes.
    static let repeatableKinds: Set<VersionKind> = [.modified, .created, .saved, .baseline]

    /// Records a version; nil (nothing recorded) when `path`'s latest version has the same kind-independent
    /// content (same digest AND same bytes) and the input's kind is modified/created/saved/baseline (a repeat
    /// is not a new version). `removed` with content nil keeps the path's latest content as the tombstone's.
    ///
    /// A latest version that is a tombstone is never repeated: the file coming back is a version
    /// even with the content it had. A `moved` version with content nil takes the content of
    /// `from`'s latest version (the file's bytes did not change on the way). A new content is
    /// stored once, compressed against the path's latest content (or, for a path with no history
    /// yet, `from`'s); bytes history already holds, at any path, are shared, not stored again.
    /// The version is committed but not yet durable: `sync()` makes it so.
    /// - Returns: the version recorded, or nil for a repeat.
    /// - Throws: `HistoryError.sqlite` when the database cannot be written (nothing is recorded);
    ///   `.compression` when zstd fails; `.corrupt` when the database turns out damaged.
    @discardableResult
    public func record(_ input: VersionInput) throws(HistoryError) -> Version? {
        let outcome = try transaction(.immediate) {
            () throws(HistoryError) -> (version: Version, added: (id: Int64, bytes: [UInt8])?)? in
            let latest = try latestStored(of: input.path)
            var content: (id: Int64, size: Int, digest: UInt64)?
            var added: (id: Int64, bytes: [UInt8])?
            if let bytes = input.content {
                let digest = hash(bytes)
                if let existing = try existingContent(bytes, digest: digest, likely: latest?.content) {
                    if Self.repeatableKinds.contains(input.kind), let latest, latest.version.kind != .removed,
                        latest.content == existing
                    {
                        return nil
                    }
                    content = (existing, bytes.count, digest)
                } else {
                    var previous = latest?.content
                    if latest == nil, let from = input.from { previous = try latestStored(of: from)?.content }
                    let id = try store(bytes, digest: digest, of: input.path, after: previous)
                    content = (id, bytes.count, digest)
                    added = (id, bytes)
                }
            } else if let kept = try keptContent(for: input, latest: latest) {
                content = kept
            }
            let changes = try lineChanges(for: input, content: content?.id, latest: latest)
            let parent = try parentVersion(of: input)
            try run(
                """
                INSERT INTO versions(path, time, who, kind, content, from_path, program, pid, added, removed, parent)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(input.path), .integer(input.time), .text(input.who), .text(input.kind.rawValue),
                    SQLiteValue(content?.id), SQLiteValue(input.from), SQLiteValue(input.program),
                    SQLiteValue(input.pid.map(Int64.init)), SQLiteValue(changes.map { Int64($0.added) }),
                    SQLiteValue(changes.map { Int64($0.removed) }), SQLiteValue(parent),
                ])
            let version = Version(
                id: try connection().lastInsertRowID, path: input.path, time: input.time, who: input.who,
                kind: input.kind,
                size: content?.size, from: input.from, program: input.program, pid: input.pid, digest: content?.digest,
                added: changes?.added, removed: changes?.removed, parent: parent)
            return (version, added)
        }
        guard let outcome else { return nil }
        hasUnsyncedVersions = true
        // Only now, committed: a rolled-back content's bytes must not be found under its id.
        if let added = outcome.added { cache.keep(added.bytes, as: added.id) }
        return outcome.version
    }

    /// The lines the version adds and removes against the one before it in the file's history
    /// (`versions(of:)`'s order): the path's latest, or for a move the latest of the path it came
    /// from. Nil when there is nothing to count against or nothing to count: a first version, a
    /// removal or a version after one, a binary, a content that does not decode.
    ///
    /// Both contents are usually in the cache: the previous one was just compressed against, or
    /// recorded a moment ago.
    private func lineChanges(
        for input: VersionInput, content: Int64?, latest: StoredVersion?
    ) throws(HistoryError) -> LineChanges? {
        guard input.kind != .removed, let content else { return nil }
        var previous = latest
        if input.kind == .moved, let from = input.from { previous = try latestStored(of: from) }
        guard let previous, previous.version.kind != .removed, let before = previous.content else { return nil }
        do {
            let old = try bytes(ofContent: before)
            if before == content { return LineChanges.between(old, old) }
            if let new = input.content { return LineChanges.between(old, new) }
            return LineChanges.between(old, try bytes(ofContent: content))
        } catch {
            // Counts are a nicety: a previous content that no longer decodes costs them, not the version.
            guard case .compression = error else { throw error }
            return nil
        }
    }

    /// A conflict copy's parent: the path's latest version holding the bytes the copy came from,
    /// a copy or a tombstone excepted (a tombstone keeps the bytes, the file did not hold them
    /// then); nil for any other kind, or when history holds none (the file's version was never
    /// stored, or was pruned).
    private func parentVersion(of input: VersionInput) throws(HistoryError) -> Int64? {
        guard input.kind == .conflictCopy, let bytes = input.parentContent,
            let content = try existingContent(bytes, digest: hash(bytes), likely: nil)
        else { return nil }
        return try firstRow(
            "SELECT id FROM versions WHERE path = ? AND content = ? AND \(Self.isOnDisk) AND kind <> ? ORDER BY id DESC LIMIT 1",
            [.text(input.path), .integer(content), .text(VersionKind.removed.rawValue)]
        ) { (row: SQLiteStatement) throws(HistoryError) in row.int64(at: 0) }
    }

    /// The content a version recorded without bytes keeps: a tombstone the path's latest, a move
    /// the latest of the path it came from; nil for anything else.
    private func keptContent(
        for input: VersionInput, latest: StoredVersion?
    ) throws(HistoryError) -> (id: Int64, size: Int, digest: UInt64)? {
        var source: StoredVersion?
        if input.kind == .removed {
            source = latest
        } else if input.kind == .moved, let from = input.from {
            source = try latestStored(of: from)
        }
        guard let source, let id = source.content, let size = source.version.size, let digest = source.version.digest
        else {
            return nil
        }
        return (id, size, digest)
    }
}

extension VersionStore {
    /// Runs `body`, its `record`s and other writes, as one transaction: one commit for many
    /// versions (the baseline stores files 64 at a time). When `body` throws, nothing of it is
    /// recorded.
    ///
    /// - Throws: what `body` throws; `HistoryError.sqlite` when the transaction cannot be begun or committed.
    public func batch<Value>(_ body: () throws(HistoryError) -> Value) throws(HistoryError) -> Value {
        do throws(HistoryError) {
            return try transaction(.immediate, body)
        } catch {
            // The contents the batch recorded were kept in the cache under ids a rollback frees
            // (AUTOINCREMENT's counter rolls back too): none may be found under them again.
            cache.removeAll()
            throw error
        }
    }
}
