import AutosaveHistory
import AutosaveKit
import FoundationEssentials

/// What a method produced: its result, the edit its answer waits for, raw bytes sent after it.
struct MethodOutcome: Sendable {
    /// The result's JSON text, written already (`ControlResult.write(to:)`).
    var result: [UInt8]
    /// An accepted edit: the answer is sent once it is durable.
    var edit: AcceptedEdit?
    /// Raw bytes sent right after the answer's line (its `result.contentBytes`).
    var content: TextRope?

    init(result: JSONValue, edit: AcceptedEdit? = nil, content: TextRope? = nil) {
        var writer = JSONWriter()
        result.write(to: &writer)
        self.init(written: writer.takeBytes(), edit: edit, content: content)
    }

    /// A result written as it is sent: a large one (`history`'s) is never a tree of values.
    init(written result: [UInt8], edit: AcceptedEdit? = nil, content: TextRope? = nil) {
        self.result = result
        self.edit = edit
        self.content = content
    }
}

/// Carries out one request against the workspace. Nothing here touches a file directly.
struct ControlMethods<C: Clock>: Sendable where C.Duration == Duration {
    let workspace: Workspace<C>
    /// Asks the agent to shut down gracefully (saving every dirty buffer). The server calls it once
    /// the answer to `shutdown` is written, so the client hears it before the socket closes.
    let requestShutdown: @Sendable () -> Void

    /// Carries out `request`; an edit comes back with its result before it is durable, and its
    /// answer must wait for `AcceptedEdit.waitUntilDurable()` (so a connection can pipeline).
    ///
    /// Each method's params are read by its type (`WriteMethod`, …) before anything is done, and
    /// its result is written by the same type a client reads it with.
    func performPipelined(_ request: RPCRequest) async throws(RPCError) -> MethodOutcome {
        guard let method = RPCMethod(rawValue: request.method) else { throw .methodNotFound(request.method) }
        let (params, content) = (request.params, request.content)
        do {
            switch method {
            case .write: return try await write(try WriteMethod(params: params, content: content))
            case .edit: return try await edit(try EditMethod(params: params, content: content))
            case .read: return try await read(try ReadMethod(params: params, content: content))
            case .open:
                let open = try OpenMethod(params: params, content: content)
                return MethodOutcome(result: try await workspace.open(open.path, keep: open.keep).json)
            case .patch: return MethodOutcome(result: try await patch(try PatchMethod(params: params, content: content)).json)
            case .save:
                switch try SaveMethod(params: params, content: content).target {
                case .all: try await workspace.saveAll()
                case .paths(let paths): try await workspace.save(paths)
                }
                return MethodOutcome(result: SaveMethod.Result().json)
            case .close:
                try await workspace.close(try CloseMethod(params: params, content: content).path)
                return MethodOutcome(result: CloseMethod.Result().json)
            case .remove: return MethodOutcome(result: try await remove(try RemoveMethod(params: params, content: content)).json)
            case .status:
                let buffers = await workspace.status()
                let watcher = await workspace.watcherStatus()
                return MethodOutcome(
                    result: StatusMethod.Result(
                        root: workspace.root, buffers: buffers, conflicts: workspace.conflictCopyCount(), watcher: watcher
                    ).json)
            case .sync:
                await workspace.sync()
                return MethodOutcome(result: SyncMethod.Result().json)
            case .shutdown:
                // Flushed before the answer, so the client hears where every edit went; the
                // agent's own final flush then finds nothing left (or only edits made since).
                return MethodOutcome(result: ShutdownMethod.Result(await workspace.flush()).json)
            case .subscribe:
                // The server starts the subscription itself; the answer only says it is in place.
                _ = try SubscribeMethod(params: params, content: content)
                return MethodOutcome(result: SubscribeMethod.Result().json)
            case .history: return MethodOutcome(written: try await history(try HistoryMethod(params: params, content: content)))
            case .show: return try await show(try ShowMethod(params: params, content: content))
            case .restore: return try await restore(try RestoreMethod(params: params, content: content))
            case .restoreDeleted:
                return MethodOutcome(result: try await restoreDeleted(try RestoreDeletedMethod(params: params, content: content)).json)
            case .undo:
                return MethodOutcome(result: try await undo(try UndoMethod(params: params, content: content)).json)
            case .forget: return MethodOutcome(result: try await forget(try ForgetMethod(params: params, content: content)).json)
            case .changes:
                let request = try ChangesMethod(params: params, content: content)
                let answer = await workspace.changes(
                    since: request.filter.clock, globs: request.filter.patterns, includeUnsettled: request.includesUnsettled,
                    includeIgnored: request.includesIgnored)
                return MethodOutcome(result: ChangesMethod.Result(answer, root: workspace.root).json)
            }
        } catch {
            throw RPCError(answering: error)
        }
    }

