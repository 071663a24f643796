import ByteNames
import FoundationEssentials
import Glibc
import Inotify
import Logging

extension Workspace {
    /// The buffer for `path` (a normalized relative path), made and loaded on first use.
    func buffer(for path: String) async throws(WorkspaceError) -> FileBuffer<C> {
        if let existing = buffers[path] {
            try await existing.ensureLoaded()
            if await !existing.isClosed { return existing }
            // Closed and not dropped yet (its file removed while it was clean, say): a closed
            // buffer refuses edits, so a fresh one takes the request.
            if buffers[path] === existing { buffers[path] = nil }
            return try await buffer(for: path)
        }
        let buffer = FileBuffer(path: path, context: context)
        buffers[path] = buffer
        do {
            try await buffer.ensureLoaded()
        } catch {
            if buffers[path] === buffer { buffers[path] = nil }
            throw error
        }
        return buffer
    }

    /// Temp files of a save a crash interrupted: never renamed into place, so never anyone's
    /// data (the edit itself is in the buffer or the journal). One agent per root, so none is live.
    func removeLeftoverTempFiles(_ paths: [String]) {
        for path in paths {
            // Reached through the resolver, by name in its folder: never through a link swapped in.
            guard IgnoreRules.isAgentTempName(path.pathComponents.last ?? ""),
                let location = try? resolver.resolve(path).location
            else { continue }
            if unlinkat(location.folder, location.name, 0) == 0 {
                logger.notice("removed-temp", metadata: ["path": "\(path)", "reason": "left by an interrupted save"])
            }
        }
        for path in context.copies.removeLeftoverTempFiles() {
            logger.notice("removed-temp", metadata: ["path": "\(path)", "reason": "left by an interrupted conflict copy"])
        }
    }

    /// Brings back one edit the journal kept through a crash.
    ///
    /// A path that leads out of bounds now (a link swapped in while the agent was down) is not
    /// opened: the edit goes to a conflict copy under the name it was journaled with.
    func recover(_ record: JournalRecord) async {
        let path: String
        do { path = try normalize(record.path) } catch {
            let isRemoval = record.kind == .delete
            let kept = isRemoval ? nil : try? context.copies.keep(record.content, of: record.path, revision: record.revision)
            logger.error(
                "recover-failed",
                metadata: [
                    "path": "\(record.path)", "error": "\(error)",
                    "next": isRemoval
                        ? "the recovered removal is not carried out"
                        : kept.map { "the recovered edit is kept in \($0.path)" } ?? "the recovered edit stays in the journal",
                ])
            return
        }
        let buffer = FileBuffer(path: path, context: context)
        buffers[path] = buffer
        do {
            try await buffer.ensureLoaded()
        } catch {
            buffers[path] = nil
            let kept = try? context.copies.keep(record.content, of: path, revision: record.revision)
            logger.error(
                "recover-failed",
                metadata: [
                    "path": "\(path)", "error": "\(error)",
                    "next": kept.map { "the recovered edit is kept in \($0.path)" } ?? "the recovered edit stays in the journal",
                ])
            return
        }
        await buffer.recover(record)
        // The save landed before the crash, only its marker did not: the record is done with,
        // or a later crash would bring these old bytes back against newer ones.
        if let journal = context.journal, await !buffer.isDirty {
            try? await journal.markSaved(path, revision: record.revision)
        }
    }

    /// A path a client named, as the agent names it: relative to the root, checked by the one
    /// resolver every door uses (`PathResolver`).
    ///
    /// Resolved as the kernel resolves it: the folders on the way are followed through their
    /// symbolic links (a relative link against the folder that holds it, `..` after the link
    /// before it); the file's own name stays as given, so a buffer opened through a link keeps the
    /// link's name and its saves go where the link leads — as long as every link on the way
    /// stays inside the root and out of `.git/` and the state directory. An absolute path is
    /// taken relative to the root when it is spelled below it (byte for byte); otherwise its
    /// folders are resolved first (links outside the root are the user's own) and what lies
    /// inside is resolved as above.
    ///
    /// - Throws: `WorkspaceError.invalidPath` for a malformed name, `.pathRefused` for one that
    ///   leads out of bounds.
    func normalize(_ raw: String) throws(WorkspaceError) -> String {
        var text = raw.pathBelow(root) ?? raw
        // An open buffer's key passed every check below when it opened, and is its own normal form.
        if buffers[text] != nil { return text }
        if text.isAbsolutePath {
            let parts = text.pathComponents
            guard let name = parts.last else {
                throw .invalidPath(path: raw, reason: "it names a folder (the root or one inside it), not a file")
            }
            let folder = "/" + parts.dropLast().joined(separator: "/")
            guard !text.utf8.contains(0), let physical = PhysicalPath.of(folder),
                let inside = (physical + "/" + name).pathBelow(root)
            else { throw .pathRefused(.outsideRoot(path: raw)) }
            text = inside
        }
        do {
            return try resolver.resolve(text).key
        } catch {
            throw WorkspaceError(error)
        }
    }

    /// The resolver every path a client names goes through.
    var resolver: PathResolver { context.writer.resolver }
}
