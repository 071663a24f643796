import FoundationEssentials
import Glibc
import Inotify
import Logging

extension Workspace {
    /// The buffer for `path` (a normalized relative path), made and loaded on first use.
    func buffer(for path: String) async throws(WorkspaceError) -> FileBuffer<C> {
        if let existing = buffers[path] {
            try await existing.ensureLoaded()
            return existing
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
            if unlink(root + "/" + path) == 0 {
                logger.notice("removed-temp", metadata: ["path": "\(path)", "reason": "left by an interrupted save"])
            }
        }
        for path in context.copies.removeLeftoverTempFiles() {
            logger.notice("removed-temp", metadata: ["path": "\(path)", "reason": "left by an interrupted conflict copy"])
        }
    }

    /// Brings back one edit the journal kept through a crash.
    func recover(_ record: JournalRecord) async {
        guard let path = try? normalize(record.path) else { return }
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

    /// A path relative to the root, checked: inside the root, not in `.git/` or the state dir.
    ///
    /// Resolved as the kernel resolves it (`PhysicalPath`): the folders on the way are followed
    /// through their symbolic links, a relative link against the folder that holds it, and `..`
    /// after the link before it; the file's own name stays as given, so a buffer opened through a
    /// link keeps the link's name and its saves go where the link leads.
    func normalize(_ raw: String) throws(WorkspaceError) -> String {
        var text = raw
        if text.hasPrefix(rootPrefix) { text = String(text.dropFirst(rootPrefix.count)) }
        // An open buffer's key passed every check below when it opened, and is its own normal form.
        if buffers[text] != nil { return text }
        guard !text.utf8.contains(0) else { throw .invalidPath(path: raw, reason: "it contains a NUL byte") }
        let parts = text.split(separator: "/", omittingEmptySubsequences: true)
        for part in parts where part.utf8.count > 255 {
            throw .invalidPath(path: raw, reason: "a component is longer than 255 bytes")
        }
        guard let name = parts.last, name != ".", name != ".." else {
            throw .invalidPath(path: raw, reason: "it names a folder (the root or one inside it), not a file")
        }
        let isAbsolute = text.hasPrefix("/")
        let folder = (isAbsolute ? "" : root) + "/" + parts.dropLast().joined(separator: "/")
        guard let physical = PhysicalPath.of(folder) else {
            throw .invalidPath(path: raw, reason: "its folder cannot be resolved")
        }
        let inside: String
        if physical == root {
            inside = String(name)
        } else if physical.hasPrefix(rootPrefix) {
            inside = String(physical.dropFirst(rootPrefix.count)) + "/" + name
        } else if parts.contains("..") {
            throw .invalidPath(path: raw, reason: "`..` leads outside the root")
        } else if isAbsolute && PhysicalPath.of(text) == text {
            throw .invalidPath(path: raw, reason: "it is outside the root \(root)")
        } else {
            throw .invalidPath(path: raw, reason: "it leads outside the root (to \(physical)/\(name)) through a symbolic link")
        }
        let path = inside
        if path.split(separator: "/").contains(".git") {
            throw .invalidPath(path: raw, reason: "files inside .git/ are git's own")
        }
        if let state = configuration.stateDirectoryInsideRoot, KnownFiles.isSame(path, orBelow: state) {
            throw .invalidPath(path: raw, reason: "it is inside the agent's state directory")
        }
        if buffers[path] != nil { return path }
        // The file itself may be a link out; every save checks again (AtomicWriter).
        if let target = PhysicalPath.of(root + "/" + path), !target.hasPrefix(rootPrefix) {
            throw .invalidPath(path: raw, reason: "it leads outside the root (to \(target)) through a symbolic link")
        }
        return path
    }
}