    private func write(_ request: WriteMethod) async throws -> MethodOutcome {
        let path = try await workspace.resolve(request.path)
        await workspace.handOver(path, to: request.change.clientName)
        let edit = try await workspace.accept(
            path, request.bytes, changeID: request.change.changeID, ifRevision: request.change.ifRevision,
            createParents: request.createParents)
        workspace.announceEdit(of: path, revision: edit.revision, by: request.change.clientName)
        return MethodOutcome(result: EditedFile(path: path, revision: edit.revision).json, edit: edit)
    }

    private func edit(_ request: EditMethod) async throws -> MethodOutcome {
        let path = try await workspace.resolve(request.path)
        await workspace.handOver(path, to: request.change.clientName)
        let edit = try await workspace.acceptEdits(
            path, request.edits, encoding: request.positionEncoding ?? .utf16, changeID: request.change.changeID,
            ifRevision: request.change.ifRevision)
        workspace.announceEdit(of: path, revision: edit.revision, by: request.change.clientName)
        return MethodOutcome(result: EditedFile(path: path, revision: edit.revision).json, edit: edit)
    }

    /// `read`: the buffer's content as text, base64, or (`raw: true`) raw bytes after the answer.
    private func read(_ request: ReadMethod) async throws -> MethodOutcome {
        let path = try await workspace.resolve(request.path)
        let (text, revision) = try await workspace.readText(path)
        guard let text else { return MethodOutcome(result: ReadMethod.Result(path: path, revision: revision, content: .missing).json) }
        if request.isRaw {
            // Copied once, from the buffer's chunks straight into the socket's buffer.
            return MethodOutcome(result: ReadMethod.Result(path: path, revision: revision, content: .raw(count: text.count)).json, content: text)
        }
        let content = text.bytes
        let body: ReadMethod.Result.Content = String(validating: content, as: UTF8.self).map { .text($0) } ?? .bytes(content)
        return MethodOutcome(result: ReadMethod.Result(path: path, revision: revision, content: body).json)
    }

    // MARK: - History

    private func history() async throws -> VersionHistory {
        guard let history = await workspace.history else { throw HistoryQueryError.off }
        return history
    }

    /// `history`: the versions of a file or below a folder, or the removed files below a folder,
    /// as the result's text: written as the versions are read, with no list of them held.
    private func history(_ request: HistoryMethod) async throws -> [UInt8] {
        let path = try await workspace.resolveTree(request.path)
        let history = try await history()
        if request.isDeletedOnly {
            let deleted = try await history.deleted(below: path)
            var writer = JSONWriter()
            HistoryMethod.Result(versions: request.limit.map { Array(deleted.prefix($0)) } ?? deleted, form: request.form).write(to: &writer)
            return writer.takeBytes()
        }
        let text = try await history.versions(at: path, limit: request.limit, into: HistoryMethod.Result.Text(form: request.form)) {
            $0.append($1)
        }
        return text.finished().takeBytes()
    }

    /// `show`: a version's bytes, as `read` gives a buffer's.
    private func show(_ request: ShowMethod) async throws -> MethodOutcome {
        let path = try await workspace.resolve(request.path)
        let (version, content) = try await history().content(of: path, at: request.version)
        guard let content else { return MethodOutcome(result: ShowMethod.Result(version: version, content: .missing).json) }
        if request.isRaw {
            return MethodOutcome(result: ShowMethod.Result(version: version, content: .raw(count: content.count)).json, content: TextRope(content))
        }
        let body: ReadMethod.Result.Content = String(validating: content, as: UTF8.self).map { .text($0) } ?? .bytes(content)
        return MethodOutcome(result: ShowMethod.Result(version: version, content: body).json)
    }

