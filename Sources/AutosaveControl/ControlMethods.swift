import AutosaveKit
import FoundationEssentials

/// What a method produced: its result, the edit its answer waits for, raw bytes sent after it.
struct MethodOutcome: Sendable {
    var result: JSONValue
    /// An accepted edit: the answer is sent once it is durable.
    var edit: AcceptedEdit?
    /// Raw bytes sent right after the answer's line (its `result.contentBytes`).
    var content: TextRope?
}

/// Carries out one request against the workspace. Nothing here touches a file directly.
struct ControlMethods<C: Clock>: Sendable where C.Duration == Duration {
    let workspace: Workspace<C>
    /// Asks the agent to shut down gracefully (saving every dirty buffer). The server calls it once
    /// the answer to `shutdown` is written, so the client hears it before the socket closes.
    let requestShutdown: @Sendable () -> Void

    /// Carries out `request`; an edit comes back with its result before it is durable, and its
    /// answer must wait for `AcceptedEdit.waitUntilDurable()` (so a connection can pipeline).
    func performPipelined(_ request: RPCRequest) async throws(RPCError) -> MethodOutcome {
        let params = RPCParams(members: request.params, raw: request.content)
        switch RPCMethod(rawValue: request.method) {
        case .write?:
            do {
                let path = try await workspace.resolve(try params.string("path"))
                let client = try params.clientName()
                let edit = try await workspace.accept(
                    path, try params.content(), changeID: try params.optionalUUID("changeId"),
                    ifRevision: try params.optionalInt("ifRevision"), createParents: try params.optionalBool("createParents") ?? false)
                workspace.announceEdit(of: path, revision: edit.revision, by: client)
                return MethodOutcome(
                    result: .object([member("path", .string(path)), member("revision", .number(String(edit.revision)))]), edit: edit)
            } catch {
                throw RPCError(answering: error)
            }
        case .edit?:
            do {
                let path = try await workspace.resolve(try params.string("path"))
                let encoding = try params.positionEncoding()
                let client = try params.clientName()
                let edit = try await workspace.acceptEdits(
                    path, try params.textEdits(), encoding: encoding,
                    changeID: try params.optionalUUID("changeId"), ifRevision: try params.optionalInt("ifRevision"))
                workspace.announceEdit(of: path, revision: edit.revision, by: client)
                return MethodOutcome(
                    result: .object([member("path", .string(path)), member("revision", .number(String(edit.revision)))]), edit: edit)
            } catch {
                throw RPCError(answering: error)
            }
        case .read?:
            return try await read(params)
        default:
            return MethodOutcome(result: try await perform(request))
        }
    }

    /// `read`: the buffer's content as text, base64, or (`raw: true`) raw bytes after the answer.
    private func read(_ params: RPCParams) async throws(RPCError) -> MethodOutcome {
        do {
            let path = try await workspace.resolve(try params.string("path"))
            let isRaw = try params.optionalBool("raw") ?? false
            let (text, revision) = try await workspace.readText(path)
            var members = [member("path", .string(path)), member("revision", .number(String(revision)))]
            guard let text else {
                members.append(member("exists", .bool(false)))
                return MethodOutcome(result: .object(members))
            }
            if isRaw {
                // Copied once, from the buffer's chunks straight into the socket's buffer.
                members.append(member("contentBytes", .number(String(text.count))))
                return MethodOutcome(result: .object(members), content: text)
            }
            let content = text.bytes
            if let text = String(validating: content, as: UTF8.self) {
                members.append(member("content", .string(text)))
            } else {
                members.append(member("contentBase64", .string(Data(content).base64EncodedString())))
            }
            return MethodOutcome(result: .object(members))
        } catch {
            throw RPCError(answering: error)
        }
    }

    /// Carries out every method but `read` and `write` (those are `performPipelined`'s own).
    private func perform(_ request: RPCRequest) async throws(RPCError) -> JSONValue {
        guard let method = RPCMethod(rawValue: request.method) else { throw .methodNotFound(request.method) }
        let params = RPCParams(members: request.params, raw: request.content)
        do {
            switch method {
            case .open:
                return Self.json(try await workspace.open(try params.string("path"), keep: try params.optionalConflictSide()))
            case .patch:
                let check = try params.optionalBool("check") ?? false
                let client = try params.clientName()
                let files = try await workspace.applyPatch(try params.patchText(), check: check, ifRevision: try params.optionalInt("ifRevision"))
                if !check { for file in files { workspace.announceEdit(of: file.path, revision: file.revision, by: client) } }
                return .object([
                    member("files", .array(files.map { .object([member("path", .string($0.path)), member("revision", .number(String($0.revision)))]) })),
                    member("applied", .bool(!check)),
                ])
            case .read, .write, .edit:
                // Never reached: `performPipelined` carries these out itself.
                throw RPCError.methodNotFound(request.method)
            case .save:
                if try params.optionalBool("all") == true || params.value("paths") == nil {
                    try await workspace.saveAll()
                } else {
                    try await workspace.save(try params.optionalStrings("paths") ?? [])
                }
                return .object([member("saved", .bool(true))])
            case .close:
                try await workspace.close(try params.string("path"))
                return .object([member("closed", .bool(true))])
            case .remove:
                let path = try await workspace.resolve(try params.string("path"))
                let client = try params.clientName()
                let revision = try await workspace.remove(
                    path, changeID: try params.optionalUUID("changeId"), ifRevision: try params.optionalInt("ifRevision"))
                workspace.announceEdit(of: path, revision: revision, by: client)
                return .object([member("path", .string(path)), member("revision", .number(String(revision)))])
            case .status:
                let buffers = await workspace.status().map(Self.json)
                let watcher = await workspace.watcherStatus()
                return .object([
                    member("root", .string(workspace.root)), member("buffers", .array(buffers)),
                    member("conflicts", .number(String(workspace.conflictCopyCount()))),
                    member("watcher", .object([
                        member("files", .number(String(watcher.files))),
                        member("pendingChanges", .number(String(watcher.pendingChanges))),
                        member("reportedChanges", .number(String(watcher.reportedChanges))),
                        member("heldForWriters", .number(String(watcher.heldForWriters))),
                    ])),
                ])
            case .sync:
                await workspace.sync()
                return .object([member("synced", .bool(true))])
            case .shutdown:
                // Flushed before the answer, so the client hears where every edit went; the
                // agent's own final flush then finds nothing left (or only edits made since).
                let outcome = await workspace.flush()
                return .object([
                    member("stopping", .bool(true)), member("saved", .number(String(outcome.saved))),
                    member("copied", .array(outcome.copied.map { .object([member("path", .string($0.path)), member("copy", .string($0.copy))]) })),
                    member("lost", .array(outcome.lost.map { .string($0) })),
                ])
            case .subscribe:
                return .object([member("subscribed", .bool(true))])
            }
        } catch {
            throw RPCError(answering: error)
        }
    }

    static func json(_ status: BufferStatus) -> JSONValue {
        var members = [
            member("path", .string(status.path)), member("revision", .number(String(status.revision))),
            member("dirty", .bool(status.isDirty)), member("saving", .bool(status.isSaving)),
        ]
        members.append(member("bytes", status.bytes.map { .number(String($0)) } ?? .null))
        members.append(member("pendingSaveMs", status.pendingSaveInMilliseconds.map { .number(String($0)) } ?? .null))
        return .object(members)
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
