import AutosaveHistory
import ByteNames

extension VersionHistory {
    /// Per file at or below `folder` ("" for the whole tree) that `writer` changed at or after
    /// `since` (ms since the epoch; nil: ever), its history as `UndoPlan` reads it: oldest first,
    /// following moves, from the version before the window on, each with its bytes.
    ///
    /// - Throws: `HistoryQueryError.store` when the database fails, `.off` when history is off.
    public func changes(by writer: WriterPattern, since: Int64?, below folder: String) async throws(HistoryQueryError) -> [(path: String, history: [UndoPlan.Entry])] {
        let database = self.database
        return try await query { () throws(HistoryError) -> [(path: String, history: [UndoPlan.Entry])] in
            try database.withStore { store throws(HistoryError) in
                var paths: [String] = []
                var seen = PathSet()
                // Names a file was moved away from, newest first: what they held before that
                // belongs to the file's history at its new name, which follows the move back.
                var movedAway = PathSet()
                // One row at a time: a whole tree's history is never held at once.
                try store.forEachVersion(below: folder) { version throws(HistoryError) in
                    if let since, version.time < since { return }
                    defer { if version.kind == .moved, let from = version.from { movedAway.insert(from) } }
                    guard writer.matches(version) || writer.isAmong(version), !movedAway.contains(version.path),
                        seen.insert(version.path)
                    else { return }
                    paths.append(version.path)
                }
                var found: [(path: String, history: [UndoPlan.Entry])] = []
                for path in paths {
                    let newestFirst = try store.versions(of: path).filter { $0.kind != .conflictCopy }
                    // The window, and the one version before it: what the earliest change replaced.
                    let inWindow = newestFirst.prefix { $0.time >= (since ?? .min) }
                    let kept = newestFirst.prefix(inWindow.count + 1)
                    var entries: [UndoPlan.Entry] = []
                    for version in kept.reversed() {
                        entries.append(UndoPlan.Entry(version: version, content: version.kind == .removed ? nil : try store.content(of: version.id)))
                    }
                    found.append((path, entries))
                }
                return found
            }
        }
    }
}