    /// `restore`: a version's bytes written back through the buffer, as client `restore`'s edit.
    private func restore(_ request: RestoreMethod) async throws -> MethodOutcome {
        let path = try await workspace.resolve(request.path)
        var destination = path
        if let given = request.destination { destination = try await workspace.resolve(given) }
        var (version, content) = try await history().content(of: path, at: request.version)
        if content == nil, version.kind == .removed {
            // A removal keeps nothing of its own: the version it removed is the one to bring back.
            content = try await history().content(of: path, at: .back(1)).content
        }
        guard let content else { throw HistoryQueryError.noSuchVersion(path: path, selector: request.version, count: 0) }
        let edit = try await workspace.accept(destination, content, createParents: true)
        workspace.announceEdit(of: destination, revision: edit.revision, by: "restore")
        return MethodOutcome(result: EditedFile(path: destination, revision: edit.revision).json, edit: edit)
    }

    /// `restoreDeleted`: every removed file below a folder written back, each as `restore`'s edit.
    private func restoreDeleted(_ request: RestoreDeletedMethod) async throws -> RestoreDeletedMethod.Result {
        let folder = try await workspace.resolveTree(request.path)
        let history = try await history()
        let removals = try await history.deleted(below: folder)
        var files: [EditedFile] = []
        var refused: [RestoreDeletedMethod.Refusal] = []
        var edits: [AcceptedEdit] = []
        for removal in removals {
            // The removal holds no content of its own: the version before it is what it removed.
            guard let content = try await history.content(of: removal.path, at: .back(1)).content else { continue }
            do {
                let edit = try await workspace.accept(removal.path, content, createParents: true)
                workspace.announceEdit(of: removal.path, revision: edit.revision, by: "restore")
                files.append(EditedFile(path: removal.path, revision: edit.revision))
                edits.append(edit)
            } catch {
                // One file that cannot come back (a link out of the root where its folder was, a
                // file too large) does not keep the others: it is named in the answer.
                refused.append(RestoreDeletedMethod.Refusal(path: removal.path, reason: "\(error)"))
            }
        }
        for edit in edits { try await edit.waitUntilDurable() }
        return RestoreDeletedMethod.Result(files: files, refused: refused)
    }

    /// `undo`: one writer's changes taken back, everyone else's kept.
    private func undo(_ request: UndoMethod) async throws -> UndoMethod.Result {
        let writer = try WriterPattern(request.who)
        let (files, skipped) = try await workspace.undo(writer, since: request.since, below: request.path, dryRun: request.isDryRun)
        return UndoMethod.Result(files: files, skipped: skipped.map { UndoMethod.Skipped(path: $0.path, version: $0.version, reason: $0.reason) })
    }

    /// `forget`: a file's versions (or a folder's files') and their bytes removed from history.
    private func forget(_ request: ForgetMethod) async throws -> ForgetMethod.Result {
        let path = try await workspace.resolveTree(request.path)
        guard !path.isEmpty else {
            throw WorkspaceError.invalidPath(
                path: request.path,
                reason: "it is the root: to forget every version, stop the agent and delete its history.sqlite")
        }
        return ForgetMethod.Result(try await history().forget(path))
    }

    private func patch(_ request: PatchMethod) async throws -> PatchMethod.Result {
        if !request.isCheck, let patch = try? UnifiedDiff(parsing: request.bytes) {
            for file in patch.files { await workspace.handOver(file.path, to: request.change.clientName) }
        }
        let files = try await workspace.applyPatch(request.bytes, check: request.isCheck, ifRevision: request.change.ifRevision)
        if !request.isCheck {
            for file in files { workspace.announceEdit(of: file.path, revision: file.revision, by: request.change.clientName) }
        }
        return PatchMethod.Result(files: files.map { EditedFile(path: $0.path, revision: $0.revision) }, isApplied: !request.isCheck)
    }

    private func remove(_ request: RemoveMethod) async throws -> EditedFile {
        let path = try await workspace.resolve(request.path)
        await workspace.handOver(path, to: request.change.clientName)
        let revision = try await workspace.remove(path, changeID: request.change.changeID, ifRevision: request.change.ifRevision)
        workspace.announceEdit(of: path, revision: revision, by: request.change.clientName)
        return EditedFile(path: path, revision: revision)
    }

