import ByteNames
import FoundationEssentials

extension Workspace {
    /// Applies ranged edits (LSP's `TextEdit`s) to the buffer of `path` as one revision, saved
    /// after the autosave window like any write, and merged with external changes the same way.
    /// Like `accept`, returns before the journal's fsync: `waitUntilDurable()` before
    /// acknowledging.
    ///
    /// - Parameters:
    ///   - encoding: how the positions count characters.
    ///   - changeID: makes a retry safe: the same id is applied once.
    ///   - ifRevision: refuse the edits unless the buffer is at this revision.
    /// - Throws: `WorkspaceError.invalidEdit` (nothing applied), `.staleRevision`, `.invalidPath`,
    ///   `.tooLarge`, `.unreadable`, `.journalFailed`.
    public func acceptEdits(
        _ path: String, _ edits: [TextEdit], encoding: PositionEncoding, changeID: UUID? = nil, ifRevision: Int? = nil
    ) async throws(WorkspaceError) -> AcceptedEdit {
        let key = try normalize(path)
        return try await againIfItsBufferCloses { () throws(WorkspaceError) -> AcceptedEdit in
            let wasOpen = buffers[key] != nil
            let buffer = try await buffer(for: key)
            let accepted: FileBuffer<C>.Accepted
            do throws(WorkspaceError) { accepted = try await buffer.edit(edits, encoding: encoding, changeID: changeID, ifRevision: ifRevision) } catch {
                await closeIfOpenedOnlyToAsk(buffer, at: key, wasOpen: wasOpen)
                throw error
            }
            return AcceptedEdit(revision: accepted.revision, ticket: try await journal(accepted), logger: logger)
        }
    }
}
