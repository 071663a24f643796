import Logging

extension FileBuffer {
    /// Writes the unsaved content as a conflict copy when the buffer's file has nowhere to land
    /// (its folder was removed, a link leads into a folder that does not exist, or a link swapped
    /// in leads out of bounds), so the edit is on disk somewhere while the agent runs. Once per
    /// revision; the buffer stays open at its path and dirty, and saves there again when the
    /// path leads to a folder again.
    ///
    /// - Parameter cause: the save's failure, which the log line names.
    ///
    /// - Returns: the copy's path as shown in the log; nil when there was nothing to keep (clean,
    ///   or a pending delete).
    /// - Throws: `WriteError` when the copy could not be written either.
    func keepAside(because cause: WriteError? = nil) async throws(WriteError) -> String? {
        guard isDirty, let content else { return nil }
        if let copiedAside, copiedAside.revision == revision { return copiedAside.copy }
        let path = self.path
        let revision = self.revision
        let kept = try await writeConflictCopy(of: content, path: path, revision: revision, parent: base?.bytes ?? vanished?.bytes, holdsEdits: true)
        let copy = context.shown(kept.path)
        copiedAside = (revision, copy)
        machine.keptAside(revision: revision)
        announceConflict(path: path, kind: "removed", kept: .buffer, copy: copy, revision: revision, next: Self.whyKeptAside(cause))
        return copy
    }

    /// What a `conflict` line says of a copy kept because the file had nowhere to land.
    static func whyKeptAside(_ cause: WriteError?) -> String {
        if case .refused(let refusal) = cause {
            return "\(refusal), so the unsaved edits are in the copy; the buffer stays open and saves at its path once it leads inside again"
        }
        return "its folder is gone, so the unsaved edits are in the copy; the buffer stays open and saves at its path once the folder is back"
    }

    /// `keepAside()`, its failure logged (`conflict-copy-failed`): the edit is then in memory and
    /// the journal only, and the buffer keeps retrying.
    func keepAsideOrLog(because cause: WriteError? = nil) async {
        do { _ = try await keepAside(because: cause) } catch {
            reportConflictCopyFailed(
                path: path, error: error, next: "the unsaved edits are in the buffer and the journal only; retrying the save with backoff")
        }
    }
}
