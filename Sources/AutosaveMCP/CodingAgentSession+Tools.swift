import AutosaveControl
import AutosaveKit
import ByteNames
import FoundationEssentials

/// The tools, each carried out through the agent: reading, writing, editing and patching files,
/// the changes others made, saving and the agent's status.
extension CodingAgentSession {
    func readFile(_ input: ToolInput) async throws -> String {
        let file = try await current(try input.string("path"))
        guard let bytes = file.text else {
            throw ToolFailure("\(file.path) does not exist (revision \(file.revision)); write_file creates it")
        }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw ToolFailure("\(file.path) is not UTF-8 text (\(bytes.count) bytes); read_file shows text only")
        }
        let request = FilePage.Request(offset: try input.integer("offset"), limit: try input.integer("limit"), column: try input.integer("column"))
        let page = try FilePage(path: file.path, revision: file.revision, isDirty: file.isDirty).render(bytes, request)
        views[file.path] = View(revision: file.revision, text: bytes)
        return page
    }

    func writeFile(_ input: ToolInput, _ attempt: Attempt) async throws -> String {
        let file = try await current(try input.string("path"))
        var content = Array(try input.string("content").utf8)
        // read_file shows no "\r": the content takes the line breaks of the file it replaces.
        if let existing = file.text, let style = LineBreakStyle.of(existing) { content = style.spell(content) }
        let doubt = self.doubt(about: file, attempt)
        if doubt?.isIn == true { return alreadyThere(file, answerLost: true) }
        let base = try doubt?.base ?? baseView(of: file, ifRevision: try input.integer("ifRevision"))
        if base == nil, views[file.path] == nil, file.isDirty, file.text != nil {
            throw ToolFailure(
                "\(file.path) was not written: it has unsaved edits (revision \(file.revision)) you have not seen; read_file it, then write content that keeps them (write_file replaces the whole file), or use edit_file")
        }
        if let base, base.revision != file.revision || base.text != (file.text ?? []) {
            let merged = try merge(base: base, yours: content, file: file, yourLines: "the whole file")
            if merged == file.text { return alreadyThere(file, answerLost: doubt != nil) }
            let revision = try await write(file.path, merged, base: base, ifRevision: file.revision, changeID: attempt.changeID)
            return "Wrote \(file.path): revision \(revision). " + mergedNote(base: base, file: file)
        }
        let now = View(revision: file.revision, text: file.text ?? [])
        let revision = try await write(file.path, content, base: now, ifRevision: file.revision, changeID: attempt.changeID)
        return "Wrote \(file.path): \(content.count) bytes, revision \(revision)."
    }

    func editFile(_ input: ToolInput, _ attempt: Attempt) async throws -> String {
        let file = try await current(try input.string("path"))
        guard let text = file.text else {
            throw ToolFailure("\(file.path) does not exist (revision \(file.revision)); write_file creates it")
        }
        var old = Array(try input.string("old_string").utf8)
        var new = Array(try input.string("new_string").utf8)
        let all = try input.boolean("replace_all") ?? false
        let doubt = self.doubt(about: file, attempt)
        if doubt?.isIn == true { return alreadyThere(file, answerLost: true) }
        let base = try doubt?.base ?? baseView(of: file, ifRevision: try input.integer("ifRevision")) ?? View(revision: file.revision, text: text)
        // read_file shows lines without their "\r": in a CRLF file the text asked for has them, and
        // the text put in takes them too.
        var style = LineBreakStyle.of(base.text)
        if ExactReplacement.occurrences(of: old, in: base.text).isEmpty, base.text.contains(UInt8(ascii: "\r")) {
            let crlfOld = LineBreakStyle.crlf.spell(old)
            if !ExactReplacement.occurrences(of: crlfOld, in: base.text).isEmpty { (old, style) = (crlfOld, .crlf) }
        }
        if let style { new = style.spell(new) }
        let replacement: ExactReplacement
        do {
            replacement = try ExactReplacement.place(old, new, in: base.text, all: all)
        } catch {
            throw ToolFailure(Self.describe(error, path: file.path, revision: base.revision))
        }
        let lines = Self.lines(of: replacement.ranges, in: base.text)
        if base.revision == file.revision, base.text == text {
            let edits = replacement.ranges.map { range in
                TextEdit(
                    range: TextRange(start: Self.position(of: range.lowerBound, in: text), end: Self.position(of: range.upperBound, in: text)),
                    text: new)
            }
            inFlight = .text(path: file.path, base: base, result: replacement.result)
            let answer = try await request(
                EditMethod(
                    path: file.path, edits: edits, positionEncoding: .utf8,
                    change: ChangeParams(changeID: attempt.changeID, ifRevision: file.revision, client: clientName)))
            let revision = answer.revision
            views[file.path] = View(revision: revision, text: replacement.result)
            return "Edited \(file.path) at \(lines): revision \(revision)."
        }
        let merged = try merge(base: base, yours: replacement.result, file: file, yourLines: lines)
        if merged == text { return alreadyThere(file, answerLost: doubt != nil) }
        let revision = try await write(file.path, merged, base: base, ifRevision: file.revision, changeID: attempt.changeID)
        return "Edited \(file.path) at \(lines) of revision \(base.revision): now revision \(revision). " + mergedNote(base: base, file: file)
    }

    func applyPatch(_ input: ToolInput, _ attempt: Attempt) async throws -> String {
        let patch = try input.string("patch")
        if case .patch? = attempt.inDoubt, let settled = try await settle(patch) { return settled }
        inFlight = .patch(patch)
        let answer = try await request(PatchMethod(diff: .text(patch), change: ChangeParams(client: clientName)))
        var out: [String] = []
        for file in answer.files {
            out.append("\(file.path) → revision \(file.revision)")
            await learn(file.path, revision: file.revision)
        }
        return "Applied the patch: " + out.joined(separator: ", ") + "."
    }

    /// The patched text is what the model now knows of a file, the base of its next edit, unless
    /// someone changed it again since (then the model has not seen that).
    private func learn(_ path: String, revision: Int?) async {
        if let now = try? await current(path), revision == nil || now.revision == revision, let text = now.text {
            views[now.path] = View(revision: now.revision, text: text)
        } else {
            views[path] = nil
        }
    }

    /// For a patch whose answer was lost: the answer when it is in, nil when it is not (send it
    /// again); throws when the files cannot tell.
    private func settle(_ patch: String) async throws -> String? {
        // A patch that cannot be read was refused, not applied.
        guard let diff = try? UnifiedDiff(parsing: Array(patch.utf8)) else { return nil }
        var files: [CurrentFile] = []
        for file in diff.files { files.append(try await current(file.path)) }
        switch PatchOutcome.judge(diff, texts: files.map(\.text)) {
        case .notApplied:
            return nil
        case .applied:
            for file in files { await learn(file.path, revision: nil) }
            return "Applied the patch: " + files.map { "\($0.path) → revision \($0.revision)" }.joined(separator: ", ")
                + ". (The agent stopped before it answered; the files show the patch in, so it was not applied twice.)"
        case .unknown(let paths):
            throw ToolFailure(
                "The agent stopped before it answered your patch, and the files do not tell whether it went in "
                    + "(\(paths.joined(separator: ", ")) fit it both before and after, or differ), so it was not applied again. "
                    + "read_file those files and apply what is missing.")
        }
    }

    func changesSince(_ input: ToolInput) throws -> String {
        let (entries, cursor, isIncomplete, hasGap) = changes.entries(since: try input.integer("since"))
        var items: [JSONValue] = entries.suffix(500).map { entry in
            var fields = [field("path", .string(entry.path)), field("kind", .string(entry.kind)), field("who", .string(entry.who))]
            if let revision = entry.revision { fields.append(field("revision", .number(String(revision)))) }
            if let from = entry.from { fields.append(field("from", .string(from))) }
            if let copy = entry.copy { fields.append(field("copy", .string(copy))) }
            return .object(fields)
        }
        var isCut = entries.count > items.count
        // The newest that fit in one result.
        var size = items.reduce(0) { $0 + $1.jsonText.utf8.count + 1 }
        while size > ResultBound.bytes - 2048, !items.isEmpty {
            size -= items.removeFirst().jsonText.utf8.count + 1
            isCut = true
        }
        var fields = [field("cursor", .number(String(cursor))), field("changes", .array(items))]
        if isIncomplete || isCut {
            fields.append(field("note", .string("only the newest changes are listed; read_file what you rely on")))
        }
        if hasGap {
            let gap = "events were missed since (the autosave agent stopped and another took over, or this server fell behind): "
                + "what changed meanwhile is not listed; read_file what you rely on"
            fields.append(field("gap", .string(gap)))
        }
        let following = changes.following
        if !following.isFollowing, let ending = following.ending { fields.append(field("warning", .string(ending))) }
        return JSONValue.object(fields).jsonText
    }

    func save(_ input: ToolInput) async throws -> String {
        let paths = try input.strings("paths")
        _ = try await request(SaveMethod(paths.map { .paths($0) } ?? .all))
        return paths.map { "Saved \($0.joined(separator: ", ")): on disk, durably." } ?? "Saved every file with unsaved edits: on disk, durably."
    }

    func status() async throws -> String {
        let answer = try await request(StatusMethod())
        let buffers = answer.buffers
        var out = ["Project \(answer.root): \(buffers.count) file(s) open in the agent."]
        var size = out[0].utf8.count
        for (index, buffer) in buffers.enumerated() {
            let dirty = buffer.isDirty ? "unsaved edits" : "saved"
            let line = "\(buffer.path) · revision \(buffer.revision) · \(dirty)"
            size += line.utf8.count + 1
            if size > ResultBound.bytes - 1024 {
                out.append("… and \(buffers.count - index) more (a result holds at most \(ResultBound.name))")
                break
            }
            out.append(line)
        }
        return out.joined(separator: "\n")
    }
}
