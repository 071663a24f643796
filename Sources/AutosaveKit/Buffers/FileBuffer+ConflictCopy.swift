import Logging

/// The one flow of every conflict copy: the bytes written aside (off the actor), then the
/// `conflict` line and event; or, when the copy cannot be written, `conflict-copy-failed`
/// saying what happens to the edits meanwhile.
extension FileBuffer {
    /// Writes `bytes` as a conflict copy of `path`, named for `revision`, and hands it to
    /// history as a version of the file linked to `parent`, the bytes it came from.
    ///
    /// - Parameter holdsEdits: whether `bytes` are the buffer's edits rather than the disk's.
    /// - Throws: `WriteError` when the copy cannot be written (the state directory full, a name
    ///   in its way); nothing was logged or recorded yet.
    func writeConflictCopy(
        of bytes: [UInt8], path: String, revision: Int, parent: [UInt8]?, holdsEdits: Bool
    ) async throws(WriteError) -> ConflictCopies.Kept {
        let copies = context.copies
        let kept = try await BlockingIO.run { () throws(WriteError) -> ConflictCopies.Kept in
            try copies.keep(bytes, of: path, revision: revision)
        }
        context.history?.conflictCopied(path, bytes: bytes, copy: context.shown(kept.path), parent: parent, holdsEdits: holdsEdits)
        return kept
    }

    /// Logs (`conflict`) and emits a conflict: `kept` is the side that keeps the path, `copy` the
    /// other's copy as the log shows it (nil: none was needed, as for a file removed under edits).
    func announceConflict(path: String, kind: String, kept: ConflictSide, copy: String?, revision: Int, next: String) {
        var metadata: Logger.Metadata = [
            "path": "\(path)", "kind": "\(kind)", "kept": "\(kept.rawValue)", "revision": "\(revision)", "next": "\(next)",
        ]
        if let copy { metadata["copy"] = "\(copy)" }
        context.logger.warning("conflict", metadata: metadata)
        context.emit(.conflict(path: path, kind: kind, kept: kept, copy: copy))
    }

    /// Logs a conflict copy that could not be written (`conflict-copy-failed`); `next` says where
    /// the edits are meanwhile and when the copy is tried again.
    func reportConflictCopyFailed(path: String, error: WriteError, next: String) {
        context.logger.error("conflict-copy-failed", metadata: ["path": "\(path)", "error": "\(error)", "next": "\(next)"])
    }
}