    static func data(_ error: WorkspaceError) -> JSONValue {
        switch error {
        case .staleRevision(let path, _, let current):
            .object([member("reason", .string("staleRevision")), member("path", .string(path)), member("currentRevision", .number(String(current)))])
        case .invalidPath(let path, _): .object([member("reason", .string("invalidPath")), member("path", .string(path))])
        case .pathRefused(let refusal):
            .object(
                [member("reason", .string(refusal.code)), member("path", .string(refusal.path))]
                    + (refusal.link.map { [member("link", .string($0.path)), member("target", .string($0.target))] } ?? []))
        case .notOpen(let path): .object([member("reason", .string("notOpen")), member("path", .string(path))])
        case .noSuchFile(let path): .object([member("reason", .string("noSuchFile")), member("path", .string(path))])
        case .noSuchFolder(let path, let folder):
            .object([member("reason", .string("noSuchFolder")), member("path", .string(path)), member("folder", .string(folder))])
        case .tooLarge(let path, _, _): .object([member("reason", .string("tooLarge")), member("path", .string(path))])
        case .patchRefused(let error):
            .object([member("reason", .string("patchRefused"))] + (error.path.map { [member("path", .string($0))] } ?? []))
        case .invalidEdit(let path, let error):
            .object([
                member("reason", .string("invalidEdit")), member("path", .string(path)),
                member("edits", .array(error.edits.map { .number(String($0)) })),
            ])
        case .unreadable: .object([member("reason", .string("unreadable"))])
        case .saveFailed(let path, _): .object([member("reason", .string("saveFailed")), member("path", .string(path))])
        case .journalFailed: .object([member("reason", .string("journalFailed"))])
        }
    }

    /// An event as the `event` notification's params.
    static func json(_ event: AgentEvent) -> JSONValue {
        func object(_ name: String, _ fields: [(String, JSONValue)]) -> JSONValue {
            .object([member("event", .string(name))] + fields.map { member($0.0, $0.1) })
        }
        func number(_ value: Int) -> JSONValue { .number(String(value)) }
        switch event {
        case .externalChange(let change):
            return object("external-change", [
                ("path", .string(change.path)), ("kind", .string(change.kind.rawValue)),
                ("from", change.from.map(JSONValue.string) ?? .null), ("directory", .bool(change.isDirectory)),
            ])
        case .saved(let path, let revision, let bytes):
            return object("saved", [("path", .string(path)), ("revision", number(revision)), ("bytes", number(bytes))])
        case .saveFailed(let path, let error, let retry):
            return object("save-failed", [("path", .string(path)), ("error", .string(error)), ("retryMs", number(retry))])
        case .reloaded(let path, let revision):
            return object("reloaded", [("path", .string(path)), ("revision", number(revision))])
        case .merged(let path, let revision):
            return object("merged", [("path", .string(path)), ("revision", number(revision))])
        case .conflict(let path, let kind, let kept, let copy):
            return object("conflict", [
                ("path", .string(path)), ("kind", .string(kind)), ("kept", .string(kept.rawValue)),
                ("copy", copy.map(JSONValue.string) ?? .null),
            ])
        case .removed(let path): return object("removed", [("path", .string(path))])
        case .moved(let from, let to): return object("moved", [("from", .string(from)), ("to", .string(to))])
        case .paused(let reason): return object("paused", [("reason", .string(reason))])
        case .resumed(let reason): return object("resumed", [("reason", .string(reason))])
        case .edited(let path, let revision, let client):
            return object("edited", [("path", .string(path)), ("revision", number(revision)), ("client", .string(client))])
        }
    }
}

extension RPCError {
    /// The error a client sees for a failure of the workspace (or of the request's params).
    init(answering error: any Error) {
        switch error {
        case let error as RPCError: self = error
        case let error as HistoryQueryError: self = .refused(error.description, data: .object([member("reason", .string(error.reason))]))
        case let error as UndoError: self = .invalidParams(error.description)
        case let error as WorkspaceError:
            let data = ControlMethods<ContinuousClock>.data(error)
            // An edit that cannot be placed is a fault of the request's params (LSP's -32602).
            if case .invalidEdit = error { self = RPCError(code: -32602, message: error.description, data: data) } else {
                self = .refused(error.description, data: data)
            }
        default: self = .refused("\(error)")
        }
    }
}
