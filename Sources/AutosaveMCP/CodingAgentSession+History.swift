import AutosaveControl
import AutosaveHistory
import AutosaveKit
import ByteNames

/// The history tools: a file's versions with who wrote them, a version brought back, and this
/// session's own changes taken back with everyone else's kept.
extension CodingAgentSession {
    func history(_ input: ToolInput) async throws -> String {
        let path = try input.string("path")
        let limit = try input.integer("limit") ?? 50
        guard limit > 0 else { throw ToolFailure("`limit` must be at least 1, got \(limit)") }
        let versions = try await request(HistoryMethod(path: path, limit: limit, isDeletedOnly: false)).versions
        var lines = [
            "\(versions.count) version(s) of \(path), newest first (id · time · who · kind · bytes · lines); "
                + "this session writes as \(clientName):"
        ]
        for version in versions {
            var line = "\(version.id) · \(version.timestamp) · \(version.who) · \(version.kind.rawValue)"
            line += " · \(version.size.map(String.init) ?? "-")"
            if let added = version.added, let removed = version.removed { line += " · +\(added) -\(removed)" }
            // A folder's files, or a version from before a move (under the name the file had then).
            if !version.path.isSameName(as: path) { line += " · \(version.path)" }
            lines.append(line)
        }
        lines.append("restore {path, version} brings one back; undo_my_changes takes back what this session wrote.")
        return ResultBound.cut(lines.joined(separator: "\n"))
    }

    func restore(_ input: ToolInput) async throws -> String {
        let path = try input.string("path")
        let text = try input.string("version")
        guard let selector = VersionSelector(text) else {
            throw ToolFailure("`version` must be a version id from history, or -N (N versions before the latest), got \(text)")
        }
        let edited = try await request(RestoreMethod(path: path, version: selector, to: nil))
        return "\(edited.path) now holds version \(text) (revision \(edited.revision)), as an edit of client restore: "
            + "merged with unsaved edits, and saved a moment later. read_file it before editing it again."
    }

    func undoMyChanges(_ input: ToolInput) async throws -> String {
        var since: Int64?
        if let text = try input.optionalString("since") {
            guard case .time(let moment)? = try? VersionSelector.parse(text, now: VersionHistory.wallClock()) else {
                throw ToolFailure("`since` must be a time (20m, \"2 hours ago\", 2026-11-27T10:00), got \(text)")
            }
            since = moment
        }
        let isDryRun = try input.boolean("dry_run") ?? false
        var lines: [String] = []
        for path in try input.strings("paths") ?? [""] {
            let answer = try await request(UndoMethod(who: clientName, since: since, path: path, isDryRun: isDryRun))
            for file in answer.files {
                switch (file.action, isDryRun) {
                case (.collided, _):
                    lines.append(
                        "\(file.path): not undone: a later edit by someone else overlaps your change; left as it is"
                            + (file.copy.map { " (\($0) holds it as it was before your first change)" } ?? ""))
                case (_, true): lines.append(file.diff ?? "")
                case (.removed, false): lines.append("\(file.path): removed (you created it)")
                case (.movedBack, false): lines.append("\(file.path): moved back from \(file.from ?? "?"), where you had moved it")
                case (.written, false): lines.append("\(file.path): your changes taken back (revision \(file.revision ?? 0)); others' edits kept")
                }
            }
            for skip in answer.skipped { lines.append("\(skip.path)@\(skip.version): left alone: \(skip.reason)") }
        }
        if lines.isEmpty { return "Nothing to undo: history has no change by this session (\(clientName))\(since == nil ? "" : " since then")." }
        return ResultBound.cut((isDryRun ? "Would change (nothing was changed):\n" : "") + lines.joined(separator: "\n"))
    }
}
