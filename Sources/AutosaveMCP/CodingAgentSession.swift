import AutosaveControl
import AutosaveKit
import ByteNames
import FoundationEssentials
import Glibc

/// One coding agent's session with the agent: its tool calls carried out as requests on the
/// control socket, what it last saw of each file, and what others changed since.
///
/// The promise: its edits never overwrite anyone's unsaved work. An edit is placed in the text
/// the model last read; when others changed the file since, the two are merged line by line, and
/// where they touch the same lines nothing changes and the tool fails, naming the lines.
actor CodingAgentSession {
    /// What the model last saw of a file: the base its next edit is merged from.
    struct View {
        var revision: Int
        var text: [UInt8]
    }

    let socketPath: String
    let changes = ChangeLog()
    private var views: PathMap<View> = [:]
    private var follower: Task<Void, Never>?

    init(socketPath: String) { self.socketPath = socketPath }

    /// Names the session after the MCP client (`initialize`'s clientInfo).
    nonisolated func name(after client: String) {
        // Unique per session: two sessions of one client see each other's edits as news.
        changes.ownName = "mcp:\(client)#\(getpid())"
    }

    /// The name its edits carry in `edited` events.
    var clientName: String { changes.ownName }

    /// Subscribes to the agent's events, for `changes`.
    func follow() {
        let changes = self.changes
        let socketPath = self.socketPath
        follower = Task {
            do {
                let client = try await ControlClient(socketPath: socketPath)
                changes.started()
                _ = try await client.call(.subscribe, []) { method, value in
                    if method == "event" { changes.take(value) }
                }
                changes.ended("the agent closed the subscription")
            } catch {
                changes.ended("no events from the agent: \(error)")
            }
        }
    }

    func stop() {
        follower?.cancel()
    }

    /// Carries out one tool call: the text the model reads, and whether it is a failure (`isError`).
    func call(_ tool: String, _ arguments: JSONValue?) async -> (text: String, isError: Bool) {
        let input = ToolInput(arguments)
        do {
            let text: String
            switch tool {
            case "read_file": text = try await readFile(input)
            case "write_file": text = try await writeFile(input)
            case "edit_file": text = try await editFile(input)
            case "apply_patch": text = try await applyPatch(input)
            case "changes": text = try changesSince(input)
            case "save": text = try await save(input)
            case "status": text = try await status()
            default:
                throw ToolFailure("there is no tool \(tool); the tools are \(CodingAgentTools.names.joined(separator: ", "))")
            }
            return (text, false)
        } catch let failure as ToolFailure {
            return (failure.message, true)
        } catch {
            return ("\(error)", true)
        }
    }

    // MARK: - Tools

    private func readFile(_ input: ToolInput) async throws -> String {
        let file = try await current(try input.string("path"))
        guard let bytes = file.text else {
            throw ToolFailure("\(file.path) does not exist (revision \(file.revision)); write_file creates it")
        }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw ToolFailure("\(file.path) is not UTF-8 text (\(bytes.count) bytes); read_file shows text only")
        }
        views[file.path] = View(revision: file.revision, text: bytes)
        // Split on the byte: Swift counts "\r\n" as one character, which is not "\n".
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
        if bytes.last == UInt8(ascii: "\n") { lines.removeLast() }
        let first = max(1, try input.integer("offset") ?? 1)
        let limit = max(1, try input.integer("limit") ?? 2000)
        let last = min(lines.count, first + limit - 1)
        var out = ""
        if first <= last {
            for number in first...last {
                let label = String(number)
                out += String(repeating: " ", count: max(0, 6 - label.count)) + label + "\t" + lines[number - 1] + "\n"
            }
        }
        let shown = first <= last ? "lines \(first)–\(last) of \(lines.count)" : "no lines shown (\(lines.count) in all)"
        let unsaved = file.isDirty ? " · has unsaved edits (saved to disk shortly)" : ""
        return out + "(\(file.path) · revision \(file.revision) · \(shown)\(unsaved))"
    }

    private func writeFile(_ input: ToolInput) async throws -> String {
        let file = try await current(try input.string("path"))
        let content = Array(try input.string("content").utf8)
        let base = try baseView(of: file, ifRevision: try input.integer("ifRevision"))
        if base == nil, views[file.path] == nil, file.isDirty, file.text != nil {
            throw ToolFailure(
                "\(file.path) was not written: it has unsaved edits (revision \(file.revision)) you have not seen; read_file it, then write content that keeps them (write_file replaces the whole file), or use edit_file")
        }
        if let base, base.revision != file.revision || base.text != (file.text ?? []) {
            let merged = try merge(base: base, yours: content, file: file, yourLines: "the whole file")
            let revision = try await write(file.path, merged, ifRevision: file.revision)
            return "Wrote \(file.path): revision \(revision). " + mergedNote(base: base, file: file)
        }
        let revision = try await write(file.path, content, ifRevision: file.revision)
        return "Wrote \(file.path): \(content.count) bytes, revision \(revision)."
    }

    private func editFile(_ input: ToolInput) async throws -> String {
        let file = try await current(try input.string("path"))
        guard let text = file.text else {
            throw ToolFailure("\(file.path) does not exist (revision \(file.revision)); write_file creates it")
        }
        var old = Array(try input.string("old_string").utf8)
        var new = Array(try input.string("new_string").utf8)
        let all = try input.boolean("replace_all") ?? false
        let base = try baseView(of: file, ifRevision: try input.integer("ifRevision")) ?? View(revision: file.revision, text: text)
        // read_file shows lines without their "\r": in a CRLF file the text asked for has them.
        if ExactReplacement.occurrences(of: old, in: base.text).isEmpty, base.text.contains(UInt8(ascii: "\r")) {
            let crlfOld = Self.crlf(old)
            if !ExactReplacement.occurrences(of: crlfOld, in: base.text).isEmpty { (old, new) = (crlfOld, Self.crlf(new)) }
        }
        let replacement: ExactReplacement
        do {
            replacement = try ExactReplacement.place(old, new, in: base.text, all: all)
        } catch {
            throw ToolFailure(Self.describe(error, path: file.path, revision: base.revision))
        }
        let lines = Self.lines(of: replacement.ranges, in: base.text)
        if base.revision == file.revision, base.text == text {
            let edits: [JSONValue] = replacement.ranges.map { range in
                .object([
                    field("start", Self.position(of: range.lowerBound, in: text)),
                    field("end", Self.position(of: range.upperBound, in: text)),
                    field("text", .string(String(decoding: new, as: UTF8.self))),
                ])
            }
            let answer = try await request(.edit, [
                field("path", .string(file.path)), field("positionEncoding", .string("utf-8")), field("edits", .array(edits)),
                field("ifRevision", .number(String(file.revision))), field("client", .string(clientName)),
            ])
            let revision = Self.revision(of: answer)
            views[file.path] = View(revision: revision, text: replacement.result)
            return "Edited \(file.path) at \(lines): revision \(revision)."
        }
        let merged = try merge(base: base, yours: replacement.result, file: file, yourLines: lines)
        let revision = try await write(file.path, merged, ifRevision: file.revision)
        return "Edited \(file.path) at \(lines) of revision \(base.revision): now revision \(revision). " + mergedNote(base: base, file: file)
    }

    private func applyPatch(_ input: ToolInput) async throws -> String {
        let answer = try await request(.patch, [field("patch", .string(try input.string("patch"))), field("client", .string(clientName))])
        let files = answer["files"]?.arrayValue ?? []
        var out: [String] = []
        for file in files {
            guard let path = file["path"]?.stringValue else { continue }
            let revision = Self.revision(of: file)
            out.append("\(path) → revision \(revision)")
            // What the model now knows of the file is the patched text, the base of its next edit,
            // unless someone changed it again since (then the model has not seen that).
            if let now = try? await current(path), now.revision == revision, let text = now.text {
                views[now.path] = View(revision: now.revision, text: text)
            } else {
                views[path] = nil
            }
        }
        return "Applied the patch: " + out.joined(separator: ", ") + "."
    }

    private func changesSince(_ input: ToolInput) throws -> String {
        let (entries, cursor, isIncomplete) = changes.entries(since: try input.integer("since"))
        var items: [JSONValue] = entries.map { entry in
            var fields = [field("path", .string(entry.path)), field("kind", .string(entry.kind)), field("who", .string(entry.who))]
            if let revision = entry.revision { fields.append(field("revision", .number(String(revision)))) }
            if let from = entry.from { fields.append(field("from", .string(from))) }
            if let copy = entry.copy { fields.append(field("copy", .string(copy))) }
            return .object(fields)
        }
        let isCut = items.count > 500
        if isCut { items = Array(items.suffix(500)) }
        var fields = [field("cursor", .number(String(cursor))), field("changes", .array(items))]
        if isIncomplete || isCut {
            fields.append(field("note", .string("only the newest changes are listed; read_file what you rely on")))
        }
        let following = changes.following
        if !following.isFollowing, let ending = following.ending { fields.append(field("warning", .string(ending))) }
        return JSONValue.object(fields).jsonText
    }

    private func save(_ input: ToolInput) async throws -> String {
        let paths = try input.strings("paths")
        _ = try await request(.save, paths.map { [field("paths", .array($0.map { .string($0) }))] } ?? [field("all", .bool(true))])
        return paths.map { "Saved \($0.joined(separator: ", ")): on disk, durably." } ?? "Saved every file with unsaved edits: on disk, durably."
    }

    private func status() async throws -> String {
        let answer = try await request(.status, [])
        let buffers = (answer["buffers"]?.arrayValue ?? []).map { buffer -> String in
            let dirty = buffer["dirty"] == .bool(true) ? "unsaved edits" : "saved"
            return "\(buffer["path"]?.stringValue ?? "?") · revision \(Self.revision(of: buffer)) · \(dirty)"
        }
        let root = answer["root"]?.stringValue ?? "?"
        return (["Project \(root): \(buffers.count) file(s) open in the agent."] + buffers).joined(separator: "\n")
    }

    // MARK: - Merging

    /// The view an edit is made from: the revision asked for (it must be the current one or one
    /// this session read), else the last one the model read when others changed the file since.
    private func baseView(of file: CurrentFile, ifRevision: Int?) throws -> View? {
        let seen = views[file.path]
        if let ifRevision {
            if ifRevision == file.revision { return file.text.map { View(revision: file.revision, text: $0) } }
            guard let seen, seen.revision == ifRevision else {
                throw ToolFailure(
                    "\(file.path) was not changed: it is at revision \(file.revision), not \(ifRevision), and this session has not read revision \(ifRevision); read_file it again")
            }
            return seen
        }
        // Revisions start again when the agent restarts: the text must match too.
        if let seen, seen.revision != file.revision || seen.text != (file.text ?? []) { return seen }
        return nil
    }

    /// Merges the model's text (made from `base`) with the file's; throws naming the lines that
    /// collide when both changed the same ones.
    private func merge(base: View, yours: [UInt8], file: CurrentFile, yourLines: String) throws -> [UInt8] {
        switch LineMerge.merge(base: base.text, ours: file.text ?? [], theirs: yours) {
        case .merged(let merged): return merged
        case .conflict:
            throw ToolFailure(
                "\(file.path) was not changed: your edit (\(yourLines) of revision \(base.revision)) collides with edits made since (\(Self.changedLines(from: base.text, to: file.text ?? []))); the file is at revision \(file.revision) now. read_file it again and redo your edit on what is there")
        }
    }

    private func mergedNote(base: View, file: CurrentFile) -> String {
        "Merged: the file had changed since you read revision \(base.revision) (\(Self.changedLines(from: base.text, to: file.text ?? [])), by someone else); their edits and yours are both in."
    }

    // MARK: - Requests

    struct CurrentFile {
        var path: String
        var revision: Int
        var text: [UInt8]?
        var isDirty: Bool
    }

    /// The file as the agent's buffer holds it now (opening it), with the path as the agent names it.
    private func current(_ path: String) async throws -> CurrentFile {
        let status = try await request(.open, [field("path", .string(path))])
        let answer: ControlAnswer
        do {
            let client = try await ControlClient(socketPath: socketPath)
            answer = try await client.call(.read, [field("path", .string(path)), field("raw", .bool(true))], content: nil)
        } catch {
            throw Self.failure(error, socketPath: socketPath)
        }
        let exists = answer.result["exists"] != .bool(false)
        return CurrentFile(
            path: answer.result["path"]?.stringValue ?? path, revision: Self.revision(of: answer.result),
            text: exists ? (answer.content ?? []) : nil, isDirty: status["dirty"] == .bool(true))
    }

    private func write(_ path: String, _ content: [UInt8], ifRevision: Int) async throws -> Int {
        // Text as text; anything else (a merge kept bytes that are not UTF-8) as base64, unchanged.
        let body = String(validating: content, as: UTF8.self).map { field("content", .string($0)) }
            ?? field("contentBase64", .string(Data(content).base64EncodedString()))
        let answer = try await request(.write, [
            field("path", .string(path)), body,
            field("ifRevision", .number(String(ifRevision))), field("createParents", .bool(true)), field("client", .string(clientName)),
        ])
        let revision = Self.revision(of: answer)
        views[path] = View(revision: revision, text: content)
        return revision
    }

    private func request(_ method: RPCMethod, _ params: [JSONMember]) async throws -> JSONValue {
        do {
            let client = try await ControlClient(socketPath: socketPath)
            return try await client.call(method, params)
        } catch {
            throw Self.failure(error, socketPath: socketPath)
        }
    }

    /// The tool's failure for a request that failed: the agent's own refusal as it said it; a
    /// socket of another user (refused before anything was sent) or no agent, each saying that
    /// nothing was changed.
    private static func failure(_ error: any Error, socketPath: String) -> ToolFailure {
        switch error as? ControlClientError {
        case .anotherUsersSocket, .peerUnknown:
            ToolFailure(
                "\(error); this tool changed nothing. The MCP server's socket is not the autosave agent of the user it runs as: "
                    + "restart `autosave mcp` as that user, in their project folder")
        case let error? where !error.isUnreachable: ToolFailure(error.description)
        default: ToolFailure("the autosave agent does not answer at \(socketPath) (\(error)); nothing was changed")
        }
    }
}
