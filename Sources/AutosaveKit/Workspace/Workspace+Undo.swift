import AutosaveHistory
import Logging

/// What `undo` did to one file, or, for a dry run, would do.
public struct UndoneFile: Sendable, Equatable {
    /// What happened to the file.
    public enum Action: String, Sendable {
        /// Its text now has the writer's changes taken back (or, for a dry run, would have).
        case written
        /// The writer made it and it was removed.
        case removed
        /// Taking the writer's changes back overlapped a later edit: the file was left as it is,
        /// and `copy` holds it as it was before the writer's first change.
        case collided
        /// The writer had moved it from `path` to `from`: it is back at `path` (its changes since
        /// taken back too), and gone from `from`.
        case movedBack = "moved-back"
    }

    public var path: String
    public var action: Action
    /// The buffer's revision after the undo's edit (nil: a dry run, a removal or a collision).
    public var revision: Int?
    /// A collision's conflict copy, as the log names it (nil when none was written: a dry run).
    public var copy: String?
    /// For `movedBack`: the name the file is taken from.
    public var from: String?
    /// The unified diff from the file now to the file undone (a dry run's, or a collision's:
    /// what the undo would have written without it).
    public var diff: String?
    /// The writer's versions taken back, newest first.
    public var versions: [Int64]

    public init(
        path: String, action: Action, revision: Int? = nil, from: String? = nil, copy: String? = nil, diff: String? = nil,
        versions: [Int64]
    ) {
        self.path = path
        self.action = action
        self.from = from
        self.revision = revision
        self.copy = copy
        self.diff = diff
        self.versions = versions
    }
}

extension Workspace {
    /// Takes back `writer`'s changes at or after `since` to the files at or below `folder`,
    /// keeping everyone else's (see `UndoPlan`); each change is an edit of client `undo`, saved
    /// at once and so a version of its own that can be undone the same way. Buffers with unsaved
    /// edits are saved first, so that every edit so far is a version.
    ///
    /// - Parameter dryRun: change nothing; each file's `diff` says what would change.
    /// - Returns: each file the writer changed there, and what became of it; and the writer's
    ///   versions left alone, with why.
    /// - Throws: `HistoryQueryError` when history is off or fails; `WorkspaceError` for a folder
    ///   that leads out of the root.
    public func undo(
        _ writer: WriterPattern, since: Int64?, below folder: String, dryRun: Bool
    ) async throws -> (files: [UndoneFile], skipped: [(path: String, version: Int64, reason: String)]) {
        guard let history else { throw HistoryQueryError.off }
        let folder = try resolveTree(folder)
        // Edits not saved yet are in no version: saved first, every edit so far is one history
        // can take back (a dry run too, so that its diff is the undo's).
        try await saveAll()
        var files: [UndoneFile] = []
        var skipped: [(path: String, version: Int64, reason: String)] = []
        var edits: [AcceptedEdit] = []
        var saved: [String] = []
        for (path, entries) in try await history.changes(by: writer, since: since, below: folder) {
            let current = (try? await read(path))?.content
            let plan = UndoPlan(history: entries, current: current, writer: writer, since: since)
            skipped += plan.skipped.map { (path, $0.id, $0.reason) }
            switch plan.outcome {
            case .unchanged:
                continue
            case .write(let bytes) where plan.movesBackTo != nil:
                let oldName = plan.movesBackTo ?? path
                if (try? await read(oldName))?.content != nil {
                    skipped.append((path, plan.undone.last ?? 0, "moved from \(oldName), where a file is now: not moved back"))
                    continue
                }
                var file = UndoneFile(path: oldName, action: .movedBack, from: path, versions: plan.undone)
                if dryRun {
                    file.diff = Self.diff(path, from: current, to: nil) + Self.diff(oldName, from: nil, to: bytes)
                } else {
                    let edit = try await accept(oldName, bytes, createParents: true)
                    announceEdit(of: oldName, revision: edit.revision, by: "undo")
                    edits.append(edit)
                    announceEdit(of: path, revision: try await remove(path), by: "undo")
                    file.revision = edit.revision
                    saved += [oldName, path]
                }
                files.append(file)
            case .write(let bytes):
                var file = UndoneFile(path: path, action: .written, versions: plan.undone)
                if dryRun {
                    file.diff = Self.diff(path, from: current, to: bytes)
                } else {
                    let edit = try await accept(path, bytes, createParents: true)
                    announceEdit(of: path, revision: edit.revision, by: "undo")
                    file.revision = edit.revision
                    edits.append(edit)
                    saved.append(path)
                }
                files.append(file)
            case .remove:
                var file = UndoneFile(path: path, action: .removed, versions: plan.undone)
                if dryRun {
                    file.diff = Self.diff(path, from: current, to: nil)
                } else {
                    announceEdit(of: path, revision: try await remove(path), by: "undo")
                    saved.append(path)
                }
                files.append(file)
            case .collision(let undone):
                var file = UndoneFile(path: path, action: .collided, versions: plan.undone)
                file.diff = Self.diff(path, from: current, to: undone)
                if !dryRun {
                    let copies = context.copies
                    let kept = try await BlockingIO.run { () throws(WriteError) -> ConflictCopies.Kept in
                        try copies.keep(undone ?? [], of: path, revision: 0)
                    }
                    file.copy = context.shown(kept.path)
                    logger.warning(
                        "undo-collided",
                        metadata: [
                            "path": "\(path)", "who": "\(writer)", "copy": "\(file.copy ?? "")",
                            "next": "the file is left as it is; the copy holds it as it was before \(writer)'s first change: merge by hand",
                        ])
                }
                files.append(file)
            }
        }
        for edit in edits { try await edit.waitUntilDurable() }
        if !saved.isEmpty { try await save(saved) }
        if !dryRun, !files.isEmpty {
            logger.info(
                "undone",
                metadata: [
                    "who": "\(writer)", "files": "\(files.filter { $0.action != .collided }.count)",
                    "collided": "\(files.filter { $0.action == .collided }.count)",
                ])
        }
        return (files, skipped)
    }

    /// The unified diff that `autosave patch` applies to turn the file `current` into `new`
    /// (nil for no file: `/dev/null`, as git writes a creation or removal).
    static func diff(_ path: String, from current: [UInt8]?, to new: [UInt8]?) -> String {
        let lines = UnifiedDiff.lines(
            from: current ?? [], to: new ?? [], oldLabel: current == nil ? "/dev/null" : "a/" + path,
            newLabel: new == nil ? "/dev/null" : "b/" + path)
        return String(decoding: lines.flatMap(\.bytes), as: UTF8.self)
    }
}

extension Workspace {
    /// Before `client` edits `path`: when its buffer holds unsaved edits of other clients, they
    /// are saved first, so that each version history keeps is one writer's, and
    /// `undo --who` can take back one writer's edits and leave another's (a save holding both
    /// writers' edits is one it must leave alone). Costs a save only when writers take turns on
    /// one file within the autosave window; a save that fails leaves the edits unsaved, as before.
    public func handOver(_ path: String, to client: String) async {
        guard history != nil, let key = try? normalize(path), let pending = historyWriters.pending(key),
            pending != [client]
        else { return }
        try? await save([key])
    }
}
