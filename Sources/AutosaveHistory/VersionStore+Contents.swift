extension VersionStore {
    /// One `contents` row: a frame and what it needs to be decoded and checked.
    struct ContentRow {
        var id: Int64
        var digest: UInt64
        var size: Int
        /// The content the frame was compressed against; nil for a keyframe.
        var base: Int64?
        var depth: Int
        var data: [UInt8]
    }

    /// The bytes of content `id`: its frame decoded against its base's bytes, decoded the same way,
    /// down to a keyframe or a content still in the cache.
    ///
    /// The frames inside the chain are decoded through `chainBuffers`, unchecked; the last one
    /// into the bytes returned, checked by zstd's checksum and then against the digest recorded.
    /// Only those bytes are kept in the cache: a content inside the chain was checked by nothing
    /// of its own, and most reads of old versions are of one version, far from the next.
    ///
    /// - Throws: `HistoryError.compression` when a frame does not decode, or the result's digest is
    ///   not the one recorded; `.corrupt` when a content of the chain is missing or refers forward
    ///   (rows the schema's foreign keys should have kept); `.sqlite` when reading fails.
    func bytes(ofContent id: Int64) throws(HistoryError) -> [UInt8] {
        if let bytes = cache.bytes(of: id) { return bytes }
        var chain: [ContentRow] = []
        var start: [UInt8]?
        var next: Int64? = id
        while let current = next {
            if current != id, let bytes = cache.bytes(of: current) {
                start = bytes
                break
            }
            guard let row = try contentRow(current) else {
                let holder = chain.last.map { "content \($0.id)" } ?? "a version"
                throw .corrupt(path: path, detail: "content \(current) is missing, though \(holder) refers to it")
            }
            // Bases are always older, so the walk ends, even in a damaged file.
            if let base = row.base, base >= row.id {
                throw .corrupt(path: path, detail: "content \(row.id) refers to content \(base), which is not older")
            }
            chain.append(row)
            next = row.base
        }
        guard let wanted = chain.first else { return [] }
        defer { chainBuffers.trim() }
        let bytes = try Zstd.withBytes(of: start) { (start: UnsafeRawBufferPointer?) throws(HistoryError) -> [UInt8] in
            var prefix = start
            // Oldest first; the buffers take turns, each frame's base being in the other one.
            for (index, row) in chain.dropFirst().reversed().enumerated() {
                let output = chainBuffers.buffer(index % 2, holding: row.size + 1)
                try decoding(row) { () throws(HistoryError) in
                    try zstd.decompress(row.data, prefix: prefix, into: output, size: row.size, checksum: false)
                }
                prefix = UnsafeRawBufferPointer(rebasing: output[..<row.size])
            }
            return try decoding(wanted) { () throws(HistoryError) in
                try zstd.decompress(wanted.data, prefix: prefix, size: wanted.size, checksum: true)
            }
        }
        guard hash(bytes) == wanted.digest else {
            throw .compression(
                detail: "content \(id) decodes to \(bytes.count) bytes that are not the ones recorded (digest differs)")
        }
        cache.keep(bytes, as: id)
        return bytes
    }

    /// What `body` returns; its compression error names content `row`.
    private func decoding<Result>(
        _ row: ContentRow, _ body: () throws(HistoryError) -> Result
    ) throws(HistoryError) -> Result {
        do {
            return try body()
        } catch {
            throw .compression(detail: "content \(row.id) does not decode: \(Self.detail(of: error))")
        }
    }

    /// The id of the stored content whose bytes are `bytes`; nil when none is.
    ///
    /// Candidates are found by digest and size, then compared byte for byte: contents whose
    /// digests collide stay apart. `likely` (the path's latest content) is compared first.
    /// - Throws: `HistoryError.sqlite` or `.corrupt` when the database cannot be read. A candidate
    ///   that does not decode is not the same bytes, and is passed over.
    func existingContent(_ bytes: [UInt8], digest: UInt64, likely: Int64?) throws(HistoryError) -> Int64? {
        var candidates = try rows(
            "SELECT id FROM contents WHERE digest = ? AND size = ? ORDER BY id DESC",
            [.integer(Int64(bitPattern: digest)), .integer(Int64(bytes.count))]
        ) { (row: SQLiteStatement) throws(HistoryError) in row.int64(at: 0) }
        if let likely, let index = candidates.firstIndex(of: likely) {
            candidates.swapAt(0, index)
        }
        for candidate in candidates {
            do {
                if try self.bytes(ofContent: candidate) == bytes { return candidate }
            } catch {
                guard case .compression = error else { throw error }
            }
        }
        return nil
    }

    /// Versions of a path between two hubs (see `store`).
    static let hubSpacing = 16

    /// Stores `bytes` as a new content of `path`'s history, compressed against an earlier content
    /// (zstd's prefix), and returns its id. Without a usable earlier content it is a keyframe.
    ///
    /// Which earlier content: each version of a path has an ordinal n (how many versions the path
    /// had before it). Most are compressed against the file's previous content (`previous`): the
    /// delta is one version's change. Every `hubSpacing`-th version is a hub, compressed against
    /// an earlier hub as skip-deltas go (hub h against hub h - lowbit(h)), so a chain climbs from
    /// a version to its hub, then hub to hub in fewer steps than the binary digits of h: a read of
    /// any of 10,000 versions decodes at most about 24 frames, while nine versions in ten still
    /// cost one change. (Against a fixed ancestor once a chain was full, every later delta grew
    /// with the versions since that ancestor: 2 to 3 times git's pack at 10,000 versions.) Should
    /// a chain still reach `keyframeInterval` (a store made by an earlier scheme, an unlucky
    /// path), the content is compressed against the ancestor half way up it instead.
    ///
    /// - Returns: the new content's id.
    /// - Throws: `HistoryError.compression` when zstd fails; `.sqlite` when writing fails.
    func store(_ bytes: [UInt8], digest: UInt64, of path: String, after previous: Int64?) throws(HistoryError) -> Int64 {
        var base: (id: Int64, depth: Int, bytes: [UInt8])?
        var candidate = previous
        if previous != nil, let hub = try hubBase(for: path) { candidate = hub }
        if let id = candidate, let row = try depthAndSize(ofContent: id), row.depth + 1 >= keyframeInterval {
            // Up the chain to the first ancestor below depth K/2: the versions after it make the next half.
            while let current = candidate, let above = try depthAndSize(ofContent: current), above.depth >= keyframeInterval / 2 {
                candidate = try baseOfContent(current)
            }
        }
        if let previous = candidate, let row = try depthAndSize(ofContent: previous), row.size > 0, row.depth + 1 < keyframeInterval
        {
            do {
                let decoded = try self.bytes(ofContent: previous)
                base = (previous, row.depth + 1, decoded)
            } catch {
                // A previous content that does not decode is no prefix: this one stands alone.
                guard case .compression = error else { throw error }
            }
        }
        let data = try zstd.compress(bytes, prefix: base?.bytes)
        try run(
            "INSERT INTO contents(digest, size, base, depth, data) VALUES (?, ?, ?, ?, ?)",
            [
                .integer(Int64(bitPattern: digest)), .integer(Int64(bytes.count)), SQLiteValue(base?.id),
                .integer(Int64(base?.depth ?? 0)), .blob(data),
            ]
        )
        return try connection().lastInsertRowID
    }

    /// For a version of `path` that is a hub (its ordinal n a multiple of `hubSpacing`, h = n /
    /// spacing), the content of hub h - lowbit(h); nil for any other version, or when that
    /// version holds no content.
    private func hubBase(for path: String) throws(HistoryError) -> Int64? {
        let ordinal = try firstRow("SELECT count(*) FROM versions WHERE path = ?", [.text(path)]) {
            (row: SQLiteStatement) throws(HistoryError) in Int(row.int64(at: 0))
        } ?? 0
        guard ordinal > 0, ordinal % Self.hubSpacing == 0 else { return nil }
        let hub = ordinal / Self.hubSpacing
        let target = (hub - (hub & -hub)) * Self.hubSpacing
        return try firstRow(
            "SELECT content FROM versions WHERE path = ? ORDER BY id LIMIT 1 OFFSET ?", [.text(path), .integer(Int64(target))]
        ) { (row: SQLiteStatement) throws(HistoryError) -> Int64? in row.isNull(at: 0) ? nil : row.int64(at: 0) } ?? nil
    }

    // MARK: - Helpers

    private func contentRow(_ id: Int64) throws(HistoryError) -> ContentRow? {
        try firstRow("SELECT digest, size, base, depth, data FROM contents WHERE id = ?", [.integer(id)]) {
            (row: SQLiteStatement) throws(HistoryError) in
            ContentRow(
                id: id, digest: UInt64(bitPattern: row.int64(at: 0)), size: Int(row.int64(at: 1)),
                base: row.isNull(at: 2) ? nil : row.int64(at: 2), depth: Int(row.int64(at: 3)), data: row.blob(at: 4))
        }
    }

    /// The content `id` was compressed against; nil for a keyframe (or an unknown id).
    private func baseOfContent(_ id: Int64) throws(HistoryError) -> Int64? {
        try firstRow("SELECT base FROM contents WHERE id = ?", [.integer(id)]) {
            (row: SQLiteStatement) throws(HistoryError) in row.isNull(at: 0) ? nil : row.int64(at: 0)
        } ?? nil
    }

    private func depthAndSize(ofContent id: Int64) throws(HistoryError) -> (size: Int, depth: Int)? {
        try firstRow("SELECT size, depth FROM contents WHERE id = ?", [.integer(id)]) {
            (row: SQLiteStatement) throws(HistoryError) in (Int(row.int64(at: 0)), Int(row.int64(at: 1)))
        }
    }

    /// The detail of a compression error, without its prefix.
    private static func detail(of error: HistoryError) -> String {
        if case .compression(let detail) = error { return detail }
        return error.description
    }
}
